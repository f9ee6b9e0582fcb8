use std::time::Duration;
use tenacious::{Classify, ErrorClass};

#[derive(Debug, Classify)]
enum ToolError {
    #[classify(transient)]
    Timeout,
    #[classify(rate_limited)]
    TooManyRequests {
        #[classify(retry_after)]
        wait: Option<Duration>,
    },
    #[classify(invalid, hint = "argument {0} does not match the schema")]
    BadArguments(String),
    #[classify(fatal, hint = "credentials are wrong; a human must fix them")]
    Unauthorized,
    #[classify(transparent)]
    Io(std::io::Error),
}

fn main() {
    assert_eq!(ToolError::Timeout.classify(), ErrorClass::Transient);
    let limited = ToolError::TooManyRequests {
        wait: Some(Duration::from_secs(1)),
    };
    assert_eq!(limited.classify(), ErrorClass::RateLimited);
    assert_eq!(limited.retry_after(), Some(Duration::from_secs(1)));
    let bad = ToolError::BadArguments("query".into());
    assert_eq!(bad.classify(), ErrorClass::Invalid);
    assert_eq!(
        bad.hint().as_deref(),
        Some("argument query does not match the schema")
    );
    assert_eq!(ToolError::Unauthorized.classify(), ErrorClass::Fatal);
    assert_eq!(ToolError::Unauthorized.variant(), "Unauthorized");
}

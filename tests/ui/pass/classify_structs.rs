use std::time::Duration;
use tenacious::{Classify, ErrorClass};

#[derive(Debug, Classify)]
#[classify(fatal, hint = "set {key} in the config file")]
struct ConfigError {
    key: &'static str,
}

#[derive(Debug, Classify)]
#[classify(rate_limited)]
struct Throttled(#[classify(retry_after)] Duration);

#[derive(Debug, Classify)]
#[classify(transient)]
struct Blip;

#[derive(Debug, Classify)]
#[classify(transparent)]
struct Wrapped {
    inner: std::io::Error,
}

fn main() {
    let config = ConfigError { key: "api_key" };
    assert_eq!(config.classify(), ErrorClass::Fatal);
    assert_eq!(
        config.hint().as_deref(),
        Some("set api_key in the config file")
    );
    assert_eq!(config.variant(), "ConfigError");
    assert_eq!(
        Throttled(Duration::from_secs(2)).retry_after(),
        Some(Duration::from_secs(2))
    );
    assert_eq!(Blip.classify(), ErrorClass::Transient);
    let wrapped = Wrapped {
        inner: std::io::ErrorKind::TimedOut.into(),
    };
    assert_eq!(wrapped.classify(), ErrorClass::Transient);
}

//! What `#[derive(Classify)]` generates, observed through the trait.
//!
//! The lints below hold the generated impls to the bar users' crates set:
//! `cargo clippy --all-targets` fails if an expansion trips one.
#![deny(clippy::pedantic, unused_qualifications, deprecated)]

use std::borrow::Cow;
use std::io;
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
    #[classify(rate_limited, hint = "the quota resets in {0:?}")]
    QuotaExhausted(#[classify(retry_after)] Duration),
    #[classify(invalid, hint = "fix the arguments to match the tool schema")]
    BadArguments,
    #[classify(
        fatal,
        hint = "credentials for {user} at {realm} are wrong; a human must fix them"
    )]
    Unauthorized { user: String, realm: &'static str },
    #[classify(transparent)]
    Io(io::Error),
}

#[test]
fn each_variant_has_its_class() {
    let cases = [
        (ToolError::Timeout, ErrorClass::Transient),
        (
            ToolError::TooManyRequests { wait: None },
            ErrorClass::RateLimited,
        ),
        (
            ToolError::QuotaExhausted(Duration::from_secs(60)),
            ErrorClass::RateLimited,
        ),
        (ToolError::BadArguments, ErrorClass::Invalid),
        (
            ToolError::Unauthorized {
                user: "ada".into(),
                realm: "api",
            },
            ErrorClass::Fatal,
        ),
    ];
    for (error, class) in cases {
        assert_eq!(error.classify(), class, "{error:?}");
    }
}

#[test]
fn variant_is_the_variants_name() {
    assert_eq!(ToolError::Timeout.variant(), "Timeout");
    assert_eq!(
        ToolError::TooManyRequests { wait: None }.variant(),
        "TooManyRequests"
    );
    assert_eq!(
        ToolError::QuotaExhausted(Duration::ZERO).variant(),
        "QuotaExhausted"
    );
    assert_eq!(ToolError::BadArguments.variant(), "BadArguments");
}

#[test]
fn retry_after_reads_duration_and_option_fields() {
    let wait = Duration::from_millis(1500);
    assert_eq!(
        ToolError::TooManyRequests { wait: Some(wait) }.retry_after(),
        Some(wait)
    );
    assert_eq!(
        ToolError::TooManyRequests { wait: None }.retry_after(),
        None
    );
    assert_eq!(ToolError::QuotaExhausted(wait).retry_after(), Some(wait));
    assert_eq!(ToolError::Timeout.retry_after(), None);
    assert_eq!(ToolError::BadArguments.retry_after(), None);
}

#[test]
fn hints_without_placeholders_are_borrowed() {
    let hint = ToolError::BadArguments.hint();
    assert!(
        matches!(
            hint,
            Some(Cow::Borrowed("fix the arguments to match the tool schema"))
        ),
        "{hint:?}"
    );
    assert_eq!(ToolError::Timeout.hint(), None);
    assert_eq!(ToolError::TooManyRequests { wait: None }.hint(), None);
}

#[test]
fn hints_interpolate_named_and_positional_fields() {
    let fatal = ToolError::Unauthorized {
        user: "ada".into(),
        realm: "api",
    };
    assert_eq!(
        fatal.hint().as_deref(),
        Some("credentials for ada at api are wrong; a human must fix them")
    );
    assert!(matches!(fatal.hint(), Some(Cow::Owned(_))));
    assert_eq!(
        ToolError::QuotaExhausted(Duration::from_secs(60))
            .hint()
            .as_deref(),
        Some("the quota resets in 60s")
    );
}

#[derive(Debug, Classify)]
enum Formatted {
    #[classify(
        invalid,
        hint = "{{literal}} {0} {0:?} {1:>5}|{1:<5}|{1:03} {2:#x} {2:b} {0}"
    )]
    Specs(&'static str, u32, u8),
    #[classify(invalid, hint = "{r#type} then {user:?} and {{{user}}}")]
    Raw { r#type: u8, user: String },
    #[classify(invalid, hint = "only {{braces}} here")]
    Escaped,
}

#[test]
fn hints_follow_format_specs_and_escapes() {
    assert_eq!(
        Formatted::Specs("a", 7, 255).hint().as_deref(),
        Some("{literal} a \"a\"     7|7    |007 0xff 11111111 a")
    );
    assert_eq!(
        Formatted::Raw {
            r#type: 2,
            user: "bo".into()
        }
        .hint()
        .as_deref(),
        Some("2 then \"bo\" and {bo}")
    );
    assert!(matches!(
        Formatted::Escaped.hint(),
        Some(Cow::Borrowed("only {braces} here"))
    ));
    assert_eq!(
        Formatted::Raw {
            r#type: 0,
            user: String::new()
        }
        .variant(),
        "Raw"
    );
}

#[test]
fn transparent_forwards_every_method_to_an_io_error() {
    let reset = ToolError::Io(io::Error::from(io::ErrorKind::ConnectionReset));
    assert_eq!(reset.classify(), ErrorClass::Transient);
    assert_eq!(reset.variant(), "ConnectionReset");
    assert_eq!(reset.retry_after(), None);
    assert_eq!(reset.hint(), None);

    let denied = ToolError::Io(io::Error::from(io::ErrorKind::PermissionDenied));
    assert_eq!(denied.classify(), ErrorClass::Fatal);
    assert_eq!(denied.variant(), "PermissionDenied");
}

#[derive(Debug, Classify)]
enum AgentError {
    #[classify(transparent)]
    Tool(ToolError),
    #[classify(transparent)]
    Boxed { inner: Box<ToolError> },
    #[classify(invalid, hint = "the model's output did not parse")]
    Unparsable,
}

#[test]
fn transparent_forwards_every_method_to_a_derived_error() {
    let wait = Duration::from_secs(3);
    let wrapped = [
        AgentError::Tool(ToolError::QuotaExhausted(wait)),
        AgentError::Boxed {
            inner: Box::new(ToolError::QuotaExhausted(wait)),
        },
    ];
    for error in wrapped {
        assert_eq!(error.classify(), ErrorClass::RateLimited);
        assert_eq!(error.retry_after(), Some(wait));
        assert_eq!(error.hint().as_deref(), Some("the quota resets in 3s"));
        assert_eq!(error.variant(), "QuotaExhausted");
    }

    let fatal = AgentError::Tool(ToolError::Unauthorized {
        user: "root".into(),
        realm: "ops",
    });
    assert_eq!(fatal.classify(), ErrorClass::Fatal);
    assert_eq!(
        fatal.hint().as_deref(),
        Some("credentials for root at ops are wrong; a human must fix them")
    );
    assert_eq!(fatal.variant(), "Unauthorized");

    assert_eq!(AgentError::Unparsable.classify(), ErrorClass::Invalid);
    assert_eq!(AgentError::Unparsable.variant(), "Unparsable");
}

#[derive(Debug, Classify)]
#[classify(fatal, hint = "set {key} in the config file")]
struct ConfigError {
    key: &'static str,
}

#[derive(Debug, Classify)]
#[classify(rate_limited, hint = "wait {0:?}")]
struct Throttled(#[classify(retry_after)] Duration);

#[derive(Debug, Classify)]
#[classify(transient)]
struct Blip;

#[derive(Debug, Classify)]
#[classify(transparent)]
struct Wrapped(io::Error);

#[test]
fn structs_carry_the_class_on_the_struct() {
    let config = ConfigError { key: "api_key" };
    assert_eq!(config.classify(), ErrorClass::Fatal);
    assert_eq!(
        config.hint().as_deref(),
        Some("set api_key in the config file")
    );
    assert_eq!(config.variant(), "ConfigError");
    assert_eq!(config.retry_after(), None);

    let throttled = Throttled(Duration::from_millis(250));
    assert_eq!(throttled.classify(), ErrorClass::RateLimited);
    assert_eq!(throttled.retry_after(), Some(Duration::from_millis(250)));
    assert_eq!(throttled.hint().as_deref(), Some("wait 250ms"));
    assert_eq!(throttled.variant(), "Throttled");

    assert_eq!(Blip.classify(), ErrorClass::Transient);
    assert_eq!(Blip.variant(), "Blip");
    assert_eq!(Blip.hint(), None);

    let wrapped = Wrapped(io::Error::from(io::ErrorKind::TimedOut));
    assert_eq!(wrapped.classify(), ErrorClass::Transient);
    assert_eq!(wrapped.variant(), "TimedOut");
}

/// A generic error: the impl carries the parameters and the bounds the
/// transparent and interpolated fields need.
#[derive(Debug, Classify)]
enum Layered<'a, E, D, const N: usize>
where
    D: Copy,
{
    #[classify(transparent)]
    Inner(E),
    #[classify(invalid, hint = "bad input {input} ({detail:?})")]
    Input { input: &'a str, detail: D },
    #[classify(rate_limited)]
    Limited(#[classify(retry_after)] Option<Duration>, [u8; N]),
}

#[test]
fn generic_enums_carry_their_parameters() {
    type Error<'a> = Layered<'a, ToolError, char, 2>;
    let inner: Error<'_> = Layered::Inner(ToolError::Timeout);
    assert_eq!(inner.classify(), ErrorClass::Transient);
    assert_eq!(inner.variant(), "Timeout");

    let input: Error<'_> = Layered::Input {
        input: "x",
        detail: 'q',
    };
    assert_eq!(input.classify(), ErrorClass::Invalid);
    assert_eq!(input.hint().as_deref(), Some("bad input x ('q')"));

    let wait = Duration::from_secs(1);
    let limited: Error<'_> = Layered::Limited(Some(wait), [0; 2]);
    assert_eq!(limited.retry_after(), Some(wait));
    assert_eq!(limited.variant(), "Limited");
}

/// The bound on a transparent generic field is what lets a generic error
/// be used as `Classify` only when its inner error is.
fn class_of<E: Classify>(error: &E) -> ErrorClass {
    error.classify()
}

#[test]
fn a_generic_wrapper_is_classify_through_its_inner_error() {
    let error: Layered<'_, io::Error, u8, 0> =
        Layered::Inner(io::Error::from(io::ErrorKind::InvalidInput));
    assert_eq!(class_of(&error), ErrorClass::Invalid);
}

/// `Duration` may be spelled any way that names it (a module of its own,
/// where no `use` makes the paths redundant).
mod spellings {
    pub type Wait = std::time::Duration;

    #[derive(Debug, tenacious::Classify)]
    pub enum Spellings {
        #[classify(rate_limited)]
        Std(#[classify(retry_after)] std::time::Duration),
        #[classify(rate_limited)]
        Core(#[classify(retry_after)] core::time::Duration),
        #[classify(rate_limited)]
        Alias(#[classify(retry_after)] Wait),
        #[classify(rate_limited)]
        Qualified(#[classify(retry_after)] Option<::core::time::Duration>),
    }
}
use spellings::Spellings;

#[test]
fn retry_after_accepts_any_spelling_of_duration() {
    let wait = Duration::from_secs(7);
    for error in [
        Spellings::Std(wait),
        Spellings::Core(wait),
        Spellings::Alias(wait),
        Spellings::Qualified(Some(wait)),
    ] {
        assert_eq!(error.retry_after(), Some(wait), "{error:?}");
    }
}

#[derive(Debug, Classify)]
enum Never {}

#[test]
fn an_empty_enum_is_classify() {
    fn assert_classify<E: Classify>() {}
    assert_classify::<Never>();
}

/// A facade re-exported under another name, as a crate wrapping tenacious
/// would do.
mod reexport {
    pub use tenacious as facade;
}

#[derive(Debug, Classify)]
#[classify(crate = reexport::facade)]
enum ThroughReexport {
    #[classify(fatal)]
    Broken,
    #[classify(rate_limited, hint = "wait {0:?}")]
    Slow(#[classify(retry_after)] Option<Duration>),
    #[classify(transparent)]
    Io(io::Error),
}

#[test]
fn crate_path_override() {
    assert_eq!(ThroughReexport::Broken.classify(), ErrorClass::Fatal);
    assert_eq!(ThroughReexport::Broken.variant(), "Broken");
    assert_eq!(ThroughReexport::Broken.retry_after(), None);
    assert_eq!(ThroughReexport::Broken.hint(), None);
    let slow = ThroughReexport::Slow(Some(Duration::from_secs(1)));
    assert_eq!(slow.retry_after(), Some(Duration::from_secs(1)));
    assert_eq!(slow.hint().as_deref(), Some("wait Some(1s)"));
    let io = ThroughReexport::Io(io::Error::from(io::ErrorKind::BrokenPipe));
    assert_eq!(io.classify(), ErrorClass::Transient);
}

/// Deprecating a variant or a field does not make the derive warn: the
/// impl still has to read them.
#[derive(Debug, Classify)]
enum Evolving {
    #[deprecated = "servers now send `Limited`"]
    #[classify(transient, hint = "old server said {0}")]
    Legacy(u8),
    #[classify(rate_limited)]
    Limited {
        #[deprecated = "read the hint through `Classify::retry_after`"]
        #[classify(retry_after)]
        wait: Duration,
    },
}

#[test]
#[allow(deprecated)]
fn deprecated_variants_and_fields_are_classified() {
    assert_eq!(
        Evolving::Legacy(7).hint().as_deref(),
        Some("old server said 7")
    );
    let wait = Duration::from_secs(4);
    assert_eq!(Evolving::Limited { wait }.retry_after(), Some(wait));
}

/// An error that says the provider is overloaded and how many requests
/// its window has left.
#[derive(Debug)]
struct Busy;

impl Classify for Busy {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
    fn signals(&self) -> tenacious::Signals {
        tenacious::Signals::NONE.overloaded(true).remaining(0)
    }
}

#[derive(Debug, Classify)]
enum WrappedBusy {
    #[classify(transparent)]
    Provider(Busy),
    #[classify(transient)]
    Local,
}

/// `transparent` forwards `signals` too, so the guards (the breaker, the
/// throttle) hear an overload through a wrapper; before, the derive left
/// the trait's default, and a wrapped 529 said nothing of the provider.
#[test]
fn transparent_forwards_the_inner_error_s_signals() {
    let signals = WrappedBusy::Provider(Busy).signals();
    assert!(signals.is_overloaded());
    assert_eq!(signals.get_remaining(), Some(0));
    assert!(WrappedBusy::Local.signals().is_none());
}

/// `transparent` forwards `not_sent` and `limits` too: a wrapped refused
/// connection proves nothing was sent, and a wrapped error's own limits
/// are the wrapper's.
#[derive(Debug, Classify)]
enum Sending {
    #[classify(transparent)]
    Io(io::Error),
    #[classify(transparent)]
    Limited(Capped),
    #[classify(transient)]
    Other,
}

#[derive(Debug)]
struct Capped;

impl Classify for Capped {
    fn classify(&self) -> ErrorClass {
        ErrorClass::RateLimited
    }
    fn limits(&self) -> tenacious::Limits {
        tenacious::Limits::NONE.max(7)
    }
}

#[test]
fn transparent_forwards_not_sent_and_limits() {
    assert!(Sending::Io(io::Error::from(io::ErrorKind::ConnectionRefused)).not_sent());
    assert!(!Sending::Io(io::Error::from(io::ErrorKind::ConnectionReset)).not_sent());
    assert!(!Sending::Other.not_sent());
    assert_eq!(Sending::Limited(Capped).limits().get_max(), Some(7));
    assert!(Sending::Other.limits().is_none());
}

/// A model call's error: the provider's HTTP error, or one of its own.
#[derive(Debug, Classify)]
enum ModelError {
    #[classify(transparent)]
    Http(tenacious::HttpError),
    #[classify(invalid)]
    EmptyPrompt,
}

#[test]
fn transparent_names_its_error_as_inner_so_methods_it_does_not_write_are_that_error_s() {
    let body = br#"{"error": {"message": "too long", "code": "context_length_exceeded"}}"#;
    let too_long = ModelError::Http(tenacious::HttpError::from_parts_with_body(
        http::StatusCode::BAD_REQUEST,
        &http::HeaderMap::new(),
        body,
    ));
    // `rejected` is a method the derive does not write: it comes through
    // `inner`, not as the default `None`.
    assert_eq!(too_long.rejected(), Some(tenacious::Reject::ContextLength));
    assert!(too_long.inner().is_some());
    assert_eq!(ModelError::EmptyPrompt.rejected(), None);
    assert!(ModelError::EmptyPrompt.inner().is_none());
    let wrapped = Wrapped(io::Error::from(io::ErrorKind::ConnectionRefused));
    assert_eq!(
        wrapped.inner().map(Classify::variant),
        Some("ConnectionRefused")
    );
}

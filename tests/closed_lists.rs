//! The macros' closed lists are the runtime's: every jitter, `nested` value,
//! retried class and error class the runtime has is spelled by the
//! attributes as the runtime spells it (`as_str`), and reaches the policy or
//! the impl as that value; `#[retry]` without keys behaves as
//! `Policy::new()`.
//!
//! A proc-macro crate exports nothing but its macros, so each value gets a
//! fn (or a variant) of its own here, written by a `macro_rules!` from one
//! literal, and an exhaustive `match` over the runtime's enum picks it: a new
//! variant in the runtime stops this file compiling until it gets a line
//! here, and that line compiles only if the macro knows the value. Each
//! value is then compared with the runtime's behaviour for it (the delays
//! under one seed, the attempts made), and the values are shown to behave
//! differently from one another, so a name mapped to the wrong variant fails.
//! Nothing sleeps for real: tokio's clock is paused.
use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use tenacious::{
    Classify, ErrorClass, Jitter, Nested, Policy, RetryEvent, RetryOn, retry, seed_jitter,
};

/// One error of each class, named as `#[classify(...)]` spells the class.
macro_rules! error_of_each_class {
    ($($variant:ident => $key:ident),* $(,)?) => {
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Classify)]
        enum AnyClass {
            $(
                #[classify($key)]
                $variant,
            )*
        }

        impl AnyClass {
            fn of(class: ErrorClass) -> Self {
                match class {
                    $(ErrorClass::$variant => Self::$variant,)*
                }
            }

            /// The key the derive took for the class.
            fn key(class: ErrorClass) -> &'static str {
                match class {
                    $(ErrorClass::$variant => stringify!($key),)*
                }
            }
        }
    };
}

error_of_each_class! {
    Transient => transient,
    RateLimited => rate_limited,
    Invalid => invalid,
    Fatal => fatal,
}

#[test]
fn every_error_class_is_a_derive_key_spelled_as_the_runtime_spells_it() {
    for class in ErrorClass::ALL {
        assert_eq!(AnyClass::key(class), class.as_str());
        assert_eq!(AnyClass::of(class).classify(), class);
    }
}

thread_local! {
    /// The delays `notify` was told of, in order.
    static DELAYS: RefCell<Vec<Duration>> = const { RefCell::new(Vec::new()) };
    /// The attempts the inner call of a nested pair made.
    static INNER_ATTEMPTS: Cell<u32> = const { Cell::new(0) };
}

fn record(_: &AnyClass, event: &RetryEvent) {
    DELAYS.with(|delays| delays.borrow_mut().push(event.delay));
}

fn take_delays() -> Vec<Duration> {
    DELAYS.with(|delays| std::mem::take(&mut *delays.borrow_mut()))
}

type Call = Pin<Box<dyn Future<Output = Result<(), AnyClass>>>>;

/// A fn per jitter, `#[retry(jitter = "...")]` with the literal given.
macro_rules! fn_per_jitter {
    ($($variant:ident => $text:literal),* $(,)?) => {
        /// The jitter's name as the attribute took it, and a call of the
        /// fn that names it.
        fn with_jitter(jitter: Jitter) -> (&'static str, Call) {
            match jitter {
                $(Jitter::$variant => {
                    #[retry(jitter = $text, max = 6, stats = false, notify = record)]
                    async fn call() -> Result<(), AnyClass> {
                        Err(AnyClass::Transient)
                    }
                    ($text, Box::pin(call()))
                })*
            }
        }
    };
}

fn_per_jitter! {
    None => "none",
    Full => "full",
    Equal => "equal",
    Decorrelated => "decorrelated",
}

/// The delays of a call that always fails, under one seed.
async fn delays_of(call: impl Future<Output = Result<(), AnyClass>>) -> Vec<Duration> {
    seed_jitter(12);
    take_delays();
    assert!(call.await.is_err());
    take_delays()
}

async fn policy_delays(policy: Policy) -> Vec<Duration> {
    delays_of(policy.retry_with(
        || async { Err::<(), _>(AnyClass::Transient) },
        |_: &AnyClass| true,
        record,
    ))
    .await
}

#[tokio::test(start_paused = true)]
async fn every_jitter_is_spelled_as_the_runtime_spells_it_and_reaches_the_policy() {
    let all = [
        Jitter::None,
        Jitter::Full,
        Jitter::Equal,
        Jitter::Decorrelated,
    ];
    let mut seen = Vec::new();
    for jitter in all {
        let (text, call) = with_jitter(jitter);
        assert_eq!(text, jitter.as_str());
        let by_macro = delays_of(call).await;
        let by_policy = policy_delays(Policy::new().max(6).jitter(jitter)).await;
        assert_eq!(by_macro.len(), 5, "{text}");
        assert_eq!(by_macro, by_policy, "jitter = {text:?}");
        assert!(!seen.contains(&by_macro), "jitter = {text:?} is another's");
        seen.push(by_macro);
    }
}

/// `#[retry]` without keys (but `notify`, which is no setting of the
/// policy), against `Policy::new()`.
#[retry(notify = record)]
async fn with_defaults() -> Result<(), AnyClass> {
    Err(AnyClass::Transient)
}

/// No key at all: the defaults' attempts and waits, seen on the paused clock.
#[retry]
async fn bare(attempts: &Cell<u32>) -> Result<(), AnyClass> {
    attempts.set(attempts.get() + 1);
    Err(AnyClass::Transient)
}

// The macro checks a lone `cap` against the runtime's default `base`, and a
// lone `base` against its default `cap`, with copies of them: these are the
// edge cases it must accept, checked against the runtime's values below.
#[retry(cap = "200ms")]
async fn cap_at_the_default_base() -> Result<(), AnyClass> {
    Ok(())
}

#[retry(base = "20s")]
async fn base_at_the_default_cap() -> Result<(), AnyClass> {
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn the_macros_defaults_are_the_policys() {
    let policy = Policy::new();
    assert_eq!(
        delays_of(with_defaults()).await,
        policy_delays(policy).await
    );

    seed_jitter(3);
    let attempts = Cell::new(0);
    let start = tokio::time::Instant::now();
    assert!(bare(&attempts).await.is_err());
    let by_macro = (attempts.get(), start.elapsed());
    seed_jitter(3);
    let attempts = Cell::new(0);
    let start = tokio::time::Instant::now();
    let by_policy = policy
        .retry(|| async {
            attempts.set(attempts.get() + 1);
            Err::<(), _>(AnyClass::Transient)
        })
        .await;
    assert!(by_policy.is_err());
    assert_eq!(by_macro, (attempts.get(), start.elapsed()));
    assert_eq!(by_macro.0, policy.get_max());

    assert_eq!(policy.get_base(), Duration::from_millis(200));
    assert_eq!(policy.get_cap(), Duration::from_secs(20));
    assert!(cap_at_the_default_base().await.is_ok());
    assert!(base_at_the_default_cap().await.is_ok());
}

/// A fn per `Nested` value, `#[retry(nested = "...")]` with the literal
/// given, each the inner call of a nested pair.
macro_rules! fn_per_nested {
    ($($variant:ident => $text:literal),* $(,)?) => {
        fn with_nested(nested: Nested) -> (&'static str, Call) {
            match nested {
                $(Nested::$variant => {
                    #[retry(nested = $text, max = 3, stats = false)]
                    async fn call() -> Result<(), AnyClass> {
                        INNER_ATTEMPTS.set(INNER_ATTEMPTS.get() + 1);
                        Err(AnyClass::Transient)
                    }
                    ($text, Box::pin(call()))
                })*
            }
        }
    };
}

fn_per_nested! {
    Once => "once",
    Retry => "retry",
}

/// The attempts `inner` makes, run inside one attempt of an outer call.
async fn inner_attempts(inner: impl Future<Output = Result<(), AnyClass>>) -> u32 {
    INNER_ATTEMPTS.set(0);
    let mut inner = Some(inner);
    let outer = Policy::new().max(1);
    let outer = outer.retry(|| inner.take().expect("one outer attempt"));
    assert!(outer.await.is_err());
    INNER_ATTEMPTS.get()
}

#[tokio::test(start_paused = true)]
async fn every_nested_value_is_spelled_as_the_runtime_spells_it_and_reaches_the_policy() {
    let all = [Nested::Once, Nested::Retry];
    let mut seen = Vec::new();
    for nested in all {
        let (text, call) = with_nested(nested);
        assert_eq!(text, nested.as_str());
        let by_macro = inner_attempts(call).await;
        let policy = Policy::new().max(3).nested(nested);
        let by_policy = inner_attempts(policy.retry(|| async {
            INNER_ATTEMPTS.set(INNER_ATTEMPTS.get() + 1);
            Err::<(), _>(AnyClass::Transient)
        }))
        .await;
        assert_eq!(by_macro, by_policy, "nested = {text:?}");
        assert!(!seen.contains(&by_macro), "nested = {text:?} is another's");
        seen.push(by_macro);
    }
}

/// A fn per retryable class, `#[retry(on = ...)]` with the class given,
/// failing with the class it is called with.
macro_rules! fn_per_retried_class {
    ($($variant:ident),* $(,)?) => {
        /// The class's name as `on` took it, and a call failing with `error`;
        /// `None` for a class that is never retried (`on` rejects it).
        fn with_on(class: ErrorClass, error: AnyClass, attempts: &Cell<u32>) -> Option<(&'static str, Pin<Box<dyn Future<Output = Result<(), AnyClass>> + '_>>)> {
            match class {
                $(ErrorClass::$variant => {
                    #[retry(on = $variant, max = 2, stats = false)]
                    async fn call(error: AnyClass, attempts: &Cell<u32>) -> Result<(), AnyClass> {
                        attempts.set(attempts.get() + 1);
                        Err(error)
                    }
                    Some((stringify!($variant), Box::pin(call(error, attempts))))
                })*
                ErrorClass::Invalid | ErrorClass::Fatal => None,
            }
        }
    };
}

fn_per_retried_class!(Transient, RateLimited);

#[retry(on = Transient | RateLimited, max = 2, stats = false)]
async fn on_every_retried_class(error: AnyClass, attempts: &Cell<u32>) -> Result<(), AnyClass> {
    attempts.set(attempts.get() + 1);
    Err(error)
}

#[tokio::test(start_paused = true)]
async fn every_retryable_class_is_an_on_value_and_retries_that_class_only() {
    let mut covered = Vec::new();
    for class in ErrorClass::ALL {
        for failing in ErrorClass::ALL {
            let attempts = Cell::new(0);
            let Some((text, call)) = with_on(class, AnyClass::of(failing), &attempts) else {
                assert!(!class.is_retryable(), "{class} has no `on` fn");
                continue;
            };
            assert_eq!(text, format!("{class:?}"));
            assert!(call.await.is_err());
            let retried = attempts.get() == 2;
            assert_eq!(retried, failing == class, "on = {text}, failing {failing}");
            covered.push(class);
        }
    }
    let retryable: Vec<ErrorClass> = ErrorClass::ALL
        .into_iter()
        .filter(|class| class.is_retryable())
        .flat_map(|class| std::iter::repeat_n(class, ErrorClass::ALL.len()))
        .collect();
    assert_eq!(covered, retryable);

    for failing in ErrorClass::ALL {
        let attempts = Cell::new(0);
        assert!(
            on_every_retried_class(AnyClass::of(failing), &attempts)
                .await
                .is_err()
        );
        assert_eq!(attempts.get() == 2, failing.is_retryable(), "{failing}");
        assert_eq!(failing.is_retryable(), RetryOn::DEFAULT.contains(failing));
    }
}

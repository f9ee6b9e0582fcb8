//! `#[retry(fallback = path)]`: after the last attempt, a designed end —
//! a default value, a graceful message, a hand-off — counted in the
//! statistics, and told to the model.
use std::cell::Cell;

use tenacious::agent::{Observation, Status};
use tenacious::{Classify, Failure, StopReason, retry};

#[derive(Debug, PartialEq, Classify)]
enum WeatherError {
    #[classify(transient)]
    Unavailable,
    #[classify(fatal)]
    BadKey,
}

impl std::fmt::Display for WeatherError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Unavailable => "the weather service is unavailable",
            Self::BadKey => "the API key was refused",
        })
    }
}

thread_local! {
    static CALLS: Cell<u32> = const { Cell::new(0) };
}

fn call() -> u32 {
    CALLS.with(|calls| {
        calls.set(calls.get() + 1);
        calls.get()
    })
}

/// The answer from the cache, when the service gave up: what the model
/// reads says a fallback answered, and why.
fn cached(failure: Failure<WeatherError>) -> Result<String, WeatherError> {
    let obs = Observation::fallback("call_1", &failure, "cached forecast: sunny, 21 °C");
    Ok(serde_json::to_string(&obs).unwrap())
}

#[retry(max = 3, base = "1ms", fallback = cached, stats = "fallback: forecast")]
async fn forecast(city: &str) -> Result<String, WeatherError> {
    call();
    if city == "Paris" {
        Ok("rain".to_owned())
    } else {
        Err(WeatherError::Unavailable)
    }
}

#[tokio::test(start_paused = true)]
async fn a_give_up_is_answered_by_the_fallback_and_counted() {
    CALLS.with(|c| c.set(0));
    let answer = forecast("Lyon").await.unwrap();
    assert_eq!(CALLS.with(Cell::get), 3, "every attempt was made first");
    let obs: serde_json::Value = serde_json::from_str(&answer).unwrap();
    assert_eq!(obs["status"], Status::Fallback.as_str());
    assert_eq!(obs["fallback"], "cached forecast: sunny, 21 °C");
    assert_eq!(obs["attempts"], 3);
    assert_eq!(obs["error"], "the weather service is unavailable");
    // A success does not reach the fallback.
    assert_eq!(forecast("Paris").await.unwrap(), "rain");
    let stats = tenacious::stats::snapshot();
    let record = stats.get("fallback: forecast").expect("the fn's record");
    assert_eq!(record.fallbacks(), 1);
    assert_eq!(record.gave_up(StopReason::Exhausted), 1);
    assert_eq!(record.calls(), 2);
}

/// A fallback may hand the give-up on: a fault a human must fix stays
/// an error.
fn unless_fatal(failure: Failure<WeatherError>) -> Result<String, Failure<WeatherError>> {
    match failure.last() {
        WeatherError::Unavailable => Ok("no forecast right now".to_owned()),
        WeatherError::BadKey => Err(failure),
    }
}

#[retry(max = 2, base = "1ms", fallback = unless_fatal)]
fn forecast_or_hand_on(key: &str) -> Result<String, Failure<WeatherError>> {
    call();
    if key.is_empty() {
        Err(WeatherError::BadKey)
    } else {
        Err(WeatherError::Unavailable)
    }
}

#[test]
fn a_fallback_on_a_sync_fn_returning_a_failure_may_hand_it_on() {
    assert_eq!(forecast_or_hand_on("k").unwrap(), "no forecast right now");
    let failure = forecast_or_hand_on("").unwrap_err();
    assert_eq!(*failure.last(), WeatherError::BadKey);
    assert_eq!(failure.stop_reason(), StopReason::NotRetryable);
}

/// A fallback may take the last error alone: a default value.
fn unknown(_: WeatherError) -> Result<String, WeatherError> {
    Ok("unknown".to_owned())
}

#[retry(max = 2, base = "1ms", fallback = unknown)]
fn forecast_or_default() -> Result<String, WeatherError> {
    call();
    Err(WeatherError::Unavailable)
}

#[test]
fn a_fallback_of_the_last_error_gives_a_default() {
    assert_eq!(forecast_or_default().unwrap(), "unknown");
}

//! Feature `http`: `HttpError` with the provider's error body: what it
//! keeps, what it parses, the preset table row by row, and how the presets
//! meet `x-should-retry` and `Retry-After`. Hostile bodies never panic.
#![cfg(feature = "http")]
use std::time::Duration;

use http::{HeaderMap, HeaderValue, StatusCode};
use proptest::prelude::*;
use tenacious_runtime::ErrorClass::{Fatal, Invalid, RateLimited, Transient};
use tenacious_runtime::{Classify, ErrorClass, HttpError, Signals};

fn status(code: u16) -> StatusCode {
    StatusCode::from_u16(code).unwrap()
}

fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
    let mut map = HeaderMap::new();
    for &(name, value) in pairs {
        map.append(name, HeaderValue::from_static(value));
    }
    map
}

fn with_body(code: u16, body: &str) -> HttpError {
    HttpError::new(status(code)).with_body(body.as_bytes())
}

/// An OpenAI-shaped error object with `code` (and `type`).
fn openai(kind: &str, code: &str) -> String {
    format!(r#"{{"error": {{"message": "m", "type": "{kind}", "param": null, "code": "{code}"}}}}"#)
}

/// An Anthropic-shaped error object of `kind`, with `message`.
fn anthropic(kind: &str, message: &str) -> String {
    format!(r#"{{"type": "error", "error": {{"type": "{kind}", "message": "{message}"}}}}"#)
}

const QUOTA: &str = "the account's quota is spent: a human must add credit or raise its plan; retrying will not help";
const SPEND: &str = "the account reached its spending limit: a human must raise the limit or add credit; retrying will not help";
const CONTEXT: &str =
    "the prompt is longer than the model's context window: shorten it or summarise earlier turns";
const OVERLOADED: &str = "the provider is overloaded; trying again later may succeed";
const RATE: &str = "the server is rate limiting; wait before trying again";

/// The preset table in the docs of `HttpError`, row by row, each at the
/// status the provider sends and at another one (the body decides).
#[test]
fn preset_table() {
    let spend_limit_anthropic = r#"{"type": "error", "error": {"type": "rate_limit_error",
        "message": "m", "details": {"error_code": "enforced_spend_limit_reached"}}}"#;
    let rows: Vec<(String, u16, ErrorClass, &str)> = vec![
        (
            openai("insufficient_quota", "insufficient_quota"),
            429,
            Fatal,
            QUOTA,
        ),
        (openai("requests", "insufficient_quota"), 403, Fatal, QUOTA),
        (spend_limit_anthropic.to_owned(), 429, Fatal, SPEND),
        (
            openai("requests", "organization_spend_limit_exceeded"),
            429,
            Fatal,
            SPEND,
        ),
        (
            openai("requests", "project_spend_limit_exceeded"),
            429,
            Fatal,
            SPEND,
        ),
        (
            openai("invalid_request_error", "billing_hard_limit_reached"),
            400,
            Fatal,
            SPEND,
        ),
        (
            openai("billing_not_active", "billing_not_active"),
            429,
            Fatal,
            SPEND,
        ),
        (anthropic("billing_error", "m"), 402, Fatal, SPEND),
        (
            anthropic(
                "invalid_request_error",
                "You have reached your specified API usage limits. You will regain access on 2025-08-01 at 00:00 UTC.",
            ),
            400,
            Fatal,
            SPEND,
        ),
        (
            anthropic(
                "invalid_request_error",
                "You have reached your specified workspace API usage limits.",
            ),
            400,
            Fatal,
            SPEND,
        ),
        (
            anthropic(
                "invalid_request_error",
                "Your credit balance is too low to access the Anthropic API.",
            ),
            400,
            Fatal,
            SPEND,
        ),
        (
            openai("invalid_request_error", "context_length_exceeded"),
            400,
            Invalid,
            CONTEXT,
        ),
        (
            openai("invalid_request_error", "context_length_exceeded"),
            413,
            Invalid,
            CONTEXT,
        ),
        (
            anthropic(
                "invalid_request_error",
                "prompt is too long: 210000 tokens > 200000 maximum",
            ),
            400,
            Invalid,
            CONTEXT,
        ),
        (
            anthropic("overloaded_error", "Overloaded"),
            529,
            Transient,
            OVERLOADED,
        ),
        (
            anthropic("overloaded_error", "Overloaded"),
            500,
            Transient,
            OVERLOADED,
        ),
        (
            anthropic("overloaded_error", "Overloaded"),
            400,
            Transient,
            OVERLOADED,
        ),
        (
            openai("requests", "rate_limit_exceeded"),
            429,
            RateLimited,
            RATE,
        ),
        (
            openai("tokens", "rate_limit_exceeded"),
            400,
            RateLimited,
            RATE,
        ),
        (anthropic("rate_limit_error", "m"), 429, RateLimited, RATE),
    ];
    for (body, code, class, hint) in rows {
        let error = with_body(code, &body);
        assert_eq!(error.classify(), class, "{code} {body}");
        assert_eq!(error.hint().as_deref(), Some(hint), "{code} {body}");
        assert_eq!(error.variant(), status(code).variant(), "{code} {body}");
        assert_eq!(
            error.signals().is_overloaded(),
            body.contains("overloaded_error") || code == 529,
            "{code} {body}"
        );
    }
}

/// A body that says none of the presets' names classifies as none was
/// given: the status table, its hint, its signals.
#[test]
fn other_bodies_leave_the_status_to_decide() {
    let bodies = [
        openai("invalid_request_error", "model_not_found"),
        anthropic("invalid_request_error", "max_tokens: must be positive"),
        anthropic("api_error", "Internal server error"),
        // Words count only in Anthropic's invalid request.
        anthropic("api_error", "prompt is too long"),
        openai("server_error", "Your credit balance is too low"),
        "<html><body>502 Bad Gateway</body></html>".to_owned(),
        String::new(),
        "[]".to_owned(),
        "null".to_owned(),
        r#"{"error": {"type": 7, "code": 429, "message": ["no"]}}"#.to_owned(),
    ];
    for code in [400, 404, 429, 500, 502, 503, 529] {
        let bare = HttpError::new(status(code));
        for body in &bodies {
            let error = with_body(code, body);
            assert_eq!(error.classify(), bare.classify(), "{code} {body}");
            assert_eq!(error.hint(), bare.hint(), "{code} {body}");
            assert_eq!(error.signals(), bare.signals(), "{code} {body}");
        }
    }
}

#[test]
fn the_parts_of_each_shape() {
    let error = with_body(429, &openai("insufficient_quota", "insufficient_quota"));
    assert_eq!(error.error_type(), Some("insufficient_quota"));
    assert_eq!(error.error_code(), Some("insufficient_quota"));
    assert_eq!(error.error_message(), Some("m"));

    // Anthropic: no `code`, a `details.error_code`.
    let error = with_body(
        429,
        r#"{"type":"error","error":{"type":"rate_limit_error","message":"m","details":{"error_code":"enforced_spend_limit_reached"}},"request_id":"req_1"}"#,
    );
    assert_eq!(error.error_type(), Some("rate_limit_error"));
    assert_eq!(error.error_code(), Some("enforced_spend_limit_reached"));

    // OpenAI's `code: null` falls back to nothing else.
    let error = with_body(
        500,
        r#"{"error": {"message": "oops", "type": "server_error", "param": null, "code": null}}"#,
    );
    assert_eq!(error.error_type(), Some("server_error"));
    assert_eq!(error.error_code(), None);

    // A flat object (Mistral, vLLM); a code that is a number is not read.
    let error = with_body(
        429,
        r#"{"object":"error","message":"Rate limit exceeded","type":"rate_limited","param":null,"code":"1300"}"#,
    );
    assert_eq!(error.error_type(), Some("rate_limited"));
    assert_eq!(error.error_code(), Some("1300"));
    assert_eq!(error.error_message(), Some("Rate limit exceeded"));
    let error = with_body(
        400,
        r#"{"object":"error","message":"This model's maximum context length is 4096 tokens.","type":"BadRequestError","code":400}"#,
    );
    assert_eq!(error.error_code(), None);
    assert_eq!(error.classify(), Invalid);

    // `{"error": "..."}`: a message alone.
    let error = with_body(502, r#"{"error": "upstream timed out"}"#);
    assert_eq!(error.error_message(), Some("upstream timed out"));
    assert_eq!(error.error_type(), None);

    // Not JSON: kept, says nothing.
    let error = with_body(502, "<html>bad gateway</html>");
    assert_eq!(error.body(), Some(&b"<html>bad gateway</html>"[..]));
    assert_eq!(error.error_message(), None);

    // No body given.
    let error = HttpError::new(StatusCode::BAD_GATEWAY);
    assert_eq!(error.body(), None);
    assert!(!error.is_body_truncated());
    assert_eq!(error.error_type(), None);
}

/// At most `MAX_BODY` bytes are kept; a body over it is kept cut and not
/// parsed (its end, where a JSON object closes, is gone).
#[test]
fn the_body_is_bounded() {
    assert_eq!(HttpError::MAX_BODY, 64 * 1024);
    let quota = openai("insufficient_quota", "insufficient_quota");
    let pad = |len: usize| {
        let mut body = quota.clone().into_bytes();
        body.resize(len, b' '); // trailing whitespace: still one JSON value
        body
    };

    let whole = pad(HttpError::MAX_BODY);
    let error = HttpError::new(StatusCode::TOO_MANY_REQUESTS).with_body(&whole);
    assert!(!error.is_body_truncated());
    assert_eq!(error.body().map(<[u8]>::len), Some(HttpError::MAX_BODY));
    assert_eq!(error.classify(), Fatal);

    let over = pad(HttpError::MAX_BODY + 1);
    let error = HttpError::new(StatusCode::TOO_MANY_REQUESTS).with_body(&over);
    assert!(error.is_body_truncated());
    assert_eq!(error.body(), Some(&over[..HttpError::MAX_BODY]));
    assert_eq!(error.error_code(), None);
    assert_eq!(error.classify(), RateLimited);
}

/// A `Fatal` or `Invalid` preset is final; the others go through
/// `x-should-retry` and the hint rule as the status class would.
#[test]
fn presets_and_headers() {
    let quota = openai("insufficient_quota", "insufficient_quota");
    let revive = headers(&[("x-should-retry", "true"), ("retry-after", "5")]);
    let error =
        HttpError::from_parts_with_body(StatusCode::TOO_MANY_REQUESTS, &revive, quota.as_bytes());
    assert_eq!(error.classify(), Fatal);
    assert_eq!(error.hint().as_deref(), Some(QUOTA));
    // The hint is still read: it is the server's, whatever the class.
    assert_eq!(error.retry_after(), Some(Duration::from_secs(5)));

    let context = openai("invalid_request_error", "context_length_exceeded");
    let error =
        HttpError::from_parts_with_body(StatusCode::BAD_REQUEST, &revive, context.as_bytes());
    assert_eq!(error.classify(), Invalid);

    let overloaded = anthropic("overloaded_error", "Overloaded");
    let refuse = headers(&[("x-should-retry", "false")]);
    let error = HttpError::from_parts_with_body(status(529), &refuse, overloaded.as_bytes());
    assert_eq!(error.classify(), Invalid);
    assert_eq!(
        error.hint().as_deref(),
        Some("the server asked not to retry this request; change it or try another route")
    );
    assert!(error.signals().is_overloaded());

    let wait = headers(&[("retry-after", "3")]);
    let error = HttpError::from_parts_with_body(status(529), &wait, overloaded.as_bytes());
    assert_eq!(error.classify(), RateLimited);
    assert_eq!(error.retry_after(), Some(Duration::from_secs(3)));
    assert_eq!(error.hint().as_deref(), Some(OVERLOADED));

    // A rate limit on a status that is not retryable: the body says wait.
    let rate = openai("tokens", "rate_limit_exceeded");
    let error = HttpError::from_parts_with_body(StatusCode::BAD_REQUEST, &wait, rate.as_bytes());
    assert_eq!(error.classify(), RateLimited);
}

#[test]
fn builders_after_the_body() {
    let overloaded = anthropic("overloaded_error", "Overloaded");
    let error = with_body(500, &overloaded);
    assert!(error.signals().is_overloaded());
    // `with_signals` replaces what was read, the body's overloaded included.
    let quiet = error.clone().with_signals(Signals::NONE);
    assert_eq!(quiet.signals(), Signals::NONE);
    assert_eq!(quiet.classify(), Transient);
    // A later body replaces the first.
    let replaced = error.with_body(openai("insufficient_quota", "insufficient_quota").as_bytes());
    assert_eq!(replaced.classify(), Fatal);
    assert_eq!(replaced.error_type(), Some("insufficient_quota"));
}

#[test]
fn display_says_the_providers_words() {
    let error = HttpError::from_parts_with_body(
        StatusCode::TOO_MANY_REQUESTS,
        &headers(&[("retry-after", "1")]),
        br#"{"error": {"message": "Rate limit reached for gpt-4o", "type": "requests", "param": null, "code": "rate_limit_exceeded"}}"#,
    );
    assert_eq!(
        error.to_string(),
        "HTTP 429 Too Many Requests (retry after 1s): rate_limit_exceeded: Rate limit reached for gpt-4o"
    );
    let error = with_body(529, &anthropic("overloaded_error", "Overloaded"));
    assert_eq!(
        error.to_string(),
        "HTTP 529 <unknown status code>: overloaded_error: Overloaded"
    );
    assert_eq!(
        with_body(502, "<html/>").to_string(),
        "HTTP 502 Bad Gateway"
    );
}

/// `Debug` shows the start of a body, never all 64 KiB of it.
#[test]
fn debug_is_bounded() {
    let body = vec![b'x'; HttpError::MAX_BODY];
    let error = HttpError::new(StatusCode::BAD_GATEWAY).with_body(&body);
    let debug = format!("{error:?}");
    assert!(debug.len() < 1024, "{} bytes", debug.len());
    assert!(debug.contains("len: 65536"), "{debug}");
}

#[test]
fn clones_and_equality() {
    let quota = openai("insufficient_quota", "insufficient_quota");
    let error = with_body(429, &quota);
    let clone = error.clone();
    assert_eq!(clone, error);
    assert_ne!(error, HttpError::new(StatusCode::TOO_MANY_REQUESTS));
    assert_ne!(
        error,
        with_body(429, &openai("requests", "rate_limit_exceeded"))
    );
    // A clone shares the body: the same bytes, not a copy.
    assert_eq!(
        clone.body().unwrap().as_ptr(),
        error.body().unwrap().as_ptr()
    );
    fn send_sync<T: Send + Sync + 'static>(_: &T) {}
    send_sync(&error);
}

/// Deeper than `serde_json`'s recursion limit: no stack overflow, nothing
/// read.
#[test]
fn deep_nesting_says_nothing() {
    let depth = 100_000;
    let body = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    let error = with_body(429, &body[..HttpError::MAX_BODY.min(body.len())]);
    assert_eq!(error.error_type(), None);
    assert_eq!(error.classify(), RateLimited);
    let object = format!(
        r#"{{"error": {}{}}}"#,
        "{\"a\":".repeat(200),
        "1}".repeat(200)
    );
    assert_eq!(with_body(429, &object).error_type(), None);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    /// Any bytes: no panic, the class is one the status or a preset gives.
    #[test]
    fn any_body_is_safe(code in 100u16..1000, body in proptest::collection::vec(any::<u8>(), 0..512)) {
        let error = HttpError::new(status(code)).with_body(&body);
        let _ = (error.classify(), error.hint(), error.to_string(), format!("{error:?}"));
        prop_assert_eq!(error.body(), Some(&body[..]));
    }

    /// Any JSON object of the providers' shapes with any strings: no panic,
    /// and the fields come back as sent.
    #[test]
    fn any_error_object_reads_back(kind in "\\PC{0,40}", code in "\\PC{0,40}", message in "\\PC{0,80}") {
        let body = serde_json::json!({"error": {"type": kind, "code": code, "message": message}}).to_string();
        let error = with_body(429, &body);
        prop_assert_eq!(error.error_type(), Some(kind.as_str()));
        prop_assert_eq!(error.error_code(), Some(code.as_str()));
        prop_assert_eq!(error.error_message(), Some(message.as_str()));
        let _ = (error.classify(), error.hint(), error.to_string());
    }
}

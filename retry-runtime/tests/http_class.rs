//! Feature `http`: the status table, `HttpError` and `retry_after::from_headers`.
#![cfg(feature = "http")]
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use http::{HeaderMap, HeaderValue, Response, StatusCode};
use proptest::prelude::*;
use tenacious_runtime::ErrorClass::{Fatal, Invalid, RateLimited, Transient};
use tenacious_runtime::{Classify, ErrorClass, HttpError, retry_after};

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

/// The table in the docs of `impl Classify for StatusCode`, row by row.
#[test]
fn status_table() {
    let rows: &[(&[u16], ErrorClass)] = &[
        (&[408, 421, 423, 425], Transient),
        (&[429], RateLimited),
        (&[401, 402, 403, 407, 511], Fatal),
        (
            &[
                400, 404, 405, 409, 410, 411, 412, 413, 415, 418, 422, 424, 426, 431, 451, 499,
            ],
            Invalid,
        ),
        (&[501, 505], Invalid),
        (
            &[500, 502, 503, 504, 506, 507, 508, 510, 520, 529, 599],
            Transient,
        ),
        (
            &[100, 101, 200, 201, 204, 301, 302, 304, 307, 600, 700, 999],
            Invalid,
        ),
    ];
    for (codes, class) in rows {
        for &code in *codes {
            assert_eq!(status(code).classify(), *class, "{code}");
        }
    }
}

#[test]
fn a_bare_status_has_no_server_hint() {
    assert_eq!(StatusCode::TOO_MANY_REQUESTS.retry_after(), None);
}

#[test]
fn status_variant_is_a_static_label_per_code() {
    assert_eq!(status(100).variant(), "Status100");
    assert_eq!(StatusCode::TOO_MANY_REQUESTS.variant(), "Status429");
    assert_eq!(status(529).variant(), "Status529");
    assert_eq!(status(999).variant(), "Status999");
}

#[test]
fn status_hints_advise_the_common_codes() {
    let hint = |code| status(code).hint().map(|h| h.into_owned());
    assert!(hint(401).unwrap().contains("credentials"));
    assert!(hint(429).unwrap().contains("rate limiting"));
    assert!(hint(529).unwrap().contains("server failed"));
    assert_eq!(hint(200), None);
    assert_eq!(hint(418), None);
}

#[test]
fn from_headers_takes_the_longer_of_retry_after_ms_and_retry_after() {
    let now = UNIX_EPOCH;
    let both = headers(&[("retry-after", "2"), ("retry-after-ms", "1500")]);
    assert_eq!(
        retry_after::from_headers(&both, now),
        Some(Duration::from_secs(2))
    );
    let precise = headers(&[("retry-after", "2"), ("retry-after-ms", "2500")]);
    assert_eq!(
        retry_after::from_headers(&precise, now),
        Some(Duration::from_millis(2500))
    );
    // A zero `retry-after-ms` does not cancel a minute's `Retry-After`.
    let zero_ms = headers(&[("retry-after", "60"), ("retry-after-ms", "0")]);
    assert_eq!(
        retry_after::from_headers(&zero_ms, now),
        Some(Duration::from_secs(60))
    );
    let seconds_only = headers(&[("Retry-After", "2")]);
    assert_eq!(
        retry_after::from_headers(&seconds_only, now),
        Some(Duration::from_secs(2))
    );
    assert_eq!(retry_after::from_headers(&HeaderMap::new(), now), None);
}

#[test]
fn from_headers_falls_back_when_retry_after_ms_is_unreadable() {
    let now = UNIX_EPOCH;
    let garbage_ms = headers(&[("retry-after-ms", "-1"), ("retry-after", "2")]);
    assert_eq!(
        retry_after::from_headers(&garbage_ms, now),
        Some(Duration::from_secs(2))
    );
    let mut opaque = headers(&[("retry-after", "3")]);
    opaque.insert(
        "retry-after-ms",
        HeaderValue::from_bytes(b"\xff1500").unwrap(),
    );
    assert_eq!(
        retry_after::from_headers(&opaque, now),
        Some(Duration::from_secs(3))
    );
    let all_garbage = headers(&[("retry-after-ms", "soon"), ("retry-after", "later")]);
    assert_eq!(retry_after::from_headers(&all_garbage, now), None);
}

#[test]
fn from_headers_reads_the_first_of_repeated_values() {
    let repeated = headers(&[("retry-after", "4"), ("retry-after", "9")]);
    assert_eq!(
        retry_after::from_headers(&repeated, UNIX_EPOCH),
        Some(Duration::from_secs(4))
    );
}

#[test]
fn from_headers_takes_dates_relative_to_now() {
    let date = headers(&[("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT")]);
    let now = UNIX_EPOCH + Duration::from_secs(1_445_412_470);
    assert_eq!(
        retry_after::from_headers(&date, now),
        Some(Duration::from_secs(10))
    );
}

#[test]
fn http_error_without_headers_is_its_status() {
    for code in [200, 400, 401, 408, 429, 500, 503] {
        let error = HttpError::from_parts(status(code), &HeaderMap::new());
        assert_eq!(error.classify(), status(code).classify(), "{code}");
        assert_eq!(error.retry_after(), None);
        assert_eq!(error.should_retry(), None);
        assert_eq!(error.variant(), status(code).variant());
        assert_eq!(error, HttpError::from(status(code)));
    }
}

#[test]
fn service_unavailable_with_retry_after_is_rate_limited() {
    let error = HttpError::from_parts(
        StatusCode::SERVICE_UNAVAILABLE,
        &headers(&[("retry-after", "3")]),
    );
    assert_eq!(error.classify(), RateLimited);
    assert_eq!(error.retry_after(), Some(Duration::from_secs(3)));
    assert_eq!(error.variant(), "Status503");
}

#[test]
fn too_many_requests_carries_the_hint() {
    let error = HttpError::from_parts(
        StatusCode::TOO_MANY_REQUESTS,
        &headers(&[("retry-after-ms", "250.5")]),
    );
    assert_eq!(error.classify(), RateLimited);
    assert_eq!(error.retry_after(), Some(Duration::from_micros(250_500)));
}

#[test]
fn a_hint_does_not_make_a_refusal_retryable() {
    let error = HttpError::from_parts(StatusCode::BAD_REQUEST, &headers(&[("retry-after", "3")]));
    assert_eq!(error.classify(), Invalid);
    let error = HttpError::from_parts(StatusCode::FORBIDDEN, &headers(&[("retry-after", "3")]));
    assert_eq!(error.classify(), Fatal);
}

/// The `x-should-retry` table in the docs of `HttpError`, row by row.
#[test]
fn should_retry_table() {
    let rows: &[(u16, &'static str, Option<&'static str>, ErrorClass)] = &[
        (503, "true", None, Transient),
        (429, "true", None, RateLimited),
        (400, "true", None, Transient),
        (401, "true", None, Transient),
        (409, "true", Some("2"), RateLimited),
        (503, "false", None, Invalid),
        (503, "false", Some("2"), Invalid),
        (429, "false", Some("2"), Invalid),
        (400, "false", None, Invalid),
        (401, "false", None, Fatal),
    ];
    for &(code, verdict, wait, class) in rows {
        let mut map = headers(&[("x-should-retry", verdict)]);
        if let Some(wait) = wait {
            map.insert("retry-after", HeaderValue::from_static(wait));
        }
        let error = HttpError::from_parts(status(code), &map);
        assert_eq!(
            error.classify(),
            class,
            "{code} x-should-retry: {verdict}, retry-after: {wait:?}"
        );
    }
}

#[test]
fn should_retry_is_read_case_insensitively_and_otherwise_ignored() {
    let read = |value| {
        HttpError::from_parts(
            StatusCode::BAD_GATEWAY,
            &headers(&[("X-Should-Retry", value)]),
        )
    };
    assert_eq!(read("TRUE").should_retry(), Some(true));
    assert_eq!(read(" False\t").should_retry(), Some(false));
    assert_eq!(read("False").classify(), Invalid);
    for ignored in ["yes", "1", "", "true, false", "truefalse"] {
        assert_eq!(read(ignored).should_retry(), None, "{ignored:?}");
        assert_eq!(read(ignored).classify(), Transient, "{ignored:?}");
    }
}

#[test]
fn a_refused_retry_says_so_in_the_hint() {
    let refused = HttpError::from_parts(
        StatusCode::BAD_GATEWAY,
        &headers(&[("x-should-retry", "false")]),
    );
    assert!(refused.hint().unwrap().contains("asked not to retry"));
    let plain = HttpError::new(StatusCode::BAD_GATEWAY);
    assert_eq!(plain.hint(), StatusCode::BAD_GATEWAY.hint());
}

#[test]
fn builders_override_what_the_headers_said() {
    let error = HttpError::from_parts(
        StatusCode::TOO_MANY_REQUESTS,
        &headers(&[("retry-after", "60")]),
    )
    .with_retry_after(Some(Duration::from_secs(1)))
    .with_should_retry(Some(false));
    assert_eq!(error.retry_after(), Some(Duration::from_secs(1)));
    assert_eq!(error.classify(), Invalid);
    assert_eq!(error.with_should_retry(None).classify(), RateLimited);
    assert_eq!(
        HttpError::new(StatusCode::INTERNAL_SERVER_ERROR)
            .with_retry_after(None)
            .classify(),
        Transient
    );
}

#[test]
fn from_response_reads_status_and_headers() {
    let response = Response::builder()
        .status(StatusCode::TOO_MANY_REQUESTS)
        .header("retry-after", "7")
        .body(())
        .unwrap();
    let error = HttpError::from_response(&response);
    assert_eq!(error.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(error.retry_after(), Some(Duration::from_secs(7)));
}

#[test]
fn http_error_displays_status_and_hint() {
    assert_eq!(
        HttpError::new(StatusCode::BAD_GATEWAY).to_string(),
        "HTTP 502 Bad Gateway"
    );
    let limited = HttpError::new(StatusCode::TOO_MANY_REQUESTS)
        .with_retry_after(Some(Duration::from_millis(1500)));
    assert_eq!(
        limited.to_string(),
        "HTTP 429 Too Many Requests (retry after 1.5s)"
    );
}

#[test]
fn http_error_is_a_std_error() {
    let boxed: Box<dyn std::error::Error + Send + Sync> =
        Box::new(HttpError::new(StatusCode::NOT_FOUND));
    assert!(boxed.downcast_ref::<HttpError>().is_some());
}

/// Header bytes: mostly readable near-misses (so the parsers run), some
/// arbitrary bytes (most of which `HeaderValue` refuses, some it keeps as
/// opaque obs-text).
fn header_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        "[0-9. \t+-]{0,25}".prop_map(String::into_bytes),
        "(?i)[ \t]*(true|false|yes)[ \t]*".prop_map(String::into_bytes),
        "[ -~]{0,40}".prop_map(String::into_bytes),
        Just(b"Wed, 21 Oct 2015 07:28:00 GMT".to_vec()),
        proptest::collection::vec(any::<u8>(), 0..40),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(10_000))]

    /// Hostile header values never panic, and whatever they say, a readable
    /// hint is what `retry_after()` returns and a hint never turns a refusal
    /// into a retry.
    #[test]
    fn hostile_headers(
        code in 100u16..=999,
        retry_after in header_bytes(),
        retry_after_ms in header_bytes(),
        should_retry in header_bytes(),
        now_secs in any::<u32>(),
    ) {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(u64::from(now_secs));
        let mut map = HeaderMap::new();
        for (name, bytes) in [("retry-after", &retry_after), ("retry-after-ms", &retry_after_ms), ("x-should-retry", &should_retry)] {
            if let Ok(value) = HeaderValue::from_bytes(bytes) {
                map.insert(name, value);
            }
        }
        let error = HttpError::from_parts_at(status(code), &map, now);
        prop_assert_eq!(error.retry_after(), retry_after::from_headers(&map, now));
        let _ = (error.hint(), error.variant(), error.to_string());
        if error.should_retry().is_none() {
            let by_status = status(code).classify();
            let expected = if by_status == Transient && error.retry_after().is_some() { RateLimited } else { by_status };
            prop_assert_eq!(error.classify(), expected);
        }
    }
}

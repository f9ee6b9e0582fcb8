//! `rate_limits`: OpenAI's and Anthropic's request-window headers read
//! into `Signals`, and kept by `HttpError`. Hostile input gives `None` or
//! saturates, never panics.
#![cfg(feature = "http")]
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use http::{HeaderMap, HeaderValue, StatusCode};
use proptest::prelude::*;
use tenacious_runtime::rate_limits::{
    from_headers_at, parse_go_duration, parse_remaining, parse_reset_time,
};
use tenacious_runtime::{Classify, HttpError, Signals};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// 2024-06-27T18:25:00Z.
fn now() -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(1_719_512_700)
}

fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
    let mut map = HeaderMap::new();
    for (name, value) in pairs {
        map.insert(*name, HeaderValue::from_str(value).unwrap());
    }
    map
}

#[test]
fn go_durations_as_openai_sends_them() {
    let table: &[(&str, Option<Duration>)] = &[
        ("6m0s", Some(Duration::from_secs(360))),
        ("20ms", Some(ms(20))),
        ("1s", Some(Duration::from_secs(1))),
        ("0.5s", Some(ms(500))),
        ("1h2m3.5s", Some(ms(3_723_500))),
        ("0s", Some(Duration::ZERO)),
        ("0", Some(Duration::ZERO)),
        (" 7s\t", Some(Duration::from_secs(7))),
        ("1.5us", Some(Duration::from_nanos(1_500))),
        ("3\u{b5}s", Some(Duration::from_micros(3))),
        ("3\u{3bc}s", Some(Duration::from_micros(3))),
        ("7ns", Some(Duration::from_nanos(7))),
        (".5s", Some(ms(500))),
        ("1.s", Some(Duration::from_secs(1))),
        ("2h45m", Some(Duration::from_secs(9_900))),
        ("1.0000000001s", Some(Duration::from_secs(1))),
        ("0.0000000019s", Some(Duration::from_nanos(1))),
        ("99999999999999999999h", Some(Duration::MAX)),
        ("18446744073709551615s1h", Some(Duration::MAX)),
        ("-1s", None),
        ("+1s", None),
        ("1", None),
        ("1x", None),
        ("1S", None),
        ("s", None),
        (".s", None),
        ("1.2.3s", None),
        ("1s ", Some(Duration::from_secs(1))),
        ("1 s", None),
        ("", None),
        ("   ", None),
        ("NaN", None),
        ("inf", None),
        ("\u{661}s", None),
    ];
    for (value, expected) in table {
        assert_eq!(parse_go_duration(value), *expected, "{value:?}");
    }
}

#[test]
fn counts_of_requests_left() {
    let table: &[(&str, Option<u64>)] = &[
        ("59", Some(59)),
        ("0", Some(0)),
        (" 42\t", Some(42)),
        ("007", Some(7)),
        ("99999999999999999999999", Some(u64::MAX)),
        ("-1", None),
        ("+1", None),
        ("1.5", None),
        ("1e3", None),
        ("", None),
        ("many", None),
    ];
    for (value, expected) in table {
        assert_eq!(parse_remaining(value), *expected, "{value:?}");
    }
}

#[test]
fn rfc3339_times_as_anthropic_sends_them() {
    let table: &[(&str, Option<Duration>)] = &[
        ("2024-06-27T18:25:30Z", Some(Duration::from_secs(30))),
        ("2024-06-27t18:25:30z", Some(Duration::from_secs(30))),
        ("2024-06-27 18:25:30Z", Some(Duration::from_secs(30))),
        ("2024-06-27T18:25:00.250Z", Some(ms(250))),
        (
            "2024-06-27T18:25:00.0000000019Z",
            Some(Duration::from_nanos(1)),
        ),
        ("2024-06-27T20:25:30+02:00", Some(Duration::from_secs(30))),
        ("2024-06-27T17:25:30-01:00", Some(Duration::from_secs(30))),
        ("2024-06-28T00:00:00Z", Some(Duration::from_secs(20_100))),
        ("2024-06-27T18:25:00Z", Some(Duration::ZERO)),
        ("2024-06-27T18:00:00Z", Some(Duration::ZERO)),
        ("1969-12-31T23:59:59Z", Some(Duration::ZERO)),
        ("0000-01-01T00:00:00Z", Some(Duration::ZERO)),
        (
            "9999-12-31T23:59:60Z",
            Some(Duration::from_secs(253_402_300_800 - 1_719_512_700)),
        ),
        ("2024-02-29T00:00:00Z", Some(Duration::ZERO)),
        ("2023-02-29T00:00:00Z", None),
        ("2024-13-01T00:00:00Z", None),
        ("2024-06-31T00:00:00Z", None),
        ("2024-06-27T24:00:00Z", None),
        ("2024-06-27T18:60:00Z", None),
        ("2024-06-27T18:25:61Z", None),
        ("2024-06-27T18:25:30", None),
        ("2024-06-27T18:25:30+0200", None),
        ("2024-06-27T18:25:30+24:00", None),
        ("2024-06-27T18:25:30.Z", None),
        ("2024-06-27T18:25:30Z ", Some(Duration::from_secs(30))),
        ("2024-06-27T18:25:30Zjunk", None),
        ("2024-6-27T18:25:30Z", None),
        ("+2024-06-27T18:25:30Z", None),
        ("Thu, 27 Jun 2024 18:25:30 GMT", None),
        ("30", None),
        ("", None),
        ("2024-06-27T18:25:3\u{e9}Z", None),
    ];
    for (value, expected) in table {
        assert_eq!(parse_reset_time(value, now()), *expected, "{value:?}");
    }
}

#[test]
fn openai_and_anthropic_headers_into_signals() {
    let openai = headers(&[
        ("x-ratelimit-remaining-requests", "59"),
        ("x-ratelimit-reset-requests", "1s"),
        ("x-ratelimit-remaining-tokens", "1000"),
    ]);
    assert_eq!(
        from_headers_at(&openai, now()),
        Signals::NONE.remaining(59).reset(Duration::from_secs(1))
    );
    let anthropic = headers(&[
        ("anthropic-ratelimit-requests-remaining", "0"),
        ("anthropic-ratelimit-requests-reset", "2024-06-27T18:26:00Z"),
    ]);
    assert_eq!(
        from_headers_at(&anthropic, now()),
        Signals::NONE.remaining(0).reset(Duration::from_secs(60))
    );
    // Half a pair, or a garbled value, leaves that signal unsaid.
    let half = headers(&[
        ("x-ratelimit-remaining-requests", "lots"),
        ("x-ratelimit-reset-requests", "20ms"),
    ]);
    assert_eq!(from_headers_at(&half, now()), Signals::NONE.reset(ms(20)));
    let bytes = {
        let mut map = HeaderMap::new();
        map.insert(
            "x-ratelimit-remaining-requests",
            HeaderValue::from_bytes(b"\xff5").unwrap(),
        );
        map
    };
    assert_eq!(from_headers_at(&bytes, now()), Signals::NONE);
    assert_eq!(from_headers_at(&HeaderMap::new(), now()), Signals::NONE);
    // OpenAI's pair wins over Anthropic's when both are there.
    let both = headers(&[
        ("x-ratelimit-reset-requests", "2s"),
        ("anthropic-ratelimit-requests-remaining", "3"),
    ]);
    assert_eq!(
        from_headers_at(&both, now()),
        Signals::NONE.reset(Duration::from_secs(2))
    );
}

#[test]
fn the_limit_is_read_with_its_provider_s_pair() {
    let openai = headers(&[
        ("x-ratelimit-limit-requests", "60"),
        ("x-ratelimit-remaining-requests", "59"),
        ("x-ratelimit-reset-requests", "1s"),
    ]);
    assert_eq!(
        from_headers_at(&openai, now()),
        Signals::NONE
            .remaining(59)
            .reset(Duration::from_secs(1))
            .limit(60)
    );
    let anthropic = headers(&[
        ("anthropic-ratelimit-requests-limit", " 50 "),
        ("anthropic-ratelimit-requests-remaining", "0"),
        ("anthropic-ratelimit-requests-reset", "2024-06-27T18:26:00Z"),
    ]);
    assert_eq!(
        from_headers_at(&anthropic, now()),
        Signals::NONE
            .remaining(0)
            .reset(Duration::from_secs(60))
            .limit(50)
    );
    // OpenAI's limit alone says it is OpenAI's: Anthropic's count is not
    // mixed in.
    let mixed = headers(&[
        ("x-ratelimit-limit-requests", "99999999999999999999999"),
        ("anthropic-ratelimit-requests-remaining", "3"),
    ]);
    let signals = from_headers_at(&mixed, now());
    assert_eq!(signals, Signals::NONE.limit(u64::MAX));
    assert!(!signals.is_none());
    let garbled = headers(&[("x-ratelimit-limit-requests", "-1")]);
    assert!(from_headers_at(&garbled, now()).is_none());
}

#[test]
fn an_http_error_keeps_the_window_and_a_529_is_overloaded() {
    let window = headers(&[
        ("x-ratelimit-remaining-requests", "0"),
        ("x-ratelimit-reset-requests", "6m0s"),
    ]);
    let limited = HttpError::from_parts_at(StatusCode::TOO_MANY_REQUESTS, &window, now());
    assert_eq!(
        limited.signals(),
        Signals::NONE.remaining(0).reset(Duration::from_secs(360))
    );
    let overloaded = StatusCode::from_u16(529).unwrap();
    let error = HttpError::from_parts_at(overloaded, &HeaderMap::new(), now());
    assert_eq!(error.signals(), Signals::NONE.overloaded(true));
    assert!(HttpError::new(overloaded).signals().is_overloaded());
    assert!(HttpError::from(overloaded).signals().is_overloaded());
    let unavailable = HttpError::from_parts_at(StatusCode::SERVICE_UNAVAILABLE, &window, now());
    assert!(!unavailable.signals().is_overloaded());
    assert!(
        unavailable
            .clone()
            .with_overloaded(true)
            .signals()
            .is_overloaded()
    );
    assert_eq!(
        unavailable
            .clone()
            .with_overloaded(true)
            .signals()
            .get_remaining(),
        Some(0)
    );
    assert_eq!(
        unavailable.with_signals(Signals::NONE).signals(),
        Signals::NONE
    );
    assert_eq!(
        HttpError::new(StatusCode::BAD_GATEWAY).signals(),
        Signals::NONE
    );
}

proptest! {
    #[test]
    fn parsing_any_string_never_panics(value in any::<String>()) {
        let _ = parse_go_duration(&value);
        let _ = parse_remaining(&value);
        let _ = parse_reset_time(&value, now());
        let _ = parse_reset_time(&value, UNIX_EPOCH);
        let _ = parse_reset_time(&value, UNIX_EPOCH - Duration::from_secs(1 << 40));
    }

    #[test]
    fn parsing_near_misses_never_panics(
        value in "[0-9.:+TZz hmsuµnµ-]{0,40}",
        stamp in "[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]{0,30})?([Zz]|[+-][0-9]{2}:[0-9]{2})?",
    ) {
        let _ = parse_go_duration(&value);
        let _ = parse_remaining(&value);
        let _ = parse_reset_time(&value, now());
        if let Some(left) = parse_reset_time(&stamp, now()) {
            prop_assert!(left <= Duration::from_secs(253_402_400_000));
        }
    }

    #[test]
    fn go_durations_of_whole_units_read_back(h in 0u64..1000, m in 0u64..60, s in 0u64..60, frac in 0u32..1000) {
        let value = format!("{h}h{m}m{s}.{frac:03}s");
        let expected = Duration::from_secs(h * 3600 + m * 60 + s) + Duration::from_millis(u64::from(frac));
        prop_assert_eq!(parse_go_duration(&value), Some(expected));
    }

    #[test]
    fn any_header_values_read_into_signals_never_panic(
        limit in any::<String>(),
        remaining in "[0-9 ]{0,25}",
        reset in "[0-9.hmsun]{0,12}",
    ) {
        let mut map = HeaderMap::new();
        for (name, value) in [
            ("x-ratelimit-limit-requests", &limit),
            ("x-ratelimit-remaining-requests", &remaining),
            ("x-ratelimit-reset-requests", &reset),
        ] {
            if let Ok(value) = HeaderValue::from_str(value) {
                map.insert(name, value);
            }
        }
        let signals = from_headers_at(&map, now());
        prop_assert_eq!(signals.get_limit(), parse_remaining(&limit).filter(|_| map.contains_key("x-ratelimit-limit-requests")));
    }

    #[test]
    fn huge_headers_saturate(digits in "[1-9][0-9]{20,60}") {
        prop_assert_eq!(parse_remaining(&digits), Some(u64::MAX));
        prop_assert_eq!(parse_go_duration(&format!("{digits}s")), Some(Duration::MAX));
    }
}

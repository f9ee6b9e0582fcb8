//! Reading the providers' rate-limit headers into [`Signals`] (feature
//! `http`): how many requests are left in the caller's window, when it is
//! full again and how many it holds, which the
//! [`Throttle`](crate::Throttle) paces by.
//!
//! | provider | requests left | window resets (is full again) | window size |
//! |---|---|---|---|
//! | OpenAI | `x-ratelimit-remaining-requests`: an integer | `x-ratelimit-reset-requests`: a Go duration (`6m0s`, `20ms`, `0.5s`, `1h2m3.5s`), read by [`parse_go_duration`] | `x-ratelimit-limit-requests`: an integer |
//! | Anthropic | `anthropic-ratelimit-requests-remaining`: an integer | `anthropic-ratelimit-requests-reset`: an RFC 3339 time (`2024-06-27T18:25:30Z`), read by [`parse_reset_time`] as the time left until it | `anthropic-ratelimit-requests-limit`: an integer |
//!
//! [`from_headers`] reads the OpenAI headers when any of them is there,
//! else the Anthropic ones (a count, the limit included, is read by
//! [`parse_remaining`]); [`HttpError`](crate::HttpError) keeps
//! what it reads and gives it from
//! [`Classify::signals`](crate::Classify::signals).
//!
//! Header values come from the network: every function here takes any
//! string and never panics; a value it cannot read gives `None` (that
//! signal is left unsaid), and a huge number saturates instead of
//! overflowing.
//!
//! | input | [`parse_remaining`] | [`parse_go_duration`] |
//! |---|---|---|
//! | `"59"`, `" 59\t"` | `Some(59)` | `None` (a duration needs a unit) |
//! | `"0"` | `Some(0)` | `Some(ZERO)` (Go's lone zero) |
//! | `"99999999999999999999999"` | `Some(u64::MAX)` | `None` |
//! | `"6m0s"`, `"1h2m3.5s"`, `"20ms"`, `"1.5us"`, `"3µs"`, `"7ns"` | `None` | the duration |
//! | `"99999999999999999999h"` | `None` | `Some(Duration::MAX)`, saturated |
//! | `"-1s"`, `"+1s"`, `"1"`, `"1x"`, `"s"`, `".s"`, `"1.2.3s"`, `""` | `None` | `None` (a sign: a reset is never negative) |
//!
//! ```
//! use std::time::Duration;
//! use http::HeaderMap;
//! use tenacious::rate_limits;
//!
//! let mut headers = HeaderMap::new();
//! headers.insert("x-ratelimit-remaining-requests", "59".parse().unwrap());
//! headers.insert("x-ratelimit-reset-requests", "1s".parse().unwrap());
//! headers.insert("x-ratelimit-limit-requests", "60".parse().unwrap());
//! let signals = rate_limits::from_headers(&headers);
//! assert_eq!(signals.get_remaining(), Some(59));
//! assert_eq!(signals.get_reset(), Some(Duration::from_secs(1)));
//! assert_eq!(signals.get_limit(), Some(60));
//! ```
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use ::http::HeaderMap;

use crate::Signals;

const OPENAI_REMAINING: &str = "x-ratelimit-remaining-requests";
const OPENAI_RESET: &str = "x-ratelimit-reset-requests";
const ANTHROPIC_REMAINING: &str = "anthropic-ratelimit-requests-remaining";
const ANTHROPIC_RESET: &str = "anthropic-ratelimit-requests-reset";
const OPENAI_LIMIT: &str = "x-ratelimit-limit-requests";
const ANTHROPIC_LIMIT: &str = "anthropic-ratelimit-requests-limit";

/// The requests left, the time until the window resets and its size, as
/// a response's headers say, taking an RFC 3339 reset relative to the system
/// clock now. See the [module docs](self).
#[must_use]
pub fn from_headers(headers: &HeaderMap) -> Signals {
    from_headers_at(headers, SystemTime::now())
}

/// [`from_headers`] with an RFC 3339 reset taken relative to `now` (the
/// response's arrival, or a fixed instant in tests).
///
/// ```
/// use std::time::{Duration, UNIX_EPOCH};
/// use http::HeaderMap;
/// use tenacious::rate_limits;
///
/// let now = UNIX_EPOCH + Duration::from_secs(1_719_512_700); // 2024-06-27T18:25:00Z
/// let mut headers = HeaderMap::new();
/// headers.insert("anthropic-ratelimit-requests-remaining", "4".parse().unwrap());
/// headers.insert("anthropic-ratelimit-requests-reset", "2024-06-27T18:25:30Z".parse().unwrap());
/// headers.insert("anthropic-ratelimit-requests-limit", "50".parse().unwrap());
/// let signals = rate_limits::from_headers_at(&headers, now);
/// assert_eq!(signals.get_remaining(), Some(4));
/// assert_eq!(signals.get_reset(), Some(Duration::from_secs(30)));
/// assert_eq!(signals.get_limit(), Some(50));
/// ```
#[must_use]
pub fn from_headers_at(headers: &HeaderMap, now: SystemTime) -> Signals {
    let text = |name: &str| headers.get(name).and_then(|value| value.to_str().ok());
    let openai = [OPENAI_REMAINING, OPENAI_RESET, OPENAI_LIMIT]
        .iter()
        .any(|name| headers.contains_key(*name));
    let (remaining, reset, limit) = if openai {
        (
            text(OPENAI_REMAINING).and_then(parse_remaining),
            text(OPENAI_RESET).and_then(parse_go_duration),
            text(OPENAI_LIMIT).and_then(parse_remaining),
        )
    } else {
        (
            text(ANTHROPIC_REMAINING).and_then(parse_remaining),
            text(ANTHROPIC_RESET).and_then(|value| parse_reset_time(value, now)),
            text(ANTHROPIC_LIMIT).and_then(parse_remaining),
        )
    };
    let mut signals = Signals::NONE;
    if let Some(remaining) = remaining {
        signals = signals.remaining(remaining);
    }
    if let Some(reset) = reset {
        signals = signals.reset(reset);
    }
    if let Some(limit) = limit {
        signals = signals.limit(limit);
    }
    signals
}

/// A count of requests: ASCII digits, with spaces and tabs around them;
/// a huge count saturates at `u64::MAX`.
///
/// ```
/// use tenacious::rate_limits::parse_remaining;
///
/// assert_eq!(parse_remaining(" 42 "), Some(42));
/// assert_eq!(parse_remaining("-1"), None);
/// ```
#[must_use]
pub fn parse_remaining(value: &str) -> Option<u64> {
    let value = trim_ows(value);
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(value.bytes().fold(0u64, |n, digit| {
        n.saturating_mul(10).saturating_add(u64::from(digit - b'0'))
    }))
}

/// A Go `time.Duration` string, as OpenAI sends its resets: one or more
/// decimal numbers, each with an optional fraction and a unit (`h`, `m`,
/// `s`, `ms`, `us`, `µs`, `μs`, `ns`), or a lone `0`. No sign (a reset is
/// never negative); a huge value saturates at `Duration::MAX`; fraction
/// digits past the nanosecond are dropped.
///
/// ```
/// use std::time::Duration;
/// use tenacious::rate_limits::parse_go_duration;
///
/// assert_eq!(parse_go_duration("6m0s"), Some(Duration::from_secs(360)));
/// assert_eq!(parse_go_duration("1h2m3.5s"), Some(Duration::from_millis(3_723_500)));
/// assert_eq!(parse_go_duration("20ms"), Some(Duration::from_millis(20)));
/// assert_eq!(parse_go_duration("soon"), None);
/// ```
#[must_use]
pub fn parse_go_duration(value: &str) -> Option<Duration> {
    let mut rest = trim_ows(value);
    if rest == "0" {
        return Some(Duration::ZERO);
    }
    if rest.is_empty() {
        return None;
    }
    let mut total: u128 = 0;
    while !rest.is_empty() {
        let (whole, after) = split_digits(rest);
        let (fraction, after) = match after.strip_prefix('.') {
            Some(after) => split_digits(after),
            None => ("", after),
        };
        if whole.is_empty() && fraction.is_empty() {
            return None;
        }
        let unit_len = after
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(after.len());
        let unit: u128 = match &after[..unit_len] {
            "ns" => 1,
            "us" | "\u{b5}s" | "\u{3bc}s" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            _ => return None,
        };
        // A whole part that overflows a `u64` saturates the total; one that
        // fits, times an hour, and a fraction of 19 digits, times an hour,
        // both fit in a `u128`.
        let Some(whole) = whole.bytes().try_fold(0u64, |n, digit| {
            n.checked_mul(10)?.checked_add(u64::from(digit - b'0'))
        }) else {
            total = u128::MAX;
            rest = &after[unit_len..];
            continue;
        };
        let mut scale: u128 = 1;
        let mut numerator: u128 = 0;
        for digit in fraction.bytes().take(19) {
            numerator = numerator * 10 + u128::from(digit - b'0');
            scale *= 10;
        }
        total = total
            .saturating_add(u128::from(whole) * unit)
            .saturating_add(numerator * unit / scale);
        rest = &after[unit_len..];
    }
    let secs = u64::try_from(total / 1_000_000_000).ok();
    // The remainder of a division by 10⁹ is below 10⁹.
    let nanos = (total % 1_000_000_000) as u32;
    Some(secs.map_or(Duration::MAX, |secs| Duration::new(secs, nanos)))
}

/// The time left until an RFC 3339 date-time (`2024-06-27T18:25:30Z`,
/// `2024-06-27T18:25:30.5+02:00`; `T`, `t` or a space between date and
/// time; `Z`, `z` or a numeric offset), as Anthropic sends its resets:
/// `Some(ZERO)` for a time at or before `now`, `None` for anything that is
/// not a valid RFC 3339 date-time.
///
/// Written out rather than taken from a crate: `humantime` reads only
/// `Z` (UTC), not the numeric offsets RFC 3339 allows, and `chrono`,
/// `time` or `jiff` would each bring a date library into every HTTP
/// user's tree for one fixed format, which fits in a few lines here with
/// every field range checked.
///
/// ```
/// use std::time::{Duration, UNIX_EPOCH};
/// use tenacious::rate_limits::parse_reset_time;
///
/// let now = UNIX_EPOCH + Duration::from_secs(1_719_512_700); // 2024-06-27T18:25:00Z
/// assert_eq!(parse_reset_time("2024-06-27T18:25:30Z", now), Some(Duration::from_secs(30)));
/// assert_eq!(parse_reset_time("2024-06-27T20:25:30.5+02:00", now), Some(Duration::from_millis(30_500)));
/// assert_eq!(parse_reset_time("2024-06-27T18:00:00Z", now), Some(Duration::ZERO));
/// assert_eq!(parse_reset_time("tomorrow", now), None);
/// ```
#[must_use]
pub fn parse_reset_time(value: &str, now: SystemTime) -> Option<Duration> {
    let at = rfc3339_nanos(trim_ows(value))?;
    let now = match now.duration_since(UNIX_EPOCH) {
        Ok(since) => i128::try_from(since.as_nanos()).ok()?,
        Err(before) => -i128::try_from(before.duration().as_nanos()).ok()?,
    };
    let left = u128::try_from(at - now).unwrap_or(0);
    let secs = u64::try_from(left / 1_000_000_000).ok()?;
    Some(Duration::new(secs, (left % 1_000_000_000) as u32))
}

/// An RFC 3339 date-time as nanoseconds since the Unix epoch (negative
/// before it).
fn rfc3339_nanos(value: &str) -> Option<i128> {
    let bytes = value.as_bytes();
    let number = |from: usize, len: usize| -> Option<u32> {
        let digits = bytes.get(from..from + len)?;
        digits.iter().try_fold(0u32, |n, &b| {
            b.is_ascii_digit().then(|| n * 10 + u32::from(b - b'0'))
        })
    };
    let at = |i: usize, expected: &[u8]| bytes.get(i).is_some_and(|b| expected.contains(b));
    if !(at(4, b"-") && at(7, b"-") && at(10, b"Tt ") && at(13, b":") && at(16, b":")) {
        return None;
    }
    let (year, month, day) = (number(0, 4)?, number(5, 2)?, number(8, 2)?);
    let (hour, minute, second) = (number(11, 2)?, number(14, 2)?, number(17, 2)?);
    if !(1..=12).contains(&month)
        || day == 0
        || day > days_in_month(year, month)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    let mut i = 19;
    let mut fraction: i128 = 0;
    if at(i, b".") {
        i += 1;
        let start = i;
        let mut scale: i128 = 1_000_000_000;
        while let Some(&b) = bytes.get(i).filter(|b| b.is_ascii_digit()) {
            if scale > 1 {
                scale /= 10;
                fraction += i128::from(b - b'0') * scale;
            }
            i += 1;
        }
        if i == start {
            return None;
        }
    }
    let offset_minutes: i128 = match bytes.get(i..)? {
        b"Z" | b"z" => 0,
        [sign @ (b'+' | b'-'), _, _, b':', _, _] => {
            let (hours, minutes) = (number(i + 1, 2)?, number(i + 4, 2)?);
            if hours > 23 || minutes > 59 {
                return None;
            }
            let offset = i128::from(hours * 60 + minutes);
            if *sign == b'-' { -offset } else { offset }
        }
        _ => return None,
    };
    let days = days_from_civil(i128::from(year), month, day);
    let seconds =
        days * 86_400 + i128::from(hour * 3_600 + minute * 60 + second) - offset_minutes * 60;
    Some(seconds * 1_000_000_000 + fraction)
}

const fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        2 if year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400)) => {
            29
        }
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days from 1970-01-01 to a date of the proleptic Gregorian calendar
/// (Howard Hinnant's `days_from_civil`).
fn days_from_civil(year: i128, month: u32, day: u32) -> i128 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month = i128::from(month);
    let day_of_year =
        (153 * (if month > 2 { month - 3 } else { month + 9 }) + 2) / 5 + i128::from(day) - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// Splits the leading ASCII digits off `value`.
fn split_digits(value: &str) -> (&str, &str) {
    let end = value
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(value.len());
    value.split_at(end)
}

/// Without the spaces and tabs around it (HTTP's optional whitespace).
fn trim_ows(value: &str) -> &str {
    value.trim_matches([' ', '\t'])
}

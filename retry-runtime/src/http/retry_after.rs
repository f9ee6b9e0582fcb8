//! Parsing the server's "wait this long" headers: RFC 9110 `Retry-After` and
//! the `retry-after-ms` extension some APIs send (OpenAI, Azure OpenAI).
//!
//! Header values come from the network, so every function here accepts any
//! string and returns a defined result: `None` for a value it cannot read,
//! never a panic, and a huge value saturates instead of overflowing. A
//! saturated hint is far above any `max_retry_after`, so the retry layer stops
//! at once instead of sleeping for ages.
//!
//! | input | [`parse`] | [`parse_ms`] |
//! |---|---|---|
//! | `"120"` (RFC 9110 delta-seconds, `1*DIGIT`) | `Some(120 s)` | `Some(120 ms)` |
//! | `"0"`, `"000"` | `Some(ZERO)` | `Some(ZERO)` |
//! | `"  7\t"` (surrounding spaces and tabs, the RFC's OWS) | `Some(7 s)` | `Some(7 ms)` |
//! | `"18446744073709551616"` and longer digit runs | `Some(u64::MAX s)`, saturated | `Some(u64::MAX ms)`, saturated |
//! | `"1.5"` | `None` (delta-seconds has no fraction) | `Some(1.5 ms)`; digits past the nanosecond round up |
//! | `"5."`, `".5"` | `None` | `Some(5 ms)`, `Some(0.5 ms)` |
//! | `"-1"`, `"+1"`, `"-0"` | `None` (signs are not digits) | `None` |
//! | `""`, `"   "`, `"."` | `None` | `None` |
//! | `"1 2"`, `"1e3"`, `"0x10"`, `"NaN"`, `"inf"`, `"١٢"` (non-ASCII digits) | `None` | `None` |
//! | an HTTP-date after `now` (`"Wed, 21 Oct 2015 07:28:00 GMT"`) | `Some(date - now)` | `None` |
//! | an HTTP-date at or before `now` | `Some(ZERO)`: retry now | `None` |
//! | an HTTP-date in the obsolete RFC 850 or asctime form | read as above (RFC 9110 §5.6.7 asks recipients to accept them); an RFC 850 two-digit year more than 50 years after `now` is the latest past year with those digits | `None` |
//! | a malformed date, a date before 1970 or after 9999 | `None` | `None` |
//!
//! A value this module cannot read is best ignored: the retry layer then
//! falls back to its own backoff, which is what a client that does not
//! understand the header would do anyway.
//!
//! ```
//! use std::time::{Duration, SystemTime};
//! use tenacious::retry_after;
//!
//! let now = SystemTime::now();
//! assert_eq!(retry_after::parse("30", now), Some(Duration::from_secs(30)));
//! assert_eq!(retry_after::parse("Thu, 01 Jan 1970 00:00:00 GMT", now), Some(Duration::ZERO));
//! assert_eq!(retry_after::parse("soon", now), None);
//! assert_eq!(retry_after::parse_ms("1500.5"), Some(Duration::from_micros(1_500_500)));
//! ```
use std::time::{Duration, SystemTime};

/// Decimal places of a millisecond that a `Duration` can hold (nanoseconds).
const FRACTION_DIGITS: usize = 6;

/// Parses an RFC 9110 `Retry-After` value: delta-seconds or an HTTP-date.
///
/// `now` is the instant the response was received; an HTTP-date is turned
/// into the time left until it, and a date already past gives
/// `Some(Duration::ZERO)`. See the [module docs](self) for every case.
///
/// ```
/// use std::time::{Duration, SystemTime, UNIX_EPOCH};
/// use tenacious::retry_after;
///
/// let now = UNIX_EPOCH + Duration::from_secs(1_445_412_470); // 07:27:50 GMT
/// assert_eq!(
///     retry_after::parse("Wed, 21 Oct 2015 07:28:00 GMT", now),
///     Some(Duration::from_secs(10)),
/// );
/// assert_eq!(retry_after::parse(" 120 ", now), Some(Duration::from_secs(120)));
/// assert_eq!(retry_after::parse("-5", now), None);
/// ```
#[must_use]
pub fn parse(value: &str, now: SystemTime) -> Option<Duration> {
    let value = trim_ows(value);
    if let Some(secs) = digits(value) {
        return Some(Duration::from_secs(secs));
    }
    let date = match rfc850(value) {
        Some(parts) => parts.at(now)?,
        None => httpdate::parse_http_date(value).ok()?,
    };
    // `Err` means the date is not after `now`: the server's wait is over.
    Some(date.duration_since(now).unwrap_or(Duration::ZERO))
}

/// An obsolete RFC 850 date, `Sunday, 06-Nov-94 08:49:37 GMT`, read into
/// its parts: its two-digit year needs `now` to be placed (RFC 9110
/// §5.6.7), which a parser without a clock cannot do.
struct Rfc850 {
    year: u8,
    month: u8,
    day: u8,
    seconds: u32,
}

/// The parts of an RFC 850 date, or `None` for any other text.
fn rfc850(value: &str) -> Option<Rfc850> {
    let (weekday, rest) = value.split_once(", ")?;
    const WEEKDAYS: [&str; 7] = [
        "Monday",
        "Tuesday",
        "Wednesday",
        "Thursday",
        "Friday",
        "Saturday",
        "Sunday",
    ];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    if !WEEKDAYS.contains(&weekday) {
        return None;
    }
    let bytes = rest.as_bytes();
    // `DD-Mon-YY HH:MM:SS GMT`
    if bytes.len() != 22 || !rest.ends_with(" GMT") || bytes[2] != b'-' || bytes[6] != b'-' {
        return None;
    }
    let number = |range: std::ops::Range<usize>| -> Option<u32> {
        let text = rest.get(range)?;
        text.bytes().all(|b| b.is_ascii_digit()).then(|| {
            text.bytes()
                .fold(0, |acc, b| acc * 10 + u32::from(b - b'0'))
        })
    };
    let month = MONTHS.iter().position(|m| rest.get(3..6) == Some(*m))?;
    let (day, year) = (number(0..2)?, number(7..9)?);
    if bytes[9] != b' ' || bytes[12] != b':' || bytes[15] != b':' {
        return None;
    }
    let (hour, minute, second) = (number(10..12)?, number(13..15)?, number(16..18)?);
    if !(1..=31).contains(&day) || hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    Some(Rfc850 {
        year: u8::try_from(year).ok()?,
        month: u8::try_from(month + 1).ok()?,
        day: u8::try_from(day).ok()?,
        seconds: hour * 3600 + minute * 60 + second,
    })
}

impl Rfc850 {
    /// The date, its century chosen as RFC 9110 asks: a two-digit year that
    /// would be more than 50 years after `now` is the most recent past year
    /// with those digits.
    fn at(&self, now: SystemTime) -> Option<SystemTime> {
        let now_secs = now.duration_since(SystemTime::UNIX_EPOCH).ok()?.as_secs();
        let now_year = civil_year(i64::try_from(now_secs / 86_400).ok()?);
        let mut year = now_year - now_year.rem_euclid(100) + i64::from(self.year);
        if year > now_year + 50 {
            year -= 100;
        }
        let days = days_from_civil(year, u32::from(self.month), u32::from(self.day));
        let secs = days
            .checked_mul(86_400)?
            .checked_add(i64::from(self.seconds))?;
        Some(SystemTime::UNIX_EPOCH + Duration::from_secs(u64::try_from(secs).ok()?))
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
/// `days_from_civil`).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year.rem_euclid(400);
    let month = i64::from(month);
    let day_of_year = (153 * (month + if month > 2 { -3 } else { 9 }) + 2) / 5 + i64::from(day) - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The year of the day `days` after 1970-01-01 (the inverse of
/// [`days_from_civil`], year only).
fn civil_year(days: i64) -> i64 {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let year = year_of_era + era * 400;
    if month_index >= 10 { year + 1 } else { year }
}

/// Parses a `retry-after-ms` value: a non-negative decimal number of
/// milliseconds, such as `"1500"` or `"0.25"`.
///
/// No signs, exponents, `NaN` or `inf`; digits past the nanosecond round the
/// result up so the wait is never shorter than the server asked. See the
/// [module docs](self) for every case.
///
/// ```
/// use std::time::Duration;
/// use tenacious::retry_after;
///
/// assert_eq!(retry_after::parse_ms("250"), Some(Duration::from_millis(250)));
/// assert_eq!(retry_after::parse_ms("0.0000001"), Some(Duration::from_nanos(1)));
/// assert_eq!(retry_after::parse_ms("-1"), None);
/// ```
#[must_use]
pub fn parse_ms(value: &str) -> Option<Duration> {
    let value = trim_ows(value);
    let (whole, fraction) = match value.split_once('.') {
        Some((whole, fraction)) => (whole, fraction),
        None => (value, ""),
    };
    if whole.is_empty() && fraction.is_empty() {
        return None;
    }
    let millis = if whole.is_empty() { 0 } else { digits(whole)? };
    if !fraction.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let (kept, rest) = fraction.split_at(fraction.len().min(FRACTION_DIGITS));
    let mut nanos = kept
        .bytes()
        .chain(std::iter::repeat(b'0'))
        .take(FRACTION_DIGITS)
        .fold(0u32, |acc, b| acc * 10 + u32::from(b - b'0'));
    // Round up: a hint is a minimum wait, so truncating would undercut it.
    if rest.bytes().any(|b| b != b'0') {
        nanos += 1;
    }
    Some(Duration::from_millis(millis).saturating_add(Duration::from_nanos(u64::from(nanos))))
}

/// Reads the server's hint from response headers: the longer of
/// `retry-after-ms` and `Retry-After` when both parse (a server that sends
/// `retry-after-ms: 0` beside `Retry-After: 60` still asked for a minute),
/// else whichever parses.
///
/// A header that is absent, not visible ASCII or unreadable counts as absent;
/// only the first value of a repeated header is read.
///
/// ```
/// use std::time::{Duration, SystemTime};
/// use http::HeaderMap;
/// use tenacious::retry_after;
///
/// let mut headers = HeaderMap::new();
/// headers.insert("retry-after", "2".parse().unwrap());
/// assert_eq!(retry_after::from_headers(&headers, SystemTime::now()), Some(Duration::from_secs(2)));
/// headers.insert("retry-after-ms", "2500".parse().unwrap());
/// assert_eq!(retry_after::from_headers(&headers, SystemTime::now()), Some(Duration::from_millis(2500)));
/// // The longer one wins: a zero `retry-after-ms` does not cancel `Retry-After`.
/// headers.insert("retry-after-ms", "0".parse().unwrap());
/// assert_eq!(retry_after::from_headers(&headers, SystemTime::now()), Some(Duration::from_secs(2)));
/// ```
#[cfg(feature = "http")]
#[must_use]
pub fn from_headers(headers: &::http::HeaderMap, now: SystemTime) -> Option<Duration> {
    let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let ms = text("retry-after-ms").and_then(parse_ms);
    let standard = text(::http::header::RETRY_AFTER.as_str()).and_then(|v| parse(v, now));
    ms.max(standard)
}

/// Strips RFC 9110 optional whitespace (spaces and horizontal tabs) from both ends.
fn trim_ows(value: &str) -> &str {
    value.trim_matches([' ', '\t'])
}

/// Reads `1*DIGIT` (ASCII only), saturating at `u64::MAX`.
fn digits(value: &str) -> Option<u64> {
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(value.bytes().fold(0u64, |acc, b| {
        acc.saturating_mul(10).saturating_add(u64::from(b - b'0'))
    }))
}

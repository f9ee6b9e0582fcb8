//! `retry_after`: every documented case, and properties over hostile input.
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use proptest::prelude::*;
use tenacious_runtime::retry_after::{parse, parse_ms};

/// 2015-10-21 07:28:00 GMT, the RFC 9110 example date.
const EXAMPLE_DATE: &str = "Wed, 21 Oct 2015 07:28:00 GMT";
const EXAMPLE_SECS: u64 = 1_445_412_480;
/// 9999-12-31 23:59:59 GMT, the last instant an HTTP-date can name.
const LAST_HTTP_DATE_SECS: u64 = 253_402_300_799;

fn at(secs: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(secs)
}

fn secs(n: u64) -> Option<Duration> {
    Some(Duration::from_secs(n))
}

#[test]
fn delta_seconds() {
    let now = at(EXAMPLE_SECS);
    assert_eq!(parse("120", now), secs(120));
    assert_eq!(parse("0", now), secs(0));
    assert_eq!(parse("000", now), secs(0));
    assert_eq!(parse("007", now), secs(7));
}

#[test]
fn surrounding_ows_is_trimmed_and_inner_whitespace_is_not() {
    let now = at(EXAMPLE_SECS);
    assert_eq!(parse("  7\t", now), secs(7));
    assert_eq!(parse_ms("\t 7 "), Some(Duration::from_millis(7)));
    assert_eq!(parse("1 2", now), None);
    assert_eq!(parse_ms("1 2"), None);
    // Only SP and HTAB are OWS.
    assert_eq!(parse("\u{a0}7", now), None);
}

#[test]
fn huge_delta_seconds_saturate() {
    let now = at(EXAMPLE_SECS);
    assert_eq!(parse("18446744073709551615", now), secs(u64::MAX));
    assert_eq!(parse("18446744073709551616", now), secs(u64::MAX));
    assert_eq!(parse(&"9".repeat(10_000), now), secs(u64::MAX));
    assert_eq!(
        parse_ms("18446744073709551616"),
        Some(Duration::from_millis(u64::MAX))
    );
    // Saturated milliseconds plus a fraction must not overflow `Duration`.
    assert_eq!(
        parse_ms("18446744073709551616.999"),
        Some(Duration::from_millis(u64::MAX) + Duration::from_micros(999)),
    );
}

#[test]
fn signs_fractions_and_garbage_are_not_delta_seconds() {
    let now = at(EXAMPLE_SECS);
    for value in [
        "-1", "+1", "-0", "1.5", "5.", ".5", "", "   ", ".", "1e3", "0x10", "NaN", "inf", "١٢",
        "soon",
    ] {
        assert_eq!(parse(value, now), None, "{value:?}");
    }
}

#[test]
fn retry_after_ms_reads_decimals() {
    assert_eq!(parse_ms("250"), Some(Duration::from_millis(250)));
    assert_eq!(parse_ms("0"), Some(Duration::ZERO));
    assert_eq!(parse_ms("1.5"), Some(Duration::from_micros(1_500)));
    assert_eq!(parse_ms("5."), Some(Duration::from_millis(5)));
    assert_eq!(parse_ms(".5"), Some(Duration::from_micros(500)));
    assert_eq!(parse_ms("0.000001"), Some(Duration::from_nanos(1)));
}

#[test]
fn retry_after_ms_rounds_sub_nanosecond_digits_up() {
    assert_eq!(parse_ms("0.0000001"), Some(Duration::from_nanos(1)));
    assert_eq!(parse_ms("0.0000000"), Some(Duration::ZERO));
    assert_eq!(parse_ms("1.9999999"), Some(Duration::from_millis(2)));
    assert_eq!(
        parse_ms("1.000000100"),
        Some(Duration::from_nanos(1_000_001))
    );
}

#[test]
fn retry_after_ms_rejects_signs_exponents_and_garbage() {
    for value in [
        "-1",
        "+1",
        "-0",
        "-0.5",
        "",
        "   ",
        ".",
        "..",
        "1.2.3",
        "1e3",
        "1,5",
        "NaN",
        "inf",
        "0x10",
        "١",
        "Wed, 21 Oct 2015 07:28:00 GMT",
    ] {
        assert_eq!(parse_ms(value), None, "{value:?}");
    }
}

#[test]
fn http_date_in_the_future_is_the_time_left() {
    assert_eq!(parse(EXAMPLE_DATE, at(EXAMPLE_SECS - 10)), secs(10));
    let just_before = at(EXAMPLE_SECS) - Duration::from_millis(250);
    assert_eq!(
        parse(EXAMPLE_DATE, just_before),
        Some(Duration::from_millis(250))
    );
}

#[test]
fn http_date_now_or_in_the_past_is_zero() {
    assert_eq!(parse(EXAMPLE_DATE, at(EXAMPLE_SECS)), secs(0));
    assert_eq!(parse(EXAMPLE_DATE, at(EXAMPLE_SECS + 3_600)), secs(0));
    assert_eq!(
        parse("Thu, 01 Jan 1970 00:00:00 GMT", SystemTime::now()),
        secs(0)
    );
}

#[test]
fn obsolete_http_date_forms_are_read() {
    let now = at(EXAMPLE_SECS - 10);
    assert_eq!(parse("Wednesday, 21-Oct-15 07:28:00 GMT", now), secs(10));
    assert_eq!(parse("Wed Oct 21 07:28:00 2015", now), secs(10));
    assert_eq!(parse(&format!(" {EXAMPLE_DATE}\t"), now), secs(10));
}

#[test]
fn far_future_http_date_is_read_without_overflow() {
    assert_eq!(
        parse("Fri, 31 Dec 9999 23:59:59 GMT", UNIX_EPOCH),
        secs(LAST_HTTP_DATE_SECS),
    );
}

#[test]
fn malformed_and_out_of_range_dates_are_none() {
    let now = at(EXAMPLE_SECS);
    for value in [
        "Wed, 21 Oct 2015 07:28:00",
        "Wed, 32 Oct 2015 07:28:00 GMT",
        "Wed, 21 Oct 2015 25:28:00 GMT",
        "Wed, 21 Foo 2015 07:28:00 GMT",
        "Wed, 31 Dec 1969 23:59:59 GMT",
        "2015-10-21T07:28:00Z",
    ] {
        assert_eq!(parse(value, now), None, "{value:?}");
    }
}

/// Any instant an HTTP client could plausibly have as "now", including before
/// the epoch and far past the last HTTP-date.
fn any_now() -> impl Strategy<Value = SystemTime> {
    (
        any::<bool>(),
        0..=LAST_HTTP_DATE_SECS * 2,
        0..1_000_000_000u32,
    )
        .prop_map(|(before, secs, nanos)| {
            let offset = Duration::new(secs, nanos);
            let now = if before {
                UNIX_EPOCH.checked_sub(offset)
            } else {
                UNIX_EPOCH.checked_add(offset)
            };
            now.unwrap_or(UNIX_EPOCH)
        })
}

/// The reference value of a run of ASCII digits, saturated at `u64::MAX`.
fn saturated(digits: &str) -> u64 {
    let significant = digits.trim_start_matches('0');
    if significant.len() > 20 {
        return u64::MAX;
    }
    significant
        .parse::<u128>()
        .map_or(0, |n| u64::try_from(n).unwrap_or(u64::MAX))
}

fn is_delta_seconds(value: &str) -> bool {
    !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit())
}

fn is_decimal(value: &str) -> bool {
    let mut parts = value.split('.');
    let whole = parts.next().unwrap_or("");
    let fraction = parts.next().unwrap_or("");
    parts.next().is_none()
        && whole.len() + fraction.len() > 0
        && whole
            .bytes()
            .chain(fraction.bytes())
            .all(|b| b.is_ascii_digit())
}

/// Strings dense in the characters the parsers care about, so the grammar's
/// edges are hit far more often than by arbitrary Unicode.
fn near_miss() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            8 => proptest::char::range('0', '9'),
            1 => Just('.'),
            1 => Just('-'),
            1 => Just('+'),
            1 => Just(' '),
            1 => Just('\t'),
            1 => Just('e'),
            1 => Just('\u{661}'),
        ],
        0..32,
    )
    .prop_map(|chars| chars.into_iter().collect())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(10_000))]

    /// Never panics, and reads exactly what the grammar admits: delta-seconds
    /// or a date httpdate accepts.
    #[test]
    fn parse_any_string(value in prop_oneof![any::<String>(), near_miss()], now in any_now()) {
        let trimmed = value.trim_matches([' ', '\t']);
        let result = parse(&value, now);
        if is_delta_seconds(trimmed) {
            prop_assert_eq!(result, Some(Duration::from_secs(saturated(trimmed))));
        } else {
            prop_assert_eq!(result.is_some(), httpdate::parse_http_date(trimmed).is_ok());
        }
    }

    /// Never panics, and accepts exactly non-negative decimals.
    #[test]
    fn parse_ms_any_string(value in prop_oneof![any::<String>(), near_miss()]) {
        let trimmed = value.trim_matches([' ', '\t']);
        prop_assert_eq!(parse_ms(&value).is_some(), is_decimal(trimmed));
    }

    /// Every integer, negative, at `u64::MAX` or beyond: signed ones are
    /// refused, the rest saturate.
    #[test]
    fn parse_any_integer(n in prop_oneof![
        any::<i128>(),
        Just(i128::from(u64::MAX)),
        Just(i128::from(u64::MAX) + 1),
        Just(-1i128),
        Just(i128::MIN),
    ], now in any_now()) {
        let text = n.to_string();
        let expected = u64::try_from(n).map_or_else(
            |_| (n > 0).then_some(Duration::from_secs(u64::MAX)),
            |n| Some(Duration::from_secs(n)),
        );
        prop_assert_eq!(parse(&text, now), expected);
        prop_assert_eq!(parse_ms(&text), expected.map(|d| Duration::from_millis(d.as_secs())));
    }

    /// A formatted HTTP-date reads back as the time from `now` to it, or zero
    /// once it has passed.
    #[test]
    fn parse_any_http_date(date_secs in 0..=LAST_HTTP_DATE_SECS, now in any_now()) {
        let date = at(date_secs);
        let expected = date.duration_since(now).unwrap_or(Duration::ZERO);
        prop_assert_eq!(parse(&httpdate::fmt_http_date(date), now), Some(expected));
    }

    /// A decimal reads back to the nanosecond, rounded up past it.
    #[test]
    fn parse_ms_any_decimal(millis in any::<u64>(), fraction in "[0-9]{0,12}") {
        let text = format!("{millis}.{fraction}");
        let kept: u64 = format!("{:0<6}", &fraction[..fraction.len().min(6)]).parse().unwrap();
        let round_up = fraction.bytes().skip(6).any(|b| b != b'0');
        let expected = Duration::from_millis(millis) + Duration::from_nanos(kept + u64::from(round_up));
        prop_assert_eq!(parse_ms(&text), Some(expected));
    }
}

/// 00:00:00 GMT on 1 January of `year` (1970 ..= 2200).
fn new_year(year: u64) -> SystemTime {
    let days: u64 = (1970..year)
        .map(|y| {
            if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 {
                366
            } else {
                365
            }
        })
        .sum();
    UNIX_EPOCH + Duration::from_secs(days * 86_400)
}

#[test]
fn rfc850_two_digit_years_follow_the_fifty_year_rule() {
    // RFC 9110 §5.6.7: a two-digit year that would be more than 50 years in
    // the future is the most recent past year with those digits.
    let now = new_year(2026);
    // `70` is 2070 (44 years ahead), not 1970.
    assert_eq!(
        parse("Monday, 01-Jan-70 00:00:00 GMT", now),
        Some(new_year(2070).duration_since(now).unwrap())
    );
    // `80` would be 2080, more than 50 years ahead: it is 1980, long past.
    assert_eq!(
        parse("Tuesday, 01-Jan-80 00:00:00 GMT", now),
        Some(Duration::ZERO)
    );
    // `27` is next year.
    assert_eq!(
        parse("Friday, 01-Jan-27 00:00:10 GMT", now),
        Some(new_year(2027).duration_since(now).unwrap() + Duration::from_secs(10))
    );
    // The digits are read in the current century first: in 2090, `95` is
    // 2095, and `30` is 2030, already past.
    let late = new_year(2090);
    assert_eq!(
        parse("Sunday, 01-Jan-95 00:00:00 GMT", late),
        Some(new_year(2095).duration_since(late).unwrap())
    );
    assert_eq!(
        parse("Sunday, 01-Jan-30 00:00:00 GMT", late),
        Some(Duration::ZERO)
    );
    // Malformed RFC 850 dates are unreadable, not misread.
    for bad in [
        "Funday, 01-Jan-30 00:00:00 GMT",
        "Monday, 32-Jan-30 00:00:00 GMT",
        "Monday, 01-Foo-30 00:00:00 GMT",
        "Monday, 01-Jan-30 24:00:00 GMT",
        "Monday, 01-Jan-3x 00:00:00 GMT",
        "Monday, 01-Jan-30 00:00:00 UTC",
    ] {
        assert_eq!(parse(bad, now), None, "{bad}");
    }
}

//! Duration strings (`"200ms"`, `"1.5s"`, `"1m30s"`), parsed into whole
//! nanoseconds.
//!
//! ```
//! use tenacious_syntax::duration;
//!
//! assert_eq!(duration::parse("1m30s"), Ok(90_000_000_000));
//! assert_eq!(duration::display(1_500_000_000), "1500ms");
//! assert!(duration::parse("1 sec").unwrap_err().contains("unknown unit"));
//! ```

/// The units a duration may use, largest first, with their length in
/// nanoseconds. Components must follow this order, so `"1m30s"` reads one
/// way only.
const UNITS: &[(&str, u128)] = &[
    ("h", 3_600_000_000_000),
    ("m", 60_000_000_000),
    ("s", 1_000_000_000),
    ("ms", 1_000_000),
    ("us", 1_000),
    ("µs", 1_000),
    ("ns", 1),
];

/// What a duration looks like, appended to every parse error (the macro's
/// words).
pub const FORMAT: &str = "write a number and a unit, like \"200ms\", \"1.5s\", \"2m\" or \
     \"1m30s\" (units: h, m, s, ms, us, ns)";

const TOO_LONG: &str = "the duration is too long: the longest is about 584 years";

/// Parses a duration string into nanoseconds; the error says what is wrong
/// with the text, the caller adds where it is.
pub fn parse(text: &str) -> Result<u64, String> {
    if text.is_empty() {
        return Err("the duration is empty".to_owned());
    }
    let mut rest = text;
    let mut total: u128 = 0;
    // Index into UNITS of the previous component's unit; the next one must be smaller.
    let mut previous: Option<usize> = None;
    while !rest.is_empty() {
        let number_len = rest
            .find(|c: char| !is_number_char(c))
            .unwrap_or(rest.len());
        let (number, after) = rest.split_at(number_len);
        let unit_len = after.find(is_number_char).unwrap_or(after.len());
        let (unit, after) = after.split_at(unit_len);
        if number.is_empty() {
            return Err(format!("`{unit}` has no number before it"));
        }
        if unit.is_empty() {
            return Err(format!("`{number}` has no unit"));
        }
        let Some(index) = UNITS.iter().position(|(name, _)| *name == unit) else {
            return Err(format!("unknown unit `{unit}`"));
        };
        if let Some(previous) = previous
            && UNITS[previous].1 <= UNITS[index].1
        {
            return Err(format!(
                "`{unit}` comes after `{}`: write each unit once, largest first",
                UNITS[previous].0
            ));
        }
        previous = Some(index);
        let nanos = component_nanos(number, UNITS[index].1)?;
        total = total
            .checked_add(nanos)
            .ok_or_else(|| "the duration is too long".to_owned())?;
        rest = after;
    }
    u64::try_from(total).map_err(|_| TOO_LONG.to_owned())
}

fn is_number_char(c: char) -> bool {
    c.is_ascii_digit() || c == '.' || c == '_'
}

/// `number` (`"1"`, `"1.5"`, `"1_000"`) times `unit_nanos`, exactly.
fn component_nanos(number: &str, unit_nanos: u128) -> Result<u128, String> {
    let malformed = || format!("`{number}` is not a number");
    let (whole, fraction) = match number.split_once('.') {
        Some((whole, fraction)) => (whole, Some(fraction)),
        None => (number, None),
    };
    let digits_ok = |s: &str| {
        !s.is_empty() && !s.starts_with('_') && s.chars().all(|c| c.is_ascii_digit() || c == '_')
    };
    if !digits_ok(whole) || fraction.is_some_and(|f| !digits_ok(f)) {
        return Err(malformed());
    }
    let too_long = || TOO_LONG.to_owned();
    let mut nanos = parse_digits(whole)
        .and_then(|w| w.checked_mul(unit_nanos))
        .ok_or_else(too_long)?;
    if let Some(fraction) = fraction {
        let digits: String = fraction.chars().filter(|c| *c != '_').collect();
        // Past 30 digits no unit here can give a whole nanosecond (the longest
        // unit is 3.6e12 ns), and 10^30 still fits a u128.
        if digits.len() > 30 {
            return Err(format!("`{number}` is finer than a nanosecond"));
        }
        let scale = 10u128.pow(u32::try_from(digits.len()).unwrap_or(30));
        let numerator = parse_digits(&digits)
            .and_then(|f| f.checked_mul(unit_nanos))
            .ok_or_else(too_long)?;
        if numerator % scale != 0 {
            return Err(format!("`{number}` is finer than a nanosecond"));
        }
        nanos = nanos.checked_add(numerator / scale).ok_or_else(too_long)?;
    }
    Ok(nanos)
}

/// Decimal digits (and `_` separators) as a `u128`, `None` on overflow.
fn parse_digits(digits: &str) -> Option<u128> {
    digits
        .chars()
        .filter_map(|c| c.to_digit(10))
        .try_fold(0u128, |acc, d| {
            acc.checked_mul(10)?.checked_add(u128::from(d))
        })
}

/// `nanos` as the shortest literal that reads back the same, in the
/// macro's words for its messages: the largest unit that divides it.
pub fn display(nanos: u64) -> String {
    let nanos = u128::from(nanos);
    for (name, unit) in UNITS {
        if *name != "µs" && nanos >= *unit && nanos % unit == 0 {
            return format!("{}{name}", nanos / unit);
        }
    }
    format!("{nanos}ns")
}

#[cfg(test)]
mod tests {
    use super::{display, parse};
    use proptest::prelude::*;

    // The macro's cases (`retry-macros/src/retry/duration.rs`), unchanged.

    #[test]
    fn single_units() {
        assert_eq!(parse("10ns"), Ok(10));
        assert_eq!(parse("500us"), Ok(500_000));
        assert_eq!(parse("500µs"), Ok(500_000));
        assert_eq!(parse("200ms"), Ok(200_000_000));
        assert_eq!(parse("3s"), Ok(3_000_000_000));
        assert_eq!(parse("2m"), Ok(120_000_000_000));
        assert_eq!(parse("1h"), Ok(3_600_000_000_000));
        assert_eq!(parse("0s"), Ok(0));
    }

    #[test]
    fn fractions_and_separators() {
        assert_eq!(parse("1.5s"), Ok(1_500_000_000));
        assert_eq!(parse("0.25ms"), Ok(250_000));
        assert_eq!(parse("1.000000001s"), Ok(1_000_000_001));
        assert_eq!(parse("1_000ms"), Ok(1_000_000_000));
    }

    #[test]
    fn combinations_add_up() {
        assert_eq!(parse("1m30s"), Ok(90_000_000_000));
        assert_eq!(parse("1h1m1s1ms1us1ns"), Ok(3_661_001_001_001));
    }

    #[test]
    fn malformed_literals_say_what_is_wrong() {
        for (text, why) in [
            ("", "empty"),
            ("200", "no unit"),
            ("ms", "no number"),
            ("2 s", "unknown unit"),
            ("2sec", "unknown unit"),
            ("2S", "unknown unit"),
            ("1.2.3s", "not a number"),
            (".5s", "not a number"),
            ("5.s", "not a number"),
            ("_5s", "not a number"),
            ("-5s", "no number"),
            ("1.5ns", "finer than a nanosecond"),
            ("30s1m", "largest first"),
            ("1s1s", "largest first"),
            ("585y", "unknown unit"),
            ("18446744073709551616ns", "too long"),
            ("99999999999999999999999999999999999999999h", "too long"),
            (
                "0.0000000000000000000000000000001s",
                "finer than a nanosecond",
            ),
        ] {
            let err = parse(text).expect_err(text);
            assert!(err.contains(why), "{text:?}: {err}");
        }
    }

    #[test]
    fn the_longest_duration_fits() {
        assert_eq!(parse("18446744073709551615ns"), Ok(u64::MAX));
    }

    #[test]
    fn display_picks_the_largest_exact_unit() {
        assert_eq!(display(200_000_000), "200ms");
        assert_eq!(display(20_000_000_000), "20s");
        assert_eq!(display(90_000_000_000), "90s");
        assert_eq!(display(1_500_000_000), "1500ms");
        assert_eq!(display(7), "7ns");
        assert_eq!(display(0), "0ns");
    }

    /// Strings made of what a duration is made of, so the parser's paths
    /// past the first character are reached, not only "unknown unit".
    fn duration_like() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            "[0-9_.]{1,40}",
            Just("h".to_owned()),
            Just("m".to_owned()),
            Just("s".to_owned()),
            Just("ms".to_owned()),
            Just("us".to_owned()),
            Just("µs".to_owned()),
            Just("ns".to_owned()),
            "\\PC{0,3}",
        ];
        proptest::collection::vec(piece, 0..8).prop_map(|pieces| pieces.concat())
    }

    proptest! {
        #[test]
        fn any_string_parses_or_says_why(text in "\\PC*") {
            if let Err(why) = parse(&text) {
                prop_assert!(!why.is_empty());
            }
        }

        #[test]
        fn duration_like_strings_never_panic(text in duration_like()) {
            match parse(&text) {
                // What parses prints back to the same value.
                Ok(nanos) => prop_assert_eq!(parse(&display(nanos)), Ok(nanos)),
                Err(why) => prop_assert!(!why.is_empty()),
            }
        }

        #[test]
        fn every_nanosecond_count_reads_back(nanos in any::<u64>()) {
            prop_assert_eq!(parse(&display(nanos)), Ok(nanos));
        }
    }
}

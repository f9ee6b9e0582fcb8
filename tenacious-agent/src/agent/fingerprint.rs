//! [`Fingerprint`]: how the guard recognises the model repeating a call,
//! and [`CanonicalJson`]: tool arguments as JSON, hashed key order aside.
use std::fmt;
use std::hash::{DefaultHasher, Hash, Hasher};

use serde_json::{Number, Value};

/// A hash of a tool call's arguments, to recognise the model repeating
/// the very same call.
///
/// Any `Hash` value works: the arguments' JSON text, a struct, a tuple.
/// Two texts that differ only in whitespace or key order are different
/// calls; parse them and fingerprint the `serde_json::Value` with
/// [`of_json`](Fingerprint::of_json) (or hand the guard a
/// [`CanonicalJson`]) if that matters. The hash is the same
/// for equal arguments within one build of the program, which is all the
/// guard needs; do not store it.
///
/// ```
/// use tenacious::agent::Fingerprint;
///
/// let a = Fingerprint::of(r#"{"query":"rust retry"}"#);
/// assert_eq!(a, Fingerprint::of(&String::from(r#"{"query":"rust retry"}"#)));
/// assert_ne!(a, Fingerprint::of(r#"{"query":"rust backoff"}"#));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Fingerprint(u64);

impl Fingerprint {
    /// The fingerprint of `args`.
    #[must_use]
    pub fn of<A: Hash + ?Sized>(args: &A) -> Self {
        // `DefaultHasher::new()` has fixed keys, unlike `RandomState`, so
        // equal arguments hash alike in every guard of the process.
        let mut hasher = DefaultHasher::new();
        args.hash(&mut hasher);
        Self(hasher.finish())
    }

    /// The fingerprint of tool arguments as JSON, key order, whitespace and
    /// the spelling of numbers aside (see [`CanonicalJson`]).
    ///
    /// ```
    /// use serde_json::json;
    /// use tenacious::agent::Fingerprint;
    ///
    /// let a: serde_json::Value = serde_json::from_str(r#"{"a": 1, "b": [true, null]}"#).unwrap();
    /// assert_eq!(Fingerprint::of_json(&a), Fingerprint::of_json(&json!({"b": [true, null], "a": 1.0})));
    /// assert_ne!(Fingerprint::of_json(&a), Fingerprint::of_json(&json!({"a": 2, "b": [true, null]})));
    /// ```
    #[must_use]
    pub fn of_json(args: &Value) -> Self {
        Self::of(&CanonicalJson(args))
    }

    /// The hash itself.
    ///
    /// ```
    /// use tenacious::agent::Fingerprint;
    ///
    /// assert_eq!(Fingerprint::of(&42).value(), Fingerprint::of(&42).value());
    /// ```
    #[must_use]
    pub const fn value(self) -> u64 {
        self.0
    }
}

impl fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

/// Tool arguments as a `serde_json::Value`, hashed canonically: what
/// [`TaskGuard::failed`](super::TaskGuard::failed) takes for arguments that
/// are JSON (a `Value` is not `Hash`), and what
/// [`Fingerprint::of_json`] hashes.
///
/// Equal JSON hashes alike, however it was written:
///
/// - **objects** whatever their key order: each entry is hashed on its
///   own and the entries' hashes are summed, so no sorted copy of the
///   keys is made (and a `preserve_order` build of `serde_json`, which
///   keeps keys as written, hashes as a sorted one does);
/// - **numbers** by value, as canonical JSON text writes them: `1`, `1.0`
///   and `1e0` alike, `-0.0` as `0`; a fraction by its `f64`;
/// - strings, booleans, `null` and arrays (in order) as they are, each
///   tagged with its type, so `"1"` and `1`, or `[]` and `{}`, differ.
///
/// Nothing is allocated.
///
/// ```
/// use serde_json::json;
/// use tenacious::agent::{CanonicalJson, TaskGuard, TaskGuardConfig, Verdict};
///
/// let timeout = std::io::Error::from(std::io::ErrorKind::TimedOut);
/// let mut guard = TaskGuard::new(TaskGuardConfig::new().switch_after(2));
/// let first = json!({"query": "weather", "units": "metric"});
/// let again = json!({"units": "metric", "query": "weather"});
/// guard.failed("search", &CanonicalJson(&first), &timeout);
/// let verdict = guard.failed("search", &CanonicalJson(&again), &timeout);
/// assert!(matches!(verdict, Verdict::SwitchDirection { .. }));
/// ```
#[derive(Debug, Clone, Copy)]
pub struct CanonicalJson<'a>(pub &'a Value);

impl Hash for CanonicalJson<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        hash_value(self.0, state);
    }
}

/// One tag per JSON type, before its value.
const NULL: u8 = 0;
const BOOL: u8 = 1;
const INTEGER: u8 = 2;
const FRACTION: u8 = 3;
const STRING: u8 = 4;
const ARRAY: u8 = 5;
const OBJECT: u8 = 6;

fn hash_value<H: Hasher>(value: &Value, state: &mut H) {
    match value {
        Value::Null => state.write_u8(NULL),
        Value::Bool(b) => {
            state.write_u8(BOOL);
            state.write_u8(u8::from(*b));
        }
        Value::Number(n) => hash_number(n, state),
        Value::String(s) => {
            state.write_u8(STRING);
            s.as_str().hash(state);
        }
        Value::Array(items) => {
            state.write_u8(ARRAY);
            state.write_usize(items.len());
            for item in items {
                hash_value(item, state);
            }
        }
        Value::Object(entries) => {
            // Order-independent: the sum of each entry's own hash.
            let sum = entries.iter().fold(0u64, |sum, (key, value)| {
                let mut entry = DefaultHasher::new();
                key.as_str().hash(&mut entry);
                hash_value(value, &mut entry);
                sum.wrapping_add(entry.finish())
            });
            state.write_u8(OBJECT);
            state.write_usize(entries.len());
            state.write_u64(sum);
        }
    }
}

/// An integer, or a float of integral value within 128 bits, as the
/// integer; any other float by its bits.
fn hash_number<H: Hasher>(n: &Number, state: &mut H) {
    let integer = if let Some(i) = n.as_i64() {
        Some(i128::from(i))
    } else if let Some(u) = n.as_u64() {
        Some(i128::from(u))
    } else {
        n.as_f64().and_then(integral)
    };
    match integer {
        Some(i) => {
            state.write_u8(INTEGER);
            state.write_i128(i);
        }
        None => {
            state.write_u8(FRACTION);
            state.write_u64(n.as_f64().map_or(0, f64::to_bits));
        }
    }
}

/// `f` as an integer when it is one (and within ±2^64, beyond which JSON
/// integers are not exact anyway).
fn integral(f: f64) -> Option<i128> {
    const LIMIT: f64 = 18_446_744_073_709_551_616.0; // 2^64
    #[allow(clippy::cast_possible_truncation)] // integral and within ±2^64
    (f.fract() == 0.0 && f.abs() < LIMIT).then_some(f as i128)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn of(text: &str) -> Fingerprint {
        Fingerprint::of_json(&serde_json::from_str(text).unwrap())
    }

    #[test]
    fn equal_json_fingerprints_alike_whatever_its_spelling() {
        assert_eq!(of(r#"{"a":1,"b":2}"#), of(r#"{"b":2,"a":1}"#));
        assert_eq!(of(r#"{ "a" : 1 }"#), of(r#"{"a":1.0}"#));
        assert_eq!(of("[1e2, -0.0]"), of("[100, 0]"));
        assert_eq!(
            of(r#"{"x":{"p":[1,{"q":null,"r":true}],"s":"t"}}"#),
            of(r#"{"x":{"s":"t","p":[1,{"r":true,"q":null}]}}"#)
        );
        assert_eq!(of("18446744073709551615"), of("18446744073709551615"));
    }

    #[test]
    fn different_json_fingerprints_apart() {
        let distinct = [
            r#"{"a":1}"#,
            r#"{"a":2}"#,
            r#"{"b":1}"#,
            r#"{"a":"1"}"#,
            r#"{"a":1.5}"#,
            r#"{"a":[1]}"#,
            r#"{"a":null}"#,
            r#"{"a":true}"#,
            r#"{"a":false}"#,
            r#"{"a":{}}"#,
            r#"{"a":[]}"#,
            r#"{"a":1,"b":2}"#,
            r#"{"a":2,"b":1}"#,
            "[1,2]",
            "[2,1]",
            "{}",
            "[]",
            "null",
            "-1",
        ];
        let prints: Vec<Fingerprint> = distinct.iter().map(|text| of(text)).collect();
        for (i, a) in prints.iter().enumerate() {
            for (j, b) in prints.iter().enumerate().skip(i + 1) {
                assert_ne!(a, b, "{} and {}", distinct[i], distinct[j]);
            }
        }
        assert_ne!(
            Fingerprint::of_json(&json!(9_007_199_254_740_993_u64)),
            Fingerprint::of_json(&json!(9_007_199_254_740_992.0))
        );
    }
}

//! The document a config is read from, as a tree every source gives the
//! same way: TOML and JSON through serde, the environment by its variables'
//! names. The settings are read from the tree by hand (`read.rs`), so every
//! mistake is found, with its path and value.
use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};

/// One value of the document.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    Str(String),
    /// Every integer TOML and JSON hold (`i64` and `u64`).
    Int(i128),
    Float(f64),
    Bool(bool),
    List(Vec<Value>),
    Table(Table),
    /// An environment variable's text: read as the key asks (a number, a
    /// flag, a list), since the environment has no types.
    Env(String),
    /// What no setting takes (a TOML date-time, a JSON `null`, bytes): what
    /// it was, for the message.
    Other(&'static str),
}

/// A table, its keys in the order the source gives them (JSON's as
/// written, TOML's sorted).
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Table {
    pub(crate) entries: Vec<Entry>,
}

/// One key of a table.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Entry {
    pub(crate) key: String,
    /// Where the value came from when the path does not say it: the
    /// environment variable that set it.
    pub(crate) label: Option<String>,
    pub(crate) value: Value,
    /// The key was given twice (a JSON object may repeat one).
    pub(crate) repeated: bool,
}

impl Table {
    /// Adds `key`, or marks it repeated.
    pub(crate) fn insert(&mut self, key: String, label: Option<String>, value: Value) {
        if let Some(entry) = self.entries.iter_mut().find(|entry| entry.key == key) {
            entry.repeated = true;
            entry.value = value;
            return;
        }
        self.entries.push(Entry {
            key,
            label,
            value,
            repeated: false,
        });
    }

    /// The table under `key`, made if missing (the environment's tree).
    pub(crate) fn table_mut(&mut self, key: &str, label: &str) -> &mut Self {
        let at = match self.entries.iter().position(|entry| entry.key == key) {
            Some(at) => at,
            None => {
                self.entries.push(Entry {
                    key: key.to_owned(),
                    label: Some(label.to_owned()),
                    value: Value::Table(Self::default()),
                    repeated: false,
                });
                self.entries.len() - 1
            }
        };
        let entry = &mut self.entries[at];
        if !matches!(entry.value, Value::Table(_)) {
            entry.value = Value::Table(Self::default());
        }
        match &mut entry.value {
            Value::Table(table) => table,
            _ => unreachable!("made a table just above"),
        }
    }
}

/// The longest a value is shown in a message: a hostile file's megabyte
/// string is cut, not echoed.
const SHOWN: usize = 60;

impl Value {
    /// What kind of value it is, for "expected … , not a list".
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Self::Str(_) | Self::Env(_) => "a string",
            Self::Int(_) => "an integer",
            Self::Float(_) => "a number",
            Self::Bool(_) => "a boolean",
            Self::List(_) => "a list",
            Self::Table(_) => "a table",
            Self::Other(what) => what,
        }
    }

    /// The value as a message shows it: a string quoted, a scalar as
    /// written, a list by its items; cut to [`SHOWN`] characters. `None`
    /// for a table (its keys are shown one by one).
    pub(crate) fn shown(&self) -> Option<String> {
        Some(match self {
            Self::Str(text) | Self::Env(text) => quoted(text),
            Self::Int(n) => n.to_string(),
            Self::Float(x) => format!("{x:?}"),
            Self::Bool(b) => b.to_string(),
            Self::List(items) => {
                let mut shown = String::from("[");
                for (i, item) in items.iter().enumerate() {
                    if shown.len() > SHOWN {
                        shown.push('…');
                        break;
                    }
                    if i > 0 {
                        shown.push_str(", ");
                    }
                    match item {
                        Self::List(_) => shown.push_str("[…]"),
                        Self::Table(_) => shown.push_str("{…}"),
                        _ => shown.push_str(&item.shown().unwrap_or_default()),
                    }
                }
                shown.push(']');
                shown
            }
            Self::Table(_) => return None,
            Self::Other(what) => (*what).to_owned(),
        })
    }
}

/// `text` quoted and escaped like a JSON string, cut to [`SHOWN`]
/// characters.
pub(crate) fn quoted(text: &str) -> String {
    let mut shown: String = text.chars().take(SHOWN).collect();
    if shown.len() < text.len() {
        shown.push('…');
    }
    format!("{shown:?}")
}

impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ValueVisitor)
    }
}

struct ValueVisitor;

/// The key under which the `toml` crate hands a date-time to serde.
const TOML_DATETIME: &str = "$__toml_private_datetime";

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a table of settings")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Int(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Int(v.into()))
    }

    fn visit_i128<E>(self, v: i128) -> Result<Value, E> {
        Ok(Value::Int(v))
    }

    fn visit_u128<E>(self, v: u128) -> Result<Value, E> {
        Ok(i128::try_from(v).map_or(Value::Float(f64::INFINITY), Value::Int))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::Float(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::Str(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::Str(v))
    }

    fn visit_bytes<E>(self, _: &[u8]) -> Result<Value, E> {
        Ok(Value::Other("bytes"))
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Other("null"))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Other("null"))
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::List(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut table = Table::default();
        while let Some(key) = map.next_key::<String>()? {
            if key == TOML_DATETIME {
                map.next_value::<de::IgnoredAny>()?;
                return Ok(Value::Other("a date-time"));
            }
            let value = map.next_value()?;
            table.insert(key, None, value);
        }
        Ok(Value::Table(table))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_and_toml_give_the_same_tree() {
        let json: Value =
            serde_json::from_str(r#"{"a": {"b": 1, "c": "x", "d": [true, 1.5]}}"#).unwrap();
        let toml: Value = toml::from_str("[a]\nb = 1\nc = \"x\"\nd = [true, 1.5]\n").unwrap();
        assert_eq!(json, toml);
    }

    #[test]
    fn odd_values_are_named_not_refused() {
        let toml: Value = toml::from_str("a = 1979-05-27T07:32:00Z\n").unwrap();
        let Value::Table(table) = toml else { panic!() };
        assert_eq!(table.entries[0].value, Value::Other("a date-time"));
        let json: Value = serde_json::from_str(r#"{"a": null, "a": 2}"#).unwrap();
        let Value::Table(table) = json else { panic!() };
        assert_eq!(table.entries.len(), 1);
        assert!(table.entries[0].repeated);
        let huge: Value = serde_json::from_str("123456789012345678901234567890").unwrap();
        assert!(matches!(huge, Value::Float(_)));
    }

    #[test]
    fn long_strings_are_cut_in_messages() {
        let long = "x".repeat(1_000);
        let shown = Value::Str(long.clone()).shown().unwrap();
        assert_eq!(shown.chars().count(), SHOWN + 3);
        assert!(shown.ends_with("…\""));
        assert_eq!(Value::Str("a\"b".into()).shown().unwrap(), r#""a\"b""#);
        let list = Value::List(vec![Value::Str(long); 3]).shown().unwrap();
        assert!(list.chars().count() < 2 * SHOWN, "{list}");
        assert!(list.ends_with("…]"), "{list}");
        let nested = Value::List(vec![
            Value::Int(1),
            Value::List(vec![]),
            Value::Table(Table::default()),
        ]);
        assert_eq!(nested.shown().unwrap(), "[1, […], {…}]");
        assert_eq!(Value::Table(Table::default()).shown(), None);
    }
}

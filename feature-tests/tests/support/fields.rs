//! The fields of a captured event or span, each with the type it was
//! recorded as, for the capturing subscribers of the tracing tests.
use std::collections::BTreeMap;
use std::fmt;

use tracing::field::{Field, Visit};

/// A field's value, with the type it was recorded as (a non-negative
/// `i64` as a `U64`: the spans record their integers signed).
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    U64(u64),
    Str(String),
    Other(String),
}

/// Records each field visited into the map.
pub struct Fields<'a>(pub &'a mut BTreeMap<String, Value>);

impl Visit for Fields<'_> {
    fn record_i64(&mut self, field: &Field, value: i64) {
        let value = match u64::try_from(value) {
            Ok(value) => Value::U64(value),
            Err(_) => Value::Other(value.to_string()),
        };
        self.0.insert(field.name().to_owned(), value);
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.insert(field.name().to_owned(), Value::U64(value));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0
            .insert(field.name().to_owned(), Value::Str(value.to_owned()));
    }
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0
            .insert(field.name().to_owned(), Value::Other(format!("{value:?}")));
    }
}

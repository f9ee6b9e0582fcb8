//! Support for the code `#[derive(Classify)]` generates.
use std::time::Duration;

/// A field type `#[classify(retry_after)]` accepts: [`Duration`] (the
/// server always says how long) or `Option<Duration>` (it may not).
///
/// The derive calls it through the field's declared type, so a type alias
/// of either works, and any other type fails to compile with a message on
/// the field's type.
///
/// ```
/// use std::time::Duration;
/// use tenacious::__private::RetryAfterField;
///
/// assert_eq!(Duration::from_secs(2).get(), Some(Duration::from_secs(2)));
/// assert_eq!(None::<Duration>.get(), None);
/// ```
#[diagnostic::on_unimplemented(
    message = "`#[classify(retry_after)]` needs a `Duration` or `Option<Duration>` field, not `{Self}`",
    label = "not a `Duration` or `Option<Duration>`",
    note = "store the server's hint as `std::time::Duration`, or `Option<Duration>` when it may be absent"
)]
pub trait RetryAfterField {
    /// The server's hint this field holds.
    fn get(&self) -> Option<Duration>;
}

impl RetryAfterField for Duration {
    fn get(&self) -> Option<Duration> {
        Some(*self)
    }
}

impl RetryAfterField for Option<Duration> {
    fn get(&self) -> Option<Duration> {
        *self
    }
}

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

/// What the fn named by `#[classify(with = path)]` may return: an
/// [`ErrorClass`](crate::ErrorClass) (nothing else said) or a
/// [`Classified`](crate::Classified) (with a hint, a retry-after, signals).
///
/// The derive calls it on the fn's result, so any other return type fails
/// to compile with a message on the path.
///
/// ```
/// use tenacious::__private::WithOutput;
/// use tenacious::{Classified, ErrorClass};
///
/// assert_eq!(ErrorClass::Fatal.into_classified(), Classified::fatal());
/// let hinted = Classified::invalid().with_hint("shorten the prompt");
/// assert_eq!(hinted.clone().into_classified(), hinted);
/// ```
#[diagnostic::on_unimplemented(
    message = "`#[classify(with = ...)]` needs a fn returning `ErrorClass` or `Classified`, not `{Self}`",
    label = "this fn returns `{Self}`",
    note = "return `tenacious::ErrorClass` for the class alone, or `tenacious::Classified` to give a hint, a retry-after or signals too"
)]
pub trait WithOutput {
    /// The classification this result says.
    fn into_classified(self) -> crate::Classified;
}

impl WithOutput for crate::ErrorClass {
    fn into_classified(self) -> crate::Classified {
        crate::Classified::new(self)
    }
}

impl WithOutput for crate::Classified {
    fn into_classified(self) -> crate::Classified {
        self
    }
}

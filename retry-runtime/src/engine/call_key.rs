//! What a call's idempotency key is made of, beyond a random draw: the
//! fingerprint of a nested call's arguments, and the values
//! `#[retry(key = ...)]` accepts.
use std::hash::{DefaultHasher, Hash, Hasher};

use crate::IdempotencyKey;

/// The hasher a nested call's arguments are fingerprinted with: SipHash
/// with fixed keys (`DefaultHasher::new()`), so the same arguments give the
/// same fingerprint on every attempt, run and thread of one build of a
/// program (not necessarily across Rust versions).
#[doc(hidden)]
#[derive(Debug, Clone, Default)]
pub struct ArgHasher {
    hasher: DefaultHasher,
    /// An argument could not be hashed: the fingerprint does not tell
    /// calls apart by what they ask for.
    incomplete: bool,
}

impl ArgHasher {
    /// An empty fingerprint.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Notes an argument that could not be hashed.
    pub fn mark_incomplete(&mut self) {
        self.incomplete = true;
        self.hasher.write_u8(0);
    }

    /// Whether every argument was hashed.
    pub(crate) const fn is_complete(&self) -> bool {
        !self.incomplete
    }
}

impl Hasher for ArgHasher {
    fn finish(&self) -> u64 {
        self.hasher.finish()
    }

    fn write(&mut self, bytes: &[u8]) {
        self.hasher.write(bytes);
    }
}

/// One argument of a retried fn, as the expansion hands it to the
/// fingerprint: [`HashArg`] hashes it if its type is `Hash`, [`SkipArg`]
/// (found only when it is not) writes a marker in its place. The
/// expansion calls `(&ArgProbe(&arg)).hash_arg(hasher)` with both traits
/// in scope, and method resolution picks the first that applies.
#[doc(hidden)]
#[derive(Debug)]
pub struct ArgProbe<'a, T: ?Sized>(pub &'a T);

/// The fingerprint of an argument whose type is `Hash`.
#[doc(hidden)]
pub trait HashArg {
    /// Writes the argument into `hasher`.
    fn hash_arg(&self, hasher: &mut ArgHasher);
}

impl<T: Hash + ?Sized> HashArg for ArgProbe<'_, T> {
    #[inline]
    fn hash_arg(&self, hasher: &mut ArgHasher) {
        hasher.write_u8(1);
        self.0.hash(hasher);
    }
}

/// The fingerprint of an argument whose type is not `Hash`: a marker that
/// makes the fingerprint incomplete, so the call is told apart by its place
/// among the calls of its attempt whose fingerprints are incomplete.
#[doc(hidden)]
pub trait SkipArg {
    /// Writes the marker into `hasher`.
    fn hash_arg(&self, hasher: &mut ArgHasher);
}

impl<T: ?Sized> SkipArg for &ArgProbe<'_, T> {
    #[inline]
    fn hash_arg(&self, hasher: &mut ArgHasher) {
        hasher.mark_incomplete();
    }
}

/// What `#[retry(key = EXPR)]` takes: a value that names one logical call,
/// such as an order id, so that the call sends the same
/// [`IdempotencyKey`] on every attempt, nested or not, and when the agent
/// issues the same call again after a give-up, or after a restart.
///
/// | value | key |
/// |---|---|
/// | an [`IdempotencyKey`] | itself |
/// | a `str` or `String` `text` | [`IdempotencyKey::derive`]`(fn_name, text)` |
/// | an integer `n` | [`IdempotencyKey::derive`]`(fn_name, n in decimal)` |
///
/// `fn_name` is the retried fn's name, so two fns given the same id get
/// different keys. References to any of these work too.
///
/// ```
/// use tenacious::{IdempotencyKey, KeySource};
///
/// assert_eq!("ord-17".call_key("create_order"), IdempotencyKey::derive("create_order", "ord-17"));
/// assert_eq!(17_u64.call_key("create_order"), IdempotencyKey::derive("create_order", "17"));
/// let key = IdempotencyKey::derive("task-42", "call_abc");
/// assert_eq!(key.call_key("create_order"), key);
/// ```
#[diagnostic::on_unimplemented(
    message = "`key = ...` needs a value that names the call: a `&str`, a `String`, an integer or a `tenacious::IdempotencyKey`, found `{Self}`",
    label = "not a key source",
    note = "build a string from the arguments (`key = format!(..)`, `key = id.to_string()`), or a key with `tenacious::IdempotencyKey::derive(..)`"
)]
pub trait KeySource {
    /// The key of a call to fn `fn_name` named by this value.
    fn call_key(&self, fn_name: &str) -> IdempotencyKey;
}

impl KeySource for IdempotencyKey {
    fn call_key(&self, _: &str) -> IdempotencyKey {
        *self
    }
}

impl KeySource for str {
    fn call_key(&self, fn_name: &str) -> IdempotencyKey {
        IdempotencyKey::derive(fn_name, self)
    }
}

impl KeySource for String {
    fn call_key(&self, fn_name: &str) -> IdempotencyKey {
        IdempotencyKey::derive(fn_name, self)
    }
}

impl<T: KeySource + ?Sized> KeySource for &T {
    fn call_key(&self, fn_name: &str) -> IdempotencyKey {
        (**self).call_key(fn_name)
    }
}

macro_rules! integer_key_sources {
    ($($int:ty),*) => {$(
        impl KeySource for $int {
            fn call_key(&self, fn_name: &str) -> IdempotencyKey {
                IdempotencyKey::derive(fn_name, &self.to_string())
            }
        }
    )*};
}

integer_key_sources!(
    u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize
);

#[cfg(test)]
// The borrow in `(&ArgProbe(..)).hash_arg(..)` is what lets method
// resolution fall back to `SkipArg`: not needless.
#[allow(clippy::needless_borrow)]
mod tests {
    use super::*;

    fn fingerprint(f: impl FnOnce(&mut ArgHasher)) -> u64 {
        let mut hasher = ArgHasher::new();
        f(&mut hasher);
        hasher.finish()
    }

    struct NotHash;

    #[test]
    fn hashable_arguments_are_hashed_and_others_marked() {
        let a = fingerprint(|h| (&ArgProbe(&"order-1")).hash_arg(h));
        let b = fingerprint(|h| (&ArgProbe(&"order-2")).hash_arg(h));
        assert_ne!(a, b);
        assert_eq!(a, fingerprint(|h| (&ArgProbe(&"order-1")).hash_arg(h)));
        let skipped = fingerprint(|h| (&ArgProbe(&NotHash)).hash_arg(h));
        assert_eq!(skipped, fingerprint(|h| (&ArgProbe(&NotHash)).hash_arg(h)));
        assert_ne!(skipped, a);
    }

    #[test]
    fn generic_arguments_without_hash_are_marked() {
        fn probe<T>(value: &T) -> u64 {
            fingerprint(|h| (&ArgProbe(value)).hash_arg(h))
        }
        fn probe_hash<T: Hash>(value: &T) -> u64 {
            fingerprint(|h| (&ArgProbe(value)).hash_arg(h))
        }
        assert_eq!(probe(&1_u8), probe(&2_u8));
        assert_ne!(probe_hash(&1_u8), probe_hash(&2_u8));
    }

    #[test]
    fn key_sources_derive_from_the_fn_name() {
        let text = String::from("ord-1");
        assert_eq!(text.call_key("f"), "ord-1".call_key("f"));
        assert_ne!("ord-1".call_key("f"), "ord-1".call_key("g"));
        assert_eq!(7_i32.call_key("f"), "7".call_key("f"));
    }
}

//! [`Fingerprint`]: how the guard recognises the model repeating a call.
use std::fmt;
use std::hash::{DefaultHasher, Hash, Hasher};

/// A hash of a tool call's arguments, to recognise the model repeating
/// the very same call.
///
/// Any `Hash` value works: the arguments' JSON text, a struct, a tuple.
/// Two texts that differ only in whitespace or key order are different
/// calls; canonicalise them first if that matters. The hash is the same
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

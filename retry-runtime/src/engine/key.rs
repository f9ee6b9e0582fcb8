//! [`IdempotencyKey`]: the UUID every attempt of one logical call shares,
//! random (version 4, from the OS) or derived (version 5, from a task and
//! tool call, or from the outer call's key for a nested call), its text
//! form and its parser.
use std::fmt;
use std::str::FromStr;

/// A key that is the same for every attempt of one logical call and
/// different between calls: send it as an `Idempotency-Key` header (or store
/// it with the side effect) so that a server seeing an attempt twice — the
/// first timed out on the client, but went through — can tell and answer
/// with the stored result instead of acting again.
///
/// Inside a retried call, [`Attempt::current`](crate::Attempt::current) gives it. A call's key is
/// random: a version 4 UUID, drawn once per call, when an attempt first
/// asks for it, from the operating system's CSPRNG (one `getrandom` call,
/// no allocation), so it cannot be guessed, and neither
/// [`seed_jitter`](crate::seed_jitter) nor `fork` makes two calls share
/// one. A key that must survive a restart of
/// the process comes from [`derive`](IdempotencyKey::derive). Its `Display`
/// is the UUID form, 8-4-4-4-12 lowercase hex digits.
///
/// A retried call made inside another one's attempt (see
/// [`Nested`](crate::Nested)) gets a key derived from the outer call's key,
/// its fn name and a fingerprint of its arguments whose types are `Hash`
/// (the receiver and `&mut` arguments left out), so when the outer call
/// retries, the inner call sends the key it sent the first time, whatever
/// other calls the retry skips, adds or starts in another order. Calls of
/// one fn with equal arguments in one attempt share a key: they are one
/// request. A call with an argument that is not `Hash` is told apart by
/// its place among the attempt's calls of that kind instead. A call that
/// must keep its key beyond its outer call — issued again after a give-up
/// or a restart — names it: `#[retry(key = ...)]` (see
/// [`KeySource`](crate::KeySource)).
///
/// ```
/// use tenacious::IdempotencyKey;
///
/// let key = IdempotencyKey::derive("task-42", "call_abc");
/// assert_eq!(key, IdempotencyKey::derive("task-42", "call_abc"));
/// assert_ne!(key, IdempotencyKey::derive("task-42", "call_abd"));
/// assert_eq!(key.to_string(), "702fce3c-96b1-5a69-abbe-3581521537e3");
/// assert_eq!(key.to_string().parse::<IdempotencyKey>(), Ok(key));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct IdempotencyKey(u128);

impl IdempotencyKey {
    /// The namespace of [`derive`](IdempotencyKey::derive):
    /// `84a7cda2-24cf-56cb-9ad1-2a578fdb7ab1`, itself the version 5 UUID
    /// of the URL `https://github.com/tenacious-rs/tenacious#idempotency-key`.
    pub const NAMESPACE: Self = Self(0x84a7_cda2_24cf_56cb_9ad1_2a57_8fdb_7ab1);

    /// The key of one tool call of one task, the same on every run, machine
    /// and version of this crate: resuming a task after a restart resends the
    /// keys its first run sent.
    ///
    /// It is the version 5 (SHA-1, name-based) UUID, in the namespace
    /// [`NAMESPACE`](IdempotencyKey::NAMESPACE), of the name
    /// `"{n}:{task_id}{tool_call_id}"`, `n` being the length of `task_id` in
    /// UTF-8 bytes, in decimal. The length keeps `("ab", "c")` and
    /// `("a", "bc")` apart, and any UUID library computes the same key, for
    /// example Python's
    /// `uuid.uuid5(uuid.UUID("84a7cda2-24cf-56cb-9ad1-2a578fdb7ab1"), "7:task-42call_abc")`.
    ///
    /// ```
    /// use tenacious::IdempotencyKey;
    ///
    /// let key = IdempotencyKey::derive("task-42", "call_abc");
    /// assert_eq!(key.to_string(), "702fce3c-96b1-5a69-abbe-3581521537e3");
    /// assert_ne!(IdempotencyKey::derive("ab", "c"), IdempotencyKey::derive("a", "bc"));
    /// ```
    #[must_use]
    pub fn derive(task_id: &str, tool_call_id: &str) -> Self {
        Self::v5(Self::NAMESPACE, task_id.as_bytes(), tool_call_id.as_bytes())
    }

    /// The key as a number (the UUID's 16 bytes, big-endian).
    ///
    /// ```
    /// use tenacious::IdempotencyKey;
    ///
    /// let key = IdempotencyKey::derive("t", "c");
    /// assert_eq!(IdempotencyKey::from_u128(key.as_u128()), key);
    /// ```
    #[must_use]
    pub const fn as_u128(self) -> u128 {
        self.0
    }

    /// A key from [`as_u128`](IdempotencyKey::as_u128), say one stored
    /// with a task's state. Any value is accepted as is.
    #[must_use]
    pub const fn from_u128(value: u128) -> Self {
        Self(value)
    }

    /// A random version 4 UUID: 122 bits from the operating system's
    /// CSPRNG (`getrandom`), read afresh for every key. Never from the
    /// jitter RNG, which [`seed_jitter`](crate::seed_jitter) makes
    /// repeatable: seeding it changes no key, drawing a key shifts no
    /// delay, and threads, processes and a `fork`ed child (which shares its
    /// parent's memory, but not the kernel's next bytes) never repeat one
    /// another's keys.
    pub(crate) fn random() -> Self {
        let mut bytes = [0u8; 16];
        if getrandom::fill(&mut bytes).is_err() {
            bytes = fallback_entropy();
        }
        Self(with_version(u128::from_be_bytes(bytes), 4))
    }

    /// The key of a retried call to fn `name`, made by an attempt of the
    /// call that has this key: `fingerprint` hashes the call's arguments
    /// (see [`ArgHasher`](crate::engine::call_key::ArgHasher)), and `place` tells apart calls whose fingerprint
    /// is incomplete (0 for a complete one).
    pub(crate) fn child(self, name: &str, fingerprint: u64, place: u32) -> Self {
        let place_bytes = place.to_be_bytes();
        let mut place = [0u8; 12];
        place[..8].copy_from_slice(&fingerprint.to_be_bytes());
        place[8..].copy_from_slice(&place_bytes);
        Self::v5(self, name.as_bytes(), &place)
    }

    /// UUID version 5 of the name `"{len(a)}:{a}{b}"` in `namespace`.
    fn v5(namespace: Self, a: &[u8], b: &[u8]) -> Self {
        let mut digits = [0u8; 20];
        let mut sha1 = sha1_smol::Sha1::new();
        sha1.update(&namespace.0.to_be_bytes());
        sha1.update(decimal(a.len() as u64, &mut digits));
        sha1.update(b":");
        sha1.update(a);
        sha1.update(b);
        let digest = sha1.digest().bytes();
        let mut first = [0u8; 16];
        first.copy_from_slice(&digest[..16]);
        Self(with_version(u128::from_be_bytes(first), 5))
    }
}

/// 16 bytes for a key when the OS's random source fails, which on the
/// platforms std supports it does not in practice: two SipHash outputs
/// keyed by std's per-process random keys, over a process-wide counter and
/// the time, so keys still differ between calls and processes (but are not
/// cryptographically strong).
#[cold]
fn fallback_entropy() -> [u8; 16] {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let count = COUNTER.fetch_add(1, Ordering::Relaxed);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let keys = std::hash::RandomState::new();
    let half = |salt: u64| {
        let mut hasher = keys.build_hasher();
        hasher.write_u64(salt);
        hasher.write_u64(count);
        hasher.write_u128(now);
        hasher.write_u32(std::process::id());
        hasher.finish()
    };
    let bits = (u128::from(half(1)) << 64) | u128::from(half(2));
    bits.to_be_bytes()
}

/// `bits` with the UUID version nibble set to `version` and the RFC 9562
/// variant (`10`).
const fn with_version(bits: u128, version: u128) -> u128 {
    const VERSION_MASK: u128 = 0xf << 76;
    const VARIANT_MASK: u128 = 0b11 << 62;
    (bits & !VERSION_MASK & !VARIANT_MASK) | (version << 76) | (0b10 << 62)
}

/// `n` in decimal ASCII, written at the end of `buf`; no allocation.
fn decimal(n: impl Into<u64>, buf: &mut [u8]) -> &[u8] {
    let mut n: u64 = n.into();
    let mut start = buf.len();
    loop {
        start -= 1;
        // `n % 10` is a single digit.
        #[allow(clippy::cast_possible_truncation)]
        let digit = (n % 10) as u8;
        buf[start] = b'0' + digit;
        n /= 10;
        if n == 0 {
            return &buf[start..];
        }
    }
}

impl fmt::Display for IdempotencyKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.0;
        write!(
            f,
            "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
            n >> 96,
            (n >> 80) & 0xffff,
            (n >> 64) & 0xffff,
            (n >> 48) & 0xffff,
            n & 0xffff_ffff_ffff
        )
    }
}

impl fmt::Debug for IdempotencyKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "IdempotencyKey({self})")
    }
}

/// The text is not an 8-4-4-4-12 hex UUID.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParseKeyError;

impl fmt::Display for ParseKeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an idempotency key is a UUID: 8-4-4-4-12 hexadecimal digits")
    }
}

impl std::error::Error for ParseKeyError {}

/// Parses the `Display` form (either case of hex digits), so a key stored as
/// text comes back.
impl FromStr for IdempotencyKey {
    type Err = ParseKeyError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let bytes = text.as_bytes();
        if bytes.len() != 36 {
            return Err(ParseKeyError);
        }
        let mut value: u128 = 0;
        for (i, &byte) in bytes.iter().enumerate() {
            if matches!(i, 8 | 13 | 18 | 23) {
                if byte != b'-' {
                    return Err(ParseKeyError);
                }
                continue;
            }
            let digit = char::from(byte).to_digit(16).ok_or(ParseKeyError)?;
            value = (value << 4) | u128::from(digit);
        }
        Ok(Self(value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derive_is_uuid_v5_of_the_documented_name() {
        // Reference values from Python's `uuid.uuid5`.
        let cases = [
            (
                "task-42",
                "call_abc",
                "702fce3c-96b1-5a69-abbe-3581521537e3",
            ),
            ("", "", "0380aae2-4857-5e1f-97d2-b4d595b1e03f"),
            ("task", "call_1", "b8e75cd4-add4-5c5b-9f99-48eab523e975"),
        ];
        for (task, call, expected) in cases {
            assert_eq!(IdempotencyKey::derive(task, call).to_string(), expected);
        }
        assert_eq!(
            IdempotencyKey::NAMESPACE.to_string(),
            "84a7cda2-24cf-56cb-9ad1-2a578fdb7ab1"
        );
    }

    #[test]
    fn random_keys_are_v4_and_differ() {
        let a = IdempotencyKey::random();
        let b = IdempotencyKey::random();
        assert_ne!(a, b);
        for key in [a, b] {
            let text = key.to_string();
            assert_eq!(&text[14..15], "4", "{text}");
            assert!(matches!(&text[19..20], "8" | "9" | "a" | "b"), "{text}");
        }
    }

    #[test]
    fn children_differ_by_name_fingerprint_and_occurrence_and_are_stable() {
        let parent = IdempotencyKey::derive("t", "c");
        assert_eq!(parent.child("f", 1, 0), parent.child("f", 1, 0));
        assert_ne!(parent.child("f", 1, 0), parent.child("f", 1, 1));
        assert_ne!(parent.child("f", 1, 0), parent.child("f", 2, 0));
        assert_ne!(parent.child("f", 1, 0), parent.child("g", 1, 0));
        let other = IdempotencyKey::derive("t", "d");
        assert_ne!(parent.child("f", 1, 0), other.child("f", 1, 0));
        assert_eq!(&parent.child("f", 1, 7).to_string()[14..15], "5");
    }

    #[test]
    fn decimal_writes_every_width() {
        let mut buf = [0u8; 20];
        assert_eq!(decimal(0u32, &mut buf), b"0");
        assert_eq!(decimal(10u32, &mut buf), b"10");
        assert_eq!(decimal(u64::MAX, &mut buf), b"18446744073709551615");
    }

    #[test]
    fn parse_rejects_anything_but_the_uuid_form() {
        for bad in [
            "",
            "702fce3c96b15a69abbe3581521537e3",
            "702fce3c-96b1-5a69-abbe-3581521537e",
            "702fce3c-96b1-5a69-abbe-3581521537e3x",
            "702fce3c+96b1-5a69-abbe-3581521537e3",
            "702fce3g-96b1-5a69-abbe-3581521537e3",
            "702fce3c-96b1-5a69-abbe-3581521537é",
        ] {
            assert_eq!(bad.parse::<IdempotencyKey>(), Err(ParseKeyError), "{bad}");
        }
        let upper = "702FCE3C-96B1-5A69-ABBE-3581521537E3";
        assert_eq!(
            upper.parse::<IdempotencyKey>(),
            Ok(IdempotencyKey::derive("task-42", "call_abc"))
        );
    }
}

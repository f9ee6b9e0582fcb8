//! The attempt context: which attempt of which logical call is running, and
//! the idempotency key all its attempts share.
//!
//! One thread-local holds the context of the attempt running on this thread.
//! A sync attempt sets it for its duration; an async attempt sets it around
//! each poll of its future (what a tokio task-local does, without needing
//! tokio's `rt`), so it follows the attempt wherever the runtime polls it and
//! never leaks into other tasks polled on the same thread.
use std::cell::Cell;
use std::fmt;
use std::future::Future;
use std::hash::Hasher;
use std::marker::PhantomData;
use std::pin::Pin;
use std::ptr;
use std::str::FromStr;
use std::task::{Context, Poll};
use std::time::Duration;

use crate::call_key::ArgHasher;
use crate::engine::{Engine, now_on};

/// A key that is the same for every attempt of one logical call and
/// different between calls: send it as an `Idempotency-Key` header (or store
/// it with the side effect) so that a server seeing an attempt twice — the
/// first timed out on the client, but went through — can tell and answer
/// with the stored result instead of acting again.
///
/// Inside a retried call, [`Attempt::current`] gives it. A call's key is
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
    /// (see [`ArgHasher`]), and `place` tells apart calls whose fingerprint
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

/// The attempt running now: its number, the call's limit, how long the call
/// has run and its [`IdempotencyKey`].
///
/// [`Attempt::current`] gives it inside the body of a `#[retry]` fn or the
/// closure a [`Policy`](crate::Policy) runs, sync or async (in the task
/// running the attempt: a task it spawns does not see it), and `None`
/// anywhere else.
///
/// ```
/// use std::io;
/// use tenacious::{Attempt, Policy};
///
/// assert!(Attempt::current().is_none());
///
/// let mut seen = Vec::new();
/// let result = Policy::new().base(std::time::Duration::ZERO).retry_blocking(|| {
///     let attempt = Attempt::current().expect("inside a retried call");
///     seen.push((attempt.number(), attempt.max(), attempt.idempotency_key()));
///     if attempt.number() < 3 { Err(io::Error::from(io::ErrorKind::TimedOut)) } else { Ok(()) }
/// });
/// assert!(result.is_ok());
/// assert_eq!(seen.iter().map(|s| (s.0, s.1)).collect::<Vec<_>>(), [(1, 3), (2, 3), (3, 3)]);
/// // One logical call, one key.
/// assert!(seen.iter().all(|s| s.2 == seen[0].2));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Attempt {
    number: u32,
    max: u32,
    start: std::time::Instant,
    /// The call keeps time on the system clock (it sleeps the thread), not
    /// on tokio's.
    system_clock: bool,
    key: IdempotencyKey,
}

impl Attempt {
    /// The attempt running on this thread (or in this task), if any.
    ///
    /// Cheap: one thread-local read. The first call in a logical call draws
    /// its key and, unless a `deadline` or `timeout` started it already,
    /// starts its clock (see [`elapsed`](Attempt::elapsed)).
    #[must_use]
    pub fn current() -> Option<Self> {
        with_current(|frame| {
            let (start, system_clock) = frame.engine.clock_start();
            Self {
                number: frame.engine.attempt_number(),
                max: frame.engine.max(),
                start,
                system_clock,
                key: frame.engine.key(),
            }
        })
    }

    /// This attempt's number, 1 for the first.
    #[must_use]
    pub const fn number(&self) -> u32 {
        self.number
    }

    /// The most attempts this call makes: the policy's `max`, or 1 for a
    /// call nested in another retried call (see [`Nested`](crate::Nested)).
    #[must_use]
    pub const fn max(&self) -> u32 {
        self.max
    }

    /// How long the logical call has been running at the moment this is
    /// called, on the clock it sleeps on: tokio's for an async call (so it
    /// follows a paused test clock), the system's for a sync one.
    ///
    /// With a `deadline` or a `timeout` the clock starts when the first
    /// attempt does. Without either, the retry loop reads no clock of its
    /// own, on the happy path or between attempts: the clock starts the
    /// first time an attempt of the call asks for [`Attempt::current`], so a
    /// body that asks as it begins measures from its first attempt's start.
    ///
    /// ```
    /// use std::io;
    /// use std::time::Duration;
    /// use tenacious::{Attempt, Policy};
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let mut seen = Vec::new();
    /// let _ = Policy::new()
    ///     .base(Duration::from_secs(1))
    ///     .jitter(tenacious::Jitter::None)
    ///     .retry(|| {
    ///         seen.push(Attempt::current().unwrap().elapsed());
    ///         async { Err::<(), _>(io::Error::from(io::ErrorKind::TimedOut)) }
    ///     })
    ///     .await;
    /// // Waited 1 s, then 2 s, on the paused clock.
    /// assert_eq!(seen, [Duration::ZERO, Duration::from_secs(1), Duration::from_secs(3)]);
    /// # }
    /// ```
    #[must_use]
    pub fn elapsed(&self) -> Duration {
        now_on(self.system_clock).saturating_duration_since(self.start)
    }

    /// The key every attempt of this logical call shares.
    #[must_use]
    pub const fn idempotency_key(&self) -> IdempotencyKey {
        self.key
    }
}

/// The context of a running attempt: its call's engine, mutably borrowed,
/// so the clock (once read) and the key (once drawn) land there at once,
/// and a count of the retried calls it started whose arguments could not
/// all be fingerprinted. Made afresh for each attempt, beside its future;
/// the thread-local points at it while the attempt runs. Two words: the
/// attempt's number and limit are read from the engine only when asked
/// for, so the happy path writes nothing else.
#[derive(Debug)]
pub(crate) struct Frame<'e, 'p> {
    pub(crate) engine: &'e mut Engine<'p>,
    /// Retried calls this attempt started with an incomplete fingerprint.
    pub(crate) unnamed_calls: u32,
}

impl Frame<'_, '_> {
    /// The key of a retried call to `name` started by this attempt, whose
    /// arguments `args` fingerprinted.
    ///
    /// A complete fingerprint (every argument but the receiver and `&mut`
    /// ones hashed) names the call by what it asks for: the same on every
    /// attempt whatever other calls the attempt skips, adds or reorders,
    /// and shared by calls of one fn with equal arguments, which are one
    /// request. Otherwise the call is told apart by its place among this
    /// attempt's calls with incomplete fingerprints.
    #[cold]
    fn nested_key(&mut self, name: &str, args: &ArgHasher) -> IdempotencyKey {
        let place = if args.is_complete() {
            0
        } else {
            let ordinal = self.unnamed_calls;
            self.unnamed_calls = ordinal.saturating_add(1);
            ordinal
        };
        self.engine.key().child(name, args.finish(), place)
    }
}

thread_local! {
    // The frame of the attempt running on this thread, or null. Only a
    // `Scope` sets it, to a frame borrowed for the scope's whole life, and
    // puts back what was there when it ends, unwinding included.
    // (The lifetimes are erased: `with_current` lends the frame out under
    // lifetimes of its own.)
    static CURRENT: Cell<*mut Frame<'static, 'static>> = const { Cell::new(ptr::null_mut()) };
    // The tokio task that set `CURRENT` (`None` outside a task): a task
    // that a `LocalSet` or a runtime driven inside the attempt polls on
    // this thread, while `CURRENT` is set, is another task and sees no
    // attempt.
    static CURRENT_TASK: Cell<Option<tokio::task::Id>> = const { Cell::new(None) };
}

/// Runs `f` on the running attempt's frame, if an attempt runs on this
/// thread, in this task.
#[inline]
#[allow(unsafe_code)]
fn with_current<T>(f: impl FnOnce(&mut Frame<'_, '_>) -> T) -> Option<T> {
    let frame = CURRENT.try_with(Cell::get).ok()?.cast::<Frame<'_, '_>>();
    if frame.is_null() || CURRENT_TASK.try_with(Cell::get).ok()? != tokio::task::try_id() {
        return None;
    }
    // SAFETY: a non-null pointer was set by a live `Scope`, whose frame is
    // mutably borrowed, and touched by nothing else, while the scope lasts
    // (see `Scope`), and its lifetimes outlive the scope. `f` takes the
    // frame under lifetimes of its own, so it cannot keep a borrow past its
    // return, and cannot reach the thread-local's pointer, so this is the
    // only reference to the frame while it runs.
    unsafe { frame.as_mut() }.map(f)
}

/// If a retried call is running on this thread, in this task, counts a new
/// call to fn `name` started by its attempt and returns that call's key:
/// derived from the attempt's key, `name` and the fingerprint `args`
/// writes of the call's arguments (see `Frame::nested_key`). `args` runs
/// only then.
#[inline]
pub(crate) fn enter_nested(
    name: &str,
    args: impl FnOnce(&mut ArgHasher),
) -> Option<IdempotencyKey> {
    // Outside any attempt (the common case) this is one thread-local read.
    with_current(|frame| {
        let mut hasher = ArgHasher::new();
        args(&mut hasher);
        frame.nested_key(name, &hasher)
    })
}

/// Whether a frame is set on this thread, from this task or another: the
/// quick test before [`enter_nested`], one thread-local read.
#[inline]
pub(crate) fn attempt_running() -> bool {
    CURRENT
        .try_with(|current| !current.get().is_null())
        .unwrap_or(false)
}

/// Whether an attempt of a retried call runs on this thread, in this task.
#[inline]
pub(crate) fn in_attempt() -> bool {
    with_current(|_| ()).is_some()
}

/// Points this thread's context at a frame until the scope ends, then
/// restores the one before (so attempts nest, and a panicking attempt does
/// not leave its frame behind).
struct Scope<'f, 'e, 'p> {
    prev: *mut Frame<'static, 'static>,
    prev_task: Option<tokio::task::Id>,
    frame: PhantomData<&'f mut Frame<'e, 'p>>,
}

impl<'f, 'e, 'p> Scope<'f, 'e, 'p> {
    /// Sets `frame` as the running attempt's. The scope holds the frame's
    /// mutable borrow, so nothing else touches it until the scope ends.
    #[inline]
    fn enter(frame: &'f mut Frame<'e, 'p>) -> Self {
        // tokio's task id first, before the frame is published: a call
        // the optimizer cannot see into, made while the thread-local
        // points at the engine, would make it reload the engine's policy
        // after it instead of folding the constant policy in.
        let task = tokio::task::try_id();
        let frame = ptr::from_mut(frame).cast::<Frame<'static, 'static>>();
        let prev = CURRENT
            .try_with(|current| current.replace(frame))
            .unwrap_or(ptr::null_mut());
        let prev_task = CURRENT_TASK
            .try_with(|current| current.replace(task))
            .unwrap_or(None);
        Self {
            prev,
            prev_task,
            frame: PhantomData,
        }
    }
}

impl Drop for Scope<'_, '_, '_> {
    #[inline]
    fn drop(&mut self) {
        let _ = CURRENT.try_with(|current| current.set(self.prev));
        let _ = CURRENT_TASK.try_with(|current| current.set(self.prev_task));
    }
}

/// Runs `f` with `frame` as the running attempt's frame.
#[inline]
pub(crate) fn scoped_blocking<T>(frame: &mut Frame<'_, '_>, f: impl FnOnce() -> T) -> T {
    let _scope = Scope::enter(frame);
    f()
}

/// Polls `fut` once with `frame` as the running attempt's frame, so a key
/// drawn by an attempt that is then dropped (timed out, cancelled) stays
/// the call's.
#[inline]
pub(crate) fn poll_scoped<F: Future + ?Sized>(
    frame: &mut Frame<'_, '_>,
    fut: Pin<&mut F>,
    cx: &mut Context<'_>,
) -> Poll<F::Output> {
    let _scope = Scope::enter(frame);
    fut.poll(cx)
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

    use crate::engine::{Clock, Engine};

    const POLICY: crate::Policy = crate::Policy::new();

    #[test]
    fn the_frame_is_restored_after_a_panicking_attempt() {
        let mut outer = Engine::new(&POLICY, Clock::System);
        scoped_blocking(&mut outer.frame(), || {
            let outer_key = Attempt::current().unwrap().idempotency_key();
            let mut inner = Engine::new(&POLICY, Clock::System);
            let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                scoped_blocking(&mut inner.frame(), || {
                    assert!(Attempt::current().is_some());
                    panic!("attempt panicked");
                })
            }));
            assert!(unwound.is_err());
            assert_eq!(
                Attempt::current().map(|a| a.idempotency_key()),
                Some(outer_key),
                "the outer frame is back"
            );
        });
        assert!(Attempt::current().is_none());
    }

    #[test]
    fn frames_nest_and_unnest() {
        let mut outer = Engine::new(&POLICY, Clock::System);
        let mut frame = outer.frame();
        let mut nested = Vec::new();
        let hashed = |h: &mut ArgHasher| h.write_u8(1);
        let unhashed = |h: &mut ArgHasher| h.mark_incomplete();
        scoped_blocking(&mut frame, || {
            let mut inner = Engine::named(&POLICY, "inner", Clock::System, hashed);
            scoped_blocking(&mut inner.frame(), || {
                let attempt = Attempt::current().unwrap();
                nested.push(attempt.idempotency_key());
                assert_eq!((attempt.number(), attempt.max()), (1, 1));
            });
            nested.push(enter_nested("inner", hashed).unwrap());
            nested.push(enter_nested("inner", unhashed).unwrap());
            nested.push(enter_nested("inner", unhashed).unwrap());
            let attempt = Attempt::current().unwrap();
            assert_eq!((attempt.number(), attempt.max()), (1, 3));
        });
        assert_eq!(nested[0], nested[1], "equal arguments, one request");
        assert_ne!(
            nested[2], nested[3],
            "unhashed arguments are told apart by place"
        );
        assert_eq!(frame.unnamed_calls, 2);
        let drawn = outer.key();
        let fingerprint = |f: &dyn Fn(&mut ArgHasher)| {
            let mut hasher = ArgHasher::new();
            f(&mut hasher);
            hasher.finish()
        };
        assert_eq!(nested[0], drawn.child("inner", fingerprint(&hashed), 0));
        assert_eq!(nested[2], drawn.child("inner", fingerprint(&unhashed), 0));
        assert_eq!(nested[3], drawn.child("inner", fingerprint(&unhashed), 1));
        assert!(Attempt::current().is_none());
    }
}

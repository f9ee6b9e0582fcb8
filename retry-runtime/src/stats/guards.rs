//! The statistics of the provider guards: a [`GuardRecord`] in each guard,
//! counting the waits it asked for, the time they add up to, the calls it
//! stopped and its changes of state; registered, as a fn's record is, the
//! first time a call asks the guard, so [`snapshot`](super::snapshot)
//! lists it. With feature `tracing` each change of state is an `INFO`
//! event; with `metrics`, four counters labelled `guard` and `kind`.
use std::mem::ManuallyDrop;
use std::sync::OnceLock;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;

use crate::clock::saturating_nanos;

/// One guard's counters: what [`snapshot`](super::snapshot) lists in its
/// guards table, as [`GuardStats`].
///
/// Every provider guard of this crate ([`Cooldown`](crate::Cooldown),
/// [`Throttle`](crate::Throttle), [`Breaker`](crate::Breaker)) holds one
/// and returns it from [`Guard::record`](crate::Guard::record); a guard of
/// your own may too. Counting is a relaxed atomic addition; a record joins
/// the registry when a call first asks its guard (no lock, no allocation).
///
/// The name labels the guard's row (default: its kind, `"cooldown"`, …;
/// set it with the guard's `name` builder); rows of the same name and
/// kind are merged.
///
/// ```
/// use std::time::Duration;
/// use tenacious::stats::GuardRecord;
///
/// static RECORD: GuardRecord = GuardRecord::new("quota", "my-guard");
/// RECORD.waited(Duration::from_millis(250));
/// RECORD.stopped();
/// RECORD.changed("closed");
/// let stats = RECORD.snapshot();
/// assert_eq!((stats.waits, stats.waited, stats.stopped, stats.changes),
///            (1, Duration::from_millis(250), 1, 1));
/// ```
#[derive(Debug)]
pub struct GuardRecord {
    name: &'static str,
    kind: &'static str,
    waits: AtomicU64,
    waited: AtomicU64,
    stopped: AtomicU64,
    changes: AtomicU64,
    /// A concurrency guard's permits in flight (low half) and limit (high
    /// half); `u64::MAX` for a guard that has none.
    gauge: AtomicU64,
    registered: AtomicBool,
    // `ManuallyDrop`, so a guard's `const` builders may replace its record
    // (a `const fn` cannot run a destructor). Only a registered record,
    // a `static`, ever sets them.
    next: ManuallyDrop<OnceLock<&'static GuardRecord>>,
    #[cfg(feature = "metrics")]
    labels: ManuallyDrop<[::metrics::Label; 2]>,
    #[cfg(feature = "metrics")]
    keys: ManuallyDrop<OnceLock<[::metrics::Key; 6]>>,
}

/// The `name` builder and `get_name` getter of a provider guard of type
/// `$guard` holding its [`GuardRecord`] in a `record` field (default
/// name `$default`), with a doc example declaring `$example` named
/// `$named`.
macro_rules! guard_name {
    ($guard:ident, $example:ident, $named:literal, $default:literal) => {
        $crate::stats::guard_name!($guard, $example, $named, $default, ());
    };
    ($guard:ident, $example:ident, $named:literal, $default:literal, ($($new:literal)?)) => {
        /// The name of its row in
        /// [`stats::snapshot`](crate::stats::snapshot)'s guards table, its
        /// `tracing` events and its metrics' `guard` label.
        #[doc = concat!("Default: `\"", $default, "\"`.")]
        ///
        /// ```
        #[doc = concat!("use tenacious::", stringify!($guard), ";")]
        ///
        #[doc = concat!(
            "static ", stringify!($example), ": ", stringify!($guard), " = ",
            stringify!($guard), "::new(", $(stringify!($new),)? ").name(\"", $named, "\");"
        )]
        #[doc = concat!("assert_eq!(", stringify!($example), ".get_name(), \"", $named, "\");")]
        #[doc = concat!(
            "assert_eq!(", stringify!($guard), "::new(", $(stringify!($new),)? ").get_name(), \"",
            $default, "\");"
        )]
        /// ```
        #[must_use]
        pub const fn name(self, name: &'static str) -> Self {
            Self {
                record: self.record.named(name),
                ..self
            }
        }

        #[doc = concat!("The name set by [`name`](", stringify!($guard), "::name).")]
        #[must_use]
        pub const fn get_name(&self) -> &'static str {
            self.record.name()
        }
    };
}
pub(crate) use guard_name;

/// One guard's counts, read by [`GuardRecord::snapshot`] and listed by
/// [`Snapshot::guards`](super::Snapshot::guards).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct GuardStats {
    /// The guard's name (default: its kind).
    pub name: &'static str,
    /// What kind of guard: `"cooldown"`, `"throttle"`, `"breaker"`, or a
    /// guard of your own's.
    pub kind: &'static str,
    /// Attempts it made wait.
    pub waits: u64,
    /// The waits it asked for, added up.
    pub waited: Duration,
    /// Calls it stopped (or attempts it refused).
    pub stopped: u64,
    /// Its changes of state: a cooldown closing, a throttle's rate cut, a
    /// breaker opening or closing, a concurrency limit set.
    pub changes: u64,
    /// A [`Concurrency`](crate::Concurrency) guard's attempts in flight
    /// (as of the last permit taken or given back); `None` for the other
    /// kinds.
    pub in_flight: Option<u32>,
    /// A [`Concurrency`](crate::Concurrency) guard's limit; `None` for the
    /// other kinds.
    pub limit: Option<u32>,
}

const WAITS_TOTAL: &str = "tenacious_guard_waits_total";
const WAITED_SECONDS_TOTAL: &str = "tenacious_guard_waited_seconds_total";
const STOPPED_TOTAL: &str = "tenacious_guard_stopped_total";
const CHANGES_TOTAL: &str = "tenacious_guard_changes_total";
const IN_FLIGHT: &str = "tenacious_guard_in_flight";
const LIMIT: &str = "tenacious_guard_limit";

impl GuardRecord {
    /// A record for a guard named `name` of kind `kind`, every counter at
    /// zero; `const`, for a guard built in a `static`.
    #[must_use]
    pub const fn new(name: &'static str, kind: &'static str) -> Self {
        Self {
            name,
            kind,
            waits: AtomicU64::new(0),
            waited: AtomicU64::new(0),
            stopped: AtomicU64::new(0),
            changes: AtomicU64::new(0),
            gauge: AtomicU64::new(u64::MAX),
            registered: AtomicBool::new(false),
            next: ManuallyDrop::new(OnceLock::new()),
            #[cfg(feature = "metrics")]
            labels: ManuallyDrop::new([
                ::metrics::Label::from_static_parts("guard", name),
                ::metrics::Label::from_static_parts("kind", kind),
            ]),
            #[cfg(feature = "metrics")]
            keys: ManuallyDrop::new(OnceLock::new()),
        }
    }

    /// The same record under another name.
    #[must_use]
    pub const fn named(self, name: &'static str) -> Self {
        Self::new(name, self.kind)
    }

    /// The guard's name.
    #[must_use]
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// The guard's kind.
    #[must_use]
    pub const fn kind(&self) -> &'static str {
        self.kind
    }

    /// The guard made an attempt wait `wait`.
    pub fn waited(&self, wait: Duration) {
        self.waits.fetch_add(1, Relaxed);
        self.waited.fetch_add(saturating_nanos(wait), Relaxed);
        #[cfg(feature = "metrics")]
        self.count(|keys| {
            ::metrics::with_recorder(|recorder| {
                recorder.register_counter(&keys[0], &METADATA).increment(1);
                recorder
                    .register_counter(&keys[1], &METADATA)
                    .increment(wait.as_secs());
            });
        });
    }

    /// The guard stopped a call (or refused an attempt).
    pub fn stopped(&self) {
        self.stopped.fetch_add(1, Relaxed);
        #[cfg(feature = "metrics")]
        self.count(|keys| {
            ::metrics::with_recorder(|recorder| {
                recorder.register_counter(&keys[2], &METADATA).increment(1);
            });
        });
    }

    /// The guard changed state, to `state` (`"closed"`, `"open"`, …).
    pub fn changed(&self, state: &'static str) {
        self.changes.fetch_add(1, Relaxed);
        #[cfg(feature = "tracing")]
        ::tracing::info!(
            target: "tenacious",
            guard = self.name,
            kind = self.kind,
            state,
            "guard changed state",
        );
        #[cfg(not(feature = "tracing"))]
        let _ = state;
        #[cfg(feature = "metrics")]
        self.count(|keys| {
            ::metrics::with_recorder(|recorder| {
                recorder.register_counter(&keys[3], &METADATA).increment(1);
            });
        });
    }

    /// A concurrency guard's attempts in flight and limit now: in its
    /// snapshot, and (feature `metrics`) the gauges
    /// `tenacious_guard_in_flight` and `tenacious_guard_limit`.
    pub fn gauge(&self, in_flight: u32, limit: u32) {
        self.gauge
            .store(u64::from(limit) << 32 | u64::from(in_flight), Relaxed);
        #[cfg(feature = "metrics")]
        self.count(|keys| {
            ::metrics::with_recorder(|recorder| {
                recorder
                    .register_gauge(&keys[4], &METADATA)
                    .set(f64::from(in_flight));
                recorder
                    .register_gauge(&keys[5], &METADATA)
                    .set(f64::from(limit));
            });
        });
    }

    /// Its counts now.
    #[must_use]
    pub fn snapshot(&self) -> GuardStats {
        let gauge = self.gauge.load(Relaxed);
        #[allow(clippy::cast_possible_truncation)]
        let (in_flight, limit) = if gauge == u64::MAX {
            (None, None)
        } else {
            (Some(gauge as u32), Some((gauge >> 32) as u32))
        };
        GuardStats {
            in_flight,
            limit,
            name: self.name,
            kind: self.kind,
            waits: self.waits.load(Relaxed),
            waited: Duration::from_nanos(self.waited.load(Relaxed)),
            stopped: self.stopped.load(Relaxed),
            changes: self.changes.load(Relaxed),
        }
    }

    /// Sets the counters back to zero.
    pub fn reset(&self) {
        for counter in [&self.waits, &self.waited, &self.stopped, &self.changes] {
            counter.store(0, Relaxed);
        }
    }

    /// Joins the registry, once; a relaxed load after that. Called by the
    /// engine when a call asks the guard, which holds it as `&'static`.
    #[inline]
    pub(crate) fn register(&'static self) {
        if !self.registered.load(Relaxed) && !self.registered.swap(true, Relaxed) {
            #[cfg(feature = "metrics")]
            self.keys.get_or_init(|| {
                [
                    WAITS_TOTAL,
                    WAITED_SECONDS_TOTAL,
                    STOPPED_TOTAL,
                    CHANGES_TOTAL,
                    IN_FLIGHT,
                    LIMIT,
                ]
                .map(|name| ::metrics::Key::from_static_parts(name, &*self.labels))
            });
            push(self);
        }
    }

    /// Hands the record's metric keys to `f`, once it is registered (its
    /// keys are built then, from the labels of a `static`).
    #[cfg(feature = "metrics")]
    fn count(&self, f: impl FnOnce(&[::metrics::Key; 6])) {
        if let Some(keys) = self.keys.get() {
            f(keys);
        }
    }
}

#[cfg(feature = "metrics")]
static METADATA: ::metrics::Metadata<'static> =
    ::metrics::Metadata::new("tenacious", ::metrics::Level::INFO, Some(module_path!()));

#[cfg(not(feature = "metrics"))]
const _: [&str; 6] = [
    WAITS_TOTAL,
    WAITED_SECONDS_TOTAL,
    STOPPED_TOTAL,
    CHANGES_TOTAL,
    IN_FLIGHT,
    LIMIT,
];

/// The first guard record that joined.
static HEAD: OnceLock<&'static GuardRecord> = OnceLock::new();

/// Appends `record`, which has won its `registered` flag.
fn push(record: &'static GuardRecord) {
    let mut link = &HEAD;
    loop {
        if link.set(record).is_ok() {
            return;
        }
        if let Some(taken) = link.get() {
            link = &taken.next;
        }
    }
}

/// The guard records in the order they joined.
pub(super) fn records() -> impl Iterator<Item = &'static GuardRecord> {
    std::iter::successors(HEAD.get().copied(), |record| record.next.get().copied())
}

//! The connection a store's guards share: scripts run within the
//! timeout, the store's health, and the refresh loop.
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ::redis as rs;

use crate::Agreed;
use crate::conn::Conn;
use crate::stats::Counts;
use crate::timer;

/// How often a store checks each name's settings while up.
const CHECK_EVERY: Duration = Duration::from_secs(10);

/// The future of a [`Member`]'s work.
pub(crate) type BoxedSync = std::pin::Pin<Box<dyn Future<Output = ()> + Send>>;

/// A bound guard's part the refresh loop keeps fresh.
pub(crate) trait Member: Send + Sync {
    /// Sends its batch and reads its mirror.
    fn sync(&'static self) -> BoxedSync;
    /// After Redis came back: pushes what it learned while it was down.
    fn rebuild(&'static self) -> BoxedSync {
        self.sync()
    }
}

/// The connection a store's guards share.
#[doc(hidden)]
pub struct Link {
    pub(crate) conn: Conn,
    pub(crate) handle: tokio::runtime::Handle,
    pub(crate) timeout: Duration,
    pub(crate) refresh: Duration,
    pub(crate) prefix: String,
    pub(crate) up: AtomicBool,
    /// Whether a script's error about its key was logged.
    pub(crate) bad_key_logged: AtomicBool,
    pub(crate) members: Mutex<Vec<&'static dyn Member>>,
    /// The settings of each name bound, by guard key.
    pub(crate) agreed: Mutex<Vec<Arc<Agreed>>>,
    pub(crate) counts: Counts,
}

/// Whether Redis answered `error` about the script's key: one of the wrong
/// type (`WRONGTYPE`), or data the script cannot use (`ERR` raised in the
/// script, a reply of another shape). No outage: the other keys answer.
/// (An `ERR` outside a script, as on connecting to a full server, and
/// the server's own states, `BUSY`, `OOM`, `LOADING`, are.)
fn answered(error: &rs::RedisError) -> bool {
    let in_script = || {
        error
            .detail()
            .is_some_and(|detail| detail.contains("script"))
    };
    match error.kind() {
        rs::ErrorKind::Server(rs::ServerErrorKind::ResponseError) => in_script(),
        rs::ErrorKind::Extension => error.code() == Some("WRONGTYPE") && in_script(),
        rs::ErrorKind::UnexpectedReturnType => true,
        _ => false,
    }
}

impl Link {
    /// How long a decision waits for Redis.
    pub(crate) const fn timeout(&self) -> Duration {
        self.timeout
    }

    pub(crate) fn is_up(&self) -> bool {
        self.up.load(Ordering::Acquire)
    }

    /// Counts a decision a bound guard took in process, Redis being down.
    pub(crate) fn local_decision(&self) {
        self.counts.local.fetch_add(1, Ordering::Relaxed);
        #[cfg(feature = "metrics")]
        metrics::counter!("tenacious_store_local_decisions_total").increment(1);
    }

    pub(crate) fn join(&self, member: &'static dyn Member) {
        self.members
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(member);
    }

    fn members(&self) -> Vec<&'static dyn Member> {
        self.members
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    pub(crate) async fn ping(&self) -> bool {
        let mut conn = self.conn.clone();
        matches!(
            tokio::time::timeout(
                self.timeout,
                rs::cmd("PING").query_async::<String>(&mut conn)
            )
            .await,
            Ok(Ok(_))
        )
    }

    fn went_down(&self, why: &str) {
        self.counts.unanswered.fetch_add(1, Ordering::Relaxed);
        if self.up.swap(false, Ordering::AcqRel) {
            self.counts.downs.fetch_add(1, Ordering::Relaxed);
            #[cfg(feature = "metrics")]
            metrics::counter!("tenacious_store_down_total").increment(1);
            tracing::warn!(
                target: "tenacious::redis",
                error = why,
                "redis store down; the guards decide in process until it answers"
            );
        }
    }

    /// A script Redis answered with an error about its key: logged once
    /// per store, the store staying up.
    fn bad_key(&self, key: &str, error: &rs::RedisError) {
        if !self.bad_key_logged.swap(true, Ordering::AcqRel) {
            tracing::warn!(
                target: "tenacious::redis",
                key,
                error = %error,
                "a shared guard's key holds what its script cannot use; that guard decides in process"
            );
        }
    }

    /// A name's settings in Redis differ from its guard's: logged and
    /// counted, once per name until they agree again.
    pub(crate) fn settings_differ(&self, key: &str, fleet: &str, own: &str) {
        self.counts
            .settings_mismatches
            .fetch_add(1, Ordering::Relaxed);
        tracing::warn!(
            target: "tenacious::redis",
            key,
            fleet,
            own,
            "a shared guard has other settings than the fleet's under its name; it decides in \
             Redis with the fleet's (the first written hold)"
        );
    }

    fn agreed(&self) -> Vec<Arc<Agreed>> {
        self.agreed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Checks the settings of each name due: never checked, or
    /// [`CHECK_EVERY`] ago.
    async fn check_settings(&self) {
        let now = Instant::now();
        let every = CHECK_EVERY.max(self.refresh);
        for agreed in self.agreed() {
            if agreed.due(now, every) {
                agreed.check(self).await;
                if !self.is_up() {
                    return;
                }
            }
        }
    }

    fn came_up(&self) -> bool {
        if self.up.swap(true, Ordering::AcqRel) {
            return false;
        }
        self.counts.ups.fetch_add(1, Ordering::Relaxed);
        #[cfg(feature = "metrics")]
        metrics::counter!("tenacious_store_up_total").increment(1);
        tracing::info!(
            target: "tenacious::redis",
            "redis store up again; the guards share their state again"
        );
        true
    }

    /// Runs `script` on `key` with `args`, at most the timeout: `None` when
    /// Redis failed to answer in time (and the store is then down).
    pub(crate) async fn run<T: rs::FromRedisValue>(
        &self,
        script: &'static rs::Script,
        key: &str,
        args: &[i64],
    ) -> Option<T> {
        let mut conn = self.conn.clone();
        let mut invocation = script.key(key);
        for arg in args {
            invocation.arg(*arg);
        }
        match tokio::time::timeout(self.timeout, invocation.invoke_async::<T>(&mut conn)).await {
            Ok(Ok(value)) => {
                self.counts.round_trips.fetch_add(1, Ordering::Relaxed);
                Some(value)
            }
            // The connection's own response timeout (set to the same
            // duration) fires in the same tick as ours and is polled
            // first: it is a timeout too.
            Ok(Err(error)) if error.is_timeout() => {
                self.counts.failures.fetch_add(1, Ordering::Relaxed);
                self.counts.timeouts.fetch_add(1, Ordering::Relaxed);
                self.went_down("timed out");
                None
            }
            Ok(Err(error)) if answered(&error) => {
                self.counts.failures.fetch_add(1, Ordering::Relaxed);
                self.bad_key(key, &error);
                None
            }
            Ok(Err(error)) => {
                self.counts.failures.fetch_add(1, Ordering::Relaxed);
                self.went_down(&error.to_string());
                None
            }
            Err(_) => {
                self.counts.failures.fetch_add(1, Ordering::Relaxed);
                self.counts.timeouts.fetch_add(1, Ordering::Relaxed);
                self.went_down("timed out");
                None
            }
        }
    }

    /// [`run`](Link::run) on the store's runtime, for a caller on any
    /// thread (a blocking call blocks on it): `None` too when that runtime
    /// is gone, and at once for a blocking call on the thread of a
    /// current-thread runtime, which would wait on itself.
    pub(crate) fn decide<T: rs::FromRedisValue + Send + 'static>(
        self: &Arc<Self>,
        script: &'static rs::Script,
        key: &Arc<str>,
        args: Vec<i64>,
    ) -> impl Future<Output = Option<T>> + Send + 'static {
        let link = Arc::clone(self);
        let key = Arc::clone(key);
        async move {
            // Asked when first polled: a blocking call polls it inside
            // `block_on`.
            let stuck = tenacious_runtime::store::hooks::blocked_on()
                && tokio::runtime::Handle::try_current().is_ok_and(|current| {
                    current.runtime_flavor() == tokio::runtime::RuntimeFlavor::CurrentThread
                });
            if stuck {
                return None;
            }
            // Bounded on the store's own timer: the store's runtime may
            // have no free worker to run the script or its timeout, and
            // the caller's may drive no timer (a blocking call has none).
            let deadline = Instant::now() + link.timeout;
            let handle = link.handle.clone();
            let watched = Arc::clone(&link);
            let task = handle.spawn(async move { link.run::<T>(script, &key, &args).await });
            match (WithinDeadline {
                task,
                deadline,
                armed: None,
            })
            .await
            {
                Some(answer) => answer.ok().flatten(),
                None => {
                    watched.counts.failures.fetch_add(1, Ordering::Relaxed);
                    watched.counts.timeouts.fetch_add(1, Ordering::Relaxed);
                    watched.went_down(
                        "no answer within the timeout: the store's runtime has no free worker",
                    );
                    None
                }
            }
        }
    }

    /// [`run`](Link::run) in the background, its answer handed to `then`.
    pub(crate) fn push<T, F>(
        self: &Arc<Self>,
        script: &'static rs::Script,
        key: &Arc<str>,
        args: Vec<i64>,
        then: F,
    ) where
        T: rs::FromRedisValue + Send + 'static,
        F: FnOnce(T) + Send + 'static,
    {
        let link = Arc::clone(self);
        let key = Arc::clone(key);
        drop(self.handle.spawn(async move {
            if let Some(value) = link.run::<T>(script, &key, &args).await {
                then(value);
            }
        }));
    }

    pub(crate) async fn sync_all(&self) {
        if !self.is_up() {
            if !self.ping().await {
                return;
            }
            // Rebuilt first, then up: no decision reaches Redis before
            // each guard has pushed what it learned meanwhile.
            let unanswered = self.counts.unanswered.load(Ordering::Relaxed);
            for member in self.members() {
                member.rebuild().await;
                if self.counts.unanswered.load(Ordering::Relaxed) != unanswered {
                    // Down again: the next PING's rebuild starts over.
                    return;
                }
            }
            // A Redis restarted empty lost the settings too.
            for agreed in self.agreed() {
                agreed.recheck();
                agreed.check(self).await;
                if self.counts.unanswered.load(Ordering::Relaxed) != unanswered {
                    return;
                }
            }
            self.came_up();
            return;
        }
        for member in self.members() {
            member.sync().await;
            if !self.is_up() {
                // The others would wait out the timeout each, for an
                // answer that is not coming: they keep their batches.
                return;
            }
        }
        self.check_settings().await;
    }
}

/// A decision's task, awaited until `deadline` on the store's timer: `None`
/// past it, the task aborted (one not yet started never reaches Redis).
struct WithinDeadline<T> {
    task: tokio::task::JoinHandle<T>,
    deadline: Instant,
    /// The waker the timer holds, so a poll with the same one adds none.
    armed: Option<std::task::Waker>,
}

impl<T> Future for WithinDeadline<T> {
    type Output = Option<Result<T, tokio::task::JoinError>>;

    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        if let std::task::Poll::Ready(answer) = std::pin::Pin::new(&mut self.task).poll(cx) {
            return std::task::Poll::Ready(Some(answer));
        }
        if Instant::now() >= self.deadline {
            self.task.abort();
            return std::task::Poll::Ready(None);
        }
        if !self
            .armed
            .as_ref()
            .is_some_and(|armed| armed.will_wake(cx.waker()))
        {
            // A timer that cannot run (no thread) must not leave us waiting.
            if !timer::wake_at(self.deadline, cx.waker()) {
                self.task.abort();
                return std::task::Poll::Ready(None);
            }
            self.armed = Some(cx.waker().clone());
        }
        std::task::Poll::Pending
    }
}

impl<T> Drop for WithinDeadline<T> {
    fn drop(&mut self) {
        // A decision dropped (its call cancelled) is not taken in Redis
        // if its script has not started.
        self.task.abort();
    }
}

impl fmt::Debug for Link {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Link")
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

/// Every `refresh`: a store that is up sends its guards' batches and reads
/// their mirrors; one that is down tries a `PING`, and once Redis answers,
/// its guards push what they learned meanwhile.
/// The first one period after connecting, which pinged already.
pub(crate) async fn refresh_loop(link: std::sync::Weak<Link>) {
    loop {
        let Some(period) = link.upgrade().map(|strong| strong.refresh) else {
            return;
        };
        tokio::time::sleep(period).await;
        let Some(strong) = link.upgrade() else { return };
        strong.sync_all().await;
    }
}

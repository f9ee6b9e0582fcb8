//! Admission by task: [`Task`], the scope an agent task's calls run in,
//! which a [`Concurrency`](crate::Concurrency) limit reads to let the
//! calls of tasks already in progress go before the first call of a new
//! task, and interactive tasks before batch ones.
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use crate::Concurrency;

tokio::task_local! {
    static TASK: Arc<TaskState>;
}

/// Tasks running in the process: while none does, a call looks up no
/// task (one relaxed load, rather than a task-local's lookup three times
/// an attempt).
static RUNNING: AtomicUsize = AtomicUsize::new(0);

/// Counts a running task from its start to its end, unwinding included.
struct Running;

impl Running {
    fn start() -> Self {
        RUNNING.fetch_add(1, Ordering::Relaxed);
        Self
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        RUNNING.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Whether a task may run on this thread.
#[inline]
fn any() -> bool {
    RUNNING.load(Ordering::Relaxed) != 0
}

/// What the scope of a running task holds.
#[derive(Debug)]
struct TaskState {
    priority: Priority,
    /// One of its calls was admitted by a concurrency limit.
    in_progress: AtomicBool,
    /// Whether a permit its call gives back is kept for its next call in
    /// the same poll (an async task; not a blocking one, whose one "poll"
    /// is the whole task).
    keeps: bool,
    /// The permits kept: given back when the poll ends.
    kept: Mutex<Vec<&'static Concurrency>>,
}

impl TaskState {
    fn kept(&self) -> std::sync::MutexGuard<'_, Vec<&'static Concurrency>> {
        self.kept.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Gives back every permit kept: the poll ended without a call that
    /// took it.
    fn give_back_kept(&self) {
        let kept = std::mem::take(&mut *self.kept());
        for concurrency in kept {
            concurrency.release();
        }
    }
}

/// A task's class, for a [`Concurrency`](crate::Concurrency) limit's
/// queue: an interactive call (a user waiting on the answer) goes before
/// a batch one, but for one grant in
/// [`BATCH_FLOOR`](crate::Concurrency::BATCH_FLOOR) while both wait, so
/// batch work is slowed, never starved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Priority {
    /// A user waits on it. The default.
    #[default]
    Interactive,
    /// No one waits on it now: a backfill, an evaluation, a nightly run.
    Batch,
}

/// An agent task: a chain of calls that finishes only if each of them
/// does. Run a task's future in [`run`](Task::run) (or a blocking task in
/// [`run_blocking`](Task::run_blocking)), and every retried call inside it
/// — nested at any depth, without passing anything — is known to its
/// concurrency limits as this task's: once one of its calls has been
/// admitted, its later calls wait in the lane of tasks in progress, which
/// goes before the first calls of new tasks. Under overload the limit
/// then finishes the tasks it started rather than start every task and
/// finish none. A call outside any task is a new task's first call.
///
/// A call of an async task that ends keeps its permit for the task's next
/// call made in the same poll (a chain of calls with no other await
/// between them), rather than hand it to a waiter and queue behind it; the
/// permit goes back when the task's poll ends without such a call.
///
/// A task spawned from inside one (`tokio::spawn`) is outside it: run the
/// spawned future in a `Task` of its own.
///
/// ```
/// use tenacious::{Concurrency, Policy, Priority, Task};
///
/// static MODEL: Concurrency = Concurrency::new(4);
/// const POLICY: Policy = Policy::new().concurrency(&MODEL);
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let answer = Task::new()
///     .priority(Priority::Batch)
///     .run(async {
///         let plan = POLICY.retry(|| async { Ok::<_, std::io::Error>("plan") }).await?;
///         POLICY.retry(|| async { Ok::<_, std::io::Error>(plan.len()) }).await
///     })
///     .await;
/// assert_eq!(answer.unwrap(), 4);
/// # }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[must_use]
pub struct Task {
    priority: Priority,
}

impl Task {
    /// An interactive task.
    pub const fn new() -> Self {
        Self {
            priority: Priority::Interactive,
        }
    }

    /// Its class. Default: [`Priority::Interactive`].
    ///
    /// ```
    /// use tenacious::{Priority, Task};
    ///
    /// assert_eq!(Task::new().priority(Priority::Batch).get_priority(), Priority::Batch);
    /// assert_eq!(Task::new().get_priority(), Priority::Interactive);
    /// ```
    pub const fn priority(self, priority: Priority) -> Self {
        Self { priority }
    }

    /// The class set by [`priority`](Task::priority).
    #[must_use]
    pub const fn get_priority(&self) -> Priority {
        self.priority
    }

    /// Runs `task` as this task: its retried calls are this task's.
    pub fn run<F: Future>(self, task: F) -> impl Future<Output = F::Output> {
        InTask {
            state: Arc::new(self.state(true)),
            _running: Running::start(),
            task,
        }
    }

    /// [`run`](Task::run) for a blocking task, on this thread.
    ///
    /// ```
    /// use tenacious::{Priority, Task};
    ///
    /// let n = Task::new().priority(Priority::Batch).run_blocking(|| 2 + 2);
    /// assert_eq!(n, 4);
    /// ```
    pub fn run_blocking<R>(self, task: impl FnOnce() -> R) -> R {
        let _running = Running::start();
        TASK.sync_scope(Arc::new(self.state(false)), task)
    }

    fn state(self, keeps: bool) -> TaskState {
        TaskState {
            priority: self.priority,
            in_progress: AtomicBool::new(false),
            keeps,
            kept: Mutex::new(Vec::new()),
        }
    }
}

pin_project_lite::pin_project! {
    /// The future of [`Task::run`]: polls the task in its scope, and gives
    /// back the permits kept for a next call that did not come.
    struct InTask<F> {
        state: Arc<TaskState>,
        _running: Running,
        #[pin]
        task: F,
    }

    impl<F> PinnedDrop for InTask<F> {
        fn drop(this: Pin<&mut Self>) {
            this.state.give_back_kept();
        }
    }
}

impl<F: Future> Future for InTask<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        /// Gives back the kept permits when the poll ends, unwinding too.
        struct EndOfPoll<'a>(&'a TaskState);
        impl Drop for EndOfPoll<'_> {
            fn drop(&mut self) {
                self.0.give_back_kept();
            }
        }
        let this = self.project();
        let _end = EndOfPoll(this.state);
        let task = this.task;
        TASK.sync_scope(Arc::clone(this.state), || task.poll(cx))
    }
}

/// Where a call of the running task waits in a concurrency limit's queue:
/// interactive before batch, and within each the calls of tasks in
/// progress before the first calls of new ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Lane(pub(crate) u8);

impl Lane {
    /// The lanes, in the order they are served (but for the batch floor).
    pub(crate) const COUNT: usize = 4;
    /// The first batch lane.
    pub(crate) const FIRST_BATCH: usize = 2;
}

/// The lane of a call made now, on this thread, in this task.
#[inline]
pub(crate) fn lane() -> Lane {
    if !any() {
        return Lane(1);
    }
    TASK.try_with(|task| {
        let class = match task.priority {
            Priority::Interactive => 0,
            Priority::Batch => 2,
        };
        let new = u8::from(!task.in_progress.load(Ordering::Relaxed));
        Lane(class + new)
    })
    .unwrap_or(Lane(1))
}

/// A call of the running task was admitted: the task is in progress.
#[inline]
pub(crate) fn admitted() {
    if !any() {
        return;
    }
    let _ = TASK.try_with(|task| task.in_progress.store(true, Ordering::Relaxed));
}

/// A call's attempt ended holding a permit of `concurrency`: kept for the
/// running task's next call in this poll, or given back.
#[inline]
pub(crate) fn give_back(concurrency: &'static Concurrency) {
    if !any() {
        concurrency.release();
        return;
    }
    let kept = TASK
        .try_with(|task| {
            if task.keeps {
                task.kept().push(concurrency);
            }
            task.keeps
        })
        .unwrap_or(false);
    if !kept {
        concurrency.release();
    }
}

/// Takes a permit of `concurrency` the running task kept, if it has one.
#[inline]
pub(crate) fn take_kept(concurrency: &'static Concurrency) -> bool {
    if !any() {
        return false;
    }
    TASK.try_with(|task| {
        let mut kept = task.kept();
        match kept.iter().position(|&k| std::ptr::eq(k, concurrency)) {
            Some(at) => {
                kept.swap_remove(at);
                true
            }
            None => false,
        }
    })
    .unwrap_or(false)
}

//! Procedural macros of the `tenacious` retry toolkit. Use them through the
//! `tenacious` facade: `tenacious::retry` and `tenacious::Classify`.
//!
//! Each macro converts tokens and hands them to its module, which works on
//! `proc_macro2` so it can be unit-tested.
#![deny(missing_docs)]

mod classify;
mod common;
mod retry;

use proc_macro::TokenStream;

/// Retries a fn returning `Result<T, E>` where `E: Classify`: each error is
/// classified, and only the classes in `on` are retried, with a backoff
/// between attempts.
///
/// Goes on `async fn` (sleeping on tokio's timer) and plain `fn` (sleeping
/// the thread): free fns, `&self` and `&mut self` methods of inherent and
/// trait impls, generic fns, fns with `impl Trait` arguments or lifetimes,
/// `unsafe fn`. The signature, doc comments and other attributes are kept
/// as written.
///
/// ```
/// use std::time::Duration;
/// use tenacious::{Classify, ErrorClass, retry};
///
/// #[derive(Debug)]
/// enum ToolError {
///     Timeout,
///     BadArguments,
/// }
///
/// impl Classify for ToolError {
///     fn classify(&self) -> ErrorClass {
///         match self {
///             ToolError::Timeout => ErrorClass::Transient,
///             ToolError::BadArguments => ErrorClass::Invalid,
///         }
///     }
/// }
///
/// #[retry(max = 3, base = "200ms", jitter = "full", on = Transient | RateLimited)]
/// async fn search(query: &str, calls: &mut u32) -> Result<usize, ToolError> {
///     *calls += 1;
///     if *calls < 3 { Err(ToolError::Timeout) } else { Ok(query.len()) }
/// }
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let mut calls = 0;
/// assert_eq!(search("rust", &mut calls).await.unwrap(), 4);
/// assert_eq!(calls, 3); // two timeouts, then a success
/// # }
/// ```
///
/// # Keys
///
/// | key | meaning | default |
/// |---|---|---|
/// | `max` | total attempts, the first included (at least 1) | `3` |
/// | `base` | first backoff ceiling | `"200ms"` |
/// | `cap` | ceiling of any backoff, applied after jitter (at least `base`) | `"20s"` |
/// | `jitter` | `"full"`, `"equal"`, `"decorrelated"` or `"none"` | `"full"` |
/// | `on` | retried classes, `\|`-joined: `Transient`, `RateLimited` | `Transient \| RateLimited` |
/// | `when` | path to a `fn(&E) -> bool`, AND-ed with `on` | none |
/// | `max_retry_after` | longest server hint honoured; a longer one returns the error at once | `"120s"` |
/// | `timeout` | per-attempt limit, `async fn` only; needs `E: From<tenacious::Elapsed>` | none |
/// | `deadline` | whole-call limit: no sleep starts that would end past it | none |
/// | `budget` | path to a shared `static RetryBudget` | none |
/// | `nested` | inside another retried call: `"once"` (one attempt) or `"retry"` | `"once"` |
/// | `notify` | path to a `fn(&E, &RetryEvent)`, called before each sleep | none |
/// | `stats` | `false` (no statistics, events or metrics for this fn) or the name of its record | on, named `module::path::fn_name` |
/// | `crate` | path to the `tenacious` crate, for a crate that re-exports it | `tenacious` as your Cargo.toml names it |
///
/// Durations are string literals of a number and a unit (`h`, `m`, `s`,
/// `ms`, `us`, `ns`), with decimals and combinations: `"1.5s"`, `"1m30s"`.
/// They are parsed at compile time into a `const` `Policy`; none may be
/// zero, and `timeout` may not be longer than `deadline`. `Invalid` and
/// `Fatal` cannot go in `on`: they are never retried, and `when` can only
/// narrow `on`.
///
/// # Timeouts, deadlines, budgets, nesting
///
/// - `timeout`: an attempt still running after it is dropped and counts as
///   the error `E::from(tenacious::Elapsed)`, which is transient. A sync fn
///   cannot be interrupted, so `timeout` there is a compile error.
/// - `deadline`: measured from the start of the first attempt; no sleep
///   starts that would end at or past it (nor is a server hint past it
///   waited), and with `timeout` the last attempt is cut to what remains.
///   The error is returned with `StopReason::Deadline`. Without `timeout`,
///   an attempt already running finishes, so the call may end that
///   attempt's run time past the deadline.
/// - `budget = NAME`: `NAME` is a `static tenacious::RetryBudget` shared by
///   every call naming it; an empty budget allows no retry.
/// - `nested`: inside an attempt of another retried call the fn makes one
///   attempt (`"once"`, the default) and leaves retrying to the outer call,
///   so retries do not multiply; `nested = "retry"` retries anyway.
///
/// Inside the body, `tenacious::Attempt::current()` gives the attempt's
/// number, the call's `max`, the time elapsed and the idempotency key all
/// attempts of the call share.
///
/// ```
/// use tenacious::{Attempt, Classify, Elapsed, retry};
///
/// #[derive(Debug, Classify)]
/// enum FetchError {
///     #[classify(transient)]
///     Timeout(Elapsed),
/// }
///
/// impl From<Elapsed> for FetchError {
///     fn from(elapsed: Elapsed) -> Self {
///         FetchError::Timeout(elapsed)
///     }
/// }
///
/// #[retry(max = 3, timeout = "1s", deadline = "5s")]
/// async fn fetch() -> Result<u32, FetchError> {
///     let attempt = Attempt::current().expect("inside a retried call");
///     if attempt.number() < 3 {
///         std::future::pending::<()>().await; // hangs: cut at 1 s
///     }
///     Ok(attempt.number())
/// }
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// assert_eq!(fetch().await.unwrap(), 3);
/// # }
/// ```
///
/// # `Failure<E>`
///
/// Declared as `Result<T, tenacious::Failure<E>>` (the last path segment
/// `Failure` with one argument), the body still returns `Result<T, E>` —
/// `?`, `when` and `notify` work on `E` — and the fn gives up with a
/// `Failure<E>`: the last error, every attempt's class, variant and delay,
/// and the reason it stopped. A type alias of `Failure<E>` is not seen
/// through; it is then an ordinary (`Classify`) error type.
///
/// # Statistics
///
/// Each fn counts its calls in a `static` record of its own, declared in
/// the expansion (one per fn: a generic fn's instantiations share it),
/// read by `tenacious::stats::snapshot()`, and (features `tracing`,
/// `metrics`) reported as events and metrics under its name. The name is
/// the fn's module path and name, `my_crate::tools::search`: the impl's
/// type is not in the tokens the attribute sees, so a method is named
/// like a free fn, and two methods of one name in one module share a row
/// unless one says `stats = "Client::search"`. `stats = false` turns it
/// all off for the fn.
///
/// ```
/// use tenacious::{Classify, ErrorClass, retry};
///
/// #[derive(Debug)]
/// struct Flaky;
///
/// impl Classify for Flaky {
///     fn classify(&self) -> ErrorClass {
///         ErrorClass::Transient
///     }
/// }
///
/// #[retry(stats = "lookup tool")]
/// fn lookup() -> Result<u32, Flaky> {
///     Ok(7)
/// }
///
/// lookup().unwrap();
/// let snapshot = tenacious::stats::snapshot();
/// assert_eq!(snapshot.get("lookup tool").unwrap().calls(), 1);
/// ```
///
/// # Each attempt borrows the arguments
///
/// The body runs once per attempt, inline, in a loop: as a non-`move`
/// `async` block (async fn) or an immediately called closure (sync fn).
/// So:
///
/// - every attempt borrows the arguments and `self` again; nothing is
///   cloned, and `&mut self` methods work, each attempt seeing what the
///   previous one changed (as does a `mut` argument);
/// - `return` and `?` in the body end the attempt, not the call: the
///   engine then decides whether to retry;
/// - a body that moves an argument out cannot run twice and does not
///   compile ("value moved here, in previous iteration of loop"): clone it
///   inside the body instead;
/// - dropping the future during a backoff cancels the sleep; no further
///   attempt runs;
/// - nothing is allocated on the heap (a `Failure<E>` records its attempts
///   in a `Vec`, once an attempt fails).
///
/// ```compile_fail,E0382
/// # use tenacious::{Classify, ErrorClass, retry};
/// # #[derive(Debug)] struct Flaky;
/// # impl Classify for Flaky { fn classify(&self) -> ErrorClass { ErrorClass::Transient } }
/// fn send(message: String) -> Result<(), Flaky> { Ok(()) }
///
/// #[retry]
/// fn call(message: String) -> Result<(), Flaky> {
///     send(message) // moves `message`: write `send(message.clone())`
/// }
/// ```
///
/// For the same reason `self` cannot be taken by value (`self`,
/// `mut self`, `self: Box<Self>`, `self: Arc<Self>`): take `&self`,
/// `&mut self` or `self: &Arc<Self>`. `const fn` and `extern` fns are
/// rejected too.
///
/// # Checked at compile time
///
/// Every key and value, with the error on the offending token and a word
/// on what to write instead; then, through the type system and on the
/// user's tokens, that the return type is a `Result` (aliases such as
/// `io::Result<T>` are fine) whose error type implements `Classify`, and
/// that `when` and `notify` have the signatures above.
#[proc_macro_attribute]
pub fn retry(args: TokenStream, item: TokenStream) -> TokenStream {
    retry::expand(args.into(), item.into()).into()
}

/// Derives `Classify` for an error enum or struct. See the `tenacious`
/// crate documentation.
#[proc_macro_derive(Classify, attributes(classify))]
pub fn derive_classify(input: TokenStream) -> TokenStream {
    classify::expand(input.into()).into()
}

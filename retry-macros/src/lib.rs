//! Procedural macros of the `tenacious` retry toolkit. Use them through the
//! `tenacious` facade: `tenacious::retry` and `tenacious::Classify`.
//!
//! Each macro converts tokens and hands them to its module, which works on
//! `proc_macro2` so it can be unit-tested.
#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

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
/// Every key the attribute takes, in the order the "unknown key" error
/// lists them; each has an example in [Keys by example](#keys-by-example).
///
/// | key | meaning | default |
/// |---|---|---|
/// | `policy` | the policy the other keys override: the path of a `const` or `static` `tenacious::Policy`, read at compile time, all of whose fields hold (its `timeout` bounds an async fn's attempts, so the fn's error must be `From<Elapsed>`, as for the key; its guards are asked before the first attempt); the keys beside it are checked against its fields as against each other (a `timeout` longer than its `deadline`, a `base` above its `cap` are compile errors), and override them whatever their value (`idempotent = true` beside a policy that is not); the fn keeps a statistics record of its own (see `stats`); or, with `tenacious`'s feature `config`, a name, `policy = "openai"`, looked up at run time in the set `tenacious::config::load` keeps (see [below](#policies-by-name)) | `Policy::new()` |
/// | `max` | total attempts, the first included (at least 1) | `3` |
/// | `base` | first backoff ceiling | `"200ms"` |
/// | `cap` | ceiling of any backoff, applied after jitter (at least `base`) | `"20s"` |
/// | `jitter` | `"full"`, `"equal"`, `"decorrelated"` or `"none"` | `"full"` |
/// | `on` | retried classes, `\|`-joined: `Transient`, `RateLimited` | `Transient \| RateLimited` |
/// | `when` | path to a `fn(&E) -> bool`, AND-ed with `on` | none |
/// | `check` | path to a `fn(&T) -> Result<(), E>` (or one taking a borrowed form of `T`: `&str` for a `String`), run on each `Ok`: the `Err` it returns is that attempt's error, decided and counted as any failed attempt's | none |
/// | `fallback` | path to a plain `fn(Failure<E>) -> R` or `fn(E) -> R`, `R` the fn's own return type: what the call returns when it gives up, counted in its statistics; a success never reaches it | none |
/// | `max_retry_after` | longest server hint honoured; a longer one returns the error at once | `"120s"` |
/// | `timeout` | per-attempt limit, `async fn` only; needs `E: From<tenacious::Elapsed>` | none |
/// | `deadline` | whole-call limit: no attempt starts with less than `tenacious::MIN_ATTEMPT` (1 ms) before it | none |
/// | `first_item` | on a fn that opens a stream: each attempt's limit to its first content item, its opening included; running out is the error `E::from(Elapsed)`, retried as any failure before the stream commits | none |
/// | `idle` | on a fn that opens a stream: the longest wait for the next item once the stream has committed (keepalives are no progress); running out is the error `E::from(Elapsed)` | none |
/// | `resume` | on a fn that opens a stream: `true` retries a failure after the stream committed too, the body reconnecting from `tenacious::stream::ResumePoint::current()` and items sent again dropped by their id; `false` ends the stream with a `Failure` that counts the items delivered | `false` |
/// | `idempotent` | `false`: the call must not be sent twice, so only an error proving the request never left (`Classify::not_sent`: a refused connection, DNS, TLS, a guard's refusal) is retried; any other stops the call with `StopReason::NotIdempotent` | `true` |
/// | `budget` | path to a shared `static RetryBudget` | none |
/// | `breaker` | path to a shared `static tenacious::Breaker`: opened by transient failures (never `Invalid`, `Fatal` or rate limits), an open circuit stops the call before its attempt, `StopReason::CircuitOpen` | none |
/// | `cooldown` | path to a shared `static tenacious::Cooldown`: closed by a `RateLimited` error's hint, waited for before each attempt of every call naming it; a wait too long for the `deadline` or `max_retry_after` stops the call, `StopReason::Cooldown` | none |
/// | `throttle` | path to a shared `static tenacious::Throttle`: an adaptive client-side request rate, off until the first throttling error, paced before each attempt | none |
/// | `guard` | path to a shared `static` whose type implements `tenacious::Guard`, asked before each attempt and told how each ended | none |
/// | `key` | an expression over the arguments naming the call's idempotency key (`tenacious::KeySource`: a string, an integer or an `IdempotencyKey`), the same on every attempt and whenever the call is issued again; it must name an argument or `self` | random; derived when nested |
/// | `nested` | inside another retried call: `"once"` (one attempt) or `"retry"` | `"once"` |
/// | `notify` | path to a `fn(&E, &RetryEvent)`, called before each sleep | none |
/// | `stats` | `false` (no record of the fn's own, so no statistics, events or metrics for it; beside a `policy` that has a record, `Policy::stats`, its calls count there) or the name of its record | on, named `module::path::fn_name` |
/// | `crate` | path to the `tenacious` crate, for a crate that re-exports it | `tenacious` as your Cargo.toml names it |
///
/// Durations are string literals of a number and a unit (`h`, `m`, `s`,
/// `ms`, `us`, `ns`), with decimals and combinations: `"1.5s"`, `"1m30s"`.
/// They are parsed at compile time into a `const` `Policy`; none may be
/// zero, and neither `timeout`, `first_item` nor `idle` may be longer than
/// `deadline`. `Invalid` and `Fatal` cannot go in `on`: they are never
/// retried, and `when` can only narrow `on`.
///
/// `first_item`, `idle` and `resume` need a fn that opens a stream (see
/// [Keys by example](#keys-by-example)); such a fn takes no `timeout`, and
/// not yet `when`, `notify`, `check` or `fallback`. The guards (`breaker`,
/// `cooldown`, `throttle`, `guard`) are asked in that order, then the
/// `budget`. A fn naming a guard (by its key or through its `policy`; a
/// budget alone is none) needs an error type that can say a guard refused
/// the call before its first attempt (`Classify::refused`:
/// `std::io::Error`, `tenacious::HttpError` and `tenacious::Failure<E>`
/// can, and `#[derive(Classify)]` for the variant marked
/// `#[classify(refused)]`); another is a compile error. A guard key names a
/// plain `static` of the guard's type, which every call naming it shares: a
/// module-level `const` there is rustc's error E0745, "cannot take address
/// of a temporary", on the path (the macro cannot tell a `const` from a
/// `static` by its path); declare `static NAME: Breaker = Breaker::new();`.
///
/// # Keys by example
///
/// One short example per key. Each hides the same error type, a transient
/// `Flaky`, where it needs nothing else:
///
/// ```
/// # use tenacious::Classify;
/// #[derive(Debug, Classify)]
/// #[classify(transient)]
/// struct Flaky;
/// ```
///
/// `policy`: start from a shared `const` (or `static`) policy; the keys
/// beside it override its fields.
///
/// ```
/// # #[derive(Debug, tenacious::Classify)] #[classify(transient)] struct Flaky;
/// use std::time::Duration;
/// use tenacious::{Policy, retry};
///
/// const TOOLS: Policy = Policy::new().max(5).base(Duration::from_millis(1));
///
/// #[retry(policy = TOOLS, max = 2)] // five attempts for the others, two here
/// fn lookup(attempts: &mut u32) -> Result<(), Flaky> {
///     *attempts += 1;
///     Err(Flaky)
/// }
///
/// let mut attempts = 0;
/// assert!(lookup(&mut attempts).is_err());
/// assert_eq!(attempts, 2);
/// ```
///
/// `policy = "name"` needs `tenacious`'s feature `config` (see [Policies
/// by name](#policies-by-name)), which the doc tests of this crate build
/// without; without it the literal is a compile error saying so, hence
/// `ignore`:
///
/// ```rust,ignore
/// // the set of named policies loaded at start-up (`tenacious::config::load`)
/// #[retry(policy = "search", max = 2)]
/// fn search(query: &str) -> Result<Vec<String>, Flaky> { /* .. */ }
/// ```
///
/// `max`: total attempts, the first included.
///
/// ```
/// # #[derive(Debug, tenacious::Classify)] #[classify(transient)] struct Flaky;
/// use tenacious::retry;
///
/// #[retry(max = 5, base = "1ms")]
/// fn ping(attempts: &mut u32) -> Result<(), Flaky> {
///     *attempts += 1;
///     Err(Flaky)
/// }
///
/// let mut attempts = 0;
/// assert!(ping(&mut attempts).is_err());
/// assert_eq!(attempts, 5); // the first and four retries
/// ```
///
/// `base`, `cap` and `jitter`: the backoff before retry n is at most
/// min(cap, base·2ⁿ⁻¹), and `jitter` picks the wait under it (`"none"`: all
/// of it; `"equal"`: its upper half; `"full"`: anywhere;
/// `"decorrelated"`: up to three times the last wait).
///
/// ```
/// # #[derive(Debug, tenacious::Classify)] #[classify(transient)] struct Flaky;
/// use std::time::Duration;
/// use tenacious::retry;
///
/// #[retry(max = 4, base = "1s", cap = "3s", jitter = "none")]
/// async fn fetch() -> Result<(), Flaky> {
///     Err(Flaky)
/// }
///
/// #[retry(max = 2, base = "1s", jitter = "equal")]
/// async fn spread() -> Result<(), Flaky> {
///     Err(Flaky)
/// }
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let start = tokio::time::Instant::now();
/// assert!(fetch().await.is_err());
/// assert_eq!(start.elapsed().as_secs(), 1 + 2 + 3); // the third wait is capped
///
/// let start = tokio::time::Instant::now();
/// assert!(spread().await.is_err());
/// assert!(start.elapsed() >= Duration::from_millis(500)); // half of 1 s, and up to all of it
/// # }
/// ```
///
/// `on`: the classes retried.
///
/// ```
/// use std::time::Duration;
/// use tenacious::{Classify, retry};
///
/// #[derive(Debug, Classify)]
/// enum ApiError {
///     #[classify(transient)]
///     Reset,
///     #[classify(rate_limited)]
///     Busy(#[classify(retry_after)] Option<Duration>),
/// }
///
/// #[retry(on = RateLimited, base = "1ms")] // a 429 is retried, a reset is not
/// fn call(attempts: &mut u32) -> Result<(), ApiError> {
///     *attempts += 1;
///     Err(ApiError::Reset)
/// }
///
/// let mut attempts = 0;
/// assert!(call(&mut attempts).is_err());
/// assert_eq!(attempts, 1);
/// # let _ = ApiError::Busy(None);
/// ```
///
/// `when`: a predicate over the error, AND-ed with `on`.
///
/// ```
/// use tenacious::{Classify, retry};
///
/// #[derive(Debug, Classify)]
/// #[classify(transient)]
/// struct Status(u16);
///
/// fn not_501(error: &Status) -> bool {
///     error.0 != 501 // "not implemented" will not be implemented on retry
/// }
///
/// #[retry(when = not_501, base = "1ms")]
/// fn call(attempts: &mut u32) -> Result<(), Status> {
///     *attempts += 1;
///     Err(Status(501))
/// }
///
/// let mut attempts = 0;
/// assert!(call(&mut attempts).is_err());
/// assert_eq!(attempts, 1);
/// ```
///
/// `check`: a bad `Ok` (an empty completion) becomes an error, and is
/// retried as one.
///
/// ```
/// use tenacious::{Classify, retry};
///
/// #[derive(Debug, Classify)]
/// enum CompletionError {
///     #[classify(transient)]
///     Empty,
/// }
///
/// fn not_empty(text: &str) -> Result<(), CompletionError> {
///     if text.is_empty() { Err(CompletionError::Empty) } else { Ok(()) }
/// }
///
/// #[retry(check = not_empty, base = "1ms")]
/// fn complete(answers: &mut Vec<&'static str>) -> Result<String, CompletionError> {
///     Ok(answers.remove(0).to_owned())
/// }
///
/// let mut answers = vec!["", "Paris"];
/// assert_eq!(complete(&mut answers).unwrap(), "Paris");
/// ```
///
/// `fallback`: what the call returns when it gives up, of the fn's own
/// return type, from the `Failure<E>` (or the last error alone).
///
/// ```
/// # #[derive(Debug, tenacious::Classify)] #[classify(transient)] struct Flaky;
/// use tenacious::{Failure, StopReason, retry};
///
/// fn cached(failure: Failure<Flaky>) -> Result<String, Flaky> {
///     assert_eq!(failure.stop_reason(), StopReason::Exhausted);
///     Ok("sunny (cached)".to_owned())
/// }
///
/// #[retry(max = 2, base = "1ms", fallback = cached)]
/// fn forecast() -> Result<String, Flaky> {
///     Err(Flaky)
/// }
///
/// assert_eq!(forecast().unwrap(), "sunny (cached)");
/// ```
///
/// `max_retry_after`: a server that asks for a longer wait than this gets
/// its error returned at once.
///
/// ```
/// use std::time::Duration;
/// use tenacious::{Classify, retry};
///
/// #[derive(Debug, Classify)]
/// #[classify(rate_limited)]
/// struct TooManyRequests(#[classify(retry_after)] Duration);
///
/// #[retry(max_retry_after = "60s")]
/// fn call(attempts: &mut u32) -> Result<(), TooManyRequests> {
///     *attempts += 1;
///     Err(TooManyRequests(Duration::from_secs(3600))) // "come back in an hour"
/// }
///
/// let mut attempts = 0;
/// assert!(call(&mut attempts).is_err());
/// assert_eq!(attempts, 1); // not slept on
/// ```
///
/// `timeout` and `deadline`: see [below](#timeouts-deadlines-budgets-nesting)
/// for both together; `deadline` alone, on a sync fn too:
///
/// ```
/// # #[derive(Debug, tenacious::Classify)] #[classify(transient)] struct Flaky;
/// use tenacious::retry;
///
/// #[retry(max = 10, base = "1s", jitter = "none", deadline = "4s")]
/// async fn call(attempts: &mut u32) -> Result<(), Flaky> {
///     *attempts += 1;
///     Err(Flaky)
/// }
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let mut attempts = 0;
/// assert!(call(&mut attempts).await.is_err());
/// assert_eq!(attempts, 3); // after 1 s and 2 s of backoff, 4 s more would pass the deadline
/// # }
/// ```
///
/// `first_item`, `idle` and `resume` go on a fn that opens a stream: an
/// `async fn` returning `Result<impl Stream<Item = Result<T, E>>, E>`,
/// whose body opens the stream once per attempt; the fn then returns the
/// retried stream of `Result<T, Failure<E>>`. `first_item` bounds each
/// attempt's wait for its first content item, retried as any failure before
/// the stream commits:
///
/// ```
/// use std::sync::atomic::{AtomicU32, Ordering};
/// use tenacious::stream::Stream;
/// use tenacious::{Classify, Elapsed, retry};
/// # use std::pin::Pin;
/// # use std::task::{Context, Poll};
/// # /// The tokens of an answer; `None` for a server that sends nothing.
/// # struct Tokens(Option<std::vec::IntoIter<Result<String, ChatError>>>);
/// # impl Stream for Tokens {
/// #     type Item = Result<String, ChatError>;
/// #     fn poll_next(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Self::Item>> {
/// #         match &mut self.0 { Some(tokens) => Poll::Ready(tokens.next()), None => Poll::Pending }
/// #     }
/// # }
/// # fn answer(words: &[&str]) -> Tokens {
/// #     Tokens(Some(words.iter().map(|w| Ok(w.to_string())).collect::<Vec<_>>().into_iter()))
/// # }
/// # async fn next<S: Stream>(stream: &mut Pin<&mut S>) -> Option<S::Item> {
/// #     std::future::poll_fn(|cx| stream.as_mut().poll_next(cx)).await
/// # }
///
/// #[derive(Debug, Classify)]
/// enum ChatError {
///     #[classify(transient)]
///     Stalled(Elapsed), // a stream's timer ran out
/// }
///
/// impl From<Elapsed> for ChatError {
///     fn from(elapsed: Elapsed) -> Self {
///         ChatError::Stalled(elapsed)
///     }
/// }
///
/// #[retry(first_item = "10s", base = "1ms")]
/// async fn chat(opens: &AtomicU32) -> Result<impl Stream<Item = Result<String, ChatError>>, ChatError> {
///     if opens.fetch_add(1, Ordering::Relaxed) == 0 {
///         return Ok(Tokens(None)); // the first server never answers
///     }
///     Ok(answer(&["Hel", "lo"]))
/// }
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let opens = AtomicU32::new(0);
/// let mut tokens = std::pin::pin!(chat(&opens));
/// assert_eq!(next(&mut tokens).await.unwrap().unwrap(), "Hel"); // cut at 10 s, then reopened
/// assert_eq!(opens.load(Ordering::Relaxed), 2);
/// # }
/// ```
///
/// `idle`: once the stream has committed, the longest wait for its next
/// item; without `resume`, a failure then ends the stream with what it
/// delivered (`StopReason::PartialOutput`):
///
/// ```
/// use tenacious::stream::Stream;
/// use tenacious::{Classify, Elapsed, StopReason, retry};
/// # use std::pin::Pin;
/// # use std::task::{Context, Poll};
/// # /// One token, then a server that goes silent.
/// # struct Tokens(bool);
/// # impl Stream for Tokens {
/// #     type Item = Result<String, ChatError>;
/// #     fn poll_next(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Self::Item>> {
/// #         if std::mem::replace(&mut self.0, false) { Poll::Ready(Some(Ok("Hel".into()))) } else { Poll::Pending }
/// #     }
/// # }
/// # async fn next<S: Stream>(stream: &mut Pin<&mut S>) -> Option<S::Item> {
/// #     std::future::poll_fn(|cx| stream.as_mut().poll_next(cx)).await
/// # }
/// # #[derive(Debug, Classify)]
/// # enum ChatError { #[classify(transient)] Stalled(Elapsed) }
/// # impl From<Elapsed> for ChatError { fn from(e: Elapsed) -> Self { ChatError::Stalled(e) } }
///
/// #[retry(idle = "30s")]
/// async fn chat() -> Result<impl Stream<Item = Result<String, ChatError>>, ChatError> {
///     Ok(Tokens(true)) // "Hel", then silence
/// }
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let mut tokens = std::pin::pin!(chat());
/// assert_eq!(next(&mut tokens).await.unwrap().unwrap(), "Hel");
/// let failure = next(&mut tokens).await.unwrap().unwrap_err(); // after 30 s without an item
/// assert_eq!(failure.stop_reason(), StopReason::PartialOutput);
/// assert_eq!(failure.delivered(), 1);
/// # }
/// ```
///
/// `resume = true`: a failure after commit is retried too, and the body
/// reconnects from where the consumer is, read from
/// `tenacious::stream::ResumePoint::current()` (items with an id the source
/// sends again are dropped by it; these have none, so the body skips what
/// was delivered):
///
/// ```
/// use tenacious::stream::{ResumePoint, Stream};
/// use tenacious::{Classify, Elapsed, retry};
/// # use std::pin::Pin;
/// # use std::task::{Context, Poll};
/// # struct Tokens(std::vec::IntoIter<Result<String, ChatError>>);
/// # impl Stream for Tokens {
/// #     type Item = Result<String, ChatError>;
/// #     fn poll_next(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Self::Item>> {
/// #         Poll::Ready(self.0.next())
/// #     }
/// # }
/// # async fn next<S: Stream>(stream: &mut Pin<&mut S>) -> Option<S::Item> {
/// #     std::future::poll_fn(|cx| stream.as_mut().poll_next(cx)).await
/// # }
/// # impl From<Elapsed> for ChatError { fn from(_: Elapsed) -> Self { ChatError::Dropped } }
///
/// #[derive(Debug, Classify)]
/// enum ChatError {
///     #[classify(transient)]
///     Dropped, // the connection dropped mid-answer
/// }
///
/// #[retry(resume = true, base = "1ms")]
/// async fn chat() -> Result<impl Stream<Item = Result<String, ChatError>>, ChatError> {
///     let delivered = ResumePoint::current().unwrap_or_default().delivered();
///     let mut items: Vec<_> = ["The", " answer", " is", " 42"].iter().map(|t| Ok(t.to_string())).collect();
///     if delivered == 0 {
///         items.truncate(2);
///         items.push(Err(ChatError::Dropped)); // the first connection drops after two tokens
///     }
///     let rest: Vec<_> = items.into_iter().skip(delivered as usize).collect();
///     Ok(Tokens(rest.into_iter()))
/// }
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let mut tokens = std::pin::pin!(chat());
/// let mut text = String::new();
/// while let Some(token) = next(&mut tokens).await {
///     text += &token.unwrap();
/// }
/// assert_eq!(text, "The answer is 42"); // whole, nothing twice
/// # }
/// ```
///
/// `idempotent = false`: a call that must not be sent twice retries only an
/// error that proves the request never left.
///
/// ```
/// use std::io;
/// use tenacious::{Failure, StopReason, retry};
///
/// #[retry(idempotent = false, base = "1ms")]
/// fn pay(attempts: &mut u32) -> Result<(), Failure<io::Error>> {
///     *attempts += 1;
///     match *attempts {
///         1 => Err(io::ErrorKind::ConnectionRefused.into()), // never sent: retried
///         _ => Err(io::ErrorKind::ConnectionReset.into()),   // may have been applied
///     }
/// }
///
/// let mut attempts = 0;
/// let failure = pay(&mut attempts).unwrap_err();
/// assert_eq!(failure.stop_reason(), StopReason::NotIdempotent);
/// assert_eq!(attempts, 2);
/// ```
///
/// `budget`: retries drawn from a token bucket every call naming it shares
/// (500 tokens, 5 a retry).
///
/// ```
/// # #[derive(Debug, tenacious::Classify)] #[classify(transient)] struct Flaky;
/// use tenacious::{RetryBudget, retry};
///
/// static SEARCH: RetryBudget = RetryBudget::new();
///
/// #[retry(max = 2, base = "1ms", budget = SEARCH)]
/// fn search() -> Result<(), Flaky> {
///     Err(Flaky)
/// }
///
/// assert!(search().is_err());
/// assert_eq!(SEARCH.balance(), 495); // one retry
/// ```
///
/// `breaker`: transient failures open the circuit; an open circuit stops
/// every call naming it before its attempt, with an error made from a
/// `tenacious::Refused` (`std::io::Error` can hold one).
///
/// ```
/// use std::io;
/// use tenacious::{Breaker, retry};
///
/// static PROVIDER: Breaker = Breaker::new().min_throughput(2);
///
/// #[retry(max = 1, breaker = PROVIDER)]
/// fn call(attempts: &mut u32) -> io::Result<()> {
///     *attempts += 1;
///     Err(io::ErrorKind::ConnectionReset.into())
/// }
///
/// let mut attempts = 0;
/// for _ in 0..3 {
///     assert!(call(&mut attempts).is_err());
/// }
/// assert_eq!(attempts, 2); // the third call was refused: the circuit is open
/// ```
///
/// `cooldown`: a `RateLimited` error's hint closes it for every call naming
/// it; each waits before its attempt until it reopens.
///
/// ```
/// use std::time::Duration;
/// use tenacious::{Classify, Cooldown, Refused, retry};
///
/// #[derive(Debug, Classify)]
/// enum ApiError {
///     #[classify(rate_limited)]
///     TooManyRequests(#[classify(retry_after)] Duration),
///     #[classify(refused)]
///     Refused(Refused), // a wait the call could not afford
/// }
///
/// static OPENAI: Cooldown = Cooldown::new();
///
/// #[retry(max = 1, cooldown = OPENAI)]
/// async fn complete(attempts: &mut u32) -> Result<(), ApiError> {
///     *attempts += 1;
///     match *attempts {
///         1 => Err(ApiError::TooManyRequests(Duration::from_secs(5))),
///         _ => Ok(()),
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let mut attempts = 0;
/// assert!(complete(&mut attempts).await.is_err()); // 429: closed for 5 s
/// let start = tokio::time::Instant::now();
/// complete(&mut attempts).await.unwrap();
/// assert!(start.elapsed() >= Duration::from_secs(5)); // waited for it to reopen
/// # }
/// ```
///
/// `throttle`: an adaptive client-side request rate shared by every call
/// naming it, off until a throttling error (a rate limit, an overload)
/// turns it on.
///
/// ```
/// use std::io;
/// use tenacious::{Throttle, retry};
///
/// static EMBEDDINGS: Throttle = Throttle::new();
///
/// #[retry(throttle = EMBEDDINGS)]
/// fn embed(text: &str) -> io::Result<usize> {
///     Ok(text.len())
/// }
///
/// assert_eq!(embed("hello").unwrap(), 5);
/// ```
///
/// `guard`: a shared guard of your own, asked before each attempt.
///
/// ```
/// use std::io;
/// use std::sync::atomic::{AtomicBool, Ordering};
/// use tenacious::{Admit, Guard, NextAttempt, Outcome, StopReason, retry};
///
/// /// An operator's switch: off, no call reaches the provider.
/// #[derive(Debug)]
/// struct Switch(AtomicBool);
///
/// impl Guard for Switch {
///     fn admit(&self, _: &NextAttempt) -> Admit {
///         if self.0.load(Ordering::Relaxed) { Admit::Go } else { Admit::Stop(StopReason::Guard) }
///     }
///     fn observe(&self, _: &Outcome) {}
/// }
///
/// static SWITCH: Switch = Switch(AtomicBool::new(true));
///
/// #[retry(guard = SWITCH)]
/// fn call(attempts: &mut u32) -> io::Result<()> {
///     *attempts += 1;
///     Ok(())
/// }
///
/// let mut attempts = 0;
/// call(&mut attempts).unwrap();
/// SWITCH.0.store(false, Ordering::Relaxed);
/// assert!(call(&mut attempts).is_err()); // refused: no attempt
/// assert_eq!(attempts, 1);
/// ```
///
/// `key`: the call's idempotency key, named by its arguments, so the same
/// order sends the same key on every attempt and whenever it is sent again.
///
/// ```
/// # #[derive(Debug, tenacious::Classify)] #[classify(transient)] struct Flaky;
/// use tenacious::{Attempt, IdempotencyKey, retry};
///
/// struct Order {
///     id: u64,
/// }
///
/// #[retry(key = order.id)]
/// fn place(order: &Order) -> Result<IdempotencyKey, Flaky> {
///     Ok(Attempt::current().unwrap().idempotency_key()) // the `Idempotency-Key` header
/// }
///
/// let order = Order { id: 42 };
/// assert_eq!(place(&order).unwrap(), place(&order).unwrap());
/// assert_ne!(place(&order).unwrap(), place(&Order { id: 43 }).unwrap());
/// ```
///
/// `nested`: inside an attempt of another retried call, one attempt
/// (`"once"`), or its own retries (`"retry"`).
///
/// ```
/// # #[derive(Debug, tenacious::Classify)] #[classify(transient)] struct Flaky;
/// use tenacious::retry;
///
/// #[retry(max = 3, base = "1ms", nested = "retry")]
/// fn inner(attempts: &mut u32) -> Result<(), Flaky> {
///     *attempts += 1;
///     Err(Flaky)
/// }
///
/// #[retry(max = 1)]
/// fn outer(attempts: &mut u32) -> Result<(), Flaky> {
///     inner(attempts)
/// }
///
/// let mut attempts = 0;
/// assert!(outer(&mut attempts).is_err());
/// assert_eq!(attempts, 3); // one attempt with `"once"`, the default
/// ```
///
/// `notify`: a fn told of each retry before its sleep.
///
/// ```
/// # #[derive(Debug, tenacious::Classify)] #[classify(transient)] struct Flaky;
/// use tenacious::{RetryEvent, retry};
///
/// fn log_retry(error: &Flaky, event: &RetryEvent) {
///     eprintln!("{error:?}: {event:?}");
/// }
///
/// #[retry(max = 2, base = "1ms", notify = log_retry)]
/// fn call() -> Result<(), Flaky> {
///     Err(Flaky)
/// }
///
/// assert!(call().is_err());
/// ```
///
/// `stats`: the name of the fn's statistics record, or `false` for none of
/// its own (see [Statistics](#statistics)).
///
/// ```
/// # #[derive(Debug, tenacious::Classify)] #[classify(transient)] struct Flaky;
/// use tenacious::retry;
///
/// #[retry(stats = "search tool")]
/// fn search() -> Result<u32, Flaky> {
///     Ok(1)
/// }
///
/// #[retry(stats = false)]
/// fn health() -> Result<u32, Flaky> {
///     Ok(1)
/// }
///
/// search().unwrap();
/// health().unwrap();
/// let snapshot = tenacious::stats::snapshot();
/// assert_eq!(snapshot.get("search tool").unwrap().calls(), 1);
/// assert!(snapshot.fns().iter().all(|f| !f.name().ends_with("health")));
/// ```
///
/// `crate`: where `tenacious` is, for a crate that reaches it only through
/// a re-export (`crate = my_sdk::tenacious`).
///
/// ```
/// # #[derive(Debug, tenacious::Classify)] #[classify(transient)] struct Flaky;
/// #[tenacious::retry(crate = ::tenacious)]
/// fn call() -> Result<(), Flaky> {
///     Ok(())
/// }
///
/// call().unwrap();
/// ```
///
/// # Timeouts, deadlines, budgets, nesting
///
/// - `timeout`: an attempt still running after it is dropped and counts as
///   the error `E::from(tenacious::Elapsed)`, which is transient. A sync fn
///   cannot be interrupted, so `timeout` there is a compile error.
/// - `deadline`: measured from the start of the first attempt (on tokio's
///   clock for an `async fn`, the system's for a sync one: the clock it
///   sleeps on); no attempt starts with less than `tenacious::MIN_ATTEMPT`
///   left (nor is a server hint past it waited), and with `timeout` the
///   last attempt is cut to what remains. The last attempt's error is
///   returned with `StopReason::Deadline`. Without `timeout`, an attempt
///   already running finishes, so the call may end that attempt's run time
///   past the deadline.
/// - `key = EXPR`: the call's idempotency key, named by its arguments
///   (`key = order.id`), evaluated once per call: see
///   `tenacious::KeySource`. Without it a call's key is random, and a call
///   nested in another's attempt derives its key from that attempt's key,
///   the fn's name and its `Hash` arguments, so it resends the same key
///   when the outer call retries. A key that names no argument and no
///   `self` (`key = "order-1"`, a constant) is a compile error on it: every
///   call would send the same key, and a server that honours it would
///   answer every later call with the first one's result.
/// - `budget = NAME`: `NAME` is a `static tenacious::RetryBudget` shared by
///   every call naming it; an empty budget allows no retry. So are the
///   guards' (`breaker`, `cooldown`, `throttle`, `guard`): a `const` there
///   (`Self::HEALTH`, a module's `const`) would be a fresh guard at every
///   use, and is a compile error on the path; so is an argument of the fn
///   (for a guard or a policy chosen at run time, build the policy by hand
///   and call `Policy::retry`).
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
/// # Policies by name
///
/// `policy = "name"` (feature `config`) binds the fn to the policy of that
/// name in the set `tenacious::config::load` keeps, so it is tuned from a
/// file or the environment without a rebuild:
///
/// ```rust,ignore
/// // at start-up, once:
/// tenacious::config::load(tenacious::config::Policies::from_toml_file("retry.toml")?)?;
///
/// #[retry(policy = "openai", max = 4)]
/// async fn complete(prompt: &str) -> Result<String, Failure<ApiError>> { /* .. */ }
/// ```
///
/// - The keys beside the name override the loaded policy's fields (`max`
///   here), and the fn keeps its own statistics record, as with a path.
/// - The first call after the load builds the fn's policy once and keeps
///   it: later calls cost one atomic load to find it.
/// - The loaded policy's shared guards are asked, and its `timeout`
///   bounds each attempt of an async fn whose error is
///   `From<tenacious::Elapsed>`; a sync fn's attempts, or those of a fn
///   whose error cannot hold an `Elapsed`, are not bounded.
/// - While the name is not loaded (nothing loaded yet, or no policy of
///   that name), a call runs the **fallback**, the defaults with the keys
///   beside the name, and keeps nothing, so the next call looks again. It
///   never panics or waits. The name is listed by
///   `tenacious::config::missing()` until a loaded set has it, and with
///   feature `tracing` a `WARN` event on the target `tenacious` names the
///   policy, the fn and the names loaded: once per fn while nothing is
///   loaded, once per fn when the loaded set lacks the name.
///
/// The name may not be empty, nor hold whitespace or a control character
/// (the config refuses such names); without feature `config` the literal
/// is an error that says to enable it. It works on async and sync fns,
/// methods, generic fns and fns that open a stream. See
/// `tenacious::config::missing` for an example that runs.
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
/// unless one says `stats = "Client::search"`. `stats = false` leaves the
/// fn without a record of its own, so without statistics, events and
/// metrics; beside a `policy` that has a record (`Policy::stats`, shared
/// by the fns of that policy) its calls count in that record instead.
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
/// `mut self`, `self: Box<Self>`, `self: Arc<Self>`, `self: Pin<Box<Self>>`):
/// take `&self`, `&mut self`, `self: &Arc<Self>` or `self: Pin<&mut Self>`
/// (each attempt reborrows it: call `self.as_mut()` in the body, with
/// `mut self: Pin<&mut Self>`). `const fn` and `extern` fns are
/// rejected too.
///
/// # Send and Sync arguments
///
/// Every attempt borrows the arguments, so the future of a retried
/// `async fn` (and a retried stream) holds `&T` of each argument `T` it
/// takes by value (of the fields it reads, for one the body only reads
/// fields of): it is `Send` only if the arguments are `Sync`. A type
/// that is `Send` but not `Sync` — `std::sync::mpsc::Receiver`, `Cell`,
/// `RefCell`, or a struct holding one — makes a future that can be
/// `tokio::spawn`ed without `#[retry]` but not with it. The error says
/// "future is not `Send`" on the argument, which "has type
/// `SharedByEveryAttempt<'_, T>`": the mark the expansion keeps beside the
/// argument (zero-sized, free) to name it. Two fixes:
///
/// - take it shared, `Arc<Mutex<T>>` (an `Arc<tokio::sync::Mutex<T>>` to
///   hold the lock across an `.await`), and lock it in the body;
/// - or take what it is made from (a `Sync` value: a `Sender`, an address,
///   a config) and make a fresh `T` in each attempt.
///
/// ```
/// use std::sync::mpsc::{self, Receiver};
/// use std::sync::{Arc, Mutex};
///
/// use tenacious::{Classify, ErrorClass, retry};
///
/// #[derive(Debug)]
/// struct Empty;
///
/// impl Classify for Empty {
///     fn classify(&self) -> ErrorClass {
///         ErrorClass::Transient
///     }
/// }
///
/// // `rx: Receiver<u32>` could not be spawned: every attempt borrows it.
/// #[retry(base = "10ms")]
/// async fn next(rx: Arc<Mutex<Receiver<u32>>>) -> Result<u32, Empty> {
///     let received = rx.lock().unwrap().try_recv(); // the lock ends here
///     received.map_err(|_| Empty)
/// }
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let (tx, rx) = mpsc::channel();
/// tx.send(7).unwrap();
/// let task = tokio::spawn(next(Arc::new(Mutex::new(rx))));
/// assert_eq!(task.await.unwrap().unwrap(), 7);
/// # }
/// ```
///
/// The same fn taking the `Receiver` itself is the error above:
///
/// ```compile_fail
/// # use std::sync::mpsc::{self, Receiver};
/// # use tenacious::{Classify, ErrorClass, retry};
/// # #[derive(Debug)] struct Empty;
/// # impl Classify for Empty { fn classify(&self) -> ErrorClass { ErrorClass::Transient } }
/// #[retry(base = "10ms")]
/// async fn next(rx: Receiver<u32>) -> Result<u32, Empty> {
///     rx.try_recv().map_err(|_| Empty)
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let (_tx, rx) = mpsc::channel();
/// tokio::spawn(next(rx)); // future is not `Send`: `rx` is not `Sync`
/// # }
/// ```
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

/// Derives `Classify` for an error enum or struct: each variant (or the
/// struct) says which class of error it is, and so whether `#[retry]`
/// retries it.
///
/// ```
/// use std::time::Duration;
/// use tenacious::{Classify, ErrorClass};
///
/// #[derive(Debug, Classify)]
/// enum ToolError {
///     #[classify(transient)] // network blip: back off and try again
///     Timeout,
///     #[classify(rate_limited)] // 429: wait as long as the server asks
///     TooManyRequests {
///         #[classify(retry_after)]
///         wait: Option<Duration>,
///     },
///     #[classify(invalid, hint = "fix the arguments: {0}")] // 400: retrying unchanged is pointless
///     BadArguments(String),
///     #[classify(fatal, hint = "credentials are wrong; a human must fix them")] // 401/403
///     Unauthorized,
///     #[classify(transparent)] // ask the inner error
///     Io(std::io::Error),
/// }
///
/// assert_eq!(ToolError::Timeout.classify(), ErrorClass::Transient);
/// let slow_down = ToolError::TooManyRequests { wait: Some(Duration::from_secs(2)) };
/// assert_eq!(slow_down.classify(), ErrorClass::RateLimited);
/// assert_eq!(slow_down.retry_after(), Some(Duration::from_secs(2)));
/// let bad = ToolError::BadArguments("`limit` must be positive".into());
/// assert_eq!(bad.hint().as_deref(), Some("fix the arguments: `limit` must be positive"));
/// assert_eq!(bad.variant(), "BadArguments");
/// let io = ToolError::Io(std::io::ErrorKind::ConnectionReset.into());
/// assert_eq!(io.classify(), ErrorClass::Transient);
/// ```
///
/// # Keys
///
/// | key | goes on | means |
/// |---|---|---|
/// | `transient` | a variant or the struct | `ErrorClass::Transient`: a retry can succeed (timeout, reset connection, 5xx); retried |
/// | `rate_limited` | a variant or the struct | `ErrorClass::RateLimited`: the server asks to wait (429); retried after its hint, if any |
/// | `invalid` | a variant or the struct | `ErrorClass::Invalid`: the request is wrong (400, 422, bad model output); never retried unchanged |
/// | `fatal` | a variant or the struct | `ErrorClass::Fatal`: a human must fix it (401, 403, bad configuration); never retried |
/// | `transparent` | a variant or struct with one field | every method answered by that field, which must be `Classify` |
/// | `refused` | one variant holding a `tenacious::Refused` in its one unnamed field | the variant a guard's refusal becomes: an open circuit or a cooldown the call cannot wait for stops it before its first attempt; classified as the `Refused` is (`Transient`, with its hint) |
/// | `with = path` | a variant with one field, a struct, or an enum as a whole | classified by the fn at `path`, handed the field (`fn(&Field)`) or the whole error (`fn(&Self)`), returning an `ErrorClass` or a `tenacious::Classified` (class, hint, retry-after, signals) |
/// | `hint = "..."` | a variant or struct with a class | advice for the model or operator, fields interpolated |
/// | `retry_after` | one field of a `rate_limited` case | that field, a `Duration` or `Option<Duration>`, is the server's hint |
/// | `max = N` | a `transient` or `rate_limited` case, a `transparent` or `with` one | the call's attempts, the first included, when this error is the last: it raises or lowers the policy's `max` (default: the policy's) |
/// | `base = "1s"` | as `max` | the backoff's base for the retry after this error, still under the policy's `cap` (default: the policy's) |
/// | `not_sent` | as `max` | the error proves the request never reached the server, so a `#[retry(idempotent = false)]` call may retry it (default: not, or the wrapped error's answer) |
/// | `crate = path` | the type | where `tenacious` is, for a crate that reaches it through a re-export |
///
/// Every variant of an enum carries exactly one class (`transparent`,
/// `refused` and `with` count as one); a variant without one, or with two, is a compile error
/// naming it. On an enum the class is never written above the enum: the
/// enum's own `#[classify(...)]` takes only `crate`, and `with` (a fn that
/// answers for every variant), so adding a variant means deciding its class.
/// On a struct, the class goes above the struct.
/// `variant()` is the variant's name (the struct's for a struct), for the
/// error distribution in `tenacious::stats`.
///
/// ## `transient`, `rate_limited`, `invalid`, `fatal` on a struct
///
/// ```
/// use tenacious::{Classify, ErrorClass};
///
/// #[derive(Debug, Classify)]
/// #[classify(fatal, hint = "set {key} in the config file")]
/// struct ConfigError {
///     key: &'static str,
/// }
///
/// let error = ConfigError { key: "api_key" };
/// assert_eq!(error.classify(), ErrorClass::Fatal);
/// assert_eq!(error.hint().as_deref(), Some("set api_key in the config file"));
/// assert_eq!(error.variant(), "ConfigError");
/// ```
///
/// ## `transparent`: ask the inner error
///
/// The variant (or struct) has exactly one field, whose type is `Classify`;
/// `classify`, `retry_after`, `hint`, `variant` and `signals` (what it says
/// of the provider: overloaded, its rate-limit headers) all come from it, so
/// the statistics show the inner error's variant and the guards hear what
/// the inner error heard. `std::io::Error` is
/// `Classify` (by its `ErrorKind`), as are `http::StatusCode`,
/// `tenacious::HttpError` and `reqwest::Error` with their features, and
/// `Box`, `Arc` and `&` of any `Classify` type.
///
/// ```
/// use tenacious::{Classify, ErrorClass};
///
/// #[derive(Debug, Classify)]
/// enum Inner {
///     #[classify(rate_limited)]
///     Busy,
/// }
///
/// #[derive(Debug, Classify)]
/// enum Outer {
///     #[classify(transparent)]
///     Io(std::io::Error),
///     #[classify(transparent)]
///     Inner(Box<Inner>),
/// }
///
/// let refused = Outer::Io(std::io::ErrorKind::ConnectionRefused.into());
/// assert_eq!(refused.classify(), ErrorClass::Transient);
/// let busy = Outer::Inner(Box::new(Inner::Busy));
/// assert_eq!(busy.classify(), ErrorClass::RateLimited);
/// assert_eq!(busy.variant(), "Busy");
/// ```
///
/// A `transparent` case takes no `hint` (the inner error's is used) and no
/// `retry_after`.
///
/// ## `refused`: the variant a guard's refusal becomes
///
/// A call whose policy has a guard (`breaker = ...`, `cooldown = ...`) can
/// be stopped before its first attempt: the breaker is open, or the
/// cooldown lasts longer than the call may wait. There is no attempt's
/// error to return then, so the call returns its error made from a
/// `tenacious::Refused` if the type says how (`Classify::refused`), and
/// `#[classify(refused)]` says how: the derive adds
/// `fn refused() -> Option<fn(Refused) -> Self> { Some(Self::Variant) }`.
/// Without it the call makes its first attempt anyway, and its guards
/// refuse only retries.
///
/// The variant holds the `Refused` in its one unnamed field (its type is
/// checked by the compiler, so an alias works). `classify`, `retry_after`
/// and `hint` come from that `Refused` (`Transient`, with a hint to take
/// another route meanwhile); `variant()` is the variant's own name. It is a
/// class of its own, so it takes no other class, no `hint` and no
/// `retry_after`; one variant of an enum at most is `refused` (the
/// `Refused`'s `reason()` says which guard refused). A unit variant cannot
/// be `refused`, as it would lose that reason, nor can a struct, whose
/// every error would then be a refusal: return `tenacious::Refused`
/// itself for that.
///
/// ```
/// use std::sync::atomic::{AtomicU32, Ordering};
/// use tenacious::{Breaker, Classify, ErrorClass, Refused, StopReason, retry};
///
/// #[derive(Debug, Classify)]
/// enum ToolError {
///     #[classify(transient)]
///     Timeout,
///     #[classify(refused)] // an open circuit, a cooldown the call cannot wait for
///     Refused(Refused),
/// }
///
/// static PROVIDER: Breaker = Breaker::new().min_throughput(2);
///
/// #[retry(max = 1, breaker = PROVIDER)]
/// fn call(attempts: &AtomicU32) -> Result<(), ToolError> {
///     attempts.fetch_add(1, Ordering::Relaxed);
///     Err(ToolError::Timeout)
/// }
///
/// let attempts = AtomicU32::new(0);
/// for _ in 0..2 {
///     assert!(matches!(call(&attempts), Err(ToolError::Timeout))); // opens the circuit
/// }
/// let Err(ToolError::Refused(refused)) = call(&attempts) else { panic!("not refused") };
/// assert_eq!(refused.reason(), StopReason::CircuitOpen);
/// assert_eq!(attempts.load(Ordering::Relaxed), 2); // no attempt for the refused call
///
/// let refused = ToolError::Refused(refused);
/// assert_eq!(refused.classify(), ErrorClass::Transient);
/// assert_eq!(refused.variant(), "Refused");
/// assert!(ToolError::refused().is_some());
/// ```
///
/// ## `with = path`: classified by a fn
///
/// When the class depends on what the error holds (a provider's error
/// body, a status and a code), name a fn that decides. On a variant, the
/// fn is handed a reference to the variant's only field (`fn(&Field) ->
/// R`); on the type, a reference to the error itself (`fn(&Self) -> R`),
/// and on an enum it then answers for every variant, which say nothing of
/// their own. `R` is an `ErrorClass`, or a `tenacious::Classified` to give
/// a hint, a retry-after and signals too (defaults: none, none,
/// `Signals::NONE`). `variant()` stays the variant's (or the struct's)
/// name. The path may be an associated fn (`with = Self::classification`)
/// and may be quoted (`with = "errors::by_body"`).
///
/// The fn gives the class, the hint and the retry-after, so a `with` case
/// takes no class, no `hint` and no `retry_after` field; a variant without
/// a field, or with several, has no one field to hand over (put `with` on
/// the enum, or hold the fields in one struct). It is called once for each
/// `Classify` method asked: keep it cheap, reading what the error holds,
/// never doing I/O. The compiler checks its argument and return types at
/// the path; the bounds a generic fn needs go on the type's parameters.
/// For HTTP, `tenacious::HttpError` (feature `http`) already classifies by
/// the provider's error body; a `with` fn can refine what it says.
///
/// ```
/// use std::time::Duration;
/// use tenacious::{Classified, Classify, ErrorClass};
///
/// #[derive(Debug)]
/// struct ProviderBody {
///     code: String,
///     message: String,
/// }
///
/// fn by_body(body: &ProviderBody) -> Classified {
///     match body.code.as_str() {
///         "insufficient_quota" => {
///             Classified::fatal().with_hint("the account's quota is spent: a human must add credit")
///         }
///         "context_length_exceeded" => {
///             Classified::invalid().with_hint(format!("shorten the prompt: {}", body.message))
///         }
///         "rate_limit_exceeded" => {
///             Classified::rate_limited().with_retry_after(Some(Duration::from_secs(1)))
///         }
///         _ => Classified::transient(),
///     }
/// }
///
/// #[derive(Debug, Classify)]
/// enum ModelError {
///     #[classify(with = by_body)]
///     Provider(ProviderBody),
///     #[classify(transient)]
///     Timeout,
/// }
///
/// #[derive(Debug, Classify)]
/// #[classify(with = Self::classification)]
/// struct ToolFailure {
///     exit_code: i32,
/// }
///
/// impl ToolFailure {
///     fn classification(&self) -> ErrorClass {
///         match self.exit_code {
///             75 => ErrorClass::Transient, // EX_TEMPFAIL: try again later
///             _ => ErrorClass::Invalid,
///         }
///     }
/// }
///
/// let spent = ModelError::Provider(ProviderBody {
///     code: "insufficient_quota".into(),
///     message: "You exceeded your current quota".into(),
/// });
/// assert_eq!(spent.classify(), ErrorClass::Fatal);
/// assert_eq!(spent.hint().as_deref(), Some("the account's quota is spent: a human must add credit"));
/// assert_eq!(spent.variant(), "Provider");
/// let long = ModelError::Provider(ProviderBody {
///     code: "context_length_exceeded".into(),
///     message: "maximum context length is 8192 tokens".into(),
/// });
/// assert_eq!(long.hint().as_deref(), Some("shorten the prompt: maximum context length is 8192 tokens"));
/// assert_eq!(ToolFailure { exit_code: 75 }.classify(), ErrorClass::Transient);
/// assert_eq!(ToolFailure { exit_code: 2 }.variant(), "ToolFailure");
/// ```
///
/// ## `retry_after`: the server's hint
///
/// On one field of a `rate_limited` case, of type `Duration` or
/// `Option<Duration>` (aliases are fine: the compiler checks the type).
/// `#[retry]` waits at least that long before the next attempt, up to its
/// `max_retry_after`; a longer hint returns the error at once. On any other
/// class it would never be read, so it is an error there.
///
/// ```
/// use std::time::Duration;
/// use tenacious::Classify;
///
/// #[derive(Debug, Classify)]
/// #[classify(rate_limited)]
/// struct Throttled(#[classify(retry_after)] Duration);
///
/// #[derive(Debug, Classify)]
/// enum ApiError {
///     #[classify(rate_limited)]
///     TooManyRequests {
///         #[classify(retry_after)]
///         wait: Option<Duration>,
///     },
/// }
///
/// assert_eq!(Throttled(Duration::from_secs(3)).retry_after(), Some(Duration::from_secs(3)));
/// assert_eq!(ApiError::TooManyRequests { wait: None }.retry_after(), None);
/// ```
///
/// ## `max`, `base`, `not_sent`: what one error sets for the call
///
/// Beside a retried class (`transient`, `rate_limited`), or on a
/// `transparent` or `with` case, which may be either: `max = N` is the
/// call's attempts when this error is the last (the first included, at
/// least 1; it raises or lowers the policy's), `base = "1s"` the backoff's
/// base for the retry after it (the policy's `cap` still bounds it), and
/// `not_sent` says the request never reached the server, so a call that is
/// not idempotent may retry it. They become `Classify::limits` and
/// `Classify::not_sent`; on a `transparent` case they override what the
/// wrapped error says, and without them it forwards. `Failure::limit()`
/// says when an error's own `max` stopped the call. On `invalid` and
/// `fatal` cases, never retried, they would never be read, so they are an
/// error there, as on `refused` (a refusal ends the call, and is
/// `not_sent` already).
///
/// ```
/// use std::time::Duration;
/// use tenacious::{Classify, Limits};
///
/// #[derive(Debug, Classify)]
/// enum ApiError {
///     /// The quota window: worth six attempts, whatever the policy says.
///     #[classify(rate_limited, max = 6)]
///     Busy,
///     /// A slow dependency: back off from 1 s, one retry at most.
///     #[classify(transient, max = 2, base = "1s")]
///     Slow,
///     /// Refused before any byte was written.
///     #[classify(transient, not_sent)]
///     ConnectRefused,
///     #[classify(fatal)]
///     Denied,
/// }
///
/// assert_eq!(ApiError::Busy.limits(), Limits::NONE.max(6));
/// assert_eq!(ApiError::Slow.limits().get_base(), Some(Duration::from_secs(1)));
/// assert!(ApiError::ConnectRefused.not_sent());
/// assert!(ApiError::Denied.limits().is_none());
/// ```
///
/// ## `hint = "..."`: advice, with fields
///
/// A string for the model (as the `system_hint` of an observation) or for
/// the operator. Fields are interpolated as in thiserror's `#[error]`:
/// `{0}` for a tuple field, `{name}` for a named one, with format specs
/// (`{wait:?}`); `{{` and `}}` are braces. A hint without fields is a
/// `&'static str`, allocated never; one with fields is formatted when
/// `hint()` is called.
///
/// ```
/// use tenacious::Classify;
///
/// #[derive(Debug, Classify)]
/// enum SchemaError {
///     #[classify(invalid, hint = "field `{field}` must be {expected}")]
///     WrongType { field: String, expected: &'static str },
///     #[classify(invalid, hint = "argument {0} is missing; send {{\"{0}\": ...}}")]
///     Missing(&'static str),
///     #[classify(invalid, hint = "the schema allows {0:?} only")]
///     NotAllowed(Vec<&'static str>),
/// }
///
/// let wrong = SchemaError::WrongType { field: "limit".into(), expected: "an integer" };
/// assert_eq!(wrong.hint().as_deref(), Some("field `limit` must be an integer"));
/// let missing = SchemaError::Missing("query");
/// assert_eq!(missing.hint().as_deref(), Some("argument query is missing; send {\"query\": ...}"));
/// let not_allowed = SchemaError::NotAllowed(vec!["asc", "desc"]);
/// assert_eq!(not_allowed.hint().as_deref(), Some("the schema allows [\"asc\", \"desc\"] only"));
/// ```
///
/// ## `crate = path`: tenacious through a re-export
///
/// The generated impl names the `tenacious` crate. A renamed dependency
/// (`retry_kit = { package = "tenacious", .. }` in Cargo.toml) is found
/// without help; a crate that reaches `tenacious` only through another
/// crate's re-export says where it is, on the type (quoted or not):
///
/// ```
/// mod facade {
///     pub use tenacious;
/// }
///
/// use tenacious::{Classify, ErrorClass};
///
/// #[derive(Debug, Classify)]
/// #[classify(crate = facade::tenacious)]
/// enum FetchError {
///     #[classify(transient)]
///     Timeout,
/// }
///
/// assert_eq!(FetchError::Timeout.classify(), ErrorClass::Transient);
/// ```
///
/// ## Generic error types
///
/// A field whose type mentions a type parameter gets the bound it needs on
/// the impl: `Classify` for a `transparent` field, the formatting trait
/// for an interpolated one.
///
/// ```
/// use tenacious::{Classify, ErrorClass};
///
/// #[derive(Debug, Classify)]
/// enum Layered<E> {
///     #[classify(transparent)]
///     Inner(E),
///     #[classify(invalid, hint = "bad input: {0}")]
///     Input(E),
/// }
///
/// let inner: Layered<std::io::Error> = Layered::Inner(std::io::ErrorKind::TimedOut.into());
/// assert_eq!(inner.classify(), ErrorClass::Transient);
/// ```
///
/// ## Errors from other crates
///
/// `anyhow::Error`, `Box<dyn std::error::Error + Send + Sync>` and
/// `String` cannot say whether to retry, and a type of another crate cannot
/// derive `Classify` here. Wrap such errors in an enum of your own, one
/// variant per class you can tell apart, and convert with `map_err` (or a
/// `From` impl, so `?` converts):
///
/// ```
/// use tenacious::{Classify, retry};
///
/// type BoxError = Box<dyn std::error::Error + Send + Sync>;
///
/// #[derive(Debug, Classify)]
/// enum CallError {
///     #[classify(transient)] // whatever the client failed with: worth another try
///     Client(BoxError),
///     #[classify(invalid, hint = "{0}")] // the reply did not parse: retrying will not fix it
///     Reply(String),
/// }
///
/// fn client_call(calls: &mut u32) -> Result<String, BoxError> {
///     *calls += 1;
///     if *calls < 2 { Err("connection reset".into()) } else { Ok("42".into()) }
/// }
///
/// #[retry(base = "1ms")]
/// fn call(calls: &mut u32) -> Result<u32, CallError> {
///     let reply = client_call(calls).map_err(CallError::Client)?;
///     reply.parse().map_err(|_| CallError::Reply(format!("not a number: {reply}")))
/// }
///
/// let mut calls = 0;
/// assert_eq!(call(&mut calls).unwrap(), 42);
/// assert_eq!(calls, 2);
/// ```
///
/// `tests/foreign_errors.rs` runs the same recipe with `anyhow::Error`.
#[proc_macro_derive(Classify, attributes(classify))]
pub fn derive_classify(input: TokenStream) -> TokenStream {
    classify::expand(input.into()).into()
}

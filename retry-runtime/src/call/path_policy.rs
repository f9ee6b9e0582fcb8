//! What a `const` or `static` policy named by `#[retry(policy = PATH)]`
//! asks of the fn it is named on, read at compile time: its `timeout`
//! bounds an async fn's attempts, so the fn's error must be able to say an
//! attempt timed out (`From<Elapsed>`), as it must for `timeout = "..."`
//! written as a key. A policy whose timeout could not apply is a compile
//! error on its path, not a bound silently dropped.
use std::future::Future;

use crate::Elapsed;
use crate::engine::hooks::RetryResult;

/// Holds for every error type when `TIMED` is false (the policy has no
/// `timeout`), and for one that is `From<Elapsed>` when it is true.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot say an attempt timed out, so the policy's `timeout` could not bound the fn's attempts",
    label = "this policy has a `timeout`",
    note = "implement `From<tenacious::Elapsed>` for `{Self}` (a `transient` variant holding the `Elapsed`), as `timeout = \"...\"` written as a key needs, or name a policy without a `timeout`"
)]
pub trait ElapsedIf<const TIMED: bool>: Sized {
    /// How an expired attempt becomes its output, if the policy bounds it.
    fn expired<O: RetryResult<Error = Self>>() -> Option<fn(Elapsed) -> O>;
}

impl<E> ElapsedIf<false> for E {
    #[inline]
    fn expired<O: RetryResult<Error = Self>>() -> Option<fn(Elapsed) -> O> {
        None
    }
}

impl<E: From<Elapsed>> ElapsedIf<true> for E {
    #[inline]
    fn expired<O: RetryResult<Error = Self>>() -> Option<fn(Elapsed) -> O> {
        Some(|elapsed| O::from_result(Err(E::from(elapsed))))
    }
}

/// How an expired attempt of the future `fut` becomes its output, for a
/// fn bound to a `const` or `static` policy: `TIMED` is whether the policy
/// has a `timeout`, read at compile time, and then the attempt's error
/// must be `From<Elapsed>`. The macro spans the call on the policy's path.
#[inline]
pub fn elapsed_into_if<O, const TIMED: bool, F>(fut: &F) -> Option<fn(Elapsed) -> O>
where
    F: Future<Output = O>,
    O: RetryResult,
    O::Error: ElapsedIf<TIMED>,
{
    let _ = fut;
    <O::Error as ElapsedIf<TIMED>>::expired::<O>()
}

//! Decision retry: generate, validate, re-ask with the latest validation
//! error only, then degrade.
use std::fmt;

/// What a generation is told: which try this is and, on a re-ask, the
/// latest output and why it was rejected.
///
/// Only the *latest* rejected output and error are ever here, never the
/// history: a prompt built from a `Reask` is as large on the third try as
/// on the second, so re-asking does not grow the context.
///
/// ```
/// use tenacious::agent::DecisionRetry;
///
/// let mut prompts = Vec::new();
/// let decision = DecisionRetry::new().run(
///     |reask| {
///         prompts.push(match reask.feedback() {
///             Some(feedback) => format!("Give a number. {feedback}"),
///             None => "Give a number.".to_owned(),
///         });
///         if reask.is_reask() { "42".to_owned() } else { "forty-two".to_owned() }
///     },
///     |text: &String| text.parse::<u32>().map_err(|e| e.to_string()),
/// );
/// assert_eq!(decision.into_result().unwrap(), 42);
/// assert_eq!(prompts[1], "Give a number. Your previous answer was rejected: invalid digit found in string. Answer again, fixing that.");
/// ```
#[derive(Debug)]
pub struct Reask<'a, R, V> {
    try_number: u32,
    last: Option<(&'a R, &'a V)>,
}

// Derived impls would demand `R: Clone` and `V: Clone`; only references are
// held.
impl<R, V> Clone for Reask<'_, R, V> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<R, V> Copy for Reask<'_, R, V> {}

impl<'a, R, V> Reask<'a, R, V> {
    /// This try's number: 1 for the first generation, 2 for the first
    /// re-ask, and so on.
    #[must_use]
    pub const fn try_number(&self) -> u32 {
        self.try_number
    }

    /// Whether this is a re-ask (an earlier output was rejected).
    #[must_use]
    pub const fn is_reask(&self) -> bool {
        self.last.is_some()
    }

    /// The latest rejected output, on a re-ask.
    #[must_use]
    pub fn last_output(&self) -> Option<&'a R> {
        self.last.map(|(output, _)| output)
    }

    /// Why the latest output was rejected, on a re-ask.
    #[must_use]
    pub fn last_error(&self) -> Option<&'a V> {
        self.last.map(|(_, error)| error)
    }

    /// A line to append to the prompt on a re-ask: "Your previous answer
    /// was rejected: {error}. Answer again, fixing that." `None` on the
    /// first try.
    #[must_use]
    pub fn feedback(&self) -> Option<String>
    where
        V: fmt::Display,
    {
        self.last_error().map(|error| {
            format!("Your previous answer was rejected: {error}. Answer again, fixing that.")
        })
    }
}

/// An output that was still invalid when the re-asks ran out.
///
/// ```
/// use tenacious::agent::{Decision, DecisionRetry};
///
/// let decision = DecisionRetry::new().run(|_| "not json", |_: &&str| Err::<(), _>("expected `{`"));
/// let Decision::Degraded(degraded) = decision else { panic!("nothing validates") };
/// assert_eq!(degraded.tries, 3);
/// assert_eq!(degraded.last_output, "not json");
/// assert_eq!(degraded.reason(), "still invalid after 2 re-asks (3 tries): expected `{`");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Degraded<R, V> {
    /// The last output generated.
    pub last_output: R,
    /// Why it was rejected.
    pub last_error: V,
    /// Generations made, the first included.
    pub tries: u32,
    /// The re-ask limit that ran out.
    pub max_reasks: u32,
}

impl<R, V: fmt::Display> Degraded<R, V> {
    /// Why the result is degraded, for a log or the user (the same as
    /// `Display`).
    #[must_use]
    pub fn reason(&self) -> String {
        self.to_string()
    }
}

impl<R, V: fmt::Display> fmt::Display for Degraded<R, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (tries, error) = (self.tries, &self.last_error);
        // The re-asks made: `max_reasks`, except for `u32::MAX`, where the
        // tries ran out one re-ask earlier (see `max_reasks`).
        match (self.max_reasks, tries.saturating_sub(1)) {
            (0, _) => write!(f, "invalid, and re-asking is off (1 try): {error}"),
            (_, 1) => write!(f, "still invalid after 1 re-ask ({tries} tries): {error}"),
            (_, n) => write!(
                f,
                "still invalid after {n} re-asks ({tries} tries): {error}"
            ),
        }
    }
}

impl<R: fmt::Debug, V: fmt::Display + fmt::Debug> std::error::Error for Degraded<R, V> {}

/// The outcome of a [`DecisionRetry`]: a valid output, or a degraded one
/// that says why.
///
/// ```
/// use tenacious::agent::{Decision, DecisionRetry};
///
/// let decision = DecisionRetry::new().run(|_| "7", |text: &&str| text.parse::<u8>());
/// assert!(matches!(decision, Decision::Valid { value: 7, output: "7", tries: 1 }));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision<T, R, V> {
    /// An output passed validation.
    Valid {
        /// What the validator made of it.
        value: T,
        /// The output itself.
        output: R,
        /// Generations made, the first included.
        tries: u32,
    },
    /// No output passed validation within the re-asks allowed.
    Degraded(Degraded<R, V>),
}

impl<T, R, V> Decision<T, R, V> {
    /// Generations made, the first included.
    #[must_use]
    pub const fn tries(&self) -> u32 {
        match self {
            Self::Valid { tries, .. } | Self::Degraded(Degraded { tries, .. }) => *tries,
        }
    }

    /// Whether an output passed validation.
    #[must_use]
    pub const fn is_valid(&self) -> bool {
        matches!(self, Self::Valid { .. })
    }

    /// The validated value, or the degraded outcome as an error.
    ///
    /// # Errors
    ///
    /// [`Degraded`] when no output passed validation.
    pub fn into_result(self) -> Result<T, Degraded<R, V>> {
        match self {
            Self::Valid { value, .. } => Ok(value),
            Self::Degraded(degraded) => Err(degraded),
        }
    }
}

/// Generate → validate → re-ask with the latest validation error → …, at
/// most [`max_reasks`](DecisionRetry::max_reasks) times, then degrade.
///
/// The layer above the call layer for model output that must validate
/// (JSON that parses, a plan that fits the schema). `generate` gets a
/// [`Reask`] holding only the latest rejected output and its error, so the
/// prompt does not grow with each re-ask; `validate` returns the value it
/// made of a valid output, or the validation error to hand back.
///
/// | setting | builder | default |
/// |---|---|---|
/// | re-asks after the first generation | [`max_reasks`](DecisionRetry::max_reasks) | 2 |
///
/// Each form exists sync and async, infallible and fallible (`try_`: a
/// generation error, e.g. the model call failing for good, stops at once
/// and is returned as is).
///
/// ```
/// use tenacious::agent::{Decision, DecisionRetry};
///
/// const DECIDE: DecisionRetry = DecisionRetry::new().max_reasks(1);
///
/// let mut outputs = ["{oops", "{\"ok\":true}"].into_iter();
/// let decision = DECIDE.run(
///     |_| outputs.next().unwrap(),
///     |text: &&str| if text.ends_with('}') { Ok(()) } else { Err("unbalanced braces") },
/// );
/// assert!(matches!(decision, Decision::Valid { tries: 2, .. }));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DecisionRetry {
    max_reasks: u32,
}

impl DecisionRetry {
    /// The defaults: at most 2 re-asks (3 generations).
    pub const DEFAULT: Self = Self { max_reasks: 2 };

    /// The defaults, [`DecisionRetry::DEFAULT`].
    #[must_use]
    pub const fn new() -> Self {
        Self::DEFAULT
    }

    /// Re-asks after the first generation. Default: 2. `0` never re-asks.
    ///
    /// Any value ends: tries are counted in a `u32`, so with `u32::MAX`
    /// the loop degrades after `u32::MAX` tries (`u32::MAX - 1` re-asks)
    /// at the most, rather than overflow or re-ask for ever.
    ///
    /// ```
    /// use tenacious::agent::DecisionRetry;
    ///
    /// assert_eq!(DecisionRetry::new().get_max_reasks(), 2);
    /// assert_eq!(DecisionRetry::new().max_reasks(0).get_max_reasks(), 0);
    /// ```
    #[must_use]
    pub const fn max_reasks(self, reasks: u32) -> Self {
        Self { max_reasks: reasks }
    }

    /// The re-ask limit.
    #[must_use]
    pub const fn get_max_reasks(&self) -> u32 {
        self.max_reasks
    }

    /// Runs the loop with an infallible `generate`.
    pub fn run<R, T, V, G, C>(&self, mut generate: G, validate: C) -> Decision<T, R, V>
    where
        G: FnMut(Reask<'_, R, V>) -> R,
        C: FnMut(&R) -> Result<T, V>,
    {
        let result: Result<_, std::convert::Infallible> =
            self.try_run(|reask| Ok(generate(reask)), validate);
        match result {
            Ok(decision) => decision,
            Err(never) => match never {},
        }
    }

    /// Runs the loop; a generation error ends it at once.
    ///
    /// ```
    /// use tenacious::agent::DecisionRetry;
    ///
    /// let outcome = DecisionRetry::new().try_run(
    ///     |reask| if reask.is_reask() { Err("model unavailable") } else { Ok("[1, 2") },
    ///     |text: &&str| if text.ends_with(']') { Ok(()) } else { Err("unterminated list") },
    /// );
    /// assert_eq!(outcome.unwrap_err(), "model unavailable");
    /// ```
    ///
    /// # Errors
    ///
    /// The first error `generate` returns.
    pub fn try_run<R, T, V, E, G, C>(
        &self,
        mut generate: G,
        mut validate: C,
    ) -> Result<Decision<T, R, V>, E>
    where
        G: FnMut(Reask<'_, R, V>) -> Result<R, E>,
        C: FnMut(&R) -> Result<T, V>,
    {
        let mut last: Option<(R, V)> = None;
        let mut tries: u32 = 0;
        loop {
            tries = tries.saturating_add(1);
            let output = generate(reask(tries, last.as_ref()))?;
            match self.judge(tries, output, &mut validate) {
                Judged::Done(decision) => return Ok(decision),
                // Replacing, not appending: the only state carried to the
                // next try is this one output and its error.
                Judged::Reask(output, error) => last = Some((output, error)),
            }
        }
    }

    /// [`run`](DecisionRetry::run) with an async `generate`.
    ///
    /// The future holds a copy of the settings (not `&self`), `generate`
    /// and `validate`: it is `Send`, and so can be `tokio::spawn`ed on a
    /// multi-thread runtime, whenever they and `generate`'s futures are.
    ///
    /// ```
    /// use tenacious::agent::DecisionRetry;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let decision = DecisionRetry::new()
    ///     .run_async(
    ///         async |reask| if reask.try_number() < 2 { "maybe" } else { "yes" },
    ///         |answer: &&str| if *answer == "yes" { Ok(true) } else { Err("answer yes or no") },
    ///     )
    ///     .await;
    /// assert_eq!(decision.tries(), 2);
    /// assert_eq!(decision.into_result().unwrap(), true);
    /// # }
    /// ```
    pub fn run_async<R, T, V, G, C>(
        &self,
        generate: G,
        validate: C,
    ) -> impl Future<Output = Decision<T, R, V>> + use<R, T, V, G, C>
    where
        G: AsyncFnMut(Reask<'_, R, V>) -> R,
        C: FnMut(&R) -> Result<T, V>,
    {
        let decide = self.decide_async(generate, validate, Ok::<R, std::convert::Infallible>);
        async move {
            match decide.await {
                Ok(decision) => decision,
                Err(never) => match never {},
            }
        }
    }

    /// [`try_run`](DecisionRetry::try_run) with an async `generate`.
    ///
    /// `Send` on the same terms as [`run_async`](DecisionRetry::run_async).
    ///
    /// # Errors
    ///
    /// The first error `generate` returns.
    pub fn try_run_async<R, T, V, E, G, C>(
        &self,
        generate: G,
        validate: C,
    ) -> impl Future<Output = Result<Decision<T, R, V>, E>> + use<R, T, V, E, G, C>
    where
        G: AsyncFnMut(Reask<'_, R, V>) -> Result<R, E>,
        C: FnMut(&R) -> Result<T, V>,
    {
        self.decide_async(generate, validate, std::convert::identity)
    }

    /// The async loop of both async forms; `split` turns what `generate`
    /// returns into the output or the error that ends the loop.
    ///
    /// Not an `async fn` of `&self`, and no closure adapting `generate`:
    /// the future holds a copy of the settings and `generate` itself, so
    /// it is `Send` whenever `generate`, its futures and `validate` are
    /// (a future holding `&self` across an await, or an adapting async
    /// closure, trips rustc's "implementation of `Send` is not general
    /// enough" once the future is spawned).
    fn decide_async<R, T, V, E, O, G, C>(
        &self,
        mut generate: G,
        mut validate: C,
        split: fn(O) -> Result<R, E>,
    ) -> impl Future<Output = Result<Decision<T, R, V>, E>> + use<R, T, V, E, O, G, C>
    where
        G: AsyncFnMut(Reask<'_, R, V>) -> O,
        C: FnMut(&R) -> Result<T, V>,
    {
        let this = *self;
        async move {
            let mut last: Option<(R, V)> = None;
            let mut tries: u32 = 0;
            loop {
                tries = tries.saturating_add(1);
                let output = split(generate(reask(tries, last.as_ref())).await)?;
                match this.judge(tries, output, &mut validate) {
                    Judged::Done(decision) => return Ok(decision),
                    // Replacing, not appending, as in `try_run`.
                    Judged::Reask(output, error) => last = Some((output, error)),
                }
            }
        }
    }

    /// Validates one output and decides: done (valid, or degraded when no
    /// re-ask is left), or re-ask.
    fn judge<R, T, V, C>(self, tries: u32, output: R, validate: &mut C) -> Judged<T, R, V>
    where
        C: FnMut(&R) -> Result<T, V>,
    {
        match validate(&output) {
            Ok(value) => Judged::Done(Decision::Valid {
                value,
                output,
                tries,
            }),
            // `tries - 1` re-asks were made so far. `tries` saturates at
            // `u32::MAX`, so that try is the last even when `max_reasks`
            // would allow more (`u32::MAX` re-asks are `u32::MAX + 1` tries):
            // without the second test the loop would never end.
            Err(error) if tries > self.max_reasks || tries == u32::MAX => {
                Judged::Done(Decision::Degraded(Degraded {
                    last_output: output,
                    last_error: error,
                    tries,
                    max_reasks: self.max_reasks,
                }))
            }
            Err(error) => Judged::Reask(output, error),
        }
    }
}

impl Default for DecisionRetry {
    /// [`DecisionRetry::DEFAULT`].
    fn default() -> Self {
        Self::DEFAULT
    }
}

enum Judged<T, R, V> {
    Done(Decision<T, R, V>),
    Reask(R, V),
}

fn reask<R, V>(try_number: u32, last: Option<&(R, V)>) -> Reask<'_, R, V> {
    Reask {
        try_number,
        last: last.map(|(output, error)| (output, error)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `max_reasks(u32::MAX)` allows more tries than a `u32` counts: the
    /// try numbered `u32::MAX` is the last one, or the loop (whose count
    /// saturates there) would re-ask for ever.
    #[test]
    fn the_last_countable_try_degrades_even_with_unbounded_reasks() {
        let decide = DecisionRetry::new().max_reasks(u32::MAX);
        let mut reject = |_: &&str| Err::<(), _>("still wrong");
        assert!(matches!(
            decide.judge(u32::MAX - 1, "no", &mut reject),
            Judged::Reask("no", "still wrong")
        ));
        let Judged::Done(Decision::Degraded(degraded)) = decide.judge(u32::MAX, "no", &mut reject)
        else {
            panic!("the try numbered u32::MAX must end the loop");
        };
        assert_eq!(degraded.tries, u32::MAX);
        assert_eq!(degraded.max_reasks, u32::MAX);
        assert_eq!(
            degraded.reason(),
            "still invalid after 4294967294 re-asks (4294967295 tries): still wrong"
        );
    }
}

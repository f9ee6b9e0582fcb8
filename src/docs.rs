//! The long form: one chapter a module, each the `.md` file of the same
//! name in the repository's `docs/` directory (its Rust blocks are
//! doctests). The README is the doorway; the reference is the items'
//! own documentation, which the chapters link to.
//!
//! | chapter | what it holds |
//! |---|---|
//! | [`demo`] | `cargo run --example agent`: an agent under fault injection, its output read line by line |
//! | [`attribute`] | `#[retry(...)]`: where its keys are documented, with other attributes, what cannot work |
//! | [`safety`] | a retry never makes things worse: timeouts and deadlines, idempotency keys, `check`, `fallback`, calls that are not idempotent, budgets, guards, nested retries, `Failure<E>`, per-variant limits |
//! | [`http`] | status codes, `Retry-After`, `x-should-retry`, providers' error bodies, server-sent events |
//! | [`streams`] | retrying a stream: before and after its first item, resuming, timers, what it costs |
//! | [`routes`] | a request sent on to the next model, deployment or provider: `Route`, the rule per error, streams that switch before the first token, one deadline, the gateway |
//! | [`fleets`] | callers of one provider act as one: `Cooldown`, `Throttle`, `Breaker`, and the fleet simulation |
//! | [`overload`] | a provider's cap on requests in flight: `Concurrency` (in process and fleet-wide), admission by `Task` and `Priority`, and `AdaptiveLimit` for a cap nobody told you |
//! | [`config`] | policies from TOML, JSON or the environment, and `#[retry(policy = "name")]` (feature `config`) |
//! | [`errors`] | errors from other crates: wrapping them, `#[classify(with = path)]` |
//! | [`observability`] | statistics per fn, the `tracing` events and spans, the `metrics`, what they cost |
//! | [`performance`] | the overhead against backon and tokio-retry2, in time and in instructions; the targets; compile cost |
//! | [`herd`] | the thundering herd: how jitter spreads the load |
//!
//! Each integration crate's README holds its chapter:
//! [tenacious-redis](https://github.com/tenacious-rs/tenacious/blob/main/tenacious-redis/README.md)
//! (feature `redis`: a fleet on Redis, its costs and its tests),
//! [tenacious-tower](https://github.com/tenacious-rs/tenacious/blob/main/tenacious-tower/README.md)
//! (feature `tower`),
//! [tenacious-reqwest](https://github.com/tenacious-rs/tenacious/blob/main/tenacious-reqwest/README.md)
//! (feature `reqwest-middleware`) and
//! [tenacious-agent](https://github.com/tenacious-rs/tenacious/blob/main/tenacious-agent/README.md)
//! (feature `agent`: the agent layers).

#[doc = include_str!("../docs/demo.md")]
pub mod demo {}

#[doc = include_str!("../docs/attribute.md")]
pub mod attribute {}

#[doc = include_str!("../docs/safety.md")]
pub mod safety {}

#[doc = include_str!("../docs/http.md")]
pub mod http {}

#[doc = include_str!("../docs/streams.md")]
pub mod streams {}

// The charts are inlined, SVG in the page, so that they show wherever the
// docs are read (docs.rs, a local `cargo doc`), with no path to resolve.
//
// Rustdoc joins the fragments with one line break: the empty ones make the
// blank lines that start and end each chart as a block of HTML (within a
// paragraph, Markdown would read the SVG's text lines).
#[doc = include_str!("../docs/fleets.md")]
#[doc = ""]
#[doc = include_str!("../docs/fleet.svg")]
#[doc = ""]
#[doc = "The same with `--penalty` (`docs/fleet-penalty.svg`):"]
#[doc = ""]
#[doc = include_str!("../docs/fleet-penalty.svg")]
pub mod fleets {}

#[doc = include_str!("../docs/overload.md")]
pub mod overload {}

#[doc = include_str!("../docs/routes.md")]
pub mod routes {}

#[doc = include_str!("../docs/config.md")]
pub mod config {}

#[doc = include_str!("../docs/errors.md")]
pub mod errors {}

#[doc = include_str!("../docs/observability.md")]
pub mod observability {}

#[doc = include_str!("../docs/performance.md")]
pub mod performance {}

#[doc = include_str!("../docs/herd.md")]
#[doc = ""]
#[doc = include_str!("../docs/herd.svg")]
pub mod herd {}

//! The rules across keys, once: what `#[retry]` refuses at compile time
//! and a config file at start-up, in the same words. Each rule is a plain
//! function over the settings' nanoseconds returning what is wrong: the
//! attribute puts the message on the token of the key it blames, a config
//! on the key's path.
use crate::duration::display;

/// A duration one rule compares: the one written beside the others, else
/// the one it inherits (the default, or a base policy's), if known.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Setting {
    /// As written with the other keys.
    pub written: Option<u64>,
    /// What it is when not written, if known.
    pub inherited: Option<u64>,
}

impl Setting {
    /// A setting known only where written.
    #[must_use]
    pub const fn written(written: Option<u64>) -> Self {
        Self {
            written,
            inherited: None,
        }
    }

    /// A setting written, or else `inherited`.
    #[must_use]
    pub const fn or(written: Option<u64>, inherited: Option<u64>) -> Self {
        Self { written, inherited }
    }

    fn value(self) -> Option<u64> {
        match self.written {
            Some(written) => Some(written),
            None => self.inherited,
        }
    }
}

/// A rule broken: the key to blame, and what to write instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Broken {
    /// One of the rule's two keys: the one written, or the later one's
    /// when both are.
    pub key: &'static str,
    /// The message, in the macro's words.
    pub message: String,
}

/// `cap ≥ base`: `cap` is the ceiling of every backoff. `theirs` names
/// where an inherited value comes from (`"the default"`, `"the base
/// policy's"`); nothing is broken unless one of the two is written.
///
/// ```
/// use tenacious_syntax::rules::{Setting, backoff};
///
/// let broken = backoff(
///     Setting::or(None, Some(200_000_000)),
///     Setting::or(Some(100_000_000), Some(20_000_000_000)),
///     "the default",
/// )
/// .unwrap();
/// assert_eq!(broken.key, "cap");
/// assert!(broken.message.starts_with("`cap` (100ms) is below the default `base` (200ms)"));
/// ```
#[must_use]
pub fn backoff(base: Setting, cap: Setting, theirs: &str) -> Option<Broken> {
    let (b, c) = (base.value()?, cap.value()?);
    if c >= b {
        return None;
    }
    if cap.written.is_some() {
        let base_text = match base.written {
            Some(_) => format!("`base` ({})", display(b)),
            None => format!("{theirs} `base` ({})", display(b)),
        };
        return Some(Broken {
            key: "cap",
            message: format!(
                "`cap` ({}) is below {base_text}: `cap` is the ceiling of every backoff, so it \
                 must be at least `base`; raise `cap` or lower `base`",
                display(c)
            ),
        });
    }
    base.written.map(|_| Broken {
        key: "base",
        message: format!(
            "`base` ({}) is above {theirs} `cap` ({}): `cap` is the ceiling of every backoff; \
             raise it too, like `cap = \"{}\"`",
            display(b),
            display(c),
            display(b.saturating_mul(10)),
        ),
    })
}

/// The keys bounded by `deadline`, each with why it must not outlast it.
pub const DEADLINE_BOUNDED: [(&str, &str); 3] = [
    ("timeout", "no attempt can run longer than the whole call"),
    ("first_item", "the deadline ends the stream first"),
    ("idle", "the deadline ends the stream first"),
];

/// `key ≤ deadline`, for a key of [`DEADLINE_BOUNDED`] (`timeout`,
/// `first_item`, `idle`). Nothing is broken unless one of the two is
/// written; an inherited limit longer than a written `deadline` blames
/// `deadline`.
///
/// ```
/// use tenacious_syntax::rules::{Setting, within_deadline};
///
/// let broken = within_deadline(
///     "timeout",
///     Setting::written(Some(30_000_000_000)),
///     Setting::written(Some(10_000_000_000)),
///     "the default",
/// )
/// .unwrap();
/// assert_eq!(
///     broken.message,
///     "`timeout` (30s) is longer than `deadline` (10s): no attempt can run longer than the \
///      whole call; lower `timeout` or raise `deadline`",
/// );
/// ```
#[must_use]
pub fn within_deadline(
    key: &'static str,
    limit: Setting,
    deadline: Setting,
    theirs: &str,
) -> Option<Broken> {
    let (l, d) = (limit.value()?, deadline.value()?);
    if l <= d || (limit.written.is_none() && deadline.written.is_none()) {
        return None;
    }
    let why = DEADLINE_BOUNDED
        .iter()
        .find(|(bounded, _)| *bounded == key)
        .map_or("the deadline ends the call first", |(_, why)| *why);
    let (l, d) = (display(l), display(d));
    Some(match (limit.written, deadline.written) {
        (Some(_), Some(_)) => Broken {
            key,
            message: format!(
                "`{key}` ({l}) is longer than `deadline` ({d}): {why}; lower `{key}` or raise \
                 `deadline`"
            ),
        },
        (Some(_), None) => Broken {
            key,
            message: format!(
                "`{key}` ({l}) is longer than {theirs} `deadline` ({d}): {why}; lower `{key}` \
                 or raise `deadline`"
            ),
        },
        _ => Broken {
            key: "deadline",
            message: format!(
                "`deadline` ({d}) is shorter than {theirs} `{key}` ({l}): {why}; raise \
                 `deadline` or lower `{key}`"
            ),
        },
    })
}

/// Why a zero is refused for the duration key `key`, or `None` where zero
/// means something (a cooldown's `spacing`, a throttle's `probe_first`).
///
/// ```
/// use tenacious_syntax::rules::zero_duration;
///
/// assert!(zero_duration("base").unwrap().contains("tight loop"));
/// assert_eq!(zero_duration("spacing"), None);
/// ```
#[must_use]
pub fn zero_duration(key: &str) -> Option<&'static str> {
    Some(match key {
        "base" => {
            "a zero `base` makes every backoff zero, so retries run in a tight loop against a \
             failing service; give a positive duration, like `base = \"200ms\"`"
        }
        "cap" => {
            "a zero `cap` makes every backoff zero, so retries run in a tight loop against a \
             failing service; give a positive duration, like `cap = \"20s\"`"
        }
        "timeout" => {
            "a zero `timeout` times out every attempt before it starts; give the longest one \
             attempt may run, like `timeout = \"10s\"`, or remove the key"
        }
        "deadline" => {
            "a zero `deadline` leaves no time for any attempt; give the longest the whole call \
             may run, like `deadline = \"60s\"`, or remove the key"
        }
        "first_item" => {
            "a zero `first_item` stalls every attempt before its first item can come; give the \
             longest wait for it, like `first_item = \"10s\"`, or remove the key"
        }
        "idle" => {
            "a zero `idle` stalls a stream between any two items; give the longest gap without \
             progress to allow, like `idle = \"30s\"`, or remove the key"
        }
        "max_retry_after" => {
            "a zero `max_retry_after` gives up on every server that asks to wait; give the \
             longest wait to honour, like `max_retry_after = \"120s\"`"
        }
        "window" => {
            "a zero `window` weighs no outcome, so the breaker never opens; give how far back \
             to weigh them, like `window = \"30s\"`"
        }
        "open_for" => {
            "a zero `open_for` lets probes through as soon as the breaker opens, so it holds \
             no call back; give the break, like `open_for = \"15s\"`"
        }
        _ => return None,
    })
}

/// Whether `c` may be in a policy's name: not whitespace, not a control
/// character. A config refuses a policy named otherwise, and
/// `#[retry(policy = "name")]` a literal that no config could load.
#[must_use]
pub fn policy_name_char(c: char) -> bool {
    !c.is_whitespace() && !c.is_control()
}

#[cfg(test)]
mod tests {
    use super::{Setting, backoff, within_deadline};

    const S: u64 = 1_000_000_000;

    #[test]
    fn nothing_inherited_breaks_nothing() {
        let inherited = Setting::or(None, Some(30 * S));
        let written = Setting::or(None, Some(10 * S));
        assert_eq!(backoff(inherited, written, "the default"), None);
        assert_eq!(
            within_deadline("idle", inherited, written, "the default"),
            None
        );
        assert_eq!(
            backoff(Setting::written(Some(S)), Setting::default(), "x"),
            None
        );
    }

    #[test]
    fn the_key_written_is_blamed() {
        let base = Setting::or(Some(30 * S), Some(S));
        let cap = Setting::or(None, Some(20 * S));
        let broken = backoff(base, cap, "the base policy's").unwrap();
        assert_eq!(broken.key, "base");
        assert_eq!(
            broken.message,
            "`base` (30s) is above the base policy's `cap` (20s): `cap` is the ceiling of every \
             backoff; raise it too, like `cap = \"5m\"`"
        );
        let limit = Setting::or(None, Some(30 * S));
        let deadline = Setting::written(Some(10 * S));
        let broken = within_deadline("first_item", limit, deadline, "the default").unwrap();
        assert_eq!(broken.key, "deadline");
        assert_eq!(
            broken.message,
            "`deadline` (10s) is shorter than the default `first_item` (30s): the deadline ends \
             the stream first; raise `deadline` or lower `first_item`"
        );
    }
}

//! How an [`Explain`](crate::Explain) prints: the schedule's lines, the
//! worst case, a stream's limits and the guards, in the units a reader
//! takes in at a glance.
use std::fmt;
use std::time::Duration;

use super::{Explain, Window};
use crate::{ErrorClass, Jitter};

impl fmt::Display for Explain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = &self.policy;
        let max = p.get_max();
        let jitter = match p.get_jitter() {
            Jitter::None => "no",
            other => other.as_str(),
        };
        let mut on = String::new();
        for class in [ErrorClass::Transient, ErrorClass::RateLimited] {
            if p.get_on().contains(class) {
                if !on.is_empty() {
                    on.push_str(" | ");
                }
                on.push_str(class.as_str());
            }
        }
        writeln!(
            f,
            "{max} attempt{}, {jitter} jitter, base {}, cap {}, on {on}",
            if max == 1 { "" } else { "s" },
            Nanos(p.base_nanos()),
            Nanos(p.cap_nanos()),
        )?;
        writeln!(f, "attempt 1: at once")?;
        for run in self.runs() {
            if run.first == run.last {
                write!(f, "attempt {}: ", run.first)?;
            } else {
                write!(f, "attempts {}..={}: ", run.first, run.last)?;
            }
            let Window { min, max, .. } = run.window;
            if max == 0 {
                f.write_str("at once")?;
            } else if min == max {
                write!(f, "after {}", Nanos(max))?;
            } else if min == 0 {
                write!(f, "after 0..={}", Nanos(max))?;
            } else {
                write!(f, "after {}..={}", Nanos(min), Nanos(max))?;
            }
            if run.first != run.last {
                f.write_str(" each")?;
            }
            writeln!(f)?;
        }
        self.fmt_worst_case(f)?;
        if max > 1 {
            write!(
                f,
                "\nserver hints: up to {} each (max_retry_after), waited on top of the \
                 backoff; a longer one stops retrying",
                Nanos(p.max_retry_after_nanos())
            )?;
        }
        self.fmt_stream(f)?;
        self.fmt_guards(f)
    }
}

impl Explain {
    fn fmt_worst_case(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = &self.policy;
        let worst = self.worst_case();
        let deadline = OrNone(p.deadline_nanos());
        let waiting = Nanos(worst.waiting);
        let (Some(timeout), Some(attempts)) = (p.timeout_nanos(), worst.attempts) else {
            return write!(
                f,
                "worst case: {waiting} of waiting (no timeout: attempts unbounded), \
                 deadline {deadline}"
            );
        };
        let sum = worst.waiting.saturating_add(attempts);
        let max = p.get_max();
        match p.deadline_nanos() {
            Some(limit) if limit < sum => write!(
                f,
                "worst case: {}, the deadline ({waiting} of waiting + {max} × {} timeout \
                 would be {})",
                Nanos(limit),
                Nanos(timeout),
                Nanos(sum),
            ),
            _ => write!(
                f,
                "worst case: {}: {waiting} of waiting + {max} × {} timeout, deadline {deadline}",
                Nanos(sum),
                Nanos(timeout),
            ),
        }
    }

    fn fmt_stream(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = &self.policy;
        let (first_item, idle) = (p.get_first_item(), p.get_idle());
        if first_item.is_none() && idle.is_none() && !p.get_resume() {
            return Ok(());
        }
        let nanos = |d: Option<Duration>| d.map(crate::clock::saturating_nanos);
        write!(
            f,
            "\nstream: first item within {}, idle {}, {}",
            OrNone(nanos(first_item)),
            OrNone(nanos(idle)),
            if p.get_resume() {
                "resumes after it commits"
            } else {
                "no resume"
            }
        )
    }

    fn fmt_guards(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = &self.policy;
        let mut guards = Vec::new();
        if let Some(breaker) = p.get_breaker() {
            guards.push(format!("breaker {:?}", breaker.get_name()));
        }
        if let Some(cooldown) = p.get_cooldown() {
            guards.push(format!("cooldown {:?}", cooldown.get_name()));
        }
        if let Some(throttle) = p.get_throttle() {
            guards.push(format!("throttle {:?}", throttle.get_name()));
        }
        if p.get_guard().is_some() {
            guards.push("a guard of your own".to_owned());
        }
        if let Some(concurrency) = p.get_concurrency() {
            guards.push(format!(
                "concurrency {:?} (at most {} in flight)",
                concurrency.get_name(),
                concurrency.limit()
            ));
        }
        if let Some(budget) = p.get_budget() {
            guards.push(format!("a budget of {} tokens", budget.capacity()));
        }
        if guards.is_empty() {
            return Ok(());
        }
        write!(
            f,
            "\nguards (their waits not counted above): {}",
            guards.join(", ")
        )
    }
}

/// A duration in nanoseconds, written in the duration syntax of
/// `#[retry]` and of configs, largest unit first (`1m30s`, `1s500ms`), so
/// what `explain` prints reads back as written.
struct Nanos(u64);

impl fmt::Display for Nanos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const UNITS: [(&str, u64); 6] = [
            ("h", 3_600_000_000_000),
            ("m", 60_000_000_000),
            ("s", 1_000_000_000),
            ("ms", 1_000_000),
            ("us", 1_000),
            ("ns", 1),
        ];
        if self.0 == 0 {
            return f.write_str("0s");
        }
        let mut rest = self.0;
        for (name, unit) in UNITS {
            if rest >= unit {
                write!(f, "{}{name}", rest / unit)?;
                rest %= unit;
            }
        }
        Ok(())
    }
}

/// A duration, or `none`.
struct OrNone(Option<u64>);

impl fmt::Display for OrNone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(nanos) => Nanos(nanos).fmt(f),
            None => f.write_str("none"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn durations_print_largest_unit_first() {
        let shown = |nanos| Nanos(nanos).to_string();
        assert_eq!(shown(0), "0s");
        assert_eq!(shown(200 * MS), "200ms");
        assert_eq!(shown(90_000 * MS), "1m30s");
        assert_eq!(shown(1_500 * MS), "1s500ms");
        assert_eq!(shown(7), "7ns");
        assert_eq!(shown(u64::MAX), "5124095h34m33s709ms551us615ns");
    }
}

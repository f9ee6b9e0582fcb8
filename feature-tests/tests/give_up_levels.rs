//! `stats::set_give_up_levels`: the level of each give-up event is the
//! operator's to choose, by stop reason and, for an error not retried, by
//! class. A process of its own: the levels are global.
use std::sync::{Arc, Mutex};

use tenacious::stats::{self, CallStats, GiveUpLevels};
use tenacious::{Classify, ErrorClass, Policy, RetryBudget, StopReason};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Metadata, Subscriber};

#[derive(Debug, Clone, Copy, PartialEq, Classify)]
enum ToolError {
    #[classify(transient)]
    Timeout,
    #[classify(invalid)]
    BadArguments,
}

/// The level of every event on the target `tenacious`.
#[derive(Clone, Default)]
struct Levels(Arc<Mutex<Vec<Level>>>);

impl Subscriber for Levels {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        metadata.target() == "tenacious"
    }
    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        self.0.lock().unwrap().push(*event.metadata().level());
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

fn levels_of(f: impl FnOnce()) -> Vec<Level> {
    let levels = Levels::default();
    tracing::subscriber::with_default(levels.clone(), f);
    levels.0.lock().unwrap().clone()
}

static SEARCH: CallStats = CallStats::new("search");
static BUDGET: RetryBudget = RetryBudget::with_capacity(0);

#[test]
fn the_operator_sets_the_level_of_each_stop_reason() {
    let invalid = || {
        let _ = Policy::new()
            .stats(&SEARCH)
            .retry_blocking(|| Err::<(), _>(ToolError::BadArguments));
    };
    let refused_by_budget = || {
        let _ = Policy::new()
            .budget(&BUDGET)
            .stats(&SEARCH)
            .retry_blocking(|| Err::<(), _>(ToolError::Timeout));
    };
    // The defaults: an invalid answer is INFO, a budget's refusal WARN.
    assert_eq!(levels_of(invalid), [Level::INFO]);
    assert_eq!(levels_of(refused_by_budget), [Level::WARN]);

    stats::set_give_up_levels(
        GiveUpLevels::DEFAULT
            .reason(StopReason::Budget, Some(Level::ERROR))
            .not_retryable(ErrorClass::Invalid, None),
    );
    assert_eq!(levels_of(invalid), Vec::<Level>::new());
    assert_eq!(levels_of(refused_by_budget), [Level::ERROR]);

    stats::set_give_up_levels(GiveUpLevels::DEFAULT);
    assert_eq!(levels_of(invalid), [Level::INFO]);
}

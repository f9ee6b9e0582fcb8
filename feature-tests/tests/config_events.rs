//! Features `tracing` and `config`: a `#[retry(policy = "name")]` fn whose
//! name is not loaded warns on the target `tenacious`, once per fn while
//! nothing is loaded and once per fn when the loaded set lacks the name,
//! naming the policy, the fn and the names loaded. One test: the loaded
//! set is one per process.
use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex};

use tenacious::config::{self, Policies};
use tenacious::{Classify, retry};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Metadata, Subscriber};

#[derive(Debug, Classify)]
#[classify(transient)]
struct Down;

#[retry(policy = "openai", max = 1)]
fn chat() -> Result<(), Down> {
    Ok(())
}

#[retry(policy = "search", max = 1)]
fn search() -> Result<(), Down> {
    Ok(())
}

/// A `WARN` event's message and string fields.
type Captured = (Level, String, BTreeMap<String, String>);

#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<Captured>>>);

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
}

impl Subscriber for Capture {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut fields = BTreeMap::new();
        event.record(&mut Fields(&mut fields));
        let meta = event.metadata();
        self.0
            .lock()
            .unwrap()
            .push((*meta.level(), meta.target().to_owned(), fields));
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

/// The events `f` emits on this thread.
fn during(f: impl FnOnce()) -> Vec<Captured> {
    let capture = Capture::default();
    tracing::subscriber::with_default(capture.clone(), f);
    capture.0.lock().unwrap().clone()
}

#[test]
fn a_name_not_loaded_warns_once_per_fn_and_cause() {
    let events = during(|| {
        for _ in 0..3 {
            chat().unwrap();
        }
    });
    assert_eq!(events.len(), 1, "{events:#?}");
    let (level, target, fields) = &events[0];
    assert_eq!((*level, target.as_str()), (Level::WARN, "tenacious"));
    assert_eq!(fields["policy"], "openai");
    assert_eq!(fields["fn"], "config_events::chat");
    assert!(
        fields["message"].starts_with("no policies are loaded"),
        "{fields:?}"
    );

    config::load(Policies::from_toml_str("[policies.search]\n[policies.anthropic]\n").unwrap())
        .unwrap();
    let events = during(|| {
        for _ in 0..3 {
            chat().unwrap();
            search().unwrap();
        }
    });
    // `search` binds without a word; `chat` warns again, for the new cause.
    assert_eq!(events.len(), 1, "{events:#?}");
    let (level, _, fields) = &events[0];
    assert_eq!(*level, Level::WARN);
    assert_eq!(fields["policy"], "openai");
    assert_eq!(fields["fn"], "config_events::chat");
    assert_eq!(fields["loaded"], "anthropic, search");
    assert!(
        fields["message"].starts_with("the loaded policies have none of this name"),
        "{fields:?}"
    );
    assert_eq!(config::missing(), ["openai"]);
}

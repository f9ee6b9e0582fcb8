//! The process's one set of policies (feature `config`): loaded once,
//! found by name from anywhere. One test, as the set is the process's.
use std::time::Duration;

use tenacious::config::{self, Policies};

#[test]
fn policies_load_once_and_bind_by_name() {
    // Before: nothing to find, and the error says why.
    assert!(config::loaded().is_none());
    assert!(config::policy("openai").is_none());
    assert_eq!(
        config::require("openai").unwrap_err().to_string(),
        "no policy named \"openai\": no policies are loaded; load them at start-up, with \
         `tenacious::config::load`"
    );

    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/retry.toml");
    let loaded = config::load(Policies::from_toml_file(&path).unwrap()).unwrap();
    let openai = config::require("openai").unwrap();
    assert!(std::ptr::eq(openai, loaded.get("openai").unwrap()));
    assert_eq!(openai.get_max(), 5);
    assert_eq!(
        config::policy("search").unwrap().get_base(),
        Duration::from_millis(100)
    );

    // A `&'static Policy` from anywhere, as `#[retry(policy = NAME)]` will
    // need: here on another thread.
    let from_thread = std::thread::spawn(|| config::require("search").map(|p| p.get_max()))
        .join()
        .unwrap();
    assert_eq!(from_thread, Ok(3));

    let missing = config::require("serch").unwrap_err().to_string();
    assert!(
        missing.starts_with(&format!("no policy named \"serch\" in {}", path.display())),
        "{missing}"
    );
    assert!(
        missing.ends_with(
            "; did you mean \"search\"? the policies are: openai, openai-stream, search"
        )
    );

    // Loaded once: a second set is refused, the first stays.
    let again = config::load(Policies::from_toml_str("[policies.other]\n").unwrap()).unwrap_err();
    assert_eq!(
        again.to_string(),
        format!(
            "the policies are loaded already (from {}): `tenacious::config::load` takes one set, \
             once, at start-up; merge the policies into one file, or keep a second set as a \
             `Policies` of your own",
            path.display()
        )
    );
    assert!(config::policy("other").is_none());
    assert!(std::ptr::eq(config::loaded().unwrap(), loaded));

    // The loaded policy runs calls like any other.
    let mut attempts = 0;
    let result = config::require("search")
        .unwrap()
        .base(Duration::ZERO)
        .retry_blocking(|| {
            attempts += 1;
            if attempts < 3 {
                Err(std::io::Error::from(std::io::ErrorKind::TimedOut))
            } else {
                Ok(attempts)
            }
        });
    assert_eq!(result.unwrap(), 3);
}

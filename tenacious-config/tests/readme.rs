//! The README's chapter against the module's documentation: the same TOML
//! example, which reads as a set of policies.
use std::time::Duration;

use tenacious::config::Policies;

/// The first ```toml block of `text` that declares policies, each line
/// with `prefix` taken off.
fn example(text: &str, prefix: &str) -> String {
    let lines: Vec<&str> = text
        .lines()
        .map(|line| line.strip_prefix(prefix).unwrap_or(line.trim_end()))
        .map(|line| line.strip_prefix(' ').unwrap_or(line))
        .collect();
    let mut blocks = lines.split(|line| line.starts_with("```"));
    blocks
        .by_ref()
        .skip(1)
        .step_by(2)
        .find(|block| block.first() == Some(&"[policies.openai]"))
        .map(|block| block.join("\n"))
        .expect("a TOML example")
}

#[test]
fn the_readme_shows_the_documented_example() {
    let root = env!("CARGO_MANIFEST_DIR");
    let readme = std::fs::read_to_string(format!("{root}/README.md")).unwrap();
    let docs = std::fs::read_to_string(format!("{root}/src/lib.rs")).unwrap();
    let shown = example(&readme, "");
    assert_eq!(shown, example(&docs, "//!"));

    let set = Policies::from_toml_str(&shown).unwrap();
    let openai = set.require("openai").unwrap();
    assert_eq!(openai.get_deadline(), Some(Duration::from_secs(180)));
    assert_eq!(
        openai.get_breaker().unwrap().get_open_for(),
        Duration::from_secs(30)
    );
    assert!(std::ptr::eq(
        openai.get_budget().unwrap(),
        set.get("search").unwrap().get_budget().unwrap()
    ));
}

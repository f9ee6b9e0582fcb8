//! The user's own clippy lints fire on a `#[retry]` fn exactly as on the
//! plain fn: `missing_errors_doc`, `missing_panics_doc` and
//! `needless_pass_by_value` on each `retried_*` fn of
//! `tests/user_lints/lib.rs` as on its `plain_*` twin (and on nothing
//! else). Clippy skips code whose span comes from a macro, so this fails if
//! the expansion gives the fn a span of its own.
//!
//! Runs `cargo clippy` on that file as a crate of its own, built like
//! trybuild builds its cases: in the target directory, with this
//! workspace's lock file.
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

const LINTS: [&str; 3] = [
    "clippy::missing_errors_doc",
    "clippy::missing_panics_doc",
    "clippy::needless_pass_by_value",
];

fn target_dir(root: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from)
}

/// Writes the fixture crate; returns its directory.
fn fixture(root: &Path) -> PathBuf {
    let dir = target_dir(root).join("tests").join("user-lints");
    let src = dir.join("src");
    std::fs::create_dir_all(&src).unwrap();
    let manifest = format!(
        "[package]\nname = \"user-lints\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n\
         [lib]\npath = {lib:?}\n\n\
         [dependencies]\ntenacious = {{ path = {root:?} }}\n\n\
         [workspace]\n",
        lib = root.join("tests/user_lints/lib.rs"),
        root = root,
    );
    std::fs::write(dir.join("Cargo.toml"), manifest).unwrap();
    std::fs::copy(root.join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    dir
}

/// The fn a line of `source` is in: the last `fn` declared at or above it.
fn fn_at(source: &str, line: usize) -> String {
    source
        .lines()
        .take(line)
        .filter_map(|text| {
            let (_, after) = text.split_once("fn ")?;
            let name: String = after
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            (!name.is_empty()).then_some(name)
        })
        .last()
        .unwrap_or_default()
}

#[test]
fn clippy_lints_a_retried_fn_like_the_plain_fn() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = fixture(root);
    let output = Command::new(env!("CARGO"))
        .args(["clippy", "--quiet", "--message-format=json"])
        .current_dir(&dir)
        .env("CARGO_TARGET_DIR", dir.join("target"))
        .env_remove("RUSTFLAGS")
        .output()
        .expect("cargo clippy runs");
    assert!(
        output.status.success(),
        "cargo clippy failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let source = std::fs::read_to_string(root.join("tests/user_lints/lib.rs")).unwrap();

    // fn name -> the lints reported in it.
    let mut reported: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        let Ok(message) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if message["reason"] != "compiler-message"
            || !message["package_id"]
                .as_str()
                .is_some_and(|id| id.contains("user-lints"))
        {
            continue;
        }
        let message = &message["message"];
        let Some(code) = message["code"]["code"].as_str() else {
            continue;
        };
        let primary = message["spans"]
            .as_array()
            .and_then(|spans| spans.iter().find(|s| s["is_primary"] == true))
            .unwrap_or_else(|| panic!("no primary span: {message}"));
        let line = usize::try_from(primary["line_start"].as_u64().unwrap()).unwrap();
        let _ = reported
            .entry(fn_at(&source, line))
            .or_default()
            .insert(code.to_owned());
    }

    for lint in LINTS {
        assert!(
            reported.values().any(|lints| lints.contains(lint)),
            "{lint} fired nowhere, not even on the plain fns: {reported:#?}"
        );
    }
    let names: BTreeSet<&str> = source
        .lines()
        .filter_map(|l| l.split_once("fn plain_").map(|(_, rest)| rest))
        .filter_map(|rest| rest.split('(').next())
        .collect();
    assert!(names.len() >= 5, "{names:?}");
    for name in names {
        let plain = reported
            .get(&format!("plain_{name}"))
            .cloned()
            .unwrap_or_default();
        let retried = reported
            .get(&format!("retried_{name}"))
            .cloned()
            .unwrap_or_default();
        assert_eq!(
            retried, plain,
            "`retried_{name}` against `plain_{name}`: {reported:#?}"
        );
    }
    let others: Vec<_> = reported
        .keys()
        .filter(|name| !name.starts_with("plain_") && !name.starts_with("retried_"))
        .collect();
    assert!(others.is_empty(), "lints outside the twins: {reported:#?}");
}

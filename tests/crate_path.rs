//! How the macros find the `tenacious` crate without `crate =`: they read
//! the user's Cargo.toml. The crates in `tests/fixtures/` are built by cargo
//! (offline, in a target dir of their own under this one), since what is
//! tested is the manifest each crate is compiled with.
use std::path::Path;
use std::process::{Command, Output};

fn cargo(args: &[&str]) -> Output {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fixtures");
    Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned()))
        .args(args)
        .arg("--offline")
        .arg("--manifest-path")
        .arg(root.join("tests/fixtures/Cargo.toml"))
        .arg("--target-dir")
        .arg(target)
        // Set for this test, it would make the fixtures' macros believe they
        // build an integration test.
        .env_remove("CARGO_TARGET_TMPDIR")
        .output()
        .expect("cargo runs")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// `retry_kit = { package = "tenacious", .. }`: both macros find it.
#[test]
fn a_renamed_dependency_needs_no_crate_path() {
    let output = cargo(&["run", "-p", "fixture-renamed"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "retried through retry_kit\n"
    );
}

/// Through a crate that re-exports `tenacious`: one error, naming `crate =`.
#[test]
fn a_re_exported_crate_without_crate_path_is_one_error_naming_it() {
    for (feature, wanted) in [
        ("retry", "`#[retry(crate = path::to::tenacious)]`"),
        ("derive", "`#[classify(crate = path::to::tenacious)]`"),
    ] {
        let output = cargo(&["check", "-p", "fixture-wrapper-user", "--features", feature]);
        let stderr = stderr(&output);
        assert!(!output.status.success(), "{feature}: {stderr}");
        let errors = stderr
            .lines()
            .filter(|line| line.starts_with("error: ") || line.starts_with("error["))
            .filter(|line| !line.starts_with("error: could not compile"))
            .collect::<Vec<_>>();
        assert_eq!(errors.len(), 1, "{feature}: {stderr}");
        assert!(
            errors[0].contains("cannot find the `tenacious` crate"),
            "{stderr}"
        );
        assert!(errors[0].contains(wanted), "{feature}: {stderr}");
        assert!(stderr.contains("due to 1 previous error"), "{stderr}");
        assert!(!stderr.contains("warning"), "{feature}: {stderr}");
    }
}

/// Through a re-exporting crate with `crate = path`: it compiles.
#[test]
fn a_re_exported_crate_with_crate_path_compiles() {
    let output = cargo(&[
        "check",
        "-p",
        "fixture-wrapper-user",
        "--features",
        "crate-path",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
}

/// A fn that opens a stream, in edition 2021, where an `impl Trait`
/// captures no lifetime unless told: the retried stream still borrows
/// `self` and the argument.
#[test]
fn a_stream_fn_compiles_and_runs_in_edition_2021() {
    let output = cargo(&["run", "-p", "fixture-edition2021"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "streamed in edition 2021 after 2 opens\n"
    );
}

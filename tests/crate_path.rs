//! How the macros find the `tenacious` crate without `crate =`: they read
//! the user's Cargo.toml. The crates in `tests/fixtures/` are built by cargo
//! (offline, in a target dir of their own under this one), since what is
//! tested is the manifest each crate is compiled with. They are built from
//! a copy under the target dir, so that cargo writes no tracked file (the
//! fixtures' `Cargo.lock` it would update).
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// `tests/fixtures` copied under the target dir, their paths to the
/// `tenacious` crate made absolute: the manifest cargo builds.
fn fixtures() -> &'static Path {
    static COPY: OnceLock<PathBuf> = OnceLock::new();
    COPY.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let copy = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fixtures-src");
        copy_dir(&root.join("tests/fixtures"), &copy, root);
        copy
    })
}

/// Copies `from` into `to`, each manifest's `path = "../../.."` (the
/// repository, from a fixture) made `root`.
fn copy_dir(from: &Path, to: &Path, root: &Path) {
    std::fs::create_dir_all(to).expect("the copy's directory");
    for entry in std::fs::read_dir(from).expect("the fixtures") {
        let entry = entry.expect("a fixture's entry");
        let (source, target) = (entry.path(), to.join(entry.file_name()));
        if entry.file_type().expect("its type").is_dir() {
            copy_dir(&source, &target, root);
        } else if entry.file_name() == "Cargo.toml" {
            let manifest = std::fs::read_to_string(&source).expect("a manifest");
            let absolute = format!("path = {:?}", root.display().to_string());
            std::fs::write(&target, manifest.replace("path = \"../../..\"", &absolute))
                .expect("the copied manifest");
        } else {
            std::fs::copy(&source, &target).expect("a copied file");
        }
    }
}

fn cargo(args: &[&str]) -> Output {
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fixtures");
    Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned()))
        .args(args)
        .arg("--offline")
        .arg("--manifest-path")
        .arg(fixtures().join("Cargo.toml"))
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

//! Compile-fail and compile-pass cases for `#[retry]` and `#[derive(Classify)]`.
//! Regenerate the expected output with `TRYBUILD=overwrite cargo test --test ui`
//! and review the diff; run one case with `cargo test --test ui -- ui trybuild=NAME.rs`
//! (the test's name `ui` first, or the filter leaves it out).

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/fail/*.rs");
    t.pass("tests/ui/pass/*.rs");
}

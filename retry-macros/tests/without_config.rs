//! `#[retry(policy = "name")]` in a crate whose `tenacious` lacks feature
//! `config`: one error, on the literal, saying to enable it.
//!
//! Here and not in the facade's `tests/ui`: trybuild builds each case
//! with the dev-dependencies of the package under test, and the facade's
//! enable `config`, where this package's `tenacious` has no features.
//! Bless with `TRYBUILD=overwrite cargo test -p tenacious-macros --test without_config`.

#[test]
fn policy_by_name_needs_feature_config() {
    trybuild::TestCases::new().compile_fail("tests/without_config/*.rs");
}

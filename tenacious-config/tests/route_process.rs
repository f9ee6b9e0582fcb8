//! Routes against the process-wide state: the set `load` keeps, and the
//! target names a process keeps (`tenacious::route::MAX_TARGETS`). A
//! test binary of its own, one test, as it loads a set and fills the
//! table of names.
use tenacious::config::{self, Policies};
use tenacious::route::{MAX_TARGETS, RouteError};

#[test]
fn the_loaded_sets_routes_and_the_bound_on_target_names() {
    // Before a load: said so.
    assert!(
        config::route("chat")
            .unwrap_err()
            .to_string()
            .contains("no policies are loaded")
    );
    config::load(
        Policies::from_toml_str(
            "[policies.model]\nmax = 2\n[routes.chat]\ntargets = [\
             { name = \"loaded-a\", data = \"a\", policy = \"model\" },\
             { name = \"loaded-b\", data = \"b\" }]\n",
        )
        .unwrap(),
    )
    .unwrap();
    let route = config::route("chat").unwrap();
    assert_eq!(route.targets()[0].get_policy().get_max(), 2);
    assert_eq!(route.targets()[1].name(), "loaded-b");
    assert_eq!(
        config::route("chatt").unwrap_err().to_string(),
        "no route named \"chatt\"; did you mean \"chat\"? the routes are: chat"
    );

    // Two names kept: a route of MAX_TARGETS more is one too many.
    let targets: Vec<String> = (0..MAX_TARGETS)
        .map(|i| format!("{{ name = \"fill-{i}\", data = \"x\" }}"))
        .collect();
    let full = Policies::from_toml_str(&format!(
        "[routes.fill]\ntargets = [{}]\n",
        targets.join(", ")
    ))
    .unwrap();
    let err = full.route("fill").unwrap_err();
    assert_eq!(err.route_error(), Some(&RouteError::TooManyNames));
    assert_eq!(err.target(), None);
    assert_eq!(
        err.to_string(),
        format!(
            "route \"fill\": this process keeps {MAX_TARGETS} target names already: name targets \
             after models or providers, not requests"
        )
    );
    // Names already kept still build.
    let kept = Policies::from_toml_str(
        "[routes.kept]\ntargets = [{ name = \"fill-0\", data = \"x\" }, { name = \"loaded-a\", \
         data = \"a\" }]\n",
    )
    .unwrap();
    assert_eq!(kept.route("kept").unwrap().targets().len(), 2);
}

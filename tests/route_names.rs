//! The target names a process keeps are bounded: a name made per request
//! is refused past `MAX_TARGETS`, not kept forever. A test binary of its
//! own, as it fills the process-wide table.
use tenacious::route::{MAX_TARGETS, Route, RouteError, Target};

#[test]
fn names_past_the_bound_are_refused_and_known_names_still_build() {
    for n in 0..MAX_TARGETS {
        Route::builder("names")
            .target(Target::new(format!("model-{n}"), ()))
            .build()
            .unwrap();
    }
    let error = Route::builder("names")
        .target(Target::new("one-too-many", ()))
        .build()
        .unwrap_err();
    assert_eq!(error, RouteError::TooManyNames);
    assert!(error.to_string().contains("not requests"));
    // A name already kept still builds.
    Route::builder("names")
        .target(Target::new("model-7", ()))
        .build()
        .unwrap();
}

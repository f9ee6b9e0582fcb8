//! Routes: which target serves, which are left and why, counted on the
//! paused clock. Each test names its targets apart: a target name's
//! guards and statistics are shared process-wide.
use std::cell::Cell;
use std::io;
use std::time::Duration;

use http::{HeaderMap, StatusCode};
use tenacious::route::{
    Route, RouteError, RouteFailure, RouteStop, Rules, Target, TargetError, Then,
};
use tenacious::{Breaker, ErrorClass, HttpError, Policy, RetryBudget, StopReason};
use tokio::time::Instant;

/// A 400 whose body says what the provider says.
fn bad_request(code: &str) -> HttpError {
    let body = format!(
        r#"{{"error": {{"message": "no", "type": "invalid_request_error", "code": "{code}"}}}}"#
    );
    HttpError::from_parts_with_body(StatusCode::BAD_REQUEST, &HeaderMap::new(), body.as_bytes())
}

/// A request every target answers with a reset connection: the attempts
/// made, and the route's failure.
async fn reset_everywhere(route: &Route<()>) -> (u32, RouteFailure<io::Error>) {
    let calls = Cell::new(0);
    let failure = route
        .call(|_| {
            calls.set(calls.get() + 1);
            async { Err::<(), _>(io::Error::from(io::ErrorKind::ConnectionReset)) }
        })
        .await
        .unwrap_err();
    (calls.get(), failure)
}

const QUICK: Policy = Policy::new().max(3).base(Duration::from_millis(100));

#[tokio::test(start_paused = true)]
async fn a_target_that_stays_down_hands_the_request_to_the_next_after_its_own_retries() {
    let route = Route::builder("down")
        .target(Target::new("down-primary", 503_u16).policy(QUICK))
        .target(Target::new("down-fallback", 200_u16).policy(QUICK))
        .build()
        .unwrap();
    let calls = Cell::new(0);
    let answer = route
        .call(|target| {
            calls.set(calls.get() + 1);
            let status = *target.data();
            async move {
                match status {
                    200 => Ok("served"),
                    other => Err(HttpError::new(StatusCode::from_u16(other).unwrap())),
                }
            }
        })
        .await
        .unwrap();
    assert_eq!(
        (answer.value, answer.served_by(), answer.index()),
        ("served", "down-fallback", 1)
    );
    assert!(answer.fell_back());
    assert_eq!(
        calls.get(),
        4,
        "3 attempts at the primary, 1 at the fallback"
    );
    let primary = &answer.tried()[0];
    assert_eq!((primary.target(), primary.attempts()), ("down-primary", 3));
    assert_eq!(
        (primary.stop_reason(), primary.then()),
        (StopReason::Exhausted, Then::Next)
    );
    // Each target counts its own calls.
    let stats = tenacious::stats::snapshot();
    assert_eq!(stats.get("down-primary").unwrap().attempts(), 3);
    assert_eq!(stats.get("down-fallback").unwrap().calls(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_content_filter_stops_the_route_where_a_context_length_goes_to_a_larger_window() {
    let route = Route::builder("filters")
        .target(Target::new("filters-small", "small").context(8_000))
        .target(Target::new("filters-same", "same").context(8_000))
        .target(Target::new("filters-large", "large").context(200_000))
        .build()
        .unwrap();
    // Too long for 8k: the other 8k target is skipped, the 200k serves.
    let asked = std::cell::RefCell::new(Vec::new());
    let answer = route
        .call(|target| {
            let model = *target.data();
            asked.borrow_mut().push(model);
            async move {
                match model {
                    "large" => Ok(model),
                    _ => Err(bad_request("context_length_exceeded")),
                }
            }
        })
        .await
        .unwrap();
    assert_eq!(answer.value, "large");
    assert_eq!(*asked.borrow(), ["small", "large"]);
    assert_eq!(answer.tried()[0].then(), Then::Larger);
    assert!(matches!(answer.tried()[1].error(), TargetError::Skipped));

    // A content filter: no other target is asked, once.
    let calls = Cell::new(0);
    let failure = route
        .call(|_| {
            calls.set(calls.get() + 1);
            async { Err::<(), _>(bad_request("content_filter")) }
        })
        .await
        .unwrap_err();
    assert_eq!(calls.get(), 1);
    assert_eq!(failure.reason(), RouteStop::Stopped);
    assert_eq!(failure.tried().len(), 1);
    assert_eq!(
        failure.last().unwrap().stop_reason(),
        StopReason::NotRetryable
    );
    assert_eq!(tenacious::Classify::classify(&failure), ErrorClass::Invalid);
    assert_eq!(
        tenacious::Classify::rejected(&failure),
        Some(tenacious::Reject::ContentFilter)
    );
}

#[tokio::test(start_paused = true)]
async fn a_revoked_key_moves_on_and_is_reported_unless_the_rules_say_stop() {
    let route = Route::builder("revoked")
        .target(Target::new("revoked-a", 401_u16))
        .target(Target::new("revoked-b", 200_u16))
        .build()
        .unwrap();
    let op = |target: &Target<u16>| {
        let status = *target.data();
        async move {
            match status {
                200 => Ok(()),
                other => Err(HttpError::new(StatusCode::from_u16(other).unwrap())),
            }
        }
    };
    let answer = route.call(op).await.unwrap();
    assert_eq!(answer.served_by(), "revoked-b");
    let reported = &answer.tried()[0];
    assert_eq!(reported.attempts(), 1);
    assert_eq!(
        tenacious::Classify::classify(reported.error()),
        ErrorClass::Fatal
    );

    let strict = Route::builder("revoked-strict")
        .target(Target::new("revoked-a", 401_u16))
        .target(Target::new("revoked-b", 200_u16))
        .rules(Rules::new().on_class(ErrorClass::Fatal, Then::Stop))
        .build()
        .unwrap();
    let failure = strict.call(op).await.unwrap_err();
    assert_eq!(
        (failure.reason(), failure.tried().len()),
        (RouteStop::Stopped, 1)
    );
}

#[tokio::test(start_paused = true)]
async fn an_open_breaker_skips_its_target_without_an_attempt_and_traffic_returns_after_open_for() {
    let open_for = Duration::from_secs(10);
    let route = Route::builder("breaker")
        .target(
            Target::new("breaker-primary", ())
                .policy(Policy::new().max(1))
                .breaker(Breaker::new().min_throughput(2).open_for(open_for)),
        )
        .target(Target::new("breaker-fallback", ()))
        .build()
        .unwrap();
    let primary_up = Cell::new(false);
    let primary_calls = Cell::new(0);
    let call = || {
        route.call(|target| {
            let primary = target.name() == "breaker-primary";
            if primary {
                primary_calls.set(primary_calls.get() + 1);
            }
            let up = !primary || primary_up.get();
            async move {
                if up {
                    Ok(target_name(primary))
                } else {
                    Err(io::Error::from(io::ErrorKind::ConnectionRefused))
                }
            }
        })
    };
    // The primary fails until its breaker opens.
    for _ in 0..4 {
        assert_eq!(call().await.unwrap().served_by(), "breaker-fallback");
    }
    let before = primary_calls.get();
    let answer = call().await.unwrap();
    assert_eq!(primary_calls.get(), before, "an open breaker: no attempt");
    assert_eq!(answer.tried()[0].stop_reason(), StopReason::CircuitOpen);
    assert_eq!(answer.tried()[0].attempts(), 0);
    assert!(matches!(
        answer.tried()[0].error(),
        TargetError::GuardRefused(_)
    ));
    // The primary recovers: after open_for its probe is a routed call,
    // and traffic is back on it.
    primary_up.set(true);
    tokio::time::advance(open_for).await;
    for _ in 0..3 {
        assert_eq!(call().await.unwrap().served_by(), "breaker-primary");
    }
    let refused = tenacious::stats::snapshot()
        .get("breaker-primary")
        .unwrap()
        .refused();
    assert!(
        refused >= 1,
        "calls the breaker refused are counted: {refused}"
    );
}

fn target_name(primary: bool) -> &'static str {
    if primary {
        "breaker-primary"
    } else {
        "breaker-fallback"
    }
}

#[tokio::test(start_paused = true)]
async fn a_silent_target_is_left_after_one_attempt_not_retried() {
    let route = Route::builder("silent")
        .target(
            Target::new("silent-primary", false)
                .policy(QUICK)
                .silence(Duration::from_secs(2)),
        )
        .target(Target::new("silent-fallback", true))
        .build()
        .unwrap();
    let calls = Cell::new(0);
    let start = Instant::now();
    let answer = route
        .call(|target| {
            let answers = *target.data();
            calls.set(calls.get() + 1);
            async move {
                if !answers {
                    std::future::pending::<()>().await;
                }
                Ok::<_, io::Error>("hello")
            }
        })
        .await
        .unwrap();
    assert_eq!(answer.served_by(), "silent-fallback");
    assert_eq!(
        calls.get(),
        2,
        "one attempt at the silent target, though its policy allows 3"
    );
    assert_eq!(start.elapsed(), Duration::from_secs(2));
    assert!(matches!(answer.tried()[0].error(), TargetError::Silent(_)));
}

#[tokio::test(start_paused = true)]
async fn the_route_s_deadline_holds_whatever_the_targets_do() {
    let route = Route::builder("deadline")
        .target(Target::new("deadline-a", ()).silence(Duration::from_secs(30)))
        .target(Target::new("deadline-b", ()).silence(Duration::from_secs(30)))
        .deadline(Duration::from_secs(5))
        .build()
        .unwrap();
    let start = Instant::now();
    let failure = route
        .call(|_| async {
            std::future::pending::<()>().await;
            Ok::<(), io::Error>(())
        })
        .await
        .unwrap_err();
    assert_eq!(start.elapsed(), Duration::from_secs(5));
    assert_eq!(failure.reason(), RouteStop::Deadline);
    assert_eq!(
        failure.tried().len(),
        1,
        "no target started past the deadline"
    );

    // A zero deadline: nothing is tried, nothing hangs.
    let none = Route::builder("deadline-zero")
        .target(Target::new("deadline-a", ()).silence(Duration::from_secs(30)))
        .deadline(Duration::ZERO)
        .build()
        .unwrap();
    let failure = none
        .call(|_| async { Ok::<(), io::Error>(()) })
        .await
        .unwrap_err();
    assert_eq!(
        (failure.reason(), failure.tried().len()),
        (RouteStop::Deadline, 0)
    );
    assert_eq!(
        tenacious::Classify::classify(&failure),
        ErrorClass::Transient
    );
}

#[tokio::test(start_paused = true)]
async fn a_call_that_may_have_been_applied_is_not_sent_to_another_target() {
    let route = Route::builder("applied")
        .target(Target::new("applied-a", ()).policy(Policy::new().idempotent(false)))
        .target(Target::new("applied-b", ()))
        .build()
        .unwrap();
    let (calls, failure) = reset_everywhere(&route).await;
    assert_eq!(calls, 1);
    assert_eq!(
        failure.last().unwrap().stop_reason(),
        StopReason::NotIdempotent
    );
    assert_eq!(failure.reason(), RouteStop::Stopped);
}

#[test]
fn a_target_name_s_guards_are_shared_and_other_settings_are_refused() {
    let build = |open_for: u64| {
        Route::<()>::builder("shared")
            .target(
                Target::new("shared-model", ())
                    .breaker(Breaker::new().open_for(Duration::from_secs(open_for))),
            )
            .build()
    };
    let first = build(10).unwrap();
    let again = build(10).unwrap();
    assert!(std::ptr::eq(
        first.targets()[0].get_breaker().unwrap(),
        again.targets()[0].get_breaker().unwrap()
    ));
    assert_eq!(
        build(20).unwrap_err(),
        RouteError::Conflict("shared-model".into())
    );
    assert_eq!(
        Route::<()>::builder("empty").build().unwrap_err(),
        RouteError::NoTargets
    );
    assert_eq!(
        Route::builder("twice")
            .target(Target::new("twice-a", ()))
            .target(Target::new("twice-a", ()))
            .build()
            .unwrap_err(),
        RouteError::Duplicate("twice-a".into())
    );
}

#[tokio::test(start_paused = true)]
async fn one_budget_over_the_route_pays_every_target_s_retries() {
    let route = Route::builder("budgeted")
        .target(Target::new("budgeted-a", ()).policy(QUICK))
        .target(Target::new("budgeted-b", ()).policy(QUICK))
        .budget(RetryBudget::with_capacity(10)) // two retries
        .build()
        .unwrap();
    let (calls, failure) = reset_everywhere(&route).await;
    // Two retries in all, not two per target: 1 + 2 at a, 1 at b.
    assert_eq!(calls, 4);
    assert_eq!(failure.tried()[1].stop_reason(), StopReason::Budget);
    assert_eq!(failure.reason(), RouteStop::NoTargetLeft);
}

#[tokio::test(start_paused = true)]
async fn hostile_limits_never_hang_a_route() {
    // A zero silence leaves every target at once; a deadline of
    // `Duration::MAX` is no deadline.
    let route = Route::builder("hostile")
        .target(Target::new("hostile-a", ()).silence(Duration::ZERO))
        .target(Target::new("hostile-b", ()).silence(Duration::ZERO))
        .deadline(Duration::MAX)
        .build()
        .unwrap();
    let calls = Cell::new(0);
    let start = Instant::now();
    let failure = route
        .call(|_| {
            calls.set(calls.get() + 1);
            async {
                std::future::pending::<()>().await;
                Ok::<(), io::Error>(())
            }
        })
        .await
        .unwrap_err();
    assert_eq!(start.elapsed(), Duration::ZERO);
    assert_eq!(calls.get(), 2);
    assert_eq!(failure.reason(), RouteStop::NoTargetLeft);
    assert!(
        failure
            .tried()
            .iter()
            .all(|tried| matches!(tried.error(), TargetError::Silent(_)))
    );
}

#[tokio::test(start_paused = true)]
async fn a_learnt_silence_leaves_a_quick_target_after_seconds_and_never_cuts_a_slow_steady_one() {
    let route = Route::builder("learnt")
        .target(
            Target::new("learnt-quick", Duration::from_millis(800))
                .silence(Duration::from_secs(30))
                .learn_silence(Duration::from_millis(500)),
        )
        .target(Target::new("learnt-fallback", Duration::ZERO))
        .build()
        .unwrap();
    let hang = &Cell::new(false);
    let call = |n: u32| {
        route.call(move |target| {
            let usual = *target.data();
            let hangs = hang.get() && target.name() == "learnt-quick";
            async move {
                if hangs {
                    std::future::pending::<()>().await;
                }
                // 0.8 s ± 0.2 s
                let jitter = if n.is_multiple_of(2) { 200 } else { 0 };
                tokio::time::sleep(
                    (usual + Duration::from_millis(100))
                        .saturating_sub(Duration::from_millis(jitter)),
                )
                .await;
                Ok::<_, io::Error>(n)
            }
        })
    };
    for n in 0..20 {
        assert_eq!(call(n).await.unwrap().served_by(), "learnt-quick");
    }
    let quick = &route.targets()[0];
    let smoothed = quick.smoothed_answer().unwrap();
    assert!(
        smoothed > Duration::from_millis(600) && smoothed < Duration::from_secs(1),
        "{smoothed:?}"
    );
    // Now it goes silent: left after a second or two, not 30.
    hang.set(true);
    let start = Instant::now();
    let answer = call(99).await.unwrap();
    assert_eq!(answer.served_by(), "learnt-fallback");
    let left_after = start.elapsed();
    assert!(
        left_after >= Duration::from_millis(900) && left_after <= Duration::from_secs(3),
        "left after {left_after:?}"
    );

    // A slow but steady target (5 s each time) is never cut.
    let slow = Route::builder("learnt-slow")
        .target(
            Target::new("learnt-steady", ())
                .silence(Duration::from_secs(30))
                .learn_silence(Duration::from_millis(500)),
        )
        .target(Target::new("learnt-other", ()))
        .build()
        .unwrap();
    for _ in 0..20 {
        let answer = slow
            .call(|_| async {
                tokio::time::sleep(Duration::from_secs(5)).await;
                Ok::<_, io::Error>(())
            })
            .await
            .unwrap();
        assert_eq!(answer.served_by(), "learnt-steady");
    }
}

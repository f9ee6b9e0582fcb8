//! Decision retry: re-ask with the latest error only, then degrade.
#![cfg(feature = "agent")]
use std::cell::Cell;

use tenacious_agent::agent::{Decision, DecisionRetry, Degraded, Reask};

const TASK: &str = "Reply with a JSON object {\"city\": string}.";

/// The messages a chat model would receive for this try: the task, then on
/// a re-ask the rejected answer and the feedback on it.
fn messages(reask: Reask<'_, String, String>) -> Vec<String> {
    let mut messages = vec![TASK.to_owned()];
    if let (Some(output), Some(feedback)) = (reask.last_output(), reask.feedback()) {
        messages.push(output.clone());
        messages.push(feedback);
    }
    messages
}

fn validate(text: &String) -> Result<String, String> {
    text.strip_prefix("{\"city\":\"")
        .and_then(|rest| rest.strip_suffix("\"}"))
        .map(str::to_owned)
        .ok_or_else(|| format!("not the object asked for: {text}"))
}

#[test]
fn a_valid_first_answer_is_taken_without_a_reask() {
    let mut generations = 0;
    let decision = DecisionRetry::new().run(
        |reask| {
            generations += 1;
            assert!(!reask.is_reask());
            assert_eq!(reask.try_number(), 1);
            assert!(reask.feedback().is_none());
            "{\"city\":\"Paris\"}".to_owned()
        },
        validate,
    );
    assert_eq!(
        decision,
        Decision::Valid {
            value: "Paris".to_owned(),
            output: "{\"city\":\"Paris\"}".to_owned(),
            tries: 1
        }
    );
    assert_eq!(generations, 1);
}

#[test]
fn each_reask_carries_only_the_latest_error_so_the_context_does_not_grow() {
    // Three rejected answers of equal length, then a valid one.
    let answers = ["city=Rome", "city=Oslo", "city=Lima", "{\"city\":\"Kyiv\"}"];
    let mut seen: Vec<Vec<String>> = Vec::new();
    let decision = DecisionRetry::new().max_reasks(3).run(
        |reask| {
            let messages = messages(reask);
            let answer = answers[seen.len()].to_owned();
            seen.push(messages);
            answer
        },
        validate,
    );
    assert_eq!(decision.tries(), 4);
    assert_eq!(decision.into_result().unwrap(), "Kyiv");

    assert_eq!(seen[0], [TASK]);
    let sizes: Vec<(usize, usize)> = seen[1..]
        .iter()
        .map(|m| (m.len(), m.iter().map(String::len).sum()))
        .collect();
    // Every re-ask has the same shape and the same size...
    assert_eq!(sizes, [sizes[0]; 3]);
    assert_eq!(sizes[0].0, 3);
    // ...because it holds the latest rejected answer and its error only.
    for (reask, previous) in seen[1..].iter().zip(answers) {
        assert_eq!(reask[1], previous);
        assert_eq!(
            reask[2],
            format!(
                "Your previous answer was rejected: not the object asked for: {previous}. Answer again, fixing that."
            )
        );
        let earlier = answers.iter().take_while(|a| **a != previous);
        for stale in earlier {
            assert!(
                !reask.concat().contains(stale),
                "{stale} lingers in {reask:?}"
            );
        }
    }
}

#[test]
fn after_two_reasks_the_result_is_degraded_and_says_why() {
    let generations = Cell::new(0);
    let validations = Cell::new(0);
    let decision = DecisionRetry::new().run(
        |reask| {
            generations.set(generations.get() + 1);
            assert_eq!(reask.try_number(), generations.get());
            format!("answer {}", reask.try_number())
        },
        |text: &String| {
            validations.set(validations.get() + 1);
            validate(text)
        },
    );
    assert_eq!((generations.get(), validations.get()), (3, 3));
    let Decision::Degraded(degraded) = decision else {
        panic!("nothing validates")
    };
    assert_eq!(degraded.tries, 3);
    assert_eq!(degraded.max_reasks, 2);
    assert_eq!(degraded.last_output, "answer 3");
    assert_eq!(degraded.last_error, "not the object asked for: answer 3");
    assert_eq!(
        degraded.reason(),
        "still invalid after 2 re-asks (3 tries): not the object asked for: answer 3"
    );
}

#[test]
fn with_reasks_off_one_invalid_answer_degrades() {
    let decision = DecisionRetry::new()
        .max_reasks(0)
        .run(|_| "nope".to_owned(), validate);
    let degraded: Degraded<String, String> = decision.into_result().unwrap_err();
    assert_eq!(degraded.tries, 1);
    assert_eq!(
        degraded.to_string(),
        "invalid, and re-asking is off (1 try): not the object asked for: nope"
    );

    let one = DecisionRetry::new()
        .max_reasks(1)
        .run(|_| "nope".to_owned(), validate);
    assert_eq!(
        one.into_result().unwrap_err().reason(),
        "still invalid after 1 re-ask (2 tries): not the object asked for: nope"
    );
}

#[test]
fn a_generation_error_stops_at_once() {
    let mut generations = 0;
    let outcome: Result<Decision<String, String, String>, &str> = DecisionRetry::new().try_run(
        |reask| {
            generations += 1;
            if reask.is_reask() {
                Err("model overloaded")
            } else {
                Ok("garbage".to_owned())
            }
        },
        validate,
    );
    assert_eq!(outcome.unwrap_err(), "model overloaded");
    assert_eq!(generations, 2);
}

#[tokio::test(start_paused = true)]
async fn the_async_forms_behave_alike() {
    let decide = DecisionRetry::new();
    let mut seen = Vec::new();
    let decision = decide
        .run_async(
            async |reask: Reask<'_, String, String>| {
                seen.push(reask.last_error().cloned());
                tokio::task::yield_now().await;
                if reask.try_number() == 3 {
                    "{\"city\":\"Lyon\"}".to_owned()
                } else {
                    format!("try {}", reask.try_number())
                }
            },
            validate,
        )
        .await;
    assert_eq!(decision.tries(), 3);
    assert!(decision.is_valid());
    assert_eq!(
        seen,
        [
            None,
            Some("not the object asked for: try 1".to_owned()),
            Some("not the object asked for: try 2".to_owned())
        ]
    );

    let outcome: Result<Decision<String, String, String>, u16> = decide
        .try_run_async(
            async |reask: Reask<'_, String, String>| {
                if reask.is_reask() {
                    Err(503)
                } else {
                    Ok("x".to_owned())
                }
            },
            validate,
        )
        .await;
    assert_eq!(outcome.unwrap_err(), 503);

    let degraded = decide
        .run_async(
            async |_: Reask<'_, String, String>| "x".to_owned(),
            validate,
        )
        .await;
    assert_eq!(degraded.tries(), 3);
    assert!(!degraded.is_valid());
}

#[test]
fn defaults() {
    assert_eq!(DecisionRetry::default(), DecisionRetry::DEFAULT);
    assert_eq!(DecisionRetry::new().get_max_reasks(), 2);
}

/// An agent task that decides with [`DecisionRetry::run_async`] can be
/// spawned on a multi-thread runtime: the future is `Send` when the
/// generation's is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_async_forms_can_be_spawned_on_a_multi_thread_runtime() {
    fn assert_send<F: Future + Send>(future: F) -> F {
        future
    }
    let decision = tokio::spawn(assert_send(async {
        DecisionRetry::new()
            .run_async(
                async |reask: Reask<'_, String, String>| {
                    tokio::task::yield_now().await;
                    if reask.is_reask() {
                        "{\"city\":\"Turin\"}".to_owned()
                    } else {
                        "Turin".to_owned()
                    }
                },
                validate,
            )
            .await
    }))
    .await
    .unwrap();
    assert_eq!(decision.tries(), 2);
    assert_eq!(decision.into_result().unwrap(), "Turin");

    let outcome = tokio::spawn(assert_send(async {
        DecisionRetry::new()
            .try_run_async(
                async |reask: Reask<'_, String, String>| {
                    tokio::task::yield_now().await;
                    if reask.try_number() < 3 {
                        Ok(format!("try {}", reask.try_number()))
                    } else {
                        Err(503_u16)
                    }
                },
                validate,
            )
            .await
    }))
    .await
    .unwrap();
    assert_eq!(outcome.unwrap_err(), 503);
}

#[test]
fn an_unbounded_reask_limit_neither_overflows_nor_changes_the_loop() {
    let decide = DecisionRetry::new().max_reasks(u32::MAX);
    assert_eq!(decide.get_max_reasks(), u32::MAX);
    let mut generations = 0;
    let decision = decide.run(
        |reask| {
            generations += 1;
            assert_eq!(reask.try_number(), generations);
            if reask.try_number() == 5 {
                "{\"city\":\"Bern\"}".to_owned()
            } else {
                format!("try {}", reask.try_number())
            }
        },
        validate,
    );
    assert_eq!(decision.tries(), 5);
    assert_eq!(decision.into_result().unwrap(), "Bern");
    assert_eq!(generations, 5);
}

#[tokio::test(start_paused = true)]
async fn an_unbounded_reask_limit_ends_when_the_generation_gives_up() {
    // A model that keeps answering wrongly until its own quota ends: the
    // loop ends with the generation's error, not by counting to u32::MAX.
    let outcome = DecisionRetry::new()
        .max_reasks(u32::MAX)
        .try_run_async(
            async |reask: Reask<'_, String, String>| {
                tokio::task::yield_now().await;
                if reask.try_number() > 100 {
                    Err("quota used up")
                } else {
                    Ok(format!("try {}", reask.try_number()))
                }
            },
            validate,
        )
        .await;
    assert_eq!(outcome.unwrap_err(), "quota used up");
}

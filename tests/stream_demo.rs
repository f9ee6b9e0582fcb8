//! The story of the stream demo (`examples/stream.rs`), checked on the run
//! it makes — the same modules, the same mock server on loopback, the same
//! seeded faults: with resume every answer comes whole and in order; no
//! token ever reaches the consumer twice; without resume a drop after the
//! first token ends the stream with partial output, counted right, and
//! the model is told so; every failure before the first token (a stall,
//! an in-band error, a 529 or 503) costs one attempt and is retried.
//!
//! It asserts counts, never times: the run's timers are long enough
//! (`first_item` 1 s against a first token within tens of milliseconds)
//! that only the injected stalls run out of them, however busy the machine.

use std::time::Duration;

use tenacious::StopReason;
use tenacious::agent::Status;

// The modules the example runs, not a copy of them.
#[path = "../examples/stream"]
#[allow(
    dead_code,
    reason = "shared with examples/stream.rs, which uses what this test does not"
)]
mod stream {
    pub mod chat;
    pub mod cli;
    pub mod faults;
    pub mod report;
    pub mod runner;
    pub mod server;
}

use stream::chat::ChatEvent;
use stream::cli::{Command, Config};
use stream::faults::{Fault, PROMPTS, plan};
use stream::report::{AttemptEnd, PassReport, PromptReport, Report};
use stream::runner::run_demo;

/// The example's run for `seed`, with patient timers: a stall still runs
/// out of `first_item`; nothing else comes near a limit.
fn run(seed: u64) -> Report {
    let config = Config {
        seed,
        first_item: Duration::from_secs(1),
        idle: Duration::from_secs(2),
        deadline: Duration::from_secs(30),
    };
    let mut prompts = 0;
    let report = run_demo(&config, |progress| {
        if let stream::runner::Progress::Prompt(_) = progress {
            prompts += 1;
        }
    });
    assert_eq!(
        prompts,
        2 * PROMPTS.len(),
        "each prompt reported once per pass"
    );
    report
}

/// What a prompt's plan says the stream without resume ends with: the
/// attempt (0-based) and the tokens of the first drop, if any.
fn first_drop(faults: &[Fault]) -> Option<(usize, usize)> {
    faults
        .iter()
        .enumerate()
        .find_map(|(i, fault)| match fault {
            Fault::Drop { after } => Some((i, *after)),
            _ => None,
        })
}

/// What holds for any pass: the consumer got each token once, in order,
/// after one `message_start`, and never a keepalive; the attempts are
/// numbered 1, 2, ...; the server saw one request per attempt, met with
/// the prompt's plan in order.
fn check_pass(pass: &PassReport, plans: &[Vec<Fault>]) {
    let mut served = pass.served.iter();
    for report in &pass.prompts {
        let context = format!("prompt {} (resume: {})", report.prompt + 1, pass.resume);
        let ids = report.token_ids();
        let expected: Vec<u32> = (1..=u32::try_from(ids.len()).unwrap()).collect();
        assert_eq!(ids, expected, "{context}: every token once, in order");
        assert!(
            matches!(report.delivered.first(), Some(ChatEvent::Start { .. })),
            "{context}: message_start first"
        );
        let starts = report
            .delivered
            .iter()
            .filter(|event| matches!(event, ChatEvent::Start { .. }))
            .count();
        assert_eq!(starts, 1, "{context}: message_start shown once");
        assert!(
            !report.delivered.contains(&ChatEvent::Ping),
            "{context}: keepalives are never delivered"
        );
        let numbers: Vec<u32> = report.attempts.iter().map(|a| a.number).collect();
        let expected: Vec<u32> = (1..=u32::try_from(numbers.len()).unwrap()).collect();
        assert_eq!(
            numbers, expected,
            "{context}: Attempt::current() in the opener"
        );
        let faults = &plans[report.prompt];
        for (i, attempt) in report.attempts.iter().enumerate() {
            let request = served.next().expect("one request per attempt");
            assert_eq!(request.prompt, Some(report.prompt), "{context}");
            assert_eq!(request.request, i + 1, "{context}");
            assert_eq!(request.fault, faults.get(i).copied(), "{context}");
            assert_eq!(
                request.last_event_id, attempt.resumed_after,
                "{context}: the server got the opener's Last-Event-ID"
            );
            // Each fault shows in the attempt it was met in.
            let end = attempt.end();
            match faults.get(i) {
                Some(Fault::Stall) => assert_eq!(end, AttemptEnd::TimedOut, "{context}"),
                Some(Fault::Overloaded) => assert!(
                    matches!(
                        end,
                        AttemptEnd::Failed {
                            variant: "Overloaded",
                            ..
                        }
                    ),
                    "{context}: {end:?}"
                ),
                Some(Fault::Status(status)) => {
                    let variant = format!("Status{status}");
                    assert!(
                        matches!(end, AttemptEnd::Failed { variant: v, .. } if v == variant),
                        "{context}: {end:?}"
                    );
                }
                Some(Fault::Drop { .. }) => assert!(
                    matches!(
                        end,
                        AttemptEnd::Failed {
                            variant: "Transport",
                            ..
                        }
                    ),
                    "{context}: {end:?}"
                ),
                None => assert_eq!(end, AttemptEnd::Complete, "{context}"),
            }
        }
    }
    assert!(served.next().is_none(), "no request but the attempts'");
}

/// With resume: every answer whole, one attempt per fault and one more,
/// each reconnect from the last token delivered.
fn check_resumed(pass: &PassReport, plans: &[Vec<Fault>]) {
    assert!(pass.resume);
    for report in &pass.prompts {
        let context = format!("prompt {}, resumed", report.prompt + 1);
        let prompt = &PROMPTS[report.prompt];
        assert!(report.complete(), "{context}: {:?}", report.failure);
        assert_eq!(report.text(), prompt.answer(), "{context}");
        assert_eq!(report.token_ids().len(), prompt.tokens.len(), "{context}");
        let faults = &plans[report.prompt];
        assert_eq!(report.attempts.len(), faults.len() + 1, "{context}");
        // Each attempt resumes after the last token the ones before sent.
        let mut last: Option<String> = None;
        for attempt in &report.attempts {
            assert_eq!(attempt.resumed_after, last, "{context}");
            if let Some(id) = attempt.tokens.last() {
                last = Some(id.clone());
            }
        }
        // Those a drop cut short: the server sent each token once.
        let sent: usize = report.attempts.iter().map(|a| a.tokens.len()).sum();
        assert_eq!(sent, prompt.tokens.len(), "{context}");
    }
}

/// Without resume: a drop after the first token ends the stream, with the
/// items delivered counted, and the model told not to call again.
fn check_default(pass: &PassReport, plans: &[Vec<Fault>]) {
    assert!(!pass.resume);
    for report in &pass.prompts {
        let context = format!("prompt {}, default", report.prompt + 1);
        let prompt = &PROMPTS[report.prompt];
        let faults = &plans[report.prompt];
        let Some((at, after)) = first_drop(faults) else {
            assert!(report.complete(), "{context}: {:?}", report.failure);
            assert_eq!(report.text(), prompt.answer(), "{context}");
            assert_eq!(report.attempts.len(), faults.len() + 1, "{context}");
            continue;
        };
        check_partial(report, at, after);
    }
}

/// `report` ended with partial output at attempt `at` (0-based), after
/// `after` tokens.
fn check_partial(report: &PromptReport, at: usize, after: usize) {
    let context = format!("prompt {}, default", report.prompt + 1);
    let prompt = &PROMPTS[report.prompt];
    assert_eq!(report.attempts.len(), at + 1, "{context}: never reopened");
    assert_eq!(report.token_ids().len(), after, "{context}");
    assert_eq!(report.text(), prompt.tokens[..after].concat(), "{context}");
    let failure = report.failure.as_ref().expect("a partial stream fails");
    assert_eq!(
        failure.stop_reason(),
        StopReason::PartialOutput,
        "{context}"
    );
    // The items the consumer has: `message_start` and the tokens.
    let items = u64::try_from(report.delivered.len()).unwrap();
    assert_eq!(items, 1 + u64::try_from(after).unwrap(), "{context}");
    assert_eq!(failure.delivered(), items, "{context}");
    let observation = report.observation().expect("a failure is observed");
    assert_eq!(observation.status, Status::PartialOutput, "{context}");
    assert_eq!(observation.delivered, Some(items), "{context}");
    assert_eq!(
        observation.attempts,
        u32::try_from(at + 1).unwrap(),
        "{context}"
    );
    assert_eq!(observation.tool_call_id, report.call_id());
    let json = serde_json::to_value(&observation).unwrap();
    assert_eq!(json["status"], "partial_output");
    assert_eq!(json["delivered"], items);
}

/// The statistics agree with the attempts: one record per policy, one call
/// per prompt, the errors by variant as the faults met.
fn check_stats(report: &Report) {
    for (name, resume) in [("chat", false), ("chat_resumed", true)] {
        let pass = report.pass(resume);
        let stats = report.stats.get(name).expect("the record counted");
        assert_eq!(stats.calls(), 4, "{name}");
        let attempts: usize = pass.prompts.iter().map(|p| p.attempts.len()).sum();
        assert_eq!(stats.attempts(), u64::try_from(attempts).unwrap(), "{name}");
        let partial = pass.prompts.iter().filter(|p| p.failure.is_some()).count();
        assert_eq!(
            stats.gave_up(StopReason::PartialOutput),
            u64::try_from(partial).unwrap(),
            "{name}"
        );
        assert_eq!(
            stats.gave_up_total(),
            stats.gave_up(StopReason::PartialOutput)
        );
        // Every failed attempt's variant, as the attempts ended.
        for variant in [
            "FirstItem",
            "Overloaded",
            "Status529",
            "Status503",
            "Transport",
        ] {
            let met = pass
                .prompts
                .iter()
                .flat_map(|p| &p.attempts)
                .filter(|a| match a.end() {
                    AttemptEnd::TimedOut => variant == "FirstItem",
                    AttemptEnd::Failed { variant: v, .. } => v == variant,
                    AttemptEnd::Complete => false,
                })
                .count();
            let counted: u64 = stats
                .errors()
                .iter()
                .filter(|e| e.variant == variant)
                .map(|e| e.count)
                .sum();
            assert_eq!(counted, u64::try_from(met).unwrap(), "{name}: {variant}");
        }
    }
}

fn check_story(report: &Report) {
    assert_eq!(report.plans, plan(report.config.seed));
    check_pass(report.pass(false), &report.plans);
    check_pass(report.pass(true), &report.plans);
    check_default(report.pass(false), &report.plans);
    check_resumed(report.pass(true), &report.plans);
    check_stats(report);
}

#[test]
fn the_default_seed_tells_the_story() {
    let report = run(Config::DEFAULT.seed);
    check_story(&report);
    // What the README and the example's docs say of this seed: a stall,
    // an in-band error retried, a 529 and a 503, two drops mid-way.
    let default = report.pass(false);
    let partial: Vec<(usize, u64)> = default
        .prompts
        .iter()
        .filter_map(|p| Some((p.prompt + 1, p.failure.as_ref()?.delivered())))
        .collect();
    assert_eq!(partial, [(2, 8), (4, 4)], "prompts 2 and 4 end partial");
    assert_eq!(default.prompts[3].attempts.len(), 2, "after a 529");
    let resumed = report.pass(true);
    let overloaded = |pass: &PassReport| {
        pass.prompts
            .iter()
            .flat_map(|p| &p.attempts)
            .filter(|a| {
                matches!(
                    a.end(),
                    AttemptEnd::Failed {
                        variant: "Overloaded",
                        ..
                    }
                )
            })
            .count()
    };
    assert_eq!(overloaded(default), 1, "prompt 3's, retried");
    assert_eq!(overloaded(resumed), 2, "and prompt 2's, after its drop");
    let second = &resumed.prompts[1].attempts[1];
    assert_eq!(second.resumed_after.as_deref(), Some("7"));
    assert!(
        second.tokens.is_empty(),
        "the in-band error came before any token"
    );
}

#[test]
fn another_seed_a_resumed_attempt_stalls() {
    // Seed 20: prompt 1 drops after 6 tokens, then its resumed attempt
    // only pings: `first_item` bounds every attempt, resumed ones too.
    let report = run(20);
    check_story(&report);
    let prompt = &report.pass(true).prompts[0];
    assert_eq!(report.plans[0], [Fault::Drop { after: 6 }, Fault::Stall]);
    assert_eq!(prompt.attempts[1].end(), AttemptEnd::TimedOut);
    assert_eq!(prompt.attempts[1].resumed_after.as_deref(), Some("6"));
    assert_eq!(prompt.attempts[2].resumed_after.as_deref(), Some("6"));
}

#[test]
fn every_seed_deals_every_fault() {
    for seed in 0..2_000 {
        let plans = plan(seed);
        assert_eq!(plans.len(), PROMPTS.len());
        let has = |kind: fn(&Fault) -> bool| plans.iter().flatten().any(kind);
        assert!(has(|f| *f == Fault::Stall), "seed {seed}");
        assert!(has(|f| *f == Fault::Overloaded), "seed {seed}");
        assert!(
            has(|f| matches!(f, Fault::Status(529 | 503))),
            "seed {seed}"
        );
        assert!(has(|f| matches!(f, Fault::Drop { .. })), "seed {seed}");
        for (faults, prompt) in plans.iter().zip(&PROMPTS) {
            assert!((1..=2).contains(&faults.len()), "seed {seed}");
            for fault in faults {
                if let Fault::Drop { after } = fault {
                    assert!((2..=prompt.tokens.len() - 2).contains(after), "seed {seed}");
                }
            }
        }
    }
}

#[test]
fn the_command_line() {
    let parse = |args: &[&str]| Command::parse(args.iter().map(|a| (*a).to_owned()));
    assert_eq!(parse(&[]), Ok(Command::Run(Config::DEFAULT)));
    let seven = Config {
        seed: 7,
        ..Config::DEFAULT
    };
    assert_eq!(parse(&["--seed", "7"]), Ok(Command::Run(seven)));
    assert_eq!(parse(&["--seed=7"]), Ok(Command::Run(seven)));
    assert_eq!(parse(&["--help"]), Ok(Command::Help));
    assert!(parse(&["--seed"]).is_err());
    assert!(parse(&["--seed", "x"]).is_err());
    assert!(parse(&["--fast"]).is_err());
}

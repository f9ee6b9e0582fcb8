//! Which idempotency key a `#[retry]` call sends: random at the top level,
//! derived from its arguments when nested, named by `key = ...` always.
use std::cell::RefCell;
use std::io;

use tenacious::{Attempt, IdempotencyKey, retry};

thread_local! {
    static SEEN: RefCell<Vec<(&'static str, IdempotencyKey)>> = const { RefCell::new(Vec::new()) };
}

fn record(name: &'static str) -> Result<(), io::Error> {
    let key = Attempt::current().unwrap().idempotency_key();
    SEEN.with(|seen| seen.borrow_mut().push((name, key)));
    Ok(())
}

fn seen() -> Vec<(&'static str, IdempotencyKey)> {
    SEEN.with(|seen| seen.borrow_mut().drain(..).collect())
}

#[retry(max = 1)]
fn lookup(query: &str) -> Result<(), io::Error> {
    let _ = query;
    record("lookup")
}

/// A payload whose type is not `Hash`.
struct Payload(f64);

#[retry(max = 1)]
fn send(payload: &Payload) -> Result<(), io::Error> {
    let _ = payload.0;
    record("send")
}

#[retry(max = 1, key = order_id)]
fn place(order_id: &str, note: &Payload) -> Result<(), io::Error> {
    let _ = note.0;
    record("place")
}

#[retry(max = 3, base = "1ns")]
fn outer(order_id: &str) -> Result<(), io::Error> {
    let attempt = Attempt::current().unwrap().number();
    if attempt == 1 {
        // Only the first attempt makes these calls.
        lookup("warm the cache")?;
        send(&Payload(1.0))?;
    }
    lookup("rust")?;
    lookup("rust")?;
    lookup("tokio")?;
    send(&Payload(2.0))?;
    place(order_id, &Payload(3.0))?;
    if attempt < 3 {
        return Err(io::Error::from(io::ErrorKind::TimedOut));
    }
    Ok(())
}

#[test]
fn nested_keys_follow_the_arguments_and_key_names_the_call() {
    outer("ord-7").unwrap();
    let seen = seen();
    let attempt_calls = |skip: usize, take: usize| seen[skip..skip + take].to_vec();
    // Attempt 1 made 7 calls, attempts 2 and 3 made 5 each.
    assert_eq!(seen.len(), 7 + 5 + 5);
    let first = attempt_calls(2, 5);
    let second = attempt_calls(7, 5);
    let third = attempt_calls(12, 5);
    // The lookups keep their keys though attempt 1 made two more calls.
    assert_eq!(first[..3], second[..3]);
    assert_eq!(second, third);
    // Equal arguments are one request; other arguments another.
    assert_eq!(first[0].1, first[1].1);
    assert_ne!(first[0].1, first[2].1);
    // `key = order_id` names the call wherever it is made.
    for attempt in [&first, &second, &third] {
        assert_eq!(attempt[4].1, IdempotencyKey::derive("place", "ord-7"));
    }
    // `send`'s payload cannot be hashed: it is told apart by its place among
    // such calls, which attempt 1's extra `send` shifted.
    assert_ne!(first[3].1, second[3].1);
    assert_eq!(second[3].1, third[3].1);
}

#[test]
fn top_level_calls_get_keys_of_their_own_unless_named() {
    lookup("rust").unwrap();
    lookup("rust").unwrap();
    place("ord-9", &Payload(0.0)).unwrap();
    place("ord-9", &Payload(1.0)).unwrap();
    let seen = seen();
    assert_ne!(seen[0].1, seen[1].1, "two top-level calls shared a key");
    assert_eq!(seen[2].1, seen[3].1);
    assert_eq!(seen[2].1, IdempotencyKey::derive("place", "ord-9"));
}

/// An argument whose `Hash` asks for the attempt, as user code may.
struct Inquisitive;

impl std::hash::Hash for Inquisitive {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        // Runs while the nested call's key is derived: it must see the
        // outer attempt without a second borrow of its frame being made
        // (which Miri would report).
        let number = Attempt::current().map_or(0, |a| a.number());
        state.write_u32(number);
    }
}

#[retry(max = 1)]
fn nested_with_inquisitive_argument(arg: &Inquisitive) -> Result<(), io::Error> {
    let _ = arg;
    record("inquisitive")
}

#[retry(max = 2, base = "1ns")]
fn outer_of_inquisitive() -> Result<(), io::Error> {
    nested_with_inquisitive_argument(&Inquisitive)?;
    if Attempt::current().unwrap().number() == 1 {
        return Err(io::Error::from(io::ErrorKind::TimedOut));
    }
    Ok(())
}

#[test]
fn an_argument_whose_hash_asks_for_the_attempt_is_fingerprinted_safely() {
    outer_of_inquisitive().unwrap();
    let seen = seen();
    // The argument hashed the outer attempt's number, so each outer attempt
    // gives it another key: what it asks for changed.
    assert_eq!(seen.len(), 2);
    assert_ne!(seen[0].1, seen[1].1);
}

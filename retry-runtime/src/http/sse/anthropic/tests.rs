//! The tests of Anthropic's stream.
use std::convert::Infallible;
use std::task::{Context, Poll};

use futures_core::Stream;

use super::{Error, Event, events};
use crate::stream::{ItemKind, StreamItem, Usage};
use crate::{Classify, ErrorClass, Reject};

/// Reads `body` to its end, synchronously (the stream never waits).
fn read(body: &[u8]) -> Vec<Result<Event, Error<Infallible>>> {
    let body = futures_util::stream::iter([Ok::<_, Infallible>(body)]);
    let mut stream = std::pin::pin!(events(body));
    let mut cx = Context::from_waker(std::task::Waker::noop());
    let mut items = Vec::new();
    loop {
        match stream.as_mut().poll_next(&mut cx) {
            Poll::Ready(Some(item)) => items.push(item),
            Poll::Ready(None) => return items,
            Poll::Pending => unreachable!("an iterator's stream never waits"),
        }
    }
}

fn ok(items: Vec<Result<Event, Error<Infallible>>>) -> Vec<Event> {
    items
        .into_iter()
        .map(|item| item.unwrap_or_else(|error| panic!("{error}")))
        .collect()
}

fn last_error(items: &[Result<Event, Error<Infallible>>]) -> &Error<Infallible> {
    match items.last() {
        Some(Err(error)) => error,
        other => panic!("not an error: {other:?}"),
    }
}

/// `(event, data)` pairs as a body.
fn body(events: &[(&str, &str)]) -> Vec<u8> {
    events
        .iter()
        .map(|(event, data)| format!("event: {event}\ndata: {data}\n\n"))
        .collect::<String>()
        .into_bytes()
}

const START: (&str, &str) = (
    "message_start",
    r#"{"type":"message_start","message":{"id":"msg_01","type":"message","role":"assistant","content":[],"model":"claude-opus-4-1","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":472,"cache_creation_input_tokens":10,"cache_read_input_tokens":20,"output_tokens":2}}}"#,
);
const BLOCK: (&str, &str) = (
    "content_block_start",
    r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
);
const PING: (&str, &str) = ("ping", r#"{"type": "ping"}"#);
const BLOCK_STOP: (&str, &str) = (
    "content_block_stop",
    r#"{"type":"content_block_stop","index":0}"#,
);
const DELTA_END: (&str, &str) = (
    "message_delta",
    r#"{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":15}}"#,
);
const STOP: (&str, &str) = ("message_stop", r#"{"type":"message_stop"}"#);

fn text(text: &str) -> String {
    format!(
        r#"{{"type":"content_block_delta","index":0,"delta":{{"type":"text_delta","text":{text:?}}}}}"#
    )
}

#[test]
fn a_whole_message_its_kinds_text_usage_and_finish() {
    let (a, b) = (text("Hello"), text("!"));
    let events = ok(read(&body(&[
        START,
        BLOCK,
        PING,
        ("content_block_delta", &a),
        ("content_block_delta", &b),
        BLOCK_STOP,
        DELTA_END,
        STOP,
    ])));
    use ItemKind::{Content, Keepalive, Preamble};
    let kinds: Vec<ItemKind> = events.iter().map(StreamItem::kind).collect();
    assert_eq!(
        kinds,
        [
            Preamble, Preamble, Keepalive, Content, Content, Preamble, Preamble, Content
        ]
    );
    assert_eq!(
        events
            .iter()
            .filter_map(StreamItem::text)
            .collect::<String>(),
        "Hello!"
    );
    assert_eq!(events[0].usage(), Some(Usage::new(502, 0)));
    assert_eq!(events[6].usage(), Some(Usage::new(0, 15)));
    let usage: Usage = events.iter().filter_map(StreamItem::usage).sum();
    assert_eq!(usage, Usage::new(502, 15));
    assert_eq!(events[0].model(), Some("claude-opus-4-1"));
    assert_eq!(events[0].message_id(), Some("msg_01"));
    assert_eq!(events[3].index(), Some(0));
    assert_eq!(events[6].stop_reason(), Some("end_turn"));
    assert_eq!(events[7].event_type(), "message_stop");
    assert_eq!(events.iter().filter(|event| event.is_finish()).count(), 1);
    assert!(events[7].is_finish());
    assert!(events[2].data().contains("ping"));
    assert!(events[0].size() > std::mem::size_of::<Event>() + events[0].data().len());
}

#[test]
fn tool_use_and_thinking_deltas_are_content_without_text() {
    let events = ok(read(&body(&[
        (
            "content_block_start",
            r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{}}}"#,
        ),
        (
            "content_block_delta",
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}}"#,
        ),
        (
            "content_block_delta",
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"location\": \"San Fra"}}"#,
        ),
        (
            "content_block_delta",
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me"}}"#,
        ),
        STOP,
    ])));
    let kinds: Vec<ItemKind> = events.iter().map(StreamItem::kind).collect();
    use ItemKind::{Content, Preamble};
    assert_eq!(kinds, [Preamble, Preamble, Content, Content, Content]);
    assert!(events.iter().all(|event| event.text().is_none()));
    assert_eq!(events[0].index(), Some(1));
}

#[test]
fn the_stream_ends_after_message_stop_without_reading_on() {
    let items = read(&body(&[STOP, ("content_block_delta", "not json")]));
    assert_eq!(items.len(), 1);
    assert!(ok(items)[0].is_finish());
}

#[test]
fn an_end_without_message_stop_is_a_cut_never_a_clean_end() {
    for events in [
        &[][..],
        &[START][..],
        &[START, BLOCK, BLOCK_STOP, DELTA_END][..],
    ] {
        let items = read(&body(events));
        assert_eq!(items.len(), events.len() + 1);
        let cut = last_error(&items);
        assert!(matches!(cut, Error::Cut), "{cut:?}");
        assert_eq!(cut.classify(), ErrorClass::Transient);
        assert_eq!(cut.variant(), "Cut");
        assert!(cut.hint().unwrap().contains("message_stop"));
        assert_eq!(
            cut.to_string(),
            "Anthropic stream: the body ended before `message_stop`"
        );
    }
}

#[test]
fn in_band_errors_are_classified_by_the_presets() {
    let error_event = |kind: &str, message: &str| {
        format!(r#"{{"type": "error", "error": {{"type": {kind:?}, "message": {message:?}}}}}"#)
    };
    let cases = [
        ("overloaded_error", "Overloaded", ErrorClass::Transient, 529),
        (
            "api_error",
            "Internal server error",
            ErrorClass::Transient,
            500,
        ),
        (
            "rate_limit_error",
            "Number of requests",
            ErrorClass::RateLimited,
            429,
        ),
        (
            "invalid_request_error",
            "messages: bad",
            ErrorClass::Invalid,
            400,
        ),
        (
            "authentication_error",
            "invalid x-api-key",
            ErrorClass::Fatal,
            401,
        ),
        ("billing_error", "credit", ErrorClass::Fatal, 402),
        ("timeout_error", "timed out", ErrorClass::Transient, 504),
        ("something_new", "?", ErrorClass::Transient, 500),
    ];
    for (kind, message, class, status) in cases {
        let data = error_event(kind, message);
        let items = read(&body(&[START, ("error", &data), STOP]));
        assert_eq!(items.len(), 2, "the error is the last item");
        let error = last_error(&items);
        let Error::InBand(http) = error else {
            panic!("{error:?}")
        };
        assert_eq!(http.status().as_u16(), status, "{kind}");
        assert_eq!(http.error_type(), Some(kind));
        assert_eq!(error.classify(), class, "{kind}");
        assert_eq!(error.variant(), "InBand");
        assert_eq!(error.signals().is_overloaded(), kind == "overloaded_error");
        assert_eq!(
            error.to_string(),
            format!("Anthropic stream: an error event: {kind}: {message}")
        );
    }
    let data = error_event(
        "invalid_request_error",
        "prompt is too long: 201000 tokens > 200000 maximum",
    );
    let items = read(&body(&[("error", &data)]));
    let error = last_error(&items);
    assert_eq!(error.rejected(), Some(Reject::ContextLength));
    assert!(error.hint().unwrap().contains("context window"));
    // A stream whose events are unnamed: the data's type.
    let items = read(format!("data: {}\n\n", error_event("overloaded_error", "x")).as_bytes());
    assert!(matches!(last_error(&items), Error::InBand(_)));
}

#[test]
fn malformed_events_say_what_failed_and_are_transient() {
    for (event, data, says) in [
        ("message_start", "{\"type\": \"message_start\"", "not JSON"),
        ("content_block_delta", "[]", "not a JSON object"),
        ("error", "overloaded", "not JSON"),
        ("message", "plain text", "not JSON"),
        (
            "message_delta",
            r#"{"usage":{"output_tokens":1e400}}"#,
            "not JSON",
        ),
    ] {
        let items = read(&body(&[(event, data)]));
        assert_eq!(items.len(), 1);
        let error = last_error(&items);
        let Error::Malformed {
            event: named,
            reason,
        } = error
        else {
            panic!("{error:?}")
        };
        assert_eq!(named, event);
        assert!(reason.contains(says), "{reason}");
        assert_eq!(error.classify(), ErrorClass::Transient);
        assert_eq!(error.variant(), "Malformed");
        assert!(error.hint().is_some());
    }
    // A type this module does not read passes, whatever its data.
    let events = ok(read(&body(&[
        ("brand_new_event", "not json"),
        ("ping", "no json either"),
        STOP,
    ])));
    assert_eq!(events[0].kind(), ItemKind::Preamble);
    assert_eq!(
        (events[0].event_type(), events[0].data()),
        ("brand_new_event", "not json")
    );
    assert_eq!(events[1].kind(), ItemKind::Keepalive);
}

#[test]
fn hostile_numbers_and_missing_fields_never_panic() {
    let start = |usage: &str| {
        let data = format!(r#"{{"type":"message_start","message":{{"usage":{usage}}}}}"#);
        let events = ok(read(&body(&[("message_start", &data), STOP])));
        events[0].usage()
    };
    assert_eq!(
        start(
            r#"{"input_tokens":18446744073709551615,"cache_read_input_tokens":18446744073709551615}"#
        ),
        Some(Usage::new(u64::MAX, 0))
    );
    assert_eq!(
        start(r#"{"input_tokens":1e300,"cache_creation_input_tokens":-4}"#),
        Some(Usage::new(u64::MAX, 0))
    );
    assert_eq!(start(r#"{"input_tokens":"7"}"#), Some(Usage::default()));
    assert_eq!(start("null"), None);
    let delta = |usage: &str| {
        let data = format!(r#"{{"type":"message_delta","usage":{usage}}}"#);
        ok(read(&body(&[("message_delta", &data), STOP])))[0].usage()
    };
    assert_eq!(
        delta(&format!(r#"{{"output_tokens":{}}}"#, "9".repeat(300))),
        Some(Usage::new(0, u64::MAX))
    );
    assert_eq!(delta(r#"{"output_tokens":-1}"#), Some(Usage::new(0, 0)));
    // Every type with its fields missing or of the wrong type.
    for (event, data) in [
        ("message_start", "{}"),
        ("message_start", r#"{"message":"msg"}"#),
        (
            "message_start",
            r#"{"message":{"model":7,"id":null,"usage":[]}}"#,
        ),
        (
            "content_block_start",
            r#"{"index":"0","content_block":null}"#,
        ),
        (
            "content_block_start",
            r#"{"content_block":{"type":"text","text":5}}"#,
        ),
        ("content_block_delta", "{}"),
        ("content_block_delta", r#"{"delta":"text"}"#),
        (
            "content_block_delta",
            r#"{"delta":{"type":"text_delta","text":""}}"#,
        ),
        ("content_block_stop", "{}"),
        ("message_delta", r#"{"delta":null,"usage":"lots"}"#),
    ] {
        let events = ok(read(&body(&[(event, data), STOP])));
        let event_read = &events[0];
        assert_eq!(event_read.kind(), ItemKind::Preamble, "{event}: {data}");
        assert_eq!(
            (
                event_read.text(),
                event_read.usage(),
                event_read.model(),
                event_read.stop_reason(),
                event_read.index()
            ),
            (None, None, None, None, None),
            "{event}: {data}"
        );
    }
    let index = ok(read(&body(&[
        ("content_block_stop", r#"{"index":1e30}"#),
        STOP,
    ])));
    assert_eq!(index[0].index(), Some(u64::MAX));
    // An error event of no known shape: a 500.
    let items = read(&body(&[("error", "{}")]));
    let Error::InBand(http) = last_error(&items) else {
        panic!()
    };
    assert_eq!(http.status().as_u16(), 500);
}

#[test]
fn bytes_that_are_not_utf8_are_replaced_or_malformed() {
    let events = ok(read(
        b"event: content_block_delta\ndata: {\"delta\":{\"type\":\"text_delta\",\"text\":\"\xF0\x9F\"}}\n\nevent: message_stop\ndata: {}\n\n",
    ));
    assert_eq!(events[0].text(), Some("\u{FFFD}"));
    let items = read(b"event: message_start\ndata: \xC3{}\n\n");
    assert!(matches!(last_error(&items), Error::Malformed { .. }));
    // In the event's name.
    let items = read(b"event: \xFFping\ndata: {}\n\nevent: message_stop\ndata: {}\n\n");
    assert_eq!(ok(items)[0].event_type(), "\u{FFFD}ping");
}

#[test]
fn ids_comments_and_the_body_s_errors() {
    let read_back = ok(read(
        b": hello\n\nid: 9\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
    ));
    assert_eq!(
        (
            read_back[0].kind(),
            read_back[0].event_type(),
            read_back[0].id()
        ),
        (ItemKind::Keepalive, "", None)
    );
    assert_eq!(read_back[1].id(), Some("9"));

    let body = futures_util::stream::iter([
        Ok(&b"event: ping\ndata: {}\n\n"[..]),
        Err(std::io::Error::from(std::io::ErrorKind::ConnectionReset)),
        Ok(&b"event: message_stop\ndata: {}\n\n"[..]),
    ]);
    let mut stream = std::pin::pin!(events(body));
    let mut cx = Context::from_waker(std::task::Waker::noop());
    assert!(matches!(
        stream.as_mut().poll_next(&mut cx),
        Poll::Ready(Some(Ok(_)))
    ));
    let Poll::Ready(Some(Err(error))) = stream.as_mut().poll_next(&mut cx) else {
        panic!("not the body's error")
    };
    assert_eq!(error.classify(), ErrorClass::Transient);
    assert_eq!(error.variant(), "ConnectionReset");
    assert!(
        error
            .to_string()
            .starts_with("Anthropic stream: event stream: ")
    );
    assert!(matches!(
        stream.as_mut().poll_next(&mut cx),
        Poll::Ready(None)
    ));
}

//! The tests of OpenAI's stream.
use std::convert::Infallible;
use std::task::{Context, Poll};

use futures_core::Stream;

use super::{Chunk, Error, chunks};
use crate::stream::{ItemKind, StreamItem, Usage};
use crate::{Classify, ErrorClass};

/// Reads `body` to its end, synchronously (the stream never waits).
fn read(body: &[u8]) -> Vec<Result<Chunk, Error<Infallible>>> {
    read_chunks(&[body])
}

fn read_chunks(body: &[&[u8]]) -> Vec<Result<Chunk, Error<Infallible>>> {
    let body = futures_util::stream::iter(body.iter().map(|chunk| Ok::<_, Infallible>(*chunk)));
    let mut stream = std::pin::pin!(chunks(body));
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

fn ok(items: Vec<Result<Chunk, Error<Infallible>>>) -> Vec<Chunk> {
    items
        .into_iter()
        .map(|item| item.unwrap_or_else(|error| panic!("{error}")))
        .collect()
}

fn last_error(items: &[Result<Chunk, Error<Infallible>>]) -> &Error<Infallible> {
    match items.last() {
        Some(Err(error)) => error,
        other => panic!("not an error: {other:?}"),
    }
}

const ROLE: &str = r#"data: {"id":"chatcmpl-9","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null}"#;
const FINISH: &str = r#"data: {"id":"chatcmpl-9","model":"gpt-4o-mini","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":null}"#;
const USAGE: &str = r#"data: {"id":"chatcmpl-9","model":"gpt-4o-mini","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15,"prompt_tokens_details":{"cached_tokens":0}}}"#;

fn delta(text: &str) -> String {
    format!(
        r#"data: {{"id":"chatcmpl-9","model":"gpt-4o-mini","choices":[{{"index":0,"delta":{{"content":{text:?}}},"logprobs":null,"finish_reason":null}}],"usage":null}}"#
    )
}

fn body(events: &[&str]) -> Vec<u8> {
    events
        .iter()
        .flat_map(|event| [event.as_bytes(), b"\n\n"])
        .flatten()
        .copied()
        .collect()
}

#[test]
fn a_whole_answer_its_kinds_text_usage_and_finish() {
    let (a, b, c) = (delta("The "), delta("answer"), delta("."));
    let chunks = ok(read(&body(&[
        ROLE,
        ": keep-alive",
        &a,
        &b,
        &c,
        FINISH,
        USAGE,
        "data: [DONE]",
    ])));
    let kinds: Vec<ItemKind> = chunks.iter().map(StreamItem::kind).collect();
    use ItemKind::{Content, Keepalive, Preamble};
    assert_eq!(
        kinds,
        [
            Preamble, Keepalive, Content, Content, Content, Preamble, Preamble, Content
        ]
    );
    let text: String = chunks.iter().filter_map(StreamItem::text).collect();
    assert_eq!(text, "The answer.");
    let usage: Usage = chunks.iter().filter_map(StreamItem::usage).sum();
    assert_eq!(usage, Usage::new(12, 3));
    assert_eq!(chunks[0].role(), Some("assistant"));
    assert_eq!(chunks[0].text(), None, "an empty content is no text");
    assert_eq!(chunks[0].model(), Some("gpt-4o-mini"));
    assert_eq!(chunks[0].completion_id(), Some("chatcmpl-9"));
    assert_eq!(chunks[2].index(), Some(0));
    assert_eq!(chunks[5].finish_reason(), Some("stop"));
    assert_eq!(chunks[6].index(), None, "no choices");
    assert!(chunks[7].is_finish() && chunks[7].data() == "[DONE]");
    assert_eq!(chunks.iter().filter(|chunk| chunk.is_finish()).count(), 1);
    assert!(chunks[2].data().starts_with("{\"id\""));
    assert!(chunks[2].size() > std::mem::size_of::<Chunk>() + chunks[2].data().len());
}

#[test]
fn tool_calls_and_refusals_are_content_without_text() {
    let tool = r#"data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":""}}]},"finish_reason":null}]}"#;
    let refusal =
        r#"data: {"choices":[{"index":0,"delta":{"refusal":"I can't"},"finish_reason":null}]}"#;
    let empty = r#"data: {"choices":[{"index":0,"delta":{"content":null,"tool_calls":[]},"finish_reason":null}]}"#;
    let chunks = ok(read(&body(&[tool, refusal, empty, "data: [DONE]"])));
    let kinds: Vec<ItemKind> = chunks.iter().map(StreamItem::kind).collect();
    assert_eq!(
        kinds,
        [
            ItemKind::Content,
            ItemKind::Content,
            ItemKind::Preamble,
            ItemKind::Content
        ]
    );
    assert!(chunks.iter().all(|chunk| chunk.text().is_none()));
}

#[test]
fn the_stream_ends_after_done_without_reading_on() {
    let items = read(&body(&[&delta("a"), "data: [DONE]", "data: not even json"]));
    assert_eq!(items.len(), 2);
    assert!(ok(items)[1].is_finish());
}

#[test]
fn an_end_without_done_is_a_cut_never_a_clean_end() {
    for events in [&[][..], &[ROLE][..], &[ROLE, FINISH, USAGE][..]] {
        let items = read(&body(events));
        assert_eq!(items.len(), events.len() + 1);
        let cut = last_error(&items);
        assert!(matches!(cut, Error::Cut), "{cut:?}");
        assert_eq!(cut.classify(), ErrorClass::Transient);
        assert_eq!(cut.variant(), "Cut");
        assert!(cut.hint().unwrap().contains("incomplete"));
    }
    // `[DONE]` cut before the blank line that dispatches it.
    let items = read(b"data: [DONE]");
    assert!(matches!(last_error(&items), Error::Cut));
}

#[test]
fn in_band_errors_are_classified_by_the_presets() {
    let cases = [
        (
            r#"{"error":{"message":"The server had an error while processing your request.","type":"server_error","param":null,"code":null}}"#,
            ErrorClass::Transient,
            500,
        ),
        (
            r#"{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}"#,
            ErrorClass::Fatal,
            429,
        ),
        (
            r#"{"error":{"message":"Rate limit reached","type":"requests","param":null,"code":"rate_limit_exceeded"}}"#,
            ErrorClass::RateLimited,
            429,
        ),
        (
            r#"{"error":{"message":"maximum context length","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#,
            ErrorClass::Invalid,
            400,
        ),
        (r#"{"error":"upstream failed"}"#, ErrorClass::Transient, 500),
    ];
    for (data, class, status) in cases {
        let items = read(format!("data: {data}\n\n").as_bytes());
        assert_eq!(items.len(), 1, "the error is the last item");
        let error = last_error(&items);
        let Error::InBand(http) = error else {
            panic!("{error:?}")
        };
        assert_eq!(http.status().as_u16(), status, "{data}");
        assert_eq!(error.classify(), class, "{data}");
        assert_eq!(error.variant(), "InBand");
    }
    let items = read(
        br#"data: {"error":{"message":"too long","type":"invalid_request_error","code":"context_length_exceeded"}}

"#,
    );
    let error = last_error(&items);
    assert_eq!(error.rejected(), Some(crate::Reject::ContextLength));
    assert!(error.hint().unwrap().contains("context window"));
    assert_eq!(
        error.to_string(),
        "OpenAI stream: an error event: context_length_exceeded: too long"
    );
    // `"error": null` is no error; `event: error` is one, whatever its data.
    let items = read(
        b"data: {\"error\":null,\"choices\":[]}\n\nevent: error\ndata: {\"message\":\"boom\"}\n\n",
    );
    assert!(items[0].is_ok());
    let error = last_error(&items);
    assert!(matches!(error, Error::InBand(_)), "{error:?}");
    assert_eq!(error.to_string(), "OpenAI stream: an error event: boom");
}

#[test]
fn malformed_events_say_what_failed_and_are_transient() {
    for (data, says) in [
        ("{\"choices\": [", "not JSON"),
        ("not json at all", "not JSON"),
        ("[1, 2]", "not a JSON object"),
        ("\"text\"", "not a JSON object"),
        ("1e400", "not JSON"),
    ] {
        let items = read(format!("data: {data}\n\n").as_bytes());
        let error = last_error(&items);
        let Error::Malformed { event, reason } = error else {
            panic!("{error:?}")
        };
        assert_eq!(event, "message");
        assert!(reason.contains(says), "{reason}");
        assert_eq!(error.classify(), ErrorClass::Transient);
        assert_eq!(error.variant(), "Malformed");
        assert!(
            error
                .to_string()
                .starts_with("OpenAI stream: a malformed `message` event: ")
        );
    }
    // A long event is quoted in part.
    let long = format!("data: {}\n\n", "x".repeat(10_000));
    let items = read(long.as_bytes());
    assert!(last_error(&items).to_string().len() < 200);
    // Cut inside a multibyte character: never a panic.
    let wide = format!("data: {}\n\n", "é".repeat(100));
    let items = read(wide.as_bytes());
    assert!(last_error(&items).to_string().ends_with("..."));
}

#[test]
fn hostile_numbers_and_missing_fields_never_panic() {
    let usage = |json: &str| {
        let items = read(format!("data: {{\"choices\":[],\"usage\":{json}}}\n\n").as_bytes());
        match &items[0] {
            Ok(chunk) => chunk.usage(),
            Err(error) => panic!("{error}"),
        }
    };
    assert_eq!(
        usage(r#"{"prompt_tokens":18446744073709551616,"completion_tokens":1e300}"#),
        Some(Usage::new(u64::MAX, u64::MAX))
    );
    assert_eq!(
        usage(&format!(
            r#"{{"prompt_tokens":{},"completion_tokens":-5}}"#,
            "9".repeat(300)
        )),
        Some(Usage::new(u64::MAX, 0))
    );
    assert_eq!(
        usage(r#"{"prompt_tokens":"12","completion_tokens":2.9}"#),
        Some(Usage::new(0, 2))
    );
    assert_eq!(usage("{}"), Some(Usage::default()));
    assert_eq!(usage("null"), None);
    assert_eq!(usage("[1]"), None);
    // No choices, choices of the wrong type, a delta that is no object.
    for data in [
        "{}",
        r#"{"choices":null}"#,
        r#"{"choices":{"0":1}}"#,
        r#"{"choices":[null, 3, "x"]}"#,
        r#"{"choices":[{"delta":"text","index":-1,"finish_reason":7}]}"#,
        r#"{"model":5,"id":[],"choices":[{"delta":{"content":5,"role":false}}]}"#,
    ] {
        let chunks = ok(read(format!("data: {data}\n\ndata: [DONE]\n\n").as_bytes()));
        let chunk = &chunks[0];
        assert_eq!(chunk.kind(), ItemKind::Preamble, "{data}");
        assert_eq!(
            (
                chunk.text(),
                chunk.role(),
                chunk.finish_reason(),
                chunk.model()
            ),
            (None, None, None, None)
        );
        assert!(chunk.completion_id().is_none() && chunk.usage().is_none());
    }
    let chunks = ok(read(
        b"data: {\"choices\":[{\"index\":1e30}]}\n\ndata: [DONE]\n\n",
    ));
    assert_eq!(chunks[0].index(), Some(u64::MAX));
}

#[test]
fn bytes_that_are_not_utf8_are_replaced_or_malformed() {
    // Inside a JSON string: replaced, and read.
    let chunks = ok(read(
        b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\xFFb\"}}]}\n\ndata: [DONE]\n\n",
    ));
    assert_eq!(chunks[0].text(), Some("a\u{FFFD}b"));
    // Outside one: not JSON.
    let items = read(b"data: \xFE\xFF{}\n\n");
    assert!(matches!(last_error(&items), Error::Malformed { .. }));
}

#[test]
fn ids_pings_and_the_body_s_errors() {
    let read_back = ok(read(
        b"id: 1\ndata: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\nevent: ping\ndata: {}\n\ndata: [DONE]\n\n",
    ));
    assert_eq!(read_back[0].id(), Some("1"));
    assert_eq!(read_back[1].kind(), ItemKind::Keepalive);
    assert_eq!(
        read_back[1].id(),
        Some("1"),
        "the last event id, as SSE says"
    );
    assert_eq!(read_back[2].id(), Some("1"));

    // The body's error: forwarded, and the last item.
    let body = futures_util::stream::iter([
        Ok(&b"data: {\"choices\":[]}\n\n"[..]),
        Err(std::io::Error::from(std::io::ErrorKind::ConnectionReset)),
        Ok(&b"data: [DONE]\n\n"[..]),
    ]);
    let mut stream = std::pin::pin!(chunks(body));
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
    assert!(std::error::Error::source(&error).is_some());
    assert!(matches!(
        stream.as_mut().poll_next(&mut cx),
        Poll::Ready(None)
    ));
    assert_eq!(stream.as_ref().get_ref().get_ref().last_event_id(), None);
}

#[test]
fn split_anywhere_the_same_chunks() {
    let a = delta("x");
    let whole = body(&[ROLE, &a, FINISH, USAGE, "data: [DONE]"]);
    let expected = ok(read(&whole));
    for at in 0..=whole.len() {
        assert_eq!(
            ok(read_chunks(&[&whole[..at], &whole[at..]])),
            expected,
            "at {at}"
        );
    }
}

//! `tenacious::sse` over real HTTP on loopback (an axum `Sse` response
//! with keepalive comments, read through reqwest's `bytes_stream`), and a
//! property: however a body is cut into chunks, the same items.
use std::convert::Infallible;
use std::time::Duration;

use axum::Router;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::routing::get;
use futures_util::{FutureExt, StreamExt, stream};
use proptest::prelude::*;
use tenacious::sse::{SseEvent, SseItem, sse};

/// Five tokens 60 ms apart, ids 0 to 4, with a keepalive comment every
/// 20 ms of silence.
async fn tokens() -> Sse<impl futures_util::Stream<Item = Result<Event, Infallible>>> {
    let events = stream::unfold(0u32, |n| async move {
        if n == 5 {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(60)).await;
        let event = Event::default()
            .id(n.to_string())
            .event("delta")
            .data(format!("tok{n}"));
        Some((Ok(event), n + 1))
    });
    Sse::new(events).keep_alive(
        KeepAlive::new()
            .interval(Duration::from_millis(20))
            .text("ping"),
    )
}

#[tokio::test]
async fn an_axum_stream_s_events_in_order_and_its_keepalives_as_comments() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = tokio::spawn(async move {
        axum::serve(listener, Router::new().route("/stream", get(tokens)))
            .await
            .unwrap();
    });
    let response = reqwest::get(format!("http://{addr}/stream")).await.unwrap();
    assert_eq!(
        response.headers()["content-type"],
        "text/event-stream",
        "an SSE response"
    );
    let items: Vec<SseItem> = sse(response.bytes_stream())
        .map(|item| item.expect("the body reads"))
        .collect()
        .await;
    server.abort();
    let events: Vec<(String, String, Option<String>)> = items
        .iter()
        .filter_map(|item| match item {
            SseItem::Event(e) => Some((e.event.clone(), e.data.clone(), e.id.clone())),
            SseItem::Comment(_) => None,
        })
        .collect();
    let expected: Vec<_> = (0..5)
        .map(|n| ("delta".to_owned(), format!("tok{n}"), Some(n.to_string())))
        .collect();
    assert_eq!(events, expected);
    let pings = items
        .iter()
        .filter(|item| matches!(item, SseItem::Comment(text) if text == " ping"))
        .count();
    // 60 ms between tokens, a keepalive after 20 ms of silence: at least
    // one between some two tokens (typically two each).
    assert!(pings >= 1, "keepalives seen: {items:?}");
}

/// `events` written out as a server would, with `newline` ending lines.
fn body(events: &[(String, String, Option<String>)], newline: &str) -> Vec<u8> {
    let mut out = String::new();
    for (kind, data, id) in events {
        out.push_str(": keepalive");
        out.push_str(newline);
        if let Some(id) = id {
            out.push_str(&format!("id: {id}{newline}"));
        }
        out.push_str(&format!("event: {kind}{newline}"));
        for line in data.split('\n') {
            out.push_str(&format!("data: {line}{newline}"));
        }
        out.push_str(newline);
    }
    out.into_bytes()
}

fn parse(chunks: Vec<Vec<u8>>) -> Vec<SseItem> {
    sse(stream::iter(chunks.into_iter().map(Ok::<_, Infallible>)))
        .map(Result::unwrap)
        .collect::<Vec<_>>()
        .now_or_never()
        .expect("an iterator's stream never waits")
}

proptest! {
    #[test]
    fn any_cut_of_a_body_into_chunks_yields_the_same_items(
        events in prop::collection::vec(
            ("[a-z]{1,8}", "[a-zA-Z0-9 {}\":,\n]{0,40}", prop::option::of("[0-9]{1,4}")),
            0..8,
        ),
        newline in prop::sample::select(vec!["\n", "\r\n", "\r"]),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..12),
    ) {
        let bytes = body(&events, newline);
        let mut at: Vec<usize> = cuts.iter().map(|cut| cut.index(bytes.len() + 1)).collect();
        at.push(0);
        at.push(bytes.len());
        at.sort_unstable();
        let chunks: Vec<Vec<u8>> = at.windows(2).map(|w| bytes[w[0]..w[1]].to_vec()).collect();
        let whole = parse(vec![bytes.clone()]);
        prop_assert_eq!(parse(chunks), whole.clone());
        // What a server wrote is what was read.
        let mut last_id = None;
        let mut expected = Vec::new();
        for (kind, data, id) in &events {
            expected.push(SseItem::Comment(" keepalive".to_owned()));
            if id.is_some() {
                last_id.clone_from(id);
            }
            let mut event = SseEvent::default();
            event.event.clone_from(kind);
            event.data.clone_from(data);
            event.id.clone_from(&last_id);
            expected.push(SseItem::Event(event));
        }
        prop_assert_eq!(whole, expected);
    }
}

/// One event as a server may write it, with every kind of field: an `id`
/// line (`Some(None)`: an empty one, which resets the last event id), a
/// `retry`, a field no one knows.
type Written = (String, String, Option<Option<String>>, Option<u32>);

/// `events` written out with every field kind, after a byte-order mark if
/// `bom`.
fn full_body(events: &[Written], newline: &str, bom: bool) -> Vec<u8> {
    let mut out = String::new();
    if bom {
        out.push('\u{feff}');
    }
    for (kind, data, id, retry) in events {
        out.push_str(&format!(":{newline}"));
        match id {
            Some(Some(id)) => out.push_str(&format!("id: {id}{newline}")),
            Some(None) => out.push_str(&format!("id:{newline}")),
            None => {}
        }
        if let Some(retry) = retry {
            out.push_str(&format!("retry: {retry}{newline}"));
        }
        out.push_str(&format!(
            "x-unknown: ignored{newline}event: {kind}{newline}"
        ));
        for line in data.split('\n') {
            out.push_str(&format!("data:{line}{newline}"));
        }
        out.push_str(newline);
    }
    out.into_bytes()
}

fn parse_with_last_id(chunks: Vec<Vec<u8>>) -> (Vec<SseItem>, Option<String>) {
    let mut events = sse(stream::iter(chunks.into_iter().map(Ok::<_, Infallible>)));
    let mut items = Vec::new();
    while let Some(item) = events.next().now_or_never().expect("never waits") {
        items.push(item.unwrap());
    }
    (items, events.last_event_id().map(str::to_owned))
}

fn cut(bytes: &[u8], cuts: &[prop::sample::Index]) -> Vec<Vec<u8>> {
    let mut at: Vec<usize> = cuts.iter().map(|cut| cut.index(bytes.len() + 1)).collect();
    at.push(0);
    at.push(bytes.len());
    at.sort_unstable();
    at.windows(2).map(|w| bytes[w[0]..w[1]].to_vec()).collect()
}

proptest! {
    #[test]
    fn every_field_kind_and_a_bom_parse_the_same_however_cut(
        events in prop::collection::vec(
            (
                "[a-z]{1,8}",
                "[a-zA-Z0-9 {}\":,\n]{0,40}",
                prop::option::of(prop::option::of("[0-9]{1,4}")),
                prop::option::of(0u32..100_000),
            ),
            0..8,
        ),
        newline in prop::sample::select(vec!["\n", "\r\n", "\r"]),
        bom in any::<bool>(),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..12),
        end in any::<prop::sample::Index>(),
    ) {
        let bytes = full_body(&events, newline, bom);
        let (whole, last) = parse_with_last_id(vec![bytes.clone()]);
        prop_assert_eq!(parse_with_last_id(cut(&bytes, &cuts)), (whole.clone(), last.clone()));
        let mut id = None;
        let mut expected = Vec::new();
        for (kind, data, written_id, retry) in &events {
            expected.push(SseItem::Comment(String::new()));
            if let Some(written) = written_id {
                id.clone_from(written);
            }
            let mut event = SseEvent::default();
            event.event.clone_from(kind);
            // Written as `data:line`: one leading space is the field's.
            event.data = data
                .split('\n')
                .map(|line| line.strip_prefix(' ').unwrap_or(line))
                .collect::<Vec<_>>()
                .join("\n");
            event.id.clone_from(&id);
            event.retry = retry.map(|ms| Duration::from_millis(u64::from(ms)));
            expected.push(SseItem::Event(event));
        }
        prop_assert_eq!(&whole, &expected);
        prop_assert_eq!(last, id);
        // A body the end cuts anywhere: its last event id is the last
        // dispatched event's, never one of an event cut off.
        let short = &bytes[..end.index(bytes.len() + 1)];
        let (items, last) = parse_with_last_id(cut(short, &cuts));
        let dispatched = items.iter().rev().find_map(|item| match item {
            SseItem::Event(event) => Some(event.id.clone()),
            SseItem::Comment(_) => None,
        });
        prop_assert_eq!(last, dispatched.flatten());
    }
}

/// A byte-order mark split across chunks is dropped, not the first event.
#[test]
fn a_bom_split_across_chunks_keeps_the_first_event() {
    let (items, _) = parse_with_last_id(vec![b"\xEF".to_vec(), b"\xBB\xBFdata:1\n\n".to_vec()]);
    let (split_twice, _) = parse_with_last_id(vec![
        b"\xEF".to_vec(),
        b"\xBB".to_vec(),
        b"\xBFdata:1\n\n".to_vec(),
    ]);
    let mut event = SseEvent::default();
    event.event = "message".to_owned();
    event.data = "1".to_owned();
    assert_eq!(items, vec![SseItem::Event(event)]);
    assert_eq!(split_twice, items);
}

/// `last_event_id` names dispatched events only, and an empty `id` resets
/// it: a reconnection never skips an event it did not receive, nor sends
/// an empty `Last-Event-ID`.
#[test]
fn the_last_event_id_is_a_dispatched_events_and_an_empty_one_resets_it() {
    let (_, cut_off) = parse_with_last_id(vec![b"id: 1\ndata: a\n\nid: 2\ndata: b".to_vec()]);
    assert_eq!(cut_off.as_deref(), Some("1"));
    let (_, reset) = parse_with_last_id(vec![b"id: 1\ndata: a\n\nid:\ndata: b\n\n".to_vec()]);
    assert_eq!(reset, None);
}

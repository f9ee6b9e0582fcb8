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

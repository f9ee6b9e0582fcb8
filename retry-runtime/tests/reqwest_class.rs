//! Feature `reqwest`: real `reqwest::Error`s against a loopback server.
#![cfg(feature = "reqwest")]
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::thread;
use std::time::Duration;

use tenacious_runtime::{Classify, ErrorClass, HttpError};

fn client() -> reqwest::Client {
    // No proxy: the environment's proxy settings must not reroute loopback.
    reqwest::Client::builder().no_proxy().build().unwrap()
}

/// Reads one request head; `false` once the peer has closed.
fn read_request(stream: &mut TcpStream) -> bool {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match stream.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            _ => return false,
        }
    }
    true
}

/// Serves `response` to every request on every connection, for the life of
/// the test process.
fn serve(response: &'static str) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            thread::spawn(move || {
                while read_request(&mut stream) {
                    if stream.write_all(response.as_bytes()).is_err() {
                        return;
                    }
                }
            });
        }
    });
    addr
}

/// Accepts connections, reads the request, and hangs up without answering.
fn hang_up() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            read_request(&mut stream);
        }
    });
    addr
}

#[tokio::test(start_paused = true)]
async fn timeout_is_transient() {
    // The listener's backlog completes the handshake; nothing ever answers.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    let client = reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(5))
        .build()
        .unwrap();
    let error = client.get(url).send().await.unwrap_err();
    assert!(error.is_timeout(), "{error:?}");
    assert_eq!(error.classify(), ErrorClass::Transient);
    assert_eq!(error.variant(), "Timeout");
    assert!(error.hint().unwrap().contains("timed out"));
    drop(listener);
}

#[tokio::test(start_paused = true)]
async fn refused_connection_is_transient() {
    let addr = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    // The listener is dropped: the port now refuses connections.
    let error = client()
        .get(format!("http://{addr}/"))
        .send()
        .await
        .unwrap_err();
    assert!(error.is_connect(), "{error:?}");
    assert_eq!(error.classify(), ErrorClass::Transient);
    assert_eq!(error.variant(), "Connect");
    assert_eq!(error.retry_after(), None);
}

#[tokio::test(start_paused = true)]
async fn connection_closed_mid_request_is_transient() {
    let addr = hang_up();
    let error = client()
        .get(format!("http://{addr}/"))
        .send()
        .await
        .unwrap_err();
    assert!(error.is_request(), "{error:?}");
    assert_eq!(error.classify(), ErrorClass::Transient);
    assert_eq!(error.variant(), "Request");
}

#[tokio::test(start_paused = true)]
async fn status_errors_follow_the_status_table() {
    for (code, class) in [
        (429, ErrorClass::RateLimited),
        (503, ErrorClass::Transient),
        (404, ErrorClass::Invalid),
        (401, ErrorClass::Fatal),
    ] {
        let response = http::Response::builder().status(code).body("").unwrap();
        let error = reqwest::Response::from(response)
            .error_for_status()
            .unwrap_err();
        assert_eq!(error.classify(), class, "{code}");
        assert_eq!(error.variant(), format!("Status{code}"));
        assert_eq!(error.hint(), error.status().unwrap().hint());
        assert_eq!(error.retry_after(), None);
    }
}

#[tokio::test(start_paused = true)]
async fn a_bad_url_is_invalid() {
    let error = client().get("not a url").build().unwrap_err();
    assert!(error.is_builder(), "{error:?}");
    assert_eq!(error.classify(), ErrorClass::Invalid);
    assert_eq!(error.variant(), "Builder");
}

#[tokio::test(start_paused = true)]
async fn a_redirect_loop_is_invalid() {
    let addr = serve("HTTP/1.1 302 Found\r\nLocation: /again\r\nContent-Length: 0\r\n\r\n");
    let error = client()
        .get(format!("http://{addr}/"))
        .send()
        .await
        .unwrap_err();
    assert!(error.is_redirect(), "{error:?}");
    assert_eq!(error.classify(), ErrorClass::Invalid);
    assert_eq!(error.variant(), "Redirect");
}

#[tokio::test(start_paused = true)]
async fn a_response_becomes_an_http_error_with_its_headers() {
    let addr =
        serve("HTTP/1.1 503 Service Unavailable\r\nRetry-After: 7\r\nContent-Length: 0\r\n\r\n");
    let response = client()
        .get(format!("http://{addr}/"))
        .send()
        .await
        .unwrap();
    let error = HttpError::from(&response);
    assert_eq!(error.status(), reqwest::StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(error.classify(), ErrorClass::RateLimited);
    assert_eq!(error.retry_after(), Some(Duration::from_secs(7)));

    let addr = serve(
        "HTTP/1.1 500 Internal Server Error\r\nx-should-retry: false\r\nContent-Length: 0\r\n\r\n",
    );
    let response = client()
        .get(format!("http://{addr}/"))
        .send()
        .await
        .unwrap();
    assert_eq!(HttpError::from(&response).classify(), ErrorClass::Invalid);
}

/// What the cut-body server sends after the headers of a chunked 200.
const FIRST_CHUNK: &str = "{\"items\": [1, 2,";

/// An axum server on loopback, one per test request: `GET /cut` answers a
/// chunked 200 that sends [`FIRST_CHUNK`], then, once `cut` fires, fails its
/// body, so hyper aborts the connection mid-body (a body that failed at
/// once would abort before the headers are out); `GET /garbage` answers a
/// complete 200 whose body is not JSON.
async fn axum_server(cut: tokio::sync::oneshot::Receiver<()>) -> SocketAddr {
    use axum::body::Body;
    use futures_util::StreamExt;
    use futures_util::stream;

    // A handler is cloned per request: the one `cut` goes to the first.
    let cut = std::sync::Arc::new(std::sync::Mutex::new(Some(cut)));
    let cut_body = move || {
        let cut = cut.lock().unwrap().take();
        let rest = stream::once(async move {
            if let Some(cut) = cut {
                let _ = cut.await;
            }
            Err(std::io::Error::from(std::io::ErrorKind::ConnectionAborted))
        });
        let body = stream::iter([Ok(FIRST_CHUNK)]).chain(rest);
        async move { Body::from_stream(body) }
    };
    let app = axum::Router::new()
        .route("/cut", axum::routing::get(cut_body))
        .route(
            "/garbage",
            axum::routing::get(async || "{\"items\": [1, 2, oops]}"),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    addr
}

/// `GET path` on a fresh server: its 200 (headers read, body not yet), and
/// the trigger that cuts its body.
async fn get(path: &str) -> (reqwest::Response, tokio::sync::oneshot::Sender<()>) {
    let (cut, cut_rx) = tokio::sync::oneshot::channel();
    let addr = axum_server(cut_rx).await;
    let response = client()
        .get(format!("http://{addr}{path}"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), reqwest::StatusCode::OK);
    (response, cut)
}

/// `GET /cut`, its body cut as soon as the headers are in.
async fn cut_response() -> reqwest::Response {
    let (response, cut) = get("/cut").await;
    cut.send(()).unwrap();
    response
}

fn assert_cut_body_is_transient(error: &reqwest::Error, how: &str) {
    // reqwest 0.13 reports a body cut while it is read as a decode error
    // (of a `hyper::Error`), not a body error.
    assert!(error.is_decode(), "{how}: {error:?}");
    assert!(
        !error.is_timeout() && error.status().is_none(),
        "{how}: {error:?}"
    );
    assert_eq!(error.classify(), ErrorClass::Transient, "{how}: {error:?}");
    assert_eq!(error.variant(), "Body", "{how}");
    assert!(error.hint().unwrap().contains("cut off"), "{how}");
}

#[tokio::test]
async fn a_body_cut_mid_way_is_transient_however_it_is_read() {
    let error = cut_response().await.text().await.unwrap_err();
    assert_cut_body_is_transient(&error, "text");
    let error = cut_response().await.bytes().await.unwrap_err();
    assert_cut_body_is_transient(&error, "bytes");
    let error = cut_response()
        .await
        .json::<serde_json::Value>()
        .await
        .unwrap_err();
    assert_cut_body_is_transient(&error, "json");
}

#[tokio::test]
async fn a_body_cut_after_its_first_chunk_is_transient_chunk_by_chunk() {
    use futures_util::StreamExt;

    let (mut response, cut) = get("/cut").await;
    let first = response.chunk().await.unwrap().unwrap();
    assert_eq!(first, FIRST_CHUNK.as_bytes());
    cut.send(()).unwrap();
    let error = response.chunk().await.unwrap_err();
    assert_cut_body_is_transient(&error, "chunk");

    let (response, cut) = get("/cut").await;
    let mut stream = response.bytes_stream();
    let first = stream.next().await.unwrap().unwrap();
    assert_eq!(first, FIRST_CHUNK.as_bytes());
    cut.send(()).unwrap();
    let error = stream.next().await.unwrap().unwrap_err();
    assert_cut_body_is_transient(&error, "bytes_stream");
}

#[tokio::test]
async fn a_complete_body_that_is_not_json_is_invalid() {
    let (response, _) = get("/garbage").await;
    let error = response.json::<serde_json::Value>().await.unwrap_err();
    assert!(error.is_decode(), "{error:?}");
    assert_eq!(error.classify(), ErrorClass::Invalid, "{error:?}");
    assert_eq!(error.variant(), "Decode");
    assert!(error.hint().unwrap().contains("not in the expected format"));
}

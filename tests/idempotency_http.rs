//! Idempotency keys end to end, over real HTTP on loopback: a retried create
//! whose first attempt times out after the server committed must not create
//! the record twice.
//!
//! The server commits a record, then stalls the first request until the
//! client comes back, so the client's first attempt always times out after
//! the commit. With an `Idempotency-Key` taken from [`Attempt::current`], the
//! retry is recognised: while the first request is still in flight it gets
//! 409 with `x-should-retry: true` and `retry-after-ms`, and once the first
//! request has finished it gets the stored response replayed. Without the
//! key, the retry creates a second record.
//!
//! These are the only tests on the real clock: tokio's paused clock would
//! jump past the client's timeout whenever the runtime waits on a socket.
//! Their real waits add up to under 300 ms; they assert counts, ids and keys,
//! never durations.
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use tenacious::{Attempt, Classify, Elapsed, HttpError, IdempotencyKey, RetryEvent, retry};
use tokio::net::TcpListener;
use tokio::sync::Notify;

const IDEMPOTENCY_KEY: &str = "idempotency-key";

/// What the server stored for a key.
enum Entry {
    /// The key's first request is still running.
    InFlight,
    /// The key's first request finished: the id of the record it created,
    /// replayed to every repeat of the key.
    Done(u64),
}

/// Everything the server did, for the assertions.
#[derive(Default)]
struct Ledger {
    /// Committed records' ids, in commit order.
    records: Vec<u64>,
    /// The `Idempotency-Key` each request carried, in arrival order.
    requests: Vec<Option<String>>,
    keys: HashMap<String, Entry>,
    /// Repeats of an in-flight key, turned away with 409.
    conflicts: usize,
    /// Repeats of a finished key, answered with the stored response.
    replays: usize,
}

struct Server {
    ledger: Mutex<Ledger>,
    /// Ends the first request's stall: raised by the next request to arrive.
    /// The client sends that request only after its first attempt timed out,
    /// so the stall outlasts the client's timeout however fast or slow the
    /// machine is, and the test waits no longer than the client does.
    client_came_back: Notify,
    /// Raised once the first request has stored its response. A 409 is sent
    /// only after it, so the client's next retry finds the stored response
    /// however the machine schedules the two tasks: exactly one 409, never
    /// a second one that depends on timing.
    first_stored: Notify,
}

/// 201 Created with the record's id as the body.
fn created(id: u64) -> Response {
    (StatusCode::CREATED, id.to_string()).into_response()
}

/// 409 Conflict, marked retryable with a short wait, as Stripe-style APIs
/// answer a key whose first request is still running.
fn in_progress() -> Response {
    (
        StatusCode::CONFLICT,
        [("x-should-retry", "true"), ("retry-after-ms", "20")],
        "a request with this Idempotency-Key is in progress",
    )
        .into_response()
}

/// `POST /records`: commits a record and answers with its id, deduplicating
/// by `Idempotency-Key` when the request carries one.
async fn create_record(State(server): State<Arc<Server>>, headers: HeaderMap) -> Response {
    let key = headers
        .get(IDEMPOTENCY_KEY)
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    // What to answer is decided under the lock; the waits come after it.
    let (id, first) = {
        let mut ledger = server.ledger.lock().unwrap();
        ledger.requests.push(key.clone());
        let first = ledger.requests.len() == 1;
        if !first {
            server.client_came_back.notify_one();
        }
        match key.as_ref().map(|key| ledger.keys.get(key)) {
            Some(Some(Entry::Done(id))) => {
                let id = *id;
                ledger.replays += 1;
                return created(id);
            }
            Some(Some(Entry::InFlight)) => {
                ledger.conflicts += 1;
                (None, first)
            }
            Some(None) | None => {
                if let Some(key) = &key {
                    ledger.keys.insert(key.clone(), Entry::InFlight);
                }
                let id = u64::try_from(ledger.records.len()).unwrap() + 1;
                ledger.records.push(id);
                (Some(id), first)
            }
        }
    };
    let Some(id) = id else {
        server.first_stored.notified().await;
        return in_progress();
    };
    // The request finishes in a task of its own: hyper drops this handler
    // when the client hangs up, and the response must be stored regardless,
    // or the key would stay in flight for ever.
    let finish = tokio::spawn(async move {
        if first {
            server.client_came_back.notified().await;
        }
        if let Some(key) = key {
            server
                .ledger
                .lock()
                .unwrap()
                .keys
                .insert(key, Entry::Done(id));
            if first {
                server.first_stored.notify_one();
            }
        }
        id
    });
    created(finish.await.unwrap())
}

/// Serves `POST /records` on a fresh loopback port for the rest of the test;
/// the runtime drops the server, and any request still stalled, when the
/// test ends.
async fn serve() -> (String, Arc<Server>) {
    let server = Arc::new(Server {
        ledger: Mutex::new(Ledger::default()),
        client_came_back: Notify::new(),
        first_stored: Notify::new(),
    });
    let app = Router::new()
        .route("/records", post(create_record))
        .with_state(Arc::clone(&server));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/records", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, server)
}

fn client() -> reqwest::Client {
    // No proxy: the environment's proxy settings must not reroute loopback.
    reqwest::Client::builder().no_proxy().build().unwrap()
}

#[derive(Debug, Classify)]
enum CreateError {
    #[classify(transient, hint = "{0}; the server may have acted on it all the same")]
    Timeout(Elapsed),
    /// A response that is not 2xx: its status, `x-should-retry` and
    /// `retry-after-ms` decide.
    #[classify(transparent)]
    Status(HttpError),
    #[classify(transparent)]
    Http(reqwest::Error),
    #[classify(invalid, hint = "the server answered {0:?}, not a record id")]
    NotAnId(String),
}

impl From<Elapsed> for CreateError {
    fn from(elapsed: Elapsed) -> Self {
        CreateError::Timeout(elapsed)
    }
}

impl From<HttpError> for CreateError {
    fn from(error: HttpError) -> Self {
        CreateError::Status(error)
    }
}

impl From<reqwest::Error> for CreateError {
    fn from(error: reqwest::Error) -> Self {
        CreateError::Http(error)
    }
}

thread_local! {
    /// Each attempt's number and idempotency key, as the client saw them.
    static ATTEMPTS: RefCell<Vec<(u32, IdempotencyKey)>> = const { RefCell::new(Vec::new()) };
    /// The variant of each error that was retried.
    static RETRIED: RefCell<Vec<&'static str>> = const { RefCell::new(Vec::new()) };
}

fn record_retry(error: &CreateError, _: &RetryEvent) {
    RETRIED.with_borrow_mut(|retried| retried.push(error.variant()));
}

/// Records the attempt and returns its context.
fn attempt() -> Attempt {
    let attempt = Attempt::current().expect("a retried body has an attempt context");
    ATTEMPTS.with_borrow_mut(|a| a.push((attempt.number(), attempt.idempotency_key())));
    attempt
}

/// One attempt at `POST url`: the new record's id.
async fn post_record(
    client: &reqwest::Client,
    url: &str,
    key: Option<IdempotencyKey>,
) -> Result<u64, CreateError> {
    let mut request = client.post(url);
    if let Some(key) = key {
        request = request.header(IDEMPOTENCY_KEY, key.to_string());
    }
    let response = request.send().await?;
    if !response.status().is_success() {
        return Err(HttpError::from(&response).into());
    }
    let body = response.text().await?;
    body.parse().map_err(|_| CreateError::NotAnId(body))
}

#[retry(timeout = "100ms", base = "20ms", jitter = "none", max = 5, notify = record_retry)]
async fn create_with_key(client: &reqwest::Client, url: &str) -> Result<u64, CreateError> {
    let key = attempt().idempotency_key();
    post_record(client, url, Some(key)).await
}

#[retry(timeout = "100ms", base = "20ms", jitter = "none", max = 5, notify = record_retry)]
async fn create_without_key(client: &reqwest::Client, url: &str) -> Result<u64, CreateError> {
    attempt();
    post_record(client, url, None).await
}

#[tokio::test]
async fn a_key_makes_the_retry_replay_the_committed_record() {
    let (url, server) = serve().await;

    let id = create_with_key(&client(), &url).await.unwrap();

    // Attempt 1 committed, then timed out; attempt 2 found it in flight and
    // waited as the 409 asked; attempt 3 got the stored response.
    assert_eq!(RETRIED.take(), ["Timeout", "Status409"]);
    let attempts = ATTEMPTS.take();
    let numbers: Vec<u32> = attempts.iter().map(|(n, _)| *n).collect();
    assert_eq!(numbers, [1, 2, 3]);
    let key = attempts[0].1;
    assert!(
        attempts.iter().all(|(_, k)| *k == key),
        "one key for every attempt: {attempts:?}"
    );

    let ledger = server.ledger.lock().unwrap();
    assert_eq!(ledger.records, [1], "exactly one record");
    assert_eq!(id, 1, "the client gets the committed record");
    let sent = Some(key.to_string());
    assert_eq!(ledger.requests, [sent.clone(), sent.clone(), sent]);
    assert_eq!((ledger.conflicts, ledger.replays), (1, 1));
}

#[tokio::test]
async fn without_a_key_the_retry_creates_a_second_record() {
    let (url, server) = serve().await;

    let id = create_without_key(&client(), &url).await.unwrap();

    // Attempt 1 committed record 1, then timed out; the server could not
    // tell attempt 2 was a repeat, so it committed record 2.
    assert_eq!(RETRIED.take(), ["Timeout"]);
    assert_eq!(ATTEMPTS.take().len(), 2);
    let ledger = server.ledger.lock().unwrap();
    assert_eq!(ledger.records, [1, 2], "a duplicate record");
    assert_eq!(id, 2, "the client never learns of record 1");
    assert_eq!(ledger.requests, [None, None]);
    assert_eq!((ledger.conflicts, ledger.replays), (0, 0));
}

// ------------------------------------------- nested calls keep their keys

/// A store of orders that deduplicates by `Idempotency-Key`: a repeated
/// key is answered with the receipt the key first got.
#[derive(Default)]
struct OrderBook {
    /// The order each committed record holds, in commit order.
    records: Vec<String>,
    /// Each key's receipt: the record's id.
    receipts: HashMap<String, u64>,
}

/// `POST /orders` with the order's name as the body.
async fn place_order(
    State(book): State<Arc<Mutex<OrderBook>>>,
    headers: HeaderMap,
    body: String,
) -> Response {
    let key = headers
        .get(IDEMPOTENCY_KEY)
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    let mut book = book.lock().unwrap();
    if let Some(id) = key.as_ref().and_then(|key| book.receipts.get(key)) {
        return created(*id);
    }
    book.records.push(body);
    let id = u64::try_from(book.records.len()).unwrap();
    if let Some(key) = key {
        book.receipts.insert(key, id);
    }
    created(id)
}

async fn serve_orders() -> (String, Arc<Mutex<OrderBook>>) {
    let book = Arc::new(Mutex::new(OrderBook::default()));
    let app = Router::new()
        .route("/orders", post(place_order))
        .with_state(Arc::clone(&book));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/orders", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, book)
}

/// An order, identified by what it asks for: `Hash`, so a nested call's
/// key is derived from it.
#[derive(Debug, Clone, Hash, PartialEq, Eq)]
struct Order(&'static str);

/// The shop's client: the receiver, which the key's fingerprint leaves out.
struct Shop {
    client: reqwest::Client,
    url: String,
}

impl Shop {
    /// Places `order`, sending the attempt's key; answers the receipt.
    #[retry(max = 2, base = "1ms")]
    async fn create_order(&self, order: &Order) -> Result<(String, u64), CreateError> {
        let key = Attempt::current().unwrap().idempotency_key();
        let response = self
            .client
            .post(&self.url)
            .header(IDEMPOTENCY_KEY, key.to_string())
            .body(order.0)
            .send()
            .await?;
        let id = response.text().await?.parse().unwrap();
        Ok((order.0.to_owned(), id))
    }

    /// A cached lookup, made only while the cache is cold.
    #[retry(max = 2, base = "1ms")]
    async fn search(&self, query: &str) -> Result<usize, CreateError> {
        Ok(query.len())
    }
}

/// The outer task: fails its first attempt after its nested calls, so the
/// nested calls run again under the retry.
#[derive(Debug)]
struct StepFailed;

impl Classify for StepFailed {
    fn classify(&self) -> tenacious::ErrorClass {
        tenacious::ErrorClass::Transient
    }
}

impl From<CreateError> for StepFailed {
    fn from(_: CreateError) -> Self {
        StepFailed
    }
}

#[retry(max = 2, base = "1ms")]
async fn order_with_cached_search(
    shop: &Shop,
    cache: &Mutex<Option<usize>>,
) -> Result<(String, u64), StepFailed> {
    let cached = *cache.lock().unwrap();
    if cached.is_none() {
        let hits = shop.search("rust book").await?;
        *cache.lock().unwrap() = Some(hits);
    }
    let receipt = shop.create_order(&Order("rust book")).await?;
    if Attempt::current().unwrap().number() == 1 {
        return Err(StepFailed); // a later step fails: the task is retried
    }
    Ok(receipt)
}

#[tokio::test]
async fn a_nested_call_keeps_its_key_when_the_retry_skips_a_cached_call() {
    let (url, book) = serve_orders().await;
    let shop = Shop {
        client: client(),
        url,
    };
    let cache = Mutex::new(None);
    let (order, id) = order_with_cached_search(&shop, &cache).await.unwrap();
    assert_eq!((order.as_str(), id), ("rust book", 1));
    let book = book.lock().unwrap();
    assert_eq!(book.records, ["rust book"], "the order was placed twice");
}

#[retry(max = 2, base = "1ms")]
async fn two_orders_joined(shop: &Shop) -> Result<[(String, u64); 2], StepFailed> {
    let (a, b) = (Order("a"), Order("b"));
    // The two calls start in one order on the first attempt and in the
    // other on the retry, as timing can make them.
    let (first, second) = if Attempt::current().unwrap().number() == 1 {
        let (a, b) = tokio::join!(shop.create_order(&a), shop.create_order(&b));
        (a?, b?)
    } else {
        let (b, a) = tokio::join!(shop.create_order(&b), shop.create_order(&a));
        (a?, b?)
    };
    if Attempt::current().unwrap().number() == 1 {
        return Err(StepFailed);
    }
    Ok([first, second])
}

#[tokio::test]
async fn concurrent_nested_calls_keep_their_keys_when_they_start_in_another_order() {
    let (url, book) = serve_orders().await;
    let shop = Shop {
        client: client(),
        url,
    };
    let receipts = two_orders_joined(&shop).await.unwrap();
    let book = book.lock().unwrap();
    let mut records = book.records.clone();
    records.sort();
    assert_eq!(records, ["a", "b"], "one record each");
    for (order, id) in receipts {
        assert_eq!(
            book.records[usize::try_from(id).unwrap() - 1],
            order,
            "{order} got another's receipt"
        );
    }
}

#[retry(max = 2, base = "1ms")]
async fn first_of_two_orders(shop: &Shop) -> Result<(String, u64), StepFailed> {
    let (a, b) = (Order("a"), Order("b"));
    let winner = if Attempt::current().unwrap().number() == 1 {
        tokio::select! {
            biased;
            a = shop.create_order(&a) => a?,
            b = shop.create_order(&b) => b?,
        }
    } else {
        tokio::select! {
            biased;
            b = shop.create_order(&b) => b?,
            a = shop.create_order(&a) => a?,
        }
    };
    if Attempt::current().unwrap().number() == 1 {
        return Err(StepFailed);
    }
    Ok(winner)
}

#[tokio::test]
async fn a_select_that_drops_a_nested_call_leaves_the_others_key_alone() {
    let (url, book) = serve_orders().await;
    let shop = Shop {
        client: client(),
        url,
    };
    let (order, id) = first_of_two_orders(&shop).await.unwrap();
    let book = book.lock().unwrap();
    assert_eq!(
        book.records[usize::try_from(id).unwrap() - 1],
        order,
        "{order} got another's receipt"
    );
    // Each order was committed at most once, whichever branch won when.
    for name in ["a", "b"] {
        assert!(
            book.records.iter().filter(|r| *r == name).count() <= 1,
            "{:?}",
            book.records
        );
    }
}

/// A top-level call named by its order: the agent may issue it again after
/// a give-up, and the store then answers with the first receipt.
#[retry(max = 1, key = order.0)]
async fn create_named_order(shop: &Shop, order: &Order) -> Result<u64, CreateError> {
    let key = Attempt::current().unwrap().idempotency_key();
    let response = shop
        .client
        .post(&shop.url)
        .header(IDEMPOTENCY_KEY, key.to_string())
        .body(order.0)
        .send()
        .await?;
    Ok(response.text().await?.parse().unwrap())
}

#[tokio::test]
async fn a_call_named_by_key_is_placed_once_when_issued_again() {
    let (url, book) = serve_orders().await;
    let shop = Shop {
        client: client(),
        url,
    };
    let first = create_named_order(&shop, &Order("lamp")).await.unwrap();
    // The agent lost the answer and issues the same call again.
    let again = create_named_order(&shop, &Order("lamp")).await.unwrap();
    let other = create_named_order(&shop, &Order("desk")).await.unwrap();
    assert_eq!(first, again);
    assert_ne!(first, other);
    assert_eq!(book.lock().unwrap().records, ["lamp", "desk"]);
    // The key is the documented one, so another process computes it too.
    let seen = book
        .lock()
        .unwrap()
        .receipts
        .contains_key(&IdempotencyKey::derive("create_named_order", "lamp").to_string());
    assert!(seen, "the key is not the documented derive(fn name, value)");
}

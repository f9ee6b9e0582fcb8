//! The demo's tools: three `#[retry]` fns whose every attempt goes through a
//! seeded `tenacious::chaos` injector, and the order store the third one
//! writes to.
//!
//! - `search`: a flaky search (transient faults, hangs the call layer's
//!   `timeout` cuts off, rejected queries);
//! - `price`: a rate-limited API that answers 429 with a `Retry-After`;
//! - `create_order`: a create with a side effect, sent with the attempt's
//!   idempotency key; its answer may be lost *after* the store acted, the
//!   case that turns a blind retry into a duplicate order.
//!
//! A fault is rare among the faults only where it would end most tasks:
//! `Fatal` (revoked credentials) is one pick in twenty.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::fmt;
use std::time::Duration;

use tenacious::chaos::{Chaos, ChaosError, Fault};
use tenacious::{
    Attempt, Classify, Elapsed, ErrorClass, Failure, IdempotencyKey, RetryEvent, StopReason, retry,
};

/// How long one attempt of each tool takes on the virtual clock.
const SEARCH_LATENCY: Duration = Duration::from_millis(300);
const PRICE_LATENCY: Duration = Duration::from_millis(150);
const CREATE_LATENCY: Duration = Duration::from_millis(250);

/// The tools a model may call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Tool {
    /// `search {"query"}`: products matching a query.
    Search,
    /// `price {"sku", "region"}`: a product's unit price.
    Price,
    /// `create_order {"task", "sku", "quantity", "unit_price_cents"}`.
    CreateOrder,
}

impl Tool {
    /// Every tool, in the order the demo's tables list them.
    pub const ALL: [Self; 3] = [Self::Search, Self::Price, Self::CreateOrder];

    /// The tool's name, as the model calls it; also the name of its
    /// `#[retry]` fn and of its record in `tenacious::stats`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Search => "search",
            Self::Price => "price",
            Self::CreateOrder => "create_order",
        }
    }

    /// The place of this tool in [`Tool::ALL`].
    pub const fn index(self) -> usize {
        self as usize
    }
}

/// A tool call the model made: which tool, with which arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Call {
    /// Search the catalogue.
    Search {
        /// What to look for.
        query: String,
    },
    /// Ask the pricing API.
    Price {
        /// The product.
        sku: String,
        /// Which regional endpoint to ask.
        region: &'static str,
    },
    /// Place the order.
    CreateOrder(OrderRequest),
}

impl Call {
    /// The tool this call is for.
    pub const fn tool(&self) -> Tool {
        match self {
            Self::Search { .. } => Tool::Search,
            Self::Price { .. } => Tool::Price,
            Self::CreateOrder(_) => Tool::CreateOrder,
        }
    }

    /// The arguments as the model wrote them: the JSON the task guard
    /// fingerprints to recognise a repeated call.
    pub fn arguments(&self) -> String {
        let value = match self {
            Self::Search { query } => serde_json::json!({ "query": query }),
            Self::Price { sku, region } => serde_json::json!({ "sku": sku, "region": region }),
            Self::CreateOrder(order) => serde_json::json!({
                "task": order.task,
                "sku": order.sku,
                "quantity": order.quantity,
                "unit_price_cents": order.unit_price_cents,
            }),
        };
        value.to_string()
    }
}

/// The order the model asks `create_order` to place.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct OrderRequest {
    /// The task placing it: one order per task is the right number.
    pub task: u32,
    /// The product.
    pub sku: String,
    /// How many.
    pub quantity: u32,
    /// The price the model was quoted.
    pub unit_price_cents: u64,
}

impl OrderRequest {
    /// The name of the order's `create_order` call, its idempotency key's
    /// source: one order per task, however often the call is issued.
    pub fn key(&self) -> String {
        format!("task-{}", self.task)
    }
}

/// A product the search found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    /// Its stock-keeping unit, what `price` and `create_order` take.
    pub sku: String,
    /// Its name.
    pub title: &'static str,
}

/// What a successful call returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Output {
    /// `search`: the matching products, best first.
    Hits(Vec<Hit>),
    /// `price`: the unit price in cents.
    Price(u64),
    /// `create_order`: the order's id.
    Order(String),
}

/// The error of one attempt at a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Classify)]
pub enum ToolError {
    /// The attempt ran out of its `timeout`: the tool never answered.
    #[classify(
        transient,
        hint = "the tool did not answer in time: call it again later, or ask for less at once"
    )]
    Timeout(Elapsed),
    /// A fault the chaos injector chose: classified, with its hint and
    /// `Retry-After`, by the fault.
    #[classify(transparent)]
    Injected(ChaosError),
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Timeout(elapsed) => elapsed.fmt(f),
            Self::Injected(fault) => fault.fmt(f),
        }
    }
}

impl std::error::Error for ToolError {}

impl From<Elapsed> for ToolError {
    fn from(elapsed: Elapsed) -> Self {
        Self::Timeout(elapsed)
    }
}

impl From<ChaosError> for ToolError {
    fn from(fault: ChaosError) -> Self {
        Self::Injected(fault)
    }
}

/// The products the search knows, with their list prices in cents.
pub const CATALOGUE: [(&str, u64); 8] = [
    ("usb-c cable", 1_299),
    ("mechanical keyboard", 8_900),
    ("27-inch monitor", 27_900),
    ("noise-cancelling headphones", 19_900),
    ("laptop stand", 3_450),
    ("webcam", 5_900),
    ("desk lamp", 2_800),
    ("ergonomic mouse", 4_200),
];

/// The regional endpoints of the pricing API, in the order a model tries
/// them.
pub const REGIONS: [&str; 3] = ["eu-west", "us-east", "ap-south"];

/// An order the store holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Order {
    /// Its id.
    pub id: String,
    /// What was asked.
    pub request: OrderRequest,
}

/// The order service's database: it deduplicates requests by their
/// `Idempotency-Key`, as Stripe-style APIs do, answering a key it has seen
/// with the order it created the first time.
#[derive(Debug, Default)]
pub struct OrderStore {
    orders: Vec<Order>,
    by_key: HashMap<IdempotencyKey, usize>,
    replays: u64,
}

impl OrderStore {
    /// Creates the order, or answers with the one created under `key`.
    fn create(&mut self, key: IdempotencyKey, request: &OrderRequest) -> String {
        if let Some(&at) = self.by_key.get(&key) {
            self.replays += 1;
            return self.orders[at].id.clone();
        }
        let id = format!("ord-{:04}", self.orders.len() + 1);
        self.by_key.insert(key, self.orders.len());
        self.orders.push(Order {
            id: id.clone(),
            request: request.clone(),
        });
        id
    }

    /// Every order created, in order.
    pub fn orders(&self) -> &[Order] {
        &self.orders
    }

    /// Requests answered from a stored order: each would have created a
    /// duplicate without the idempotency key.
    pub const fn replays(&self) -> u64 {
        self.replays
    }

    /// Orders beyond the first for the same task: side effects repeated.
    pub fn duplicates(&self) -> u64 {
        let mut per_task: HashMap<u32, u64> = HashMap::new();
        for order in &self.orders {
            *per_task.entry(order.request.task).or_default() += 1;
        }
        per_task.values().map(|n| n - 1).sum()
    }
}

/// One logical call as the call layer made it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallRecord {
    /// The tool called.
    pub tool: Tool,
    /// Attempts made, the first included.
    pub attempts: u32,
    /// Every failed attempt's class and variant, in order.
    pub errors: Vec<(ErrorClass, &'static str)>,
    /// Time slept between attempts (backoffs and `Retry-After` waits).
    pub waited: Duration,
    /// Why the call gave up; `None` if it succeeded.
    pub stop: Option<StopReason>,
}

impl CallRecord {
    /// Whether the call succeeded.
    pub const fn succeeded(&self) -> bool {
        self.stop.is_none()
    }

    /// Whether the call made more than one attempt.
    pub const fn retried(&self) -> bool {
        self.attempts > 1
    }
}

/// A retried failure, as `notify` reported it before the sleep.
type Retried = (ErrorClass, &'static str, Duration);

thread_local! {
    // `notify` is a path to a plain fn, so what it sees goes through a
    // thread-local; each demo runs on one thread (a current-thread runtime),
    // so runs on other threads (parallel tests) keep their own.
    static RETRIED: RefCell<Vec<Retried>> = const { RefCell::new(Vec::new()) };
}

/// The `notify` hook of every tool: what failed and how long the call
/// layer waits before trying again.
fn note_retry(error: &ToolError, event: &RetryEvent) {
    RETRIED.with_borrow_mut(|retried| {
        retried.push((event.class, error.variant(), event.delay));
    });
}

/// An injected `Timeout` is played as a tool that never answers, so the
/// attempt ends the way a real one does: cut off by the call layer's own
/// `timeout`.
async fn hang_on_timeout<T>(result: Result<T, ToolError>) -> Result<T, ToolError> {
    if let Err(ToolError::Injected(fault)) = &result
        && fault.fault() == Fault::Timeout
    {
        std::future::pending::<()>().await;
    }
    result
}

/// `faults` with each one repeated `weight` times: [`Chaos`] picks
/// uniformly from the list.
fn weighted(faults: &[(Fault, usize)]) -> Vec<Fault> {
    faults
        .iter()
        .flat_map(|&(fault, weight)| std::iter::repeat_n(fault, weight))
        .collect()
}

/// The tools of one demo run: their injectors, the order store, and a count
/// of the attempts their bodies ran.
#[derive(Debug)]
pub struct Tools {
    search_chaos: Chaos,
    price_chaos: Chaos,
    create_chaos: Chaos,
    store: RefCell<OrderStore>,
    bodies: Cell<u64>,
}

impl Tools {
    /// Tools failing at `rate`, their faults drawn from `seed`.
    pub fn new(seed: u64, rate: f64) -> Self {
        let search = weighted(&[
            (Fault::Transient, 8),
            (Fault::Timeout, 7),
            (Fault::InvalidOutput, 4),
            (Fault::Fatal, 1),
        ]);
        let price = weighted(&[
            (Fault::RateLimited(Duration::from_secs(1)), 7),
            (Fault::RateLimited(Duration::from_secs(2)), 6),
            (Fault::Transient, 6),
            (Fault::Fatal, 1),
        ]);
        // Both lose the answer after the order was stored.
        let create = [Fault::Timeout, Fault::Transient];
        // Each injector has its own stream, so one tool's rolls do not
        // shift another's when the agent takes another route.
        let chaos = |stream: u64, faults: &[Fault]| {
            Chaos::new(seed ^ stream.wrapping_mul(0x9e37_79b9_7f4a_7c15))
                .rate(rate)
                .faults(faults)
        };
        Self {
            search_chaos: chaos(1, &search),
            price_chaos: chaos(2, &price),
            create_chaos: chaos(3, &create),
            store: RefCell::new(OrderStore::default()),
            bodies: Cell::new(0),
        }
    }

    /// Makes `call` through its tool's `#[retry]` fn, and records what the
    /// call layer did.
    pub async fn call(&self, call: &Call) -> (Result<Output, Failure<ToolError>>, CallRecord) {
        RETRIED.with_borrow_mut(Vec::clear);
        let result = match call {
            Call::Search { query } => search(self, query).await.map(Output::Hits),
            Call::Price { sku, region } => price(self, sku, region).await.map(Output::Price),
            Call::CreateOrder(order) => create_order(self, order).await.map(Output::Order),
        };
        let retried = RETRIED.with_borrow_mut(std::mem::take);
        let record = match &result {
            Ok(_) => CallRecord {
                tool: call.tool(),
                attempts: u32::try_from(retried.len()).map_or(u32::MAX, |n| n.saturating_add(1)),
                errors: retried
                    .iter()
                    .map(|&(class, variant, _)| (class, variant))
                    .collect(),
                waited: retried.iter().map(|r| r.2).sum(),
                stop: None,
            },
            // The failure's own provenance: every attempt, the last included.
            Err(failure) => CallRecord {
                tool: call.tool(),
                attempts: u32::try_from(failure.attempts().len()).unwrap_or(u32::MAX),
                errors: failure
                    .attempts()
                    .iter()
                    .map(|a| (a.class, a.variant))
                    .collect(),
                waited: failure.waited(),
                stop: Some(failure.stop_reason()),
            },
        };
        (result, record)
    }

    /// The order store.
    pub fn store(&self) -> std::cell::Ref<'_, OrderStore> {
        self.store.borrow()
    }

    /// Attempts the tools' bodies started: counted inside the retried fns,
    /// independently of what the call layer reports.
    pub fn attempts_run(&self) -> u64 {
        self.bodies.get()
    }

    fn start_attempt(&self) {
        self.bodies.set(self.bodies.get() + 1);
    }
}

/// One attempt at the search: matches catalogue products whose name the
/// query contains.
#[retry(
    max = 3,
    base = "200ms",
    timeout = "2s",
    notify = note_retry,
    stats = "search"
)]
async fn search(tools: &Tools, query: &str) -> Result<Vec<Hit>, Failure<ToolError>> {
    tools.start_attempt();
    tokio::time::sleep(SEARCH_LATENCY).await;
    let result = tools.search_chaos.inject(|| {
        Ok(CATALOGUE
            .iter()
            .enumerate()
            .filter(|(_, (title, _))| query.contains(title))
            .map(|(i, &(title, _))| Hit {
                sku: format!("SKU-{:03}", i + 1),
                title,
            })
            .collect())
    });
    hang_on_timeout(result).await
}

/// One attempt at the pricing API. A 429's `Retry-After` (1 or 2 s) is
/// waited; one over 5 s would end the call at once.
#[retry(
    max = 4,
    base = "250ms",
    max_retry_after = "5s",
    notify = note_retry,
    stats = "price"
)]
async fn price(tools: &Tools, sku: &str, _region: &str) -> Result<u64, Failure<ToolError>> {
    tools.start_attempt();
    tokio::time::sleep(PRICE_LATENCY).await;
    // Every region quotes the list price.
    tools.price_chaos.inject(|| {
        let index = sku
            .strip_prefix("SKU-")
            .and_then(|n| n.parse::<usize>().ok())
            .and_then(|n| n.checked_sub(1))
            .unwrap_or(0);
        Ok(CATALOGUE.get(index).map_or(0, |&(_, cents)| cents))
    })
}

/// One attempt at placing the order, sent with the call's idempotency key:
/// every attempt of this call sends the same key, so a retry after a lost
/// answer gets the stored order back instead of a second one. The key is
/// named by the task (`key = order.key()`), so when the call gives up with
/// its answer lost, the agent can issue it again: the store answers with
/// the order it already holds.
#[retry(
    max = 4,
    base = "200ms",
    timeout = "2s",
    deadline = "15s",
    notify = note_retry,
    stats = "create_order",
    key = order.key()
)]
async fn create_order(tools: &Tools, order: &OrderRequest) -> Result<String, Failure<ToolError>> {
    tools.start_attempt();
    let key = Attempt::current()
        .expect("a #[retry] body runs inside an attempt")
        .idempotency_key();
    tokio::time::sleep(CREATE_LATENCY).await;
    // The store acts first; then the answer may be lost on the way back.
    let result = tools
        .create_chaos
        .inject_after(|| Ok(tools.store.borrow_mut().create(key, order)));
    hang_on_timeout(result).await
}

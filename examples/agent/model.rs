//! The scripted model: a deterministic stand-in for an LLM, with no network.
//!
//! It writes each task's plan as JSON — malformed now and then, as a seeded
//! injector decides — and then plays a sensible tool-calling policy: search
//! for the product, price it, place the order, and read every failure's
//! `Observation` to decide what to do next. What a real model would cost is
//! counted in tokens from the length of what it reads and writes.

use std::time::Duration;

use serde::Deserialize;
use tenacious::agent::{Cost, Observation, Reask, Status};
use tenacious::chaos::{Chaos, Fault};

use super::tools::{CATALOGUE, Call, OrderRequest, Output, REGIONS};

/// Tokens of the system prompt and the tool schemas, sent on every turn.
const SYSTEM_TOKENS: u64 = 320;

/// What a token costs, in millionths of a dollar: $3 per million tokens.
pub const MICROS_PER_TOKEN: u64 = 3;

/// How long the model takes to answer one turn, on the virtual clock.
pub const TURN_LATENCY: Duration = Duration::from_millis(600);

/// The most units one order may ask for.
pub const MAX_QUANTITY: u32 = 100;

/// What a turn costs: its prompt and its answer, at about four characters
/// a token.
fn cost(texts: &[&str]) -> Cost {
    let chars: usize = texts.iter().map(|text| text.chars().count()).sum();
    let tokens = SYSTEM_TOKENS + u64::try_from(chars.div_ceil(4)).unwrap_or(u64::MAX);
    Cost::tokens(tokens) + Cost::money_micros(tokens.saturating_mul(MICROS_PER_TOKEN))
}

/// One task: order some units of a product.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Task {
    /// Its number, from 1.
    pub id: u32,
    /// The product, by name.
    pub product: &'static str,
    /// How many to order.
    pub quantity: u32,
}

impl Task {
    /// Task `id` of a run seeded with `seed`.
    pub fn new(id: u32, seed: u64) -> Self {
        let mix = seed.wrapping_add(u64::from(id).wrapping_mul(7));
        // The remainder is below the catalogue's length.
        #[allow(clippy::cast_possible_truncation)]
        let product = CATALOGUE[(mix % CATALOGUE.len() as u64) as usize].0;
        Self {
            id,
            product,
            quantity: 1 + id % 5,
        }
    }

    /// The prompt that asks for the plan.
    fn prompt(&self) -> String {
        format!(
            "Order {} x {} at the best price. Reply with only a JSON object: \
             {{\"product\": string, \"query\": string, \"quantity\": 1..{MAX_QUANTITY}}}.",
            self.quantity, self.product
        )
    }
}

/// The plan the model must produce before it calls any tool.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    /// The product to order.
    pub product: String,
    /// What to search for.
    pub query: String,
    /// How many to order.
    pub quantity: u32,
}

/// The validator the decision layer runs on the model's output: it must
/// parse as a [`Plan`] with a query and a quantity in range.
pub fn validate(output: &str) -> Result<Plan, String> {
    let plan: Plan = serde_json::from_str(output).map_err(|e| format!("not a plan: {e}"))?;
    if plan.query.trim().is_empty() {
        return Err("`query` is empty".to_owned());
    }
    if !(1..=MAX_QUANTITY).contains(&plan.quantity) {
        return Err(format!(
            "`quantity` must be 1 to {MAX_QUANTITY}, not {}",
            plan.quantity
        ));
    }
    Ok(plan)
}

/// The mock model.
#[derive(Debug)]
pub struct Model {
    /// Decides which answers come out malformed.
    slips: Chaos,
}

impl Model {
    /// A model whose plans come out malformed at `rate`, as drawn from
    /// `seed`.
    pub fn new(seed: u64, rate: f64) -> Self {
        Self {
            slips: Chaos::new(seed ^ 0x6d6f_6465_6c00)
                .rate(rate)
                .faults(&[Fault::InvalidOutput]),
        }
    }

    /// One generation of `task`'s plan. On a re-ask the prompt carries the
    /// latest validation error and nothing else, so it does not grow.
    pub fn plan(&self, task: &Task, reask: Reask<'_, String, String>) -> (String, Cost) {
        let prompt = match reask.feedback() {
            Some(feedback) => format!("{}\n{feedback}", task.prompt()),
            None => task.prompt(),
        };
        let plan = serde_json::json!({
            "product": task.product,
            "query": format!("{} price", task.product),
            "quantity": task.quantity,
        })
        .to_string();
        let output = match self.slips.roll() {
            Some(_) => slip(&plan, task, reask.try_number()),
            None => plan,
        };
        let cost = cost(&[&prompt, &output]);
        (output, cost)
    }
}

/// The ways a model's JSON goes wrong: cut off, wrapped in prose, a field
/// of the wrong type, a value out of range.
fn slip(plan: &str, task: &Task, try_number: u32) -> String {
    let quantity = format!("\"quantity\":{}", task.quantity);
    match (task.id + try_number) % 4 {
        0 => plan.chars().take(plan.chars().count() * 2 / 3).collect(),
        1 => format!("Sure! Here is the plan: {plan}"),
        2 => plan.replace(&quantity, "\"quantity\":\"a few\""),
        _ => plan.replace(&quantity, "\"quantity\":0"),
    }
}

/// Where the task stands.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Stage {
    Search,
    Price { sku: String },
    Order { sku: String, unit_price_cents: u64 },
    Done { order: String },
}

/// What the model does after a failed round, having read its observation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reaction {
    /// Make the same call again.
    Retry,
    /// Wait as long as the server asked, then make the same call again.
    WaitThenRetry(Duration),
    /// Call again with other arguments.
    Rephrase,
    /// Stop the task: the reason.
    GiveUp(String),
}

/// The model's tool-calling policy for one task: search, price, order.
#[derive(Debug)]
pub struct Agent {
    task: Task,
    plan: Plan,
    stage: Stage,
    /// Which phrasing of the query, and which region of the pricing API,
    /// the model is on: the routes a direction switch moves along.
    query_route: usize,
    region_route: usize,
    calls: u32,
}

impl Agent {
    /// The policy for `task`, following its validated `plan`.
    pub const fn new(task: Task, plan: Plan) -> Self {
        Self {
            task,
            plan,
            stage: Stage::Search,
            query_route: 0,
            region_route: 0,
            calls: 0,
        }
    }

    /// Thought → Action: the next tool call, with its id, and what the turn
    /// that chose it cost (it reads `context`: the latest observation, if
    /// any).
    pub fn next_call(&mut self, context: &str) -> (String, Call, Cost) {
        self.calls += 1;
        let id = format!("call_{}_{}", self.task.id, self.calls);
        let call = match &self.stage {
            Stage::Search => Call::Search {
                query: self.query(),
            },
            Stage::Price { sku } => Call::Price {
                sku: sku.clone(),
                region: REGIONS[self.region_route % REGIONS.len()],
            },
            Stage::Order {
                sku,
                unit_price_cents,
            } => Call::CreateOrder(OrderRequest {
                task: self.task.id,
                sku: sku.clone(),
                quantity: self.plan.quantity,
                unit_price_cents: *unit_price_cents,
            }),
            // `done` is checked before every turn.
            Stage::Done { .. } => unreachable!("no call after the order is placed"),
        };
        let cost = cost(&[&self.task.prompt(), context, &call.arguments()]);
        (id, call, cost)
    }

    /// The query of the current route: the plan's own, then rephrasings.
    fn query(&self) -> String {
        let product = &self.plan.product;
        match self.query_route % 4 {
            0 => self.plan.query.clone(),
            1 => format!("buy {product}"),
            2 => format!("{product} best price"),
            _ => format!("{product} in stock"),
        }
    }

    /// A call succeeded: move on.
    pub fn advance(&mut self, output: Output) {
        self.stage = match (std::mem::replace(&mut self.stage, Stage::Search), output) {
            (Stage::Search, Output::Hits(hits)) => match hits.into_iter().next() {
                Some(hit) => Stage::Price { sku: hit.sku },
                // Nothing found: the next turn searches another way.
                None => {
                    self.query_route += 1;
                    Stage::Search
                }
            },
            (Stage::Price { sku }, Output::Price(unit_price_cents)) => Stage::Order {
                sku,
                unit_price_cents,
            },
            (Stage::Order { .. }, Output::Order(order)) => Stage::Done { order },
            (stage, _) => stage,
        };
    }

    /// The order's id, once it is placed.
    pub fn placed(&self) -> Option<&str> {
        match &self.stage {
            Stage::Done { order } => Some(order),
            _ => None,
        }
    }

    /// A round failed and the guard said reflect: the model reads the
    /// observation and decides.
    pub fn reflect(&mut self, observation: &Observation) -> Reaction {
        if let Stage::Order { .. } = self.stage
            && observation.status == Status::RetryLater
        {
            // The store may have acted before the answer was lost. The
            // call is named by its task (`key = order.key()`), so issuing
            // it again sends the same idempotency key, and the store
            // answers with the order it holds rather than placing another.
            return Reaction::Retry;
        }
        match observation.status {
            Status::RetryLater => Reaction::Retry,
            Status::WaitAndRetry => Reaction::WaitThenRetry(Duration::from_millis(
                observation.retry_after_ms.unwrap_or(0),
            )),
            Status::FixInput => {
                self.switch_direction();
                Reaction::Rephrase
            }
            // The guard escalates a fatal error before the model reads it.
            _ => Reaction::GiveUp(observation.system_hint.clone()),
        }
    }

    /// The guard said the same failure keeps repeating: take the next route
    /// (another phrasing of the query, another region of the pricing API).
    pub fn switch_direction(&mut self) {
        match self.stage {
            Stage::Search => self.query_route += 1,
            Stage::Price { .. } => self.region_route += 1,
            Stage::Order { .. } | Stage::Done { .. } => {}
        }
    }
}

// Every shape a `check` may have compiles: a borrow of the value or of a
// borrowed form of it, by a fn, an associated fn or one with a named
// lifetime, on a sync or an async fn.
use tenacious::{Classify, ErrorClass, retry};

#[derive(Debug)]
struct Empty;

impl Classify for Empty {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

fn whole(text: &String) -> Result<(), Empty> {
    if text.is_empty() { Err(Empty) } else { Ok(()) }
}

fn borrowed(text: &str) -> Result<(), Empty> {
    if text.is_empty() { Err(Empty) } else { Ok(()) }
}

fn named<'a>(text: &'a str) -> Result<(), Empty> {
    borrowed(text)
}

fn bytes(body: &[u8]) -> Result<(), Empty> {
    if body.is_empty() { Err(Empty) } else { Ok(()) }
}

struct Completion;

impl Completion {
    fn complete(text: &str) -> Result<(), Empty> {
        borrowed(text)
    }
}

#[retry(check = whole)]
fn by_whole() -> Result<String, Empty> {
    Ok(String::from("a"))
}

#[retry(check = borrowed)]
async fn by_borrowed() -> Result<String, Empty> {
    Ok(String::from("a"))
}

#[retry(check = named)]
fn by_named() -> Result<String, Empty> {
    Ok(String::from("a"))
}

#[retry(check = bytes)]
async fn by_bytes() -> Result<Vec<u8>, Empty> {
    Ok(vec![1])
}

#[retry(check = Completion::complete)]
fn by_associated() -> Result<String, Empty> {
    Ok(String::from("a"))
}

fn main() {
    let _ = by_whole();
    let _ = by_borrowed();
    let _ = by_named();
    let _ = by_bytes();
    let _ = by_associated();
}

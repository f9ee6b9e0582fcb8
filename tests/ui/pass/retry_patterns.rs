// Patterns in arguments keep working: tuples, structs, `mut` bindings, `_`.
use tenacious::{Classify, ErrorClass, retry};

#[derive(Debug)]
struct Flaky;

impl Classify for Flaky {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

struct Point {
    x: i32,
    y: i32,
}

#[retry]
fn add((a, b): (u32, u32), Point { x, y }: Point, _: bool) -> Result<i64, Flaky> {
    Ok(i64::from(a + b) + i64::from(x * y))
}

// A `mut` argument is mutated in place by every attempt: the second
// attempt sees what the first left.
#[retry(base = "1ms", jitter = "none")]
fn countdown(mut left: u32) -> Result<u32, Flaky> {
    left -= 1;
    if left > 0 { Err(Flaky) } else { Ok(left) }
}

#[retry]
async fn pair(&(first, second): &(u8, u8)) -> Result<u8, Flaky> {
    Ok(first + second)
}

fn main() {
    assert_eq!(add((1, 2), Point { x: 3, y: 4 }, true).unwrap(), 15);
    assert_eq!(countdown(3).unwrap(), 0);
    let _ = pair(&(1, 2));
}

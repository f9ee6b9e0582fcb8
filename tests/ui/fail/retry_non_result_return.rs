use tenacious::retry;

#[retry]
fn call() -> Option<u32> {
    Some(1)
}

fn main() {}

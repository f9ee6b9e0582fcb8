// Statistics are on by default, can be named, and can be turned off; a
// generic fn, a method and a trait-impl method each get their record, and
// the record stays out of the body's sight.
use tenacious::{Classify, ErrorClass, retry};

#[derive(Debug)]
struct Flaky;

impl Classify for Flaky {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

#[retry]
fn counted() -> Result<u32, Flaky> {
    // The record is not in scope here: this is the user's own static.
    static __TENACIOUS_STATS: u32 = 7;
    Ok(__TENACIOUS_STATS)
}

#[retry(stats = "search tool")]
async fn named() -> Result<(), Flaky> {
    Ok(())
}

#[retry(stats = false)]
fn unobserved() -> Result<(), Flaky> {
    Ok(())
}

#[retry(stats = true)]
fn generic<T: Default>() -> Result<T, Flaky> {
    Ok(T::default())
}

struct Client;

impl Client {
    #[retry(stats = "Client::get")]
    fn get(&mut self) -> Result<(), Flaky> {
        Ok(())
    }
}

trait Tool {
    fn call(&self) -> Result<(), Flaky>;
}

impl Tool for Client {
    #[retry]
    fn call(&self) -> Result<(), Flaky> {
        Ok(())
    }
}

fn main() {
    assert_eq!(counted().ok(), Some(7));
    drop(named());
    unobserved().unwrap();
    let _: u8 = generic().unwrap();
    let _: String = generic().unwrap();
    Client.get().unwrap();
    Client.call().unwrap();
    let snapshot = tenacious::stats::snapshot();
    let calls = |name: &str| snapshot.get(name).map(|s| s.calls());
    let here = module_path!();
    assert_eq!(calls(&format!("{here}::counted")), Some(1));
    assert_eq!(calls(&format!("{here}::generic")), Some(2));
    assert_eq!(calls("Client::get"), Some(1));
    assert_eq!(calls(&format!("{here}::call")), Some(1));
    assert_eq!(calls(&format!("{here}::unobserved")), None);
    assert!(snapshot.get("search tool").is_none(), "never polled");
}

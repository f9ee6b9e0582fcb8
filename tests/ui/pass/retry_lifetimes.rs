// Explicit and elided lifetimes, in the arguments and in the return type.
use tenacious::{Classify, ErrorClass, retry};

#[derive(Debug)]
struct Flaky;

impl Classify for Flaky {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

struct Store {
    items: Vec<String>,
}

impl Store {
    #[retry]
    fn first(&self) -> Result<&str, Flaky> {
        self.items.first().map(String::as_str).ok_or(Flaky)
    }

    #[retry]
    fn pick<'a>(&'a self, other: &'a str) -> Result<&'a str, Flaky> {
        if self.items.is_empty() {
            Ok(other)
        } else {
            Ok(&self.items[0])
        }
    }

    #[retry]
    async fn first_async(&self) -> Result<&str, Flaky> {
        self.items.first().map(String::as_str).ok_or(Flaky)
    }

    #[retry]
    fn anonymous(&self) -> Result<std::slice::Iter<'_, String>, Flaky> {
        Ok(self.items.iter())
    }
}

#[retry]
fn longest<'a, 'b: 'a>(a: &'a str, b: &'b str) -> Result<&'a str, Flaky> {
    Ok(if a.len() >= b.len() { a } else { b })
}

#[retry]
async fn split<'s>(text: &'s str, sep: char) -> Result<Vec<&'s str>, Flaky> {
    Ok(text.split(sep).collect())
}

fn main() {
    let store = Store {
        items: vec![String::from("a")],
    };
    assert_eq!(store.first().unwrap(), "a");
    assert_eq!(store.pick("b").unwrap(), "a");
    assert_eq!(store.anonymous().unwrap().count(), 1);
    assert_eq!(longest("ab", "c").unwrap(), "ab");
    let _ = (store.first_async(), split("a,b", ','));
}

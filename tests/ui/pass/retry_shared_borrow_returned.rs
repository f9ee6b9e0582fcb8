// Returned borrows that no attempt holds mutably compile: of `&self`, of a
// shared argument next to `&mut self`, or `'static`.
use tenacious::{Classify, ErrorClass, retry};

#[derive(Debug)]
struct Flaky;

impl Classify for Flaky {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

struct Client {
    name: String,
    calls: u32,
}

impl Client {
    #[retry]
    fn name(&self) -> Result<&str, Flaky> {
        Ok(&self.name)
    }

    #[retry]
    async fn name_async(&self, suffix: &str) -> Result<&str, Flaky> {
        Ok(if suffix.is_empty() { &self.name } else { "other" })
    }

    #[retry]
    fn pick<'a>(&mut self, text: &'a str) -> Result<&'a str, Flaky> {
        self.calls += 1;
        Ok(text)
    }

    #[retry]
    fn label(&mut self) -> Result<&'static str, Flaky> {
        self.calls += 1;
        Ok("label")
    }
}

#[retry]
fn first<'a>(items: &'a [String], scratch: &mut Vec<u8>) -> Result<&'a str, Flaky> {
    scratch.push(1);
    items.first().map(String::as_str).ok_or(Flaky)
}

fn main() {
    let mut client = Client {
        name: String::from("c"),
        calls: 0,
    };
    assert_eq!(client.name().unwrap(), "c");
    assert_eq!(client.pick("t").unwrap(), "t");
    assert_eq!(client.label().unwrap(), "label");
    let _ = client.name_async("");
    let mut scratch = Vec::new();
    assert_eq!(first(&[String::from("a")], &mut scratch).unwrap(), "a");
}

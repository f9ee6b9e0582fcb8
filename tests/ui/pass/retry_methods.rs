// `&self` and `&mut self` methods of an inherent impl, sync and async: each
// attempt reborrows `self`.
use tenacious::{Classify, ErrorClass, retry};

#[derive(Debug)]
struct Flaky;

impl Classify for Flaky {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

struct Client {
    calls: u32,
    name: String,
}

impl Client {
    fn check(error: &Flaky) -> bool {
        let _ = error;
        true
    }

    #[retry(base = "1ms", when = Self::check)]
    fn name(&self) -> Result<&str, Flaky> {
        Ok(&self.name)
    }

    #[retry(base = "1ms")]
    fn bump(&mut self) -> Result<u32, Flaky> {
        self.calls += 1;
        if self.calls < 2 {
            Err(Flaky)
        } else {
            Ok(self.calls)
        }
    }

    #[retry(base = "1ms", when = Client::check)]
    async fn fetch(&self, key: &str) -> Result<String, Flaky> {
        Ok(format!("{}/{key}", self.name))
    }

    #[retry(base = "1ms")]
    async fn fetch_mut(&mut self, key: &str) -> Result<usize, Flaky> {
        self.calls += 1;
        self.name.push_str(key);
        Ok(self.name.len())
    }

    #[retry]
    fn typed_receiver(self: &Self) -> Result<u32, Flaky> {
        Ok(self.calls)
    }

    #[retry]
    fn typed_mut_receiver(self: &mut Self) -> Result<u32, Flaky> {
        self.calls += 1;
        Ok(self.calls)
    }
}

fn main() {
    let mut client = Client {
        calls: 0,
        name: String::from("c"),
    };
    assert_eq!(client.bump().unwrap(), 2);
    assert_eq!(client.name().unwrap(), "c");
    let _ = client.typed_receiver();
    let _ = client.typed_mut_receiver();
    let _ = client.fetch("k");
    let _ = client.fetch_mut("k");
}

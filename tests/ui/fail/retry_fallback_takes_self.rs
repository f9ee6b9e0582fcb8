// A fallback is called with the give-up alone: a method taking `&self`
// is one error on its path, saying a fallback cannot take `self`.
use tenacious::{Classify, ErrorClass, retry};

#[derive(Debug)]
struct Down;

impl Classify for Down {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

struct Client;

impl Client {
    fn cached(&self, _: Down) -> Result<String, Down> {
        Ok("cached".to_owned())
    }

    #[retry(fallback = Self::cached)]
    async fn forecast(&self) -> Result<String, Down> {
        Err(Down)
    }
}

fn main() {}

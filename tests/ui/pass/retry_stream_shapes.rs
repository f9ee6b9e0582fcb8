// `#[retry]` on fns that open streams, in the shapes real code has: a
// method borrowing `self` and owning an argument, a generic fn with named
// and elided lifetimes, a `Send` stream a task can own.
use std::fmt::Display;

use futures_util::{Stream, StreamExt};
use tenacious::stream::ResumePoint;
use tenacious::{Classify, Elapsed, ErrorClass, Failure, retry};

#[derive(Debug)]
struct Cut;

impl Classify for Cut {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

impl From<Elapsed> for Cut {
    fn from(_: Elapsed) -> Self {
        Cut
    }
}

struct Client {
    base: String,
}

impl Client {
    #[retry(max = 4, first_item = "10s", idle = "30s", deadline = "2m", resume = true)]
    async fn chat(
        &self,
        prompt: String,
    ) -> Result<impl Stream<Item = Result<String, Cut>> + Send + 'static, Cut> {
        let from = ResumePoint::current().map_or(0, |resume| resume.delivered());
        let words: Vec<Result<String, Cut>> = format!("{} {prompt}", self.base)
            .split(' ')
            .skip(usize::try_from(from).unwrap_or(usize::MAX))
            .map(|word| Ok(word.to_owned()))
            .collect();
        Ok(futures_util::stream::iter(words))
    }
}

#[retry(stats = "labels")]
async fn labels<'a, T: Display + Sync>(
    prefix: &'a str,
    items: &[T],
) -> Result<impl Stream<Item = Result<String, Cut>> + use<'a, '_, T>, Cut> {
    let labels: Vec<Result<String, Cut>> =
        items.iter().map(|item| Ok(format!("{prefix}{item}"))).collect();
    Ok(futures_util::stream::iter(labels))
}

fn spawnable(client: &'static Client) {
    let stream = client.chat("hi".to_owned());
    let _task = async move {
        let mut stream = std::pin::pin!(stream);
        let _: Option<Result<String, Failure<Cut>>> = stream.next().await;
    };
}

fn main() {
    let client = Client { base: "a".into() };
    let _ = client.chat("b".to_owned());
    let _ = labels("#", &[1, 2]);
    let _ = spawnable;
}

//! `#[retry]` on a fn that opens a stream: the fn becomes one returning
//! the retried stream, each attempt running its body (on tokio's paused
//! clock, over in-memory sources).
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use futures_util::stream::{self, BoxStream, Stream, StreamExt};
use tenacious::stream::ResumePoint;
use tenacious::{Attempt, Classify, Elapsed, Limit, StopReason, retry};

#[derive(Debug, Clone, Copy, PartialEq, Classify)]
enum ChatError {
    #[classify(transient)]
    Overloaded,
    #[classify(transient)]
    Stalled(Limit),
    #[classify(invalid)]
    BadPrompt,
}

impl From<Elapsed> for ChatError {
    fn from(elapsed: Elapsed) -> Self {
        ChatError::Stalled(elapsed.which())
    }
}

struct Client {
    opens: AtomicU32,
}

impl Client {
    #[retry(
        max = 4,
        base = "100ms",
        jitter = "none",
        first_item = "2s",
        idle = "5s"
    )]
    async fn chat(
        &self,
        prompt: String,
    ) -> Result<impl Stream<Item = Result<String, ChatError>> + Send, ChatError> {
        let n = self.opens.fetch_add(1, Ordering::Relaxed) + 1;
        if prompt.is_empty() {
            return Err(ChatError::BadPrompt);
        }
        assert_eq!(Attempt::current().unwrap().number(), n);
        let words: Vec<Result<String, ChatError>> = match n {
            1 => vec![Err(ChatError::Overloaded)],
            _ => prompt.split(' ').map(|w| Ok(w.to_owned())).collect(),
        };
        Ok(stream::iter(words))
    }
}

#[tokio::test(start_paused = true)]
async fn a_retried_stream_fn_retries_before_content_and_borrows_its_arguments_afresh() {
    let client = Client {
        opens: AtomicU32::new(0),
    };
    let words: Vec<String> = client
        .chat("hello there".to_owned())
        .map(Result::unwrap)
        .collect()
        .await;
    assert_eq!(words, ["hello", "there"]);
    assert_eq!(client.opens.load(Ordering::Relaxed), 2);
}

#[retry(max = 3, base = "100ms", resume = true)]
async fn numbers(
    log: &std::sync::Mutex<Vec<u64>>,
) -> Result<impl Stream<Item = Result<u32, ChatError>>, ChatError> {
    let resume = ResumePoint::current().unwrap();
    log.lock().unwrap().push(resume.delivered());
    let from = u32::try_from(resume.delivered()).unwrap();
    let mut items: Vec<Result<u32, ChatError>> = (from..6).map(Ok).collect();
    if from == 0 {
        items.truncate(3);
        items.push(Err(ChatError::Overloaded));
    }
    Ok::<BoxStream<'static, _>, _>(stream::iter(items).boxed())
}

#[tokio::test(start_paused = true)]
async fn resume_reads_the_resume_point_in_the_body() {
    let log = std::sync::Mutex::new(Vec::new());
    let got: Vec<u32> = numbers(&log).map(Result::unwrap).collect().await;
    assert_eq!(got, [0, 1, 2, 3, 4, 5]);
    assert_eq!(*log.lock().unwrap(), [0, 3]);
}

#[tokio::test(start_paused = true)]
async fn an_invalid_open_fails_at_once() {
    let client = Client {
        opens: AtomicU32::new(0),
    };
    let out: Vec<_> = client.chat(String::new()).collect().await;
    let failure = out[0].as_ref().unwrap_err();
    assert_eq!(failure.stop_reason(), StopReason::NotRetryable);
    assert_eq!(*failure.last(), ChatError::BadPrompt);
    let _ = Duration::ZERO;
}

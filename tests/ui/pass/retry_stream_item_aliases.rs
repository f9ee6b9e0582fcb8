// A stream's item and its error may be written through aliases: the rule
// (items are `Result<T, E>`, `E` the opening's error) is on the types, not
// on how they are spelled.
use futures_util::Stream;
use tenacious::{Classify, Elapsed, ErrorClass, retry};

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

type ApiError = Cut;
type Chunk = Result<String, ApiError>;
type ApiResult<T> = Result<T, Cut>;

#[retry(first_item = "10s")]
async fn by_alias() -> Result<impl Stream<Item = Chunk>, Cut> {
    Ok(futures_util::stream::iter(vec![Ok("a".to_string())]))
}

#[retry(first_item = "10s")]
async fn by_alias_of_result() -> ApiResult<impl Stream<Item = ApiResult<String>>> {
    Ok(futures_util::stream::iter(vec![Ok::<_, ApiError>("a".to_string())]))
}

#[retry(first_item = "10s")]
async fn io_streams() -> std::io::Result<impl Stream<Item = std::io::Result<Vec<u8>>>> {
    Ok(futures_util::stream::iter(vec![Ok(vec![1u8])]))
}

fn main() {
    let _ = by_alias();
    let _ = by_alias_of_result();
    let _ = io_streams();
}

use tenacious::Classify;

#[derive(Debug, Classify)]
enum FetchError {
    #[classify(transient)]
    Timeout,
    NotFound,
}

// The stub impl emitted with the error keeps this from adding a second one.
fn assert_classify<E: Classify>() {}
const _: fn() = assert_classify::<FetchError>;

fn main() {}

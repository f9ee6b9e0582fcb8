// `fallback` in the shapes real code has: by the whole `Failure` or the
// last error, on async and sync fns, a method naming an associated fn, a
// generic fn and a generic fallback, a fn returning `Failure<E>`, a path
// through a module, a `const` fn pointer, and an error type alias.
use tenacious::{Classify, ErrorClass, Failure, retry};

#[derive(Debug)]
struct Down;

impl Classify for Down {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

fn by_failure(failure: Failure<Down>) -> Result<String, Down> {
    Ok(format!("cached after {} attempts", failure.attempts().len()))
}

fn by_error(_: Down) -> Result<String, Down> {
    Ok("cached".to_owned())
}

#[retry(fallback = by_failure)]
async fn forecast() -> Result<String, Down> {
    Err(Down)
}

#[retry(base = "1ms", fallback = by_error)]
fn forecast_blocking() -> Result<String, Down> {
    Err(Down)
}

struct Client;

impl Client {
    fn cached(_: Down) -> Result<u32, Down> {
        Ok(0)
    }

    #[retry(fallback = Self::cached)]
    async fn count(&self) -> Result<u32, Down> {
        Err(Down)
    }

    #[retry(base = "1ms", fallback = Client::cached)]
    fn count_blocking(&mut self) -> Result<u32, Down> {
        Err(Down)
    }
}

fn default_of<T: Default, E>(_: E) -> Result<T, E> {
    Ok(T::default())
}

#[retry(base = "1ms", fallback = default_of)]
fn generic_fallback() -> Result<Vec<u8>, Down> {
    Err(Down)
}

#[retry(base = "1ms", fallback = default_of::<T, Down>)]
fn generic_fn<T: Default>() -> Result<T, Down> {
    Err(Down)
}

fn hand_on(failure: Failure<Down>) -> Result<String, Failure<Down>> {
    Err(failure)
}

fn or_empty(_: Down) -> Result<String, Failure<Down>> {
    Ok(String::new())
}

#[retry(fallback = hand_on)]
async fn provenance() -> Result<String, Failure<Down>> {
    Err(Down)
}

#[retry(base = "1ms", fallback = or_empty)]
fn provenance_blocking() -> Result<String, Failure<Down>> {
    Err(Down)
}

mod answers {
    pub fn empty(_: super::Down) -> Result<(), super::Down> {
        Ok(())
    }
}

#[retry(fallback = answers::empty)]
async fn through_a_module() -> Result<(), Down> {
    Err(Down)
}

const POINTER: fn(Down) -> Result<(), Down> = answers::empty;

#[retry(base = "1ms", fallback = POINTER)]
fn through_a_pointer() -> Result<(), Down> {
    Err(Down)
}

type Fallible<T> = Result<T, Down>;

fn aliased(_: Down) -> Fallible<u8> {
    Ok(1)
}

#[retry(base = "1ms", fallback = aliased)]
fn through_an_alias() -> Fallible<u8> {
    Err(Down)
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    runtime.block_on(async {
        assert_eq!(forecast().await.unwrap(), "cached after 3 attempts");
        assert_eq!(Client.count().await.unwrap(), 0);
        assert!(provenance().await.is_err());
        through_a_module().await.unwrap();
    });
    assert_eq!(forecast_blocking().unwrap(), "cached");
    assert_eq!(Client.count_blocking().unwrap(), 0);
    assert!(generic_fallback().unwrap().is_empty());
    assert_eq!(generic_fn::<u32>().unwrap(), 0);
    assert_eq!(provenance_blocking().unwrap(), "");
    through_a_pointer().unwrap();
    assert_eq!(through_an_alias().unwrap(), 1);
}

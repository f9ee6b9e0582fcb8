// Generic fns: type, lifetime and const parameters, where clauses, and a
// generic `when`.
use std::fmt::Debug;

use tenacious::{Classify, ErrorClass, retry};

#[derive(Debug)]
struct Flaky;

impl Classify for Flaky {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

fn any_error<E: Classify + ?Sized>(error: &E) -> bool {
    let _ = error.classify();
    true
}

#[retry(when = any_error)]
fn first<'a, T, const N: usize>(items: &'a [T; N]) -> Result<&'a T, Flaky>
where
    T: Debug + 'a,
{
    items.first().ok_or(Flaky)
}

#[retry(base = "5ms", when = any_error::<E>)]
async fn generic_error<T, E>(value: T) -> Result<T, E>
where
    T: Clone + Send,
    E: Classify + Send,
{
    Ok(value.clone())
}

struct Wrapper<T>(T);

impl<T: Clone> Wrapper<T> {
    #[retry]
    fn get<U: From<T>>(&self) -> Result<U, Flaky> {
        Ok(U::from(self.0.clone()))
    }
}

fn main() {
    assert_eq!(*first(&[1, 2, 3]).unwrap(), 1);
    let _ = generic_error::<u8, Flaky>(1);
    let got: u64 = Wrapper(7u32).get().unwrap();
    assert_eq!(got, 7);
}

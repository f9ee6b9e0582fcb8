// The expansion names nothing through the prelude or the user's imports.
#![no_implicit_prelude]

extern crate std;
extern crate tenacious;

#[derive(Debug)]
struct Flaky;

impl ::tenacious::Classify for Flaky {
    fn classify(&self) -> ::tenacious::ErrorClass {
        ::tenacious::ErrorClass::Transient
    }
}

#[::tenacious::retry(max = 2, base = "1ms", jitter = "none", on = Transient)]
fn sync_call(x: u32) -> ::std::result::Result<u32, Flaky> {
    ::std::result::Result::Ok(x)
}

#[::tenacious::retry]
async fn async_call(x: &str) -> ::std::result::Result<usize, Flaky> {
    ::std::result::Result::Ok(x.len())
}

fn main() {
    let _ = sync_call(1);
    let _ = async_call("a");
}

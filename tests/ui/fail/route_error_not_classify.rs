// A route decides by the error's class: an error that is not `Classify`
// is refused where the route is called. rustc reports the unmet bound of
// an `async fn` on the call, on its future and on the `.await`, each
// with the same message and fix; stable Rust cannot name that future to
// keep one of them (see the Routes chapter).
use tenacious::route::{Route, Target};

#[derive(Debug)]
struct Opaque;

async fn ask(route: &Route<&'static str>) {
    let _ = route.call(|target| async move {
        if target.data().is_empty() { Err(Opaque) } else { Ok(1) }
    }).await;
}

fn main() {
    let _ = ask;
    let _ = Target::new("ui-route", "");
}

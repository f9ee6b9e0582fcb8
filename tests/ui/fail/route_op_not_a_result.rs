// Each attempt at a target answers with a `Result`: the route needs the
// error to decide whether the next target may serve.
use tenacious::route::Route;

async fn ask(route: &Route<u32>) {
    let _ = route.call(|target| async move { *target.data() + 1 }).await;
}

fn main() {
    let _ = ask;
}

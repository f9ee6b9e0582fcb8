use std::time::Duration;
use tenacious::Breaker;

// A zero break lets probes through as soon as the breaker opens: refused,
// as a config's `open_for = "0s"` is.
static PROVIDER: Breaker = Breaker::new().open_for(Duration::ZERO);

fn main() {}

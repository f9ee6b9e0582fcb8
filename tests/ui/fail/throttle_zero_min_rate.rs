use tenacious::Throttle;

// A least rate of zero requests a second: refused, as a config's
// `min_rate = 0` is.
static OPENAI: Throttle = Throttle::new().min_rate(0.0);

fn main() {}

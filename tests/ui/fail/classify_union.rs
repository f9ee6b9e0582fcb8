use tenacious::Classify;

#[derive(Classify)]
union Raw {
    code: u32,
    bits: f32,
}

fn main() {}

//! `cargo xtask`: Ember's build, test and benchmark driver.
fn main() {}

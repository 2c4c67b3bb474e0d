//! Benchmarks (`nanet-sim bench`): programs that write `target/bench/<name>.json`, never timed tests.
//! Offload core at line rate, receive path (the paper's figures 7 and 8), whole card, engines.

pub mod card;
pub mod engines;
pub mod offload;
pub mod rx;

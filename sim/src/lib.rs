//! nanet simulation: the cycle driver, models around the NIC, traffic, scoreboards and benchmarks.

pub mod bench_util;
pub mod driver;
pub mod model;
pub mod packets;
pub mod rx_bench;
pub mod stream_bfm;

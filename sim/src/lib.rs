//! nanet simulation: the cycle driver, models around the NIC, traffic, scoreboards and benchmarks.

pub mod bench_engines;
pub mod bench_offload;
pub mod bench_rx;
pub mod bench_util;
pub mod core_bench;
pub mod describe;
pub mod designs;
pub mod dma_port;
pub mod driver;
pub mod engine;
pub mod host_mem;
pub mod link;
pub mod model;
pub mod packets;
pub mod pcap;
pub mod peer;
pub mod pins;
pub mod replay;
pub mod root_complex;
pub mod rx_bench;
pub mod rx_engine_bench;
pub mod rx_host;
pub mod rx_path_bench;
pub mod session;
pub mod stream_bfm;
pub mod tlp;

//! System tests: the assembled offload core against real peers and hostile traffic.

mod core;
mod differential;
mod line_rate;
mod peer;
mod replay;
mod rx_engine;
mod rx_path;

//! System tests: the assembled offload core against real peers and hostile traffic.

mod core;
mod line_rate;
mod peer;
mod replay;

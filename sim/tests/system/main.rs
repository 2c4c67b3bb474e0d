//! System tests: the assembled offload core against real peers and hostile traffic.

mod core;
mod peer;
mod replay;

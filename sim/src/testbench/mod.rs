//! Testbench harnesses, one per gateware level (receive parser, offload core, receive engine,
//! receive path, whole card), each on any engine but the receive parser's (rust-hdl model only,
//! through the cycle driver); stream bus-functional models with random stalls; a port wired to a
//! real peer stack.

pub mod card;
pub mod core;
pub mod parser;
pub mod rx_engine;
pub mod rx_path;
pub mod session;
pub mod stream_bfm;

//! Testbench harnesses, one per gateware level (receive parser, offload core, receive engine,
//! receive path, whole card), each on any engine (the receive parser's always on the rust-hdl model
//! and its Verilog in lockstep); stream bus-functional models with random stalls; a port wired to a
//! real peer stack.

pub mod capture;
pub mod card;
pub mod core;
pub mod parser;
pub mod rx_engine;
pub mod rx_path;
pub mod session;
pub mod stream_bfm;

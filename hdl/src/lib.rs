//! nanet gateware, written with rust-hdl: one module per protocol layer or engine.
//!
//! # Arithmetic
//! rust-hdl's model wraps every sum at the width of its operands, while Verilog evaluates an
//! expression at the width of its widest operand (and literals here are 64 bits). The two agree when
//! a sum cannot overflow: arithmetic that may wrap is assigned to a signal of the intended width
//! first (assignment truncates in both), and comparisons of sums are done on widened operands.
//! Every mixed expression is parenthesised: Rust and Verilog precedence differ.

pub mod arp;
pub mod checksum;
pub mod eth;
pub mod frame_tx;
pub mod icmp;
pub mod ipv4;
pub mod rx_parser;
pub mod stream;
pub mod udp;
pub mod udp_tx;
pub mod verilog;

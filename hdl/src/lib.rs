//! nanet gateware, written with rust-hdl: one module per protocol layer or engine.
//!
//! # Arithmetic
//! rust-hdl's model wraps every sum at the width of its operands, while Verilog evaluates an
//! expression at the width of its widest operand (and literals here are 64 bits). The two agree when
//! a sum cannot overflow: arithmetic that may wrap is assigned to a signal of the intended width
//! first (assignment truncates in both), and comparisons of sums are done on widened operands.
//! Every mixed expression is parenthesised: Rust and Verilog precedence differ.
//! `bit_cast::<W, N>(expr)` is emitted as `((expr) & W-bit mask)`, so `expr` is evaluated at width W
//! in Verilog: never cast an inverted (`!`) or wrapping expression; assign it to an N-bit local
//! first (found by the lockstep run: `bit_cast::<64, 16>(!x)` has ones in bits 63:16 in Verilog).
//!
//! # Kernels
//! A kernel never reads back a signal it drives into a child block (`self.child.input.val()`):
//! Verilator sees each generated `always @(*)` block as one node and reports such a read as a
//! combinational loop (UNOPTFLAT). Read the source expression instead. A local signal is
//! read only after the statement that writes it (before it, the model sees the previous value).
//! A register's `d` is read only after its last assignment: the model reads a child's input as
//! it was at the previous settle pass, so reading `d` and assigning it later in the same kernel
//! is a loop that never settles (found when the CLOP engine decided on its `d` side; it now uses
//! `w_*` locals for "the working copy as this cycle sees it").
//!
//! # Names
//! Field names become Verilog identifiers as they are: no (System)Verilog keywords (`time`,
//! `cross` and the like break the Verilog). Inside a `for` loop of a kernel, the loop index may
//! index arrays and appear in comparisons, but not inside `bit_cast` (the macro loses it there):
//! copy the indexed value into a local signal first (`tx_used_port` in `rx_path.rs`).

pub mod arp;
pub mod arp_cache;
pub mod arp_resolver;
pub mod arp_tx;
pub mod async_fifo;
pub mod bar0_regs;
pub mod board_glue;
pub mod checksum;
pub mod clop_engine;
pub mod dma_write;
pub mod eth;
pub mod event_mux;
pub mod event_queue;
pub mod frame_tx;
pub mod icmp;
pub mod icmp_echo;
pub mod ipv4;
pub mod multi_stream;
pub mod nic;
pub mod offload_core;
pub mod offload_regs;
pub mod packet_buffer;
pub mod packet_gen;
pub mod pcie_credit_gate;
pub mod pcie_read;
pub mod pcie_rx_demux;
pub mod pcie_target;
pub mod pcie_tx_arbiter;
pub mod pcie_write_tlp;
pub mod reg_bridge;
pub mod rx_arbiter;
pub mod rx_engine;
pub mod rx_packer;
pub mod rx_parser;
pub mod rx_path;
pub mod rx_port;
pub mod rx_regs;
pub mod rx_words;
pub mod stream;
pub mod sync_fifo;
pub mod time_sync;
pub mod tlb;
pub mod tlp_merge;
pub mod tlp_stream;
pub mod tx_arbiter;
pub mod tx_engine;
pub mod tx_feeder;
pub mod udp;
pub mod udp_datagram;
pub mod udp_tx;
pub mod udp_tx_checksum;
pub mod verilog;
pub mod write_mux;
pub mod write_request;

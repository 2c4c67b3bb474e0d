//! nanet gateware, written with rust-hdl: one module per protocol layer or engine, in folders that
//! follow the data path.
//!
//! Receive: MAC client -> [`offload`] (per-port UDP/IPv4/ARP core, 156.25 MHz) -> [`port`] (Multi-Stream,
//! packer into the clock-crossing FIFO) -> [`rx`] (core domain, 250 MHz: port arbiter, CLOP engine, TLB,
//! DMA writer, event queue) -> [`pcie`] (TLPs to the Hard IP). Transmit: [`pcie`] (reads) -> [`tx`]
//! (descriptor ring, payload fetch) -> [`port`] (feeder, packet generator) -> [`offload`] (UDP/IP/Ethernet
//! headers, ARP) -> MAC. [`card`] assembles them behind the Hard IP and the register file; [`board`]
//! is the glue to a board's vendor IP (resets, clock programming, MAC set-up, LEDs); [`common`]
//! holds what every layer speaks (the packet stream, FIFOs, checksums, clock-domain helpers).
//! [`verilog`] is the one table of modules that are generated, linted and simulated alone;
//! [`as_block`] gives the simulator this crate's compiled copy of each block it simulates.
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
//! copy the indexed value into a local signal first.

pub mod as_block;
pub mod board;
pub mod card;
pub mod common;
pub mod offload;
pub mod pcie;
pub mod port;
pub mod rx;
pub mod tx;
pub mod verilog;

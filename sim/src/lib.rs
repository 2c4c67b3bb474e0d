//! nanet simulation: the engines that step the gateware (rust-hdl model, Verilator, both in
//! lockstep), the world around the card (links, peer stack, host memory, root complex), traffic,
//! checks (reference model, host-side scoreboards), testbench harnesses and benchmarks.

pub mod benchmark;
pub mod check;
pub mod engine;
pub mod testbench;
pub mod traffic;
pub mod world;

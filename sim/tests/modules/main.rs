//! Per-module testbenches of the gateware: random valid/ready stalls on both sides, scoreboards
//! against the reference model in `nanet_sim::check::reference`.

mod board;
mod card;
mod common;
mod offload;
mod pcie;
mod port;
mod rx;
mod tx;

//! Per-module testbenches of the gateware: random valid/ready stalls on both sides, scoreboards
//! against the reference model in `nanet_sim::model`.

mod rx_parser;
mod udp_tx;

//! Verilog generation for the gateware's top-level modules (for lint, Verilator and boards).

use rust_hdl::prelude::*;

use crate::rx_parser::RxParser;
use crate::stream::{AvalonToStream, StreamToAvalon};

/// Modules that can be generated alone, by name. Every one is linted by `make lint`.
pub const MODULES: &[&str] = &[
    "nanet_rx_parser",
    "nanet_avalon_to_stream",
    "nanet_stream_to_avalon",
];

/// rust-hdl names the top module `top` and its children `top$child`; give them the real name so
/// that several generated designs can sit in one project.
fn named(verilog: String, name: &str) -> String {
    verilog
        .replace("module top(", &format!("module {name}("))
        .replace("top$", &format!("{name}$"))
}

fn generate<B: Block + Default>(name: &str) -> String {
    let mut uut = B::default();
    uut.connect_all();
    named(generate_verilog(&uut), name)
}

/// The Verilog of module `name` (one of [`MODULES`]).
pub fn module_verilog(name: &str) -> Option<String> {
    Some(match name {
        "nanet_rx_parser" => generate::<RxParser>(name),
        "nanet_avalon_to_stream" => generate::<AvalonToStream>(name),
        "nanet_stream_to_avalon" => generate::<StreamToAvalon>(name),
        _ => return None,
    })
}

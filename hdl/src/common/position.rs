//! A bit position taken from the contract, as a kernel constant: a `localparam` in the Verilog, a
//! value in the model. The blocks that pack and unpack the contract's words (`rx/words.rs`,
//! `common/event_record.rs`, `tx/descriptor.rs`) place every field with one of these, so a layout
//! is written down only in `nanet_contract`. (A kernel cannot take a Rust `const` as a bit offset:
//! rust-hdl emits the path as a Verilog signal name.)

use rust_hdl::prelude::*;

/// Bit `lsb` (below 256) as a kernel constant.
pub fn bit_position(lsb: usize) -> Constant<Bits<8>> {
    assert!(
        lsb < 256,
        "bit position {lsb} does not fit a position constant"
    );
    Constant::new(lsb.to_bits())
}

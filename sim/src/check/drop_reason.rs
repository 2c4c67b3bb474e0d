//! The gateware's drop reasons as the contract names them, for testbenches and benchmarks.

use nanet_contract::DropReason;
use nanet_hdl::offload::rx_parser::RxDrop;
use rust_hdl::core::prelude::{Bits, Synth};

use crate::engine::pins::{PinValue, SignalWord};

/// Maps the gateware's drop reason to the contract's (same names, same order: the test below
/// checks the generated Verilog's encoding against the contract).
pub fn drop_reason(d: RxDrop) -> DropReason {
    let name = format!("{d:?}");
    DropReason::ALL
        .into_iter()
        .find(|r| format!("{r:?}") == name)
        .unwrap_or_else(|| panic!("gateware drop reason {name} is not in the contract"))
}

macro_rules! rx_drops {
    ($($(#[$doc:meta])* $name:ident,)*) => {
        [$(RxDrop::$name),*]
    };
}

/// The gateware's drop reasons in the order of their encoding.
const RX_DROPS: [RxDrop; DropReason::ALL.len()] = nanet_contract::with_drop_reasons!(rx_drops);

/// A drop reason port as its encoding in the generated Verilog.
impl PinValue for RxDrop {
    fn to_word(self) -> u64 {
        let bits: Bits<{ RxDrop::BITS }> = self.into();
        bits.to_u64()
    }
    fn from_word(w: u64) -> Self {
        RX_DROPS[w as usize]
    }
}

impl SignalWord for RxDrop {
    fn put(&self, words: &mut [u64], at: &mut usize) {
        PinValue::put(*self, words, at);
    }
    fn take(words: &[u64], at: &mut usize) -> Self {
        PinValue::take(words, at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A drop reason port value is the contract's index of the reason, both ways.
    #[test]
    fn a_drop_reason_word_is_its_contract_index() {
        for (i, r) in DropReason::ALL.into_iter().enumerate() {
            let hw = RxDrop::from_word(i as u64);
            assert_eq!((drop_reason(hw), hw.to_word()), (r, i as u64));
        }
    }

    /// The generated Verilog encodes each drop reason with the contract's index for it.
    #[test]
    fn drop_reasons_match_the_contract() {
        let v = nanet_hdl::verilog::module_verilog("nanet_rx_parser").expect("known module");
        for (i, r) in DropReason::ALL.into_iter().enumerate() {
            let decl = format!("localparam RxDrop${r:?} = {i};");
            assert!(v.contains(&decl), "the Verilog lacks `{decl}`");
        }
        let declared = v
            .lines()
            .filter(|l| l.trim_start().starts_with("localparam RxDrop$"))
            .count();
        let modules = v.matches("localparam RxDrop$MacError").count();
        assert_eq!(
            declared,
            modules * DropReason::ALL.len(),
            "the gateware has reasons the contract lacks"
        );
    }
}

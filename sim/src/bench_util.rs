//! Small helpers shared by testbenches and benchmarks.

use nanet_contract::DropReason;
use nanet_hdl::rx_parser::RxDrop;

/// Maps the gateware's drop reason to the contract's (they are declared in the same order, with
/// the same names; `drop_reasons_match_the_contract` checks it).
pub fn drop_reason(d: RxDrop) -> DropReason {
    let name = format!("{d:?}");
    DropReason::ALL
        .into_iter()
        .find(|r| format!("{r:?}") == name)
        .unwrap_or_else(|| panic!("gateware drop reason {name} is not in the contract"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rust_hdl::core::prelude::Synth;

    #[test]
    fn drop_reasons_match_the_contract() {
        assert_eq!(1usize << RxDrop::BITS, 16, "RxDrop must stay a 4-bit code");
        for (i, r) in DropReason::ALL.into_iter().enumerate() {
            let hw = drop_reason_from_index(i);
            assert_eq!(drop_reason(hw), r);
        }
    }

    fn drop_reason_from_index(i: usize) -> RxDrop {
        use RxDrop::*;
        [
            MacError,
            Runt,
            Oversize,
            NotForUs,
            IpVersionIhl,
            IpChecksum,
            IpLength,
            Fragment,
            UdpLength,
            UdpChecksum,
            UnknownProtocol,
            IcmpInvalid,
            IcmpBusy,
        ][i]
    }
}

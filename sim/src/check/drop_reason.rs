//! The gateware's drop reasons as the contract names them, for testbenches and benchmarks.

use nanet_contract::DropReason;
use nanet_hdl::offload::rx_parser::RxDrop;

/// Maps the gateware's drop reason to the contract's (same names, same order: the test below
/// checks the generated Verilog's encoding against the contract).
pub fn drop_reason(d: RxDrop) -> DropReason {
    let name = format!("{d:?}");
    DropReason::ALL
        .into_iter()
        .find(|r| format!("{r:?}") == name)
        .unwrap_or_else(|| panic!("gateware drop reason {name} is not in the contract"))
}

#[cfg(test)]
mod tests {
    use nanet_contract::DropReason;

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

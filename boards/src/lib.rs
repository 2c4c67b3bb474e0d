//! nanet board generation: a board description (`boards/<name>.toml`), a port count and a PCIe
//! variant in, a Quartus-ready folder out (`build/<board>/`): the NIC and board glue from rust-hdl, the board
//! top with the vendor IP as black boxes, pin and timing constraints, the project script.

pub mod board;
pub mod ip;
pub mod netlist;
pub mod project;
pub mod quartus;
pub mod resources;
pub mod synth;
pub mod timing;
pub mod top;

pub use board::Board;
pub use project::Project;

use nanet_contract::pcie::PcieVariant;

/// A PCIe variant by the name the tools' `--pcie` and `make PCIE=` take (`gen2`, `gen3`).
pub fn pcie_variant_arg(name: &str) -> Result<PcieVariant, String> {
    PcieVariant::from_name(name).ok_or_else(|| {
        let known: Vec<_> = PcieVariant::ALL.iter().map(|v| v.name()).collect();
        format!("unknown PCIe variant {name:?}: {}", known.join(" or "))
    })
}

//! The card's ID from the Hard IP's configuration bus (`nanet_hdl::pcie::config_sampler`),
//! driven by the model of Intel's bus (`nanet_sim::world::config_bus`): round robin over 16
//! registers every 4 or 8 cycles, no strobe, `tl_cfg_ctl` unsettled in the first cycle of each
//! window. Checks: the ID follows the bus/device number at address 0xF within one round, through
//! enumeration and re-enumeration with other numbers, and never shows a value the bus did not hold
//! there (an unsettled value, or another register's). On the rust-hdl model and its Verilog in
//! lockstep.

use nanet_hdl::pcie::config_sampler::PcieConfigSampler;
use nanet_sim::design_ports;
use nanet_sim::engine::clocks::CORE_CLOCK_PS;
use nanet_sim::engine::{DesignSim, EngineKind};
use nanet_sim::world::config_bus::ConfigBus;

#[derive(Clone, Default)]
pub struct CIn {
    reset: bool,
    cfg_add: u8,
    cfg_ctl: u32,
}

#[derive(Clone, Default, Debug)]
pub struct COut {
    pcie_id: u16,
}

design_ports! {
    pub SamplerDesign for PcieConfigSampler, top "nanet_pcie_config_sampler", inputs CIn,
    outputs COut,
    clocks { clock }
    inputs { reset => reset, cfg_add => cfg_add, cfg_ctl => cfg_ctl, }
    outputs { pcie_id => pcie_id, }
}

#[test]
fn the_id_follows_the_enumerated_bus_and_device_and_nothing_else() {
    for period in [4, 8] {
        let mut d =
            DesignSim::<SamplerDesign>::new(EngineKind::Both).unwrap_or_else(|e| panic!("{e}"));
        let clk = d.add_clock("core", 0, CORE_CLOCK_PS);
        // Bus 0x65 device 1, then bus 0x81 device 31, then bus 2 device 0.
        let mut bus = ConfigBus::new(0x6508, period);
        bus.enumerated_at = 100;
        let round = 16 * period + 4;
        let mut cycle = 0u64;
        for (id, from) in [(0x6508u16, 100u64), (0x81F8, 1000), (0x0200, 2000)] {
            bus.id = id;
            let mut first_seen = None;
            while cycle < from + 900 {
                (d.inputs.cfg_add, d.inputs.cfg_ctl) = bus.drive();
                d.tick(clk);
                cycle += 1;
                let got = d.settle().pcie_id;
                if cycle > from {
                    assert!(
                        got == id || first_seen.is_none(),
                        "period {period}: ID {got:#06x} at cycle {cycle}, after {id:#06x} was taken"
                    );
                }
                assert!(
                    [0, 0x6508, 0x81F8, 0x0200].contains(&got),
                    "period {period}: ID {got:#06x} at cycle {cycle}: not a value of address 0xF"
                );
                if got == id && first_seen.is_none() && cycle >= from {
                    first_seen = Some(cycle);
                }
            }
            let seen =
                first_seen.unwrap_or_else(|| panic!("period {period}: {id:#06x} never taken"));
            assert!(
                seen <= from.max(100) + round,
                "period {period}: {id:#06x} taken at cycle {seen}, more than a round after {from}"
            );
        }
    }
}

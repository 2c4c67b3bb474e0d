//! The arbiters' round-robin choice (`RoundRobinPick`, in the write, event and transmit-read
//! arbiters): every input, four `valid` bits under each of the four `after`s, against the rule it
//! implements: the first requester after `after`, wrapping round, `after` itself last; `found`
//! when any asks, `found_other` when one other than `after` does. On the rust-hdl model and its
//! Verilog in lockstep.

use nanet_hdl::common::round_robin::RoundRobinPick;
use nanet_sim::design_ports;
use nanet_sim::engine::{DesignSim, EngineKind};

#[derive(Clone, Default)]
pub struct PickIn {
    valid: u8,
    after: u8,
}

#[derive(Clone, Default, Debug, PartialEq)]
pub struct PickOut {
    found: bool,
    pick: u8,
    found_other: bool,
}

design_ports! {
    pub PickDesign for RoundRobinPick, top "nanet_round_robin", inputs PickIn, outputs PickOut,
    clocks { }
    inputs { valid => valid, after => after }
    outputs { found => found, pick => pick, found_other => found_other }
}

/// The rule: the requesters in turn after `after` (`after + 1`, ..., wrapping), the first asking.
fn reference(valid: u8, after: u8) -> Option<u8> {
    (1..=4)
        .map(|k| (after + k) % 4)
        .find(|&r| valid & (1 << r) != 0)
}

#[test]
fn the_pick_is_the_first_requester_after_the_last_served_for_every_input() {
    let mut d = DesignSim::<PickDesign>::new(EngineKind::Both).unwrap_or_else(|e| panic!("{e}"));
    for after in 0..4u8 {
        for valid in 0..16u8 {
            (d.inputs.valid, d.inputs.after) = (valid, after);
            let o = d.settle().clone();
            let want = reference(valid, after);
            assert_eq!(
                o.found,
                want.is_some(),
                "found, valid {valid:04b} after {after}"
            );
            if let Some(r) = want {
                assert_eq!(o.pick, r, "pick, valid {valid:04b} after {after}");
            }
            let others = valid & !(1 << after) != 0;
            assert_eq!(
                o.found_other, others,
                "found_other, valid {valid:04b} after {after}"
            );
        }
    }
}

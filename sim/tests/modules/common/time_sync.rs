//! The core cycle counter carried into another clock domain, on the rust-hdl model and its Verilog
//! in lockstep: a counter stepping once per source cycle (from just below a wrap of its 32 bits),
//! both clocks either way round. Every sample seen on the destination side is a value the counter
//! had, never older than the synchronizer and conversion stages allow, and never goes back.

use nanet_hdl::common::time_sync::TimeSync;
use nanet_sim::design_ports;
use nanet_sim::engine::clocks::{CORE_CLOCK_PS, NET_CLOCK_PS};
use nanet_sim::engine::{DesignSim, EngineKind};

#[derive(Clone, Default)]
pub struct SyncIn {
    src_now: u32,
}

#[derive(Clone, Default, Debug)]
pub struct SyncOut {
    dst_now: u32,
}

design_ports! {
    pub TimeSyncDesign for TimeSync, top "nanet_test_time_sync", inputs SyncIn, outputs SyncOut,
    clocks { src_clock, dst_clock }
    inputs { src_now => src_now }
    outputs { dst_now => dst_now }
}

/// Runs `dst_cycles` destination cycles; returns the oldest sample's age in source cycles.
fn run(src_ps: u64, dst_ps: u64, dst_cycles: u64) -> u32 {
    let mut d =
        DesignSim::<TimeSyncDesign>::new(EngineKind::Both).unwrap_or_else(|e| panic!("{e}"));
    let src = d.add_clock("src", 0, src_ps);
    let dst = d.add_clock("dst", 1, dst_ps);
    // Start below the wrap, so that it is crossed early on.
    d.inputs.src_now = u32::MAX - 1000;
    // Fill the pipeline: the gray register, two synchronizer and two conversion stages.
    let (mut dst_seen, mut last, mut oldest) = (0u64, None::<u32>, 0u32);
    while dst_seen < dst_cycles {
        let rising = d.next_rising();
        d.try_step().unwrap_or_else(|m| panic!("{m}"));
        if rising & (1 << src.0) != 0 {
            d.inputs.src_now = d.inputs.src_now.wrapping_add(1);
        }
        if rising & (1 << dst.0) != 0 {
            dst_seen += 1;
            let now = d.settle().dst_now;
            // The counter's value in the source register is at most `src_now - 1`.
            let age = d.inputs.src_now.wrapping_sub(now);
            if dst_seen > 8 {
                assert!(
                    (1..1 << 16).contains(&age),
                    "sample {now:#x} is not a value the counter had (it is at {:#x})",
                    d.inputs.src_now
                );
                if let Some(l) = last {
                    assert!(
                        now.wrapping_sub(l) < 1 << 16,
                        "went back from {l:#x} to {now:#x}"
                    );
                }
                oldest = oldest.max(age);
            }
            last = Some(now);
        }
    }
    oldest
}

/// The most source cycles a sample may lag: from the destination cycle the first synchronizer
/// stage takes it, three more destination cycles to the output (the second stage and the two
/// conversion stages), as whole source cycles, plus the source cycle the value waited in the
/// source register and the one it was offered before that. One stage more fails this.
fn bound(src_ps: u64, dst_ps: u64) -> u32 {
    (3 * dst_ps / src_ps) as u32 + 2
}

#[test]
fn core_time_seen_from_the_network_domain_is_a_recent_value_the_counter_had() {
    for (src, dst) in [(CORE_CLOCK_PS, NET_CLOCK_PS), (NET_CLOCK_PS, CORE_CLOCK_PS)] {
        let oldest = run(src, dst, 3000);
        assert!(
            oldest <= bound(src, dst),
            "a sample {oldest} source cycles old (at most {} expected)",
            bound(src, dst)
        );
    }
}

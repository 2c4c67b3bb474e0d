//! Event arbiter: four CLOP engines' records, each source offering at random times (and holding a
//! record until it is taken), with random backpressure. Scoreboard: every record comes out once,
//! in its source's order, and with the sources waiting no record waits for more than one record
//! of each other source. On the rust-hdl model and its Verilog in lockstep.

use std::collections::VecDeque;

use nanet_hdl::rx::event_arbiter::EventArbiter;
use nanet_sim::design_ports;
use nanet_sim::engine::clocks::CORE_CLOCK_PS;
use nanet_sim::engine::DesignSim;
use nanet_sim::engine::EngineKind;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

#[derive(Clone, Default)]
pub struct EaIn {
    reset: bool,
    valid: [bool; 4],
    lo: [u128; 4],
    hi: [u128; 4],
    out_ready: bool,
}

#[derive(Clone, Default, Debug)]
pub struct EaOut {
    ready: [bool; 4],
    out_valid: bool,
    out_lo: u128,
    out_hi: u128,
}

design_ports! {
    pub Arb4 for EventArbiter<4>, top "nanet_event_arbiter", inputs EaIn, outputs EaOut,
    clocks { clock }
    inputs {
        reset => reset,
        valid[0] => inp[0].valid, lo[0] => inp[0].lo, hi[0] => inp[0].hi,
        valid[1] => inp[1].valid, lo[1] => inp[1].lo, hi[1] => inp[1].hi,
        valid[2] => inp[2].valid, lo[2] => inp[2].lo, hi[2] => inp[2].hi,
        valid[3] => inp[3].valid, lo[3] => inp[3].lo, hi[3] => inp[3].hi,
        out_ready => out.ready,
    }
    outputs {
        ready[0] => inp[0].ready, ready[1] => inp[1].ready, ready[2] => inp[2].ready,
        ready[3] => inp[3].ready, out_valid => out.valid, out_lo => out.lo, out_hi => out.hi,
    }
}

#[test]
fn four_sources_each_record_once_in_order_round_robin_random_gaps_and_backpressure() {
    for (seed, gaps, stall) in [(1, 0.3, 0.3), (2, 0.0, 0.0), (3, 0.8, 0.1), (4, 0.1, 0.8)] {
        let mut rng = StdRng::seed_from_u64(seed);
        let mut d = DesignSim::<Arb4>::new(EngineKind::Both).unwrap_or_else(|e| panic!("{e}"));
        let clk = d.add_clock("core", 0, CORE_CLOCK_PS);
        d.inputs.reset = true;
        d.tick(clk);
        d.inputs.reset = false;
        // Record k of source s: its numbers in `lo`, random bits in `hi`.
        let mut queues: Vec<VecDeque<(u128, u128)>> = (0..4)
            .map(|s| {
                (0..300)
                    .map(|k| (((s as u128) << 32) | k as u128, rng.gen()))
                    .collect()
            })
            .collect();
        let mut offering = [false; 4];
        let mut passed = [0usize; 4];
        let mut cycles = 0u64;
        while queues.iter().any(|q| !q.is_empty()) {
            for s in 0..4 {
                offering[s] = !queues[s].is_empty() && (offering[s] || !rng.gen_bool(gaps));
                d.inputs.valid[s] = offering[s];
                if let Some(&(lo, hi)) = queues[s].front() {
                    (d.inputs.lo[s], d.inputs.hi[s]) = (lo, hi);
                }
            }
            d.inputs.out_ready = !rng.gen_bool(stall);
            let o = d.settle().clone();
            let taken: Vec<usize> = (0..4)
                .filter(|&s| d.inputs.valid[s] && o.ready[s])
                .collect();
            assert!(
                taken.len() <= 1,
                "seed {seed} cycle {cycles}: {taken:?} taken at once"
            );
            assert_eq!(o.out_valid && d.inputs.out_ready, !taken.is_empty());
            if let Some(&s) = taken.first() {
                let (lo, hi) = queues[s].pop_front().unwrap();
                assert_eq!(
                    (o.out_lo, o.out_hi),
                    (lo, hi),
                    "seed {seed}: source {s}'s record"
                );
                assert!(
                    passed[s] < 4,
                    "seed {seed}: source {s} waited {} records",
                    passed[s]
                );
                offering[s] = false;
                for (o, p) in passed.iter_mut().enumerate() {
                    *p = if o == s { 0 } else { *p + offering[o] as usize };
                }
            }
            d.tick(clk);
            cycles += 1;
            assert!(cycles < 50_000, "seed {seed}: arbiter wedged");
        }
    }
}

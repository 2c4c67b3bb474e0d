//! The transmit arbiter: a completion source and a memory-write source (gap-free TLP sources with
//! random pauses between TLPs) share the Hard IP's port, whose `tx_ready` drops at random. Checks:
//! a beat goes only where `tx_ready` was high two cycles earlier; inside a TLP every such cycle
//! carries a beat (the Hard IP's rule); TLPs never interleave; each source's TLPs arrive whole and
//! in order. On the rust-hdl model and its Verilog in lockstep.

use std::collections::VecDeque;

use nanet_hdl::pcie::tx_arbiter::PcieTxArbiter;
use nanet_sim::design_ports;
use nanet_sim::engine::clocks::CORE_CLOCK_PS;
use nanet_sim::engine::{DesignSim, EngineKind};
use nanet_sim::world::tlp::{Beat, CplStatus, Tlp};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

#[derive(Clone, Default)]
pub struct AIn {
    reset: bool,
    cpl: Beat,
    cpl_valid: bool,
    wr: Beat,
    wr_valid: bool,
    tx_ready: bool,
}

#[derive(Clone, Default, Debug)]
pub struct AOut {
    cpl_ready: bool,
    wr_ready: bool,
    tx: Beat,
    tx_valid: bool,
}

design_ports! {
    pub ArbiterDesign for PcieTxArbiter, top "nanet_pcie_tx_arbiter", inputs AIn, outputs AOut,
    clocks { clock }
    inputs {
        reset => reset, cpl.data => cpl.data, cpl.sop => cpl.sop, cpl.eop => cpl.eop,
        cpl.empty => cpl.empty, cpl_valid => cpl.valid, wr.data => wr.data, wr.sop => wr.sop,
        wr.eop => wr.eop, wr.empty => wr.empty, wr_valid => wr.valid, tx_ready => tx.ready,
    }
    outputs {
        cpl_ready => cpl.ready, wr_ready => wr.ready, tx.data => tx.data, tx.sop => tx.sop,
        tx.eop => tx.eop, tx.empty => tx.empty, tx_valid => tx.valid,
    }
}

/// A gap-free TLP source: TLPs as beat lists, a random pause before each.
pub struct Source {
    tlps: VecDeque<Vec<Beat>>,
    beat: usize,
    pause: u32,
}

impl Source {
    pub fn new(tlps: &[Tlp]) -> Self {
        Self {
            tlps: tlps.iter().map(|t| t.to_beats()).collect(),
            beat: 0,
            pause: 0,
        }
    }
    /// The beat on offer this cycle, if any.
    pub fn offer(&self) -> Option<Beat> {
        if self.pause > 0 && self.beat == 0 {
            return None;
        }
        self.tlps.front().map(|t| t[self.beat])
    }
    pub fn step(&mut self, moved: bool, rng: &mut impl Rng) {
        if moved {
            self.beat += 1;
            if self.beat == self.tlps[0].len() {
                self.tlps.pop_front();
                self.beat = 0;
                self.pause = rng.gen_range(0..6);
            }
        } else if self.beat == 0 && self.pause > 0 {
            self.pause -= 1;
        }
    }
}

#[test]
fn completions_and_writes_share_the_port_whole_and_in_order() {
    let mut rng = StdRng::seed_from_u64(31);
    let cpls: Vec<Tlp> = (0..300)
        .map(|i| Tlp::Completion {
            completer: 0x0300,
            status: CplStatus::Success,
            byte_count: 4,
            requester: 0,
            tag: i as u8,
            lower_addr: (4 * (i % 32)) as u8,
            data: vec![i],
        })
        .collect();
    let writes: Vec<Tlp> = (0..300u64)
        .map(|i| Tlp::MemWrite {
            requester: 0x0300,
            tag: 0,
            addr: 0x1_0000_0000 * (i % 2) + 0x8000_0000 + i * 256 + 4 * (i % 3),
            first_be: 0xF,
            last_be: 0xF,
            data: (0..rng.gen_range(2..64))
                .map(|k| (i as u32) << 16 | k)
                .collect(),
        })
        .collect();
    let mut d = DesignSim::<ArbiterDesign>::new(EngineKind::Both).unwrap_or_else(|e| panic!("{e}"));
    let clk = d.add_clock("core", 0, CORE_CLOCK_PS);
    d.inputs.reset = true;
    d.tick(clk);
    d.inputs.reset = false;
    let (mut cpl_src, mut wr_src) = (Source::new(&cpls), Source::new(&writes));
    let mut ready_hist = [false; 2];
    let mut current: Vec<Beat> = vec![];
    let (mut got_cpls, mut got_writes) = (vec![], vec![]);
    for cycle in 0..40_000u32 {
        let (c, w) = (cpl_src.offer(), wr_src.offer());
        let i = &mut d.inputs;
        i.cpl_valid = c.is_some();
        i.cpl = c.unwrap_or_default();
        i.wr_valid = w.is_some();
        i.wr = w.unwrap_or_default();
        // Phases of a busy and a free link.
        i.tx_ready = rng.gen_bool(if (cycle / 2000) % 2 == 0 { 0.5 } else { 0.95 });
        let o = d.settle().clone();
        assert!(
            !(o.cpl_ready && o.wr_ready),
            "cycle {cycle}: both sources granted"
        );
        if o.tx_valid {
            assert!(
                ready_hist[1],
                "cycle {cycle}: a beat without ready two cycles earlier"
            );
            assert_eq!(
                o.tx.sop,
                current.is_empty(),
                "cycle {cycle}: TLPs interleave"
            );
            current.push(o.tx);
            if o.tx.eop {
                let kind = (current[0].data as u32 >> 24) & 0x1F;
                if kind == 0x0A {
                    got_cpls.push(std::mem::take(&mut current));
                } else {
                    got_writes.push(std::mem::take(&mut current));
                }
            }
        } else {
            assert!(
                current.is_empty() || !ready_hist[1],
                "cycle {cycle}: a gap inside a TLP on a ready cycle"
            );
        }
        let cpl_moved = d.inputs.cpl_valid && o.cpl_ready;
        let wr_moved = d.inputs.wr_valid && o.wr_ready;
        cpl_src.step(cpl_moved, &mut rng);
        wr_src.step(wr_moved, &mut rng);
        ready_hist = [d.inputs.tx_ready, ready_hist[0]];
        d.tick(clk);
    }
    let want = |t: &[Tlp]| t.iter().map(|t| t.to_beats()).collect::<Vec<_>>();
    assert_eq!(got_cpls, want(&cpls), "completions whole and in order");
    assert_eq!(got_writes, want(&writes), "writes whole and in order");
}

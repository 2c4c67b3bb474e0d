//! The transmit arbiter: a completion source and a source of memory writes and reads (gap-free TLP
//! sources with random pauses between TLPs) share the Hard IP's port, whose `tx_ready` drops at
//! random. Each write is issued upstream (`posted_issued`) a random while before the source may
//! offer it, as the TLP writer and the posted credit gate hold it. Checks: a beat goes only where
//! `tx_ready` was high two cycles earlier; inside a TLP every such cycle carries a beat (the Hard
//! IP's rule); TLPs never interleave; each source's TLPs arrive whole and in order; a completion
//! reaches the port after every write issued before it was offered (PCIe ordering) and before any
//! write issued after (it never waits for later ones). On the rust-hdl model and its Verilog in
//! lockstep.

use std::collections::VecDeque;

use nanet_contract::pcie::PcieVariant;
use nanet_hdl::pcie::tx_arbiter::PcieTxArbiter;
use nanet_sim::design_ports;
use nanet_sim::engine::clocks::CORE_CLOCK_PS;
use nanet_sim::engine::{Design, DesignSim, EngineKind};
use nanet_sim::world::tlp::{Beat, BeatData, CplStatus, Pins, Tlp};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

#[derive(Clone, Default)]
pub struct AIn<T> {
    reset: bool,
    cpl: Pins<T>,
    cpl_valid: bool,
    wr: Pins<T>,
    wr_valid: bool,
    tx_ready: bool,
    posted_issued: bool,
}

#[derive(Clone, Default, Debug)]
pub struct AOut<T> {
    cpl_ready: bool,
    wr_ready: bool,
    tx: Pins<T>,
    tx_valid: bool,
}

/// The arbiter at one width.
macro_rules! arbiter_design {
    ($design:ident, $bits:literal, $data:ty, $top:literal) => {
        design_ports! {
            pub $design for PcieTxArbiter<$bits>, top $top,
            inputs AIn<$data>, outputs AOut<$data>,
            clocks { clock }
            inputs {
                reset => reset, cpl.data => cpl.data, cpl.sop => cpl.sop, cpl.eop => cpl.eop,
                cpl.empty => cpl.empty, cpl_valid => cpl.valid, wr.data => wr.data, wr.sop => wr.sop,
                wr.eop => wr.eop, wr.empty => wr.empty, wr_valid => wr.valid, tx_ready => tx.ready,
                posted_issued => posted_issued,
            }
            outputs {
                cpl_ready => cpl.ready, wr_ready => wr.ready, tx.data => tx.data, tx.sop => tx.sop,
                tx.eop => tx.eop, tx.empty => tx.empty, tx_valid => tx.valid,
            }
        }
    };
}
arbiter_design!(Arbiter128, 128, u128, "nanet_pcie_tx_arbiter");
arbiter_design!(Arbiter256, 256, [u64; 4], "nanet_pcie_tx_arbiter_256");

/// A gap-free TLP source: TLPs as beat lists, a random pause before each.
pub struct Source {
    tlps: VecDeque<Vec<Beat>>,
    beat: usize,
    pause: u32,
    /// TLPs whose last beat moved.
    pub done: usize,
}

impl Source {
    pub fn new(tlps: &[Tlp], variant: PcieVariant) -> Self {
        Self {
            tlps: tlps.iter().map(|t| t.to_beats(variant)).collect(),
            beat: 0,
            pause: 0,
            done: 0,
        }
    }
    /// Whether the next beat on offer starts a TLP.
    pub fn at_start(&self) -> bool {
        self.beat == 0
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
                self.done += 1;
                self.beat = 0;
                self.pause = rng.gen_range(0..6);
            }
        } else if self.beat == 0 && self.pause > 0 {
            self.pause -= 1;
        }
    }
}

/// Whether a TLP's first beat is a memory write (a posted TLP: header with data, not a completion).
fn is_posted(first: &Beat) -> bool {
    let dw0 = first.dwords[0];
    dw0 & (1 << 30) != 0 && (dw0 >> 24) & 0x1F != 0x0A
}

#[test]
fn completions_and_writes_share_the_port_whole_and_in_order() {
    share_the_port::<Arbiter128, u128>();
}

/// The same at 256 bits (Gen3 x8): the arbiter reads only header dword 0.
#[test]
fn at_256_bits_completions_and_writes_share_the_port_whole_and_in_order() {
    share_the_port::<Arbiter256, [u64; 4]>();
}

fn share_the_port<D: Design<In = AIn<T>, Out = AOut<T>>, T: BeatData>() {
    let v = T::VARIANT;
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
    // Memory writes with a memory read (not posted: never issued, never waited for) now and then.
    let writes: Vec<Tlp> = (0..360u64)
        .map(|i| {
            let addr = 0x1_0000_0000 * (i % 2) + 0x8000_0000 + i * 256 + 4 * (i % 3);
            if i % 6 == 5 {
                return Tlp::MemRead {
                    requester: 0x0300,
                    tag: i as u8,
                    addr,
                    len_dw: 16,
                    first_be: 0xF,
                    last_be: 0xF,
                };
            }
            Tlp::MemWrite {
                requester: 0x0300,
                tag: 0,
                addr,
                first_be: 0xF,
                last_be: 0xF,
                data: (0..rng.gen_range(2..64))
                    .map(|k| (i as u32) << 16 | k)
                    .collect(),
            }
        })
        .collect();
    // How many posted TLPs come before each TLP of the write source.
    let posted_before: Vec<usize> = writes
        .iter()
        .scan(0, |n, t| {
            let before = *n;
            *n += matches!(t, Tlp::MemWrite { .. }) as usize;
            Some(before)
        })
        .collect();
    let total_posted = writes.len() - writes.len() / 6;
    let mut d = DesignSim::<D>::new(EngineKind::Both).unwrap_or_else(|e| panic!("{e}"));
    let clk = d.add_clock("core", 0, CORE_CLOCK_PS);
    d.inputs.reset = true;
    d.tick(clk);
    d.inputs.reset = false;
    let (mut cpl_src, mut wr_src) = (Source::new(&cpls, v), Source::new(&writes, v));
    let mut ready_hist = [false; 2];
    let mut current: Vec<Beat> = vec![];
    let (mut got_cpls, mut got_writes) = (vec![], vec![]);
    // Posted TLPs issued upstream so far, and on the port so far; for each completion on offer,
    // how many had been issued before it was first offered.
    let (mut issued, mut posted_on_port) = (0usize, 0usize);
    let mut cpl_owed: VecDeque<usize> = VecDeque::new();
    let mut cpl_snapped = 0usize;
    // Completions offered while writes issued before them were still on their way.
    let mut waited = 0u32;
    for cycle in 0..40_000u32 {
        // Phases of heavy and light write traffic.
        let heavy = (cycle / 3000) % 2 == 1;
        d.inputs.posted_issued = issued < total_posted
            && issued - posted_on_port < 24
            && rng.gen_bool(if heavy { 0.5 } else { 0.05 });
        // A write may be offered once issued (a read at any time, in order behind the writes).
        let w = wr_src.offer().filter(|_| {
            !wr_src.at_start()
                || matches!(writes[wr_src.done], Tlp::MemRead { .. })
                || posted_before[wr_src.done] < issued
        });
        let c = cpl_src.offer();
        if c.is_some() && cpl_src.at_start() && cpl_snapped == cpl_src.done {
            cpl_owed.push_back(issued);
            cpl_snapped += 1;
            waited += (issued > posted_on_port) as u32;
        }
        let i = &mut d.inputs;
        i.cpl_valid = c.is_some();
        i.cpl = Pins::from(c.unwrap_or_default());
        i.wr_valid = w.is_some();
        i.wr = Pins::from(w.unwrap_or_default());
        // Phases of a busy and a free link.
        i.tx_ready = rng.gen_bool(if (cycle / 2000) % 2 == 0 { 0.5 } else { 0.95 });
        let o = d.settle().clone();
        assert!(
            !(o.cpl_ready && o.wr_ready),
            "cycle {cycle}: both sources granted"
        );
        if o.tx_valid {
            let tx = Beat::from(o.tx);
            assert!(
                ready_hist[1],
                "cycle {cycle}: a beat without ready two cycles earlier"
            );
            assert_eq!(tx.sop, current.is_empty(), "cycle {cycle}: TLPs interleave");
            if tx.sop && is_posted(&tx) {
                posted_on_port += 1;
            }
            if tx.sop && (tx.dwords[0] >> 24) & 0x1F == 0x0A {
                let owed = cpl_owed.pop_front().expect("a completion was offered");
                assert!(
                    posted_on_port >= owed,
                    "cycle {cycle}: completion {} passed a write issued before it \
                     ({posted_on_port} writes on the port, {owed} issued before it)",
                    got_cpls.len()
                );
                // And it went at the first boundary after them: no write issued after it was
                // offered went first.
                assert_eq!(
                    posted_on_port,
                    owed,
                    "cycle {cycle}: completion {} waited for writes issued after it",
                    got_cpls.len()
                );
            }
            current.push(tx);
            if tx.eop {
                let kind = (current[0].dwords[0] >> 24) & 0x1F;
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
        issued += d.inputs.posted_issued as usize;
        ready_hist = [d.inputs.tx_ready, ready_hist[0]];
        d.tick(clk);
    }
    let want = |t: &[Tlp]| t.iter().map(|t| t.to_beats(v)).collect::<Vec<_>>();
    assert_eq!(got_cpls, want(&cpls), "completions whole and in order");
    assert_eq!(got_writes, want(&writes), "writes whole and in order");
    // The ordering rule was exercised.
    assert!(
        waited > 25,
        "only {waited} completions had writes ahead of them"
    );
}

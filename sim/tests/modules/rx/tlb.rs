//! TLB: random mappings of every page size, lookups that hit and miss (wrong slot, invalidated,
//! other page, an entry of another page size than requested), random stalls on request and
//! response; checked against a software model, on the rust-hdl model and its Verilog in lockstep.

use std::collections::{HashMap, VecDeque};

use nanet_hdl::rx::tlb::Tlb;
use nanet_sim::design_ports;
use nanet_sim::engine::clocks::CORE_CLOCK_PS;
use nanet_sim::engine::{ClockId, DesignSim, EngineKind};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

#[derive(Clone, Default)]
pub struct TlbIn {
    reset: bool,
    wr: bool,
    wr_slot: u8,
    wr_valid: bool,
    wr_size: u8,
    wr_vpn: u64,
    wr_ppn: u64,
    req_valid: bool,
    req_slot: u8,
    req_vaddr: u64,
    req_size: u8,
    resp_ready: bool,
}

#[derive(Clone, Default, Debug)]
pub struct TlbOut {
    req_ready: bool,
    resp_valid: bool,
    resp_hit: bool,
    resp_addr: u64,
}

design_ports! {
    pub TlbDesign for Tlb, top "nanet_tlb", inputs TlbIn, outputs TlbOut,
    clocks { clock }
    inputs {
        reset => reset, wr => wr, wr_slot => wr_slot, wr_valid => wr_valid, wr_size => wr_size,
        wr_vpn => wr_vpn, wr_ppn => wr_ppn, req_valid => req_valid, req_slot => req_slot,
        req_vaddr => req_vaddr, req_size => req_size, resp_ready => resp_ready,
    }
    outputs { req_ready => req_ready, resp_valid => resp_valid, resp_hit => resp_hit, resp_addr => resp_addr }
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    size: u8,
    vaddr: u64,
    paddr: u64,
}

fn shift(size: u8) -> u32 {
    [12, 16, 21][size as usize]
}

/// A lookup: slot, virtual address, page size.
type Lookup = (u8, u64, u8);

/// What the TLB must answer for `vaddr` at `slot` for a page of `size`: the bus address, or a
/// miss.
fn reference(table: &HashMap<u8, Entry>, (slot, vaddr, size): Lookup) -> Option<u64> {
    match table.get(&slot) {
        Some(e) if e.size == size && vaddr >> shift(e.size) == e.vaddr >> shift(e.size) => {
            let mask = (1u64 << shift(e.size)) - 1;
            Some((e.paddr & !mask) | (vaddr & mask))
        }
        _ => None,
    }
}

struct Bench {
    d: DesignSim<TlbDesign>,
    clk: ClockId,
}

impl Bench {
    fn new() -> Self {
        let mut d = DesignSim::<TlbDesign>::new(EngineKind::Both).unwrap_or_else(|e| panic!("{e}"));
        let clk = d.add_clock("core", 0, CORE_CLOCK_PS);
        d.inputs.reset = true;
        d.tick(clk);
        d.inputs.reset = false;
        for _ in 0..130 {
            d.tick(clk); // the reset sweep invalidates every slot
        }
        Self { d, clk }
    }

    fn write(&mut self, slot: u8, valid: bool, e: Entry) {
        let i = &mut self.d.inputs;
        i.wr = true;
        i.wr_slot = slot;
        i.wr_valid = valid;
        i.wr_size = e.size;
        i.wr_vpn = e.vaddr >> 12;
        i.wr_ppn = e.paddr >> 12;
        self.d.tick(self.clk);
        self.d.inputs.wr = false;
    }

    /// Runs the lookups with random stalls; returns the answers in order (the address of a hit;
    /// a miss's address means nothing).
    fn lookups(&mut self, reqs: &[Lookup], stall: f64, rng: &mut StdRng) -> Vec<Option<u64>> {
        let mut queue: VecDeque<Lookup> = reqs.iter().copied().collect();
        let mut answers = vec![];
        let mut cycles = 0;
        while answers.len() < reqs.len() {
            let i = &mut self.d.inputs;
            i.req_valid = !queue.is_empty() && !rng.gen_bool(stall);
            if let Some((slot, vaddr, size)) = queue.front() {
                i.req_slot = *slot;
                i.req_vaddr = *vaddr;
                i.req_size = *size;
            }
            i.resp_ready = !rng.gen_bool(stall);
            let o = self.d.settle().clone();
            if self.d.inputs.req_valid && o.req_ready {
                queue.pop_front();
            }
            if o.resp_valid && self.d.inputs.resp_ready {
                answers.push(o.resp_hit.then_some(o.resp_addr));
            }
            self.d.tick(self.clk);
            cycles += 1;
            assert!(cycles < 100 * reqs.len() + 100, "TLB wedged");
        }
        answers
    }
}

#[test]
fn translations_of_every_page_size_hit_and_everything_else_misses() {
    let mut rng = StdRng::seed_from_u64(7);
    let mut b = Bench::new();
    let mut table: HashMap<u8, Entry> = HashMap::new();
    for slot in (0..128u8).filter(|s| s % 3 != 0) {
        let size = rng.gen_range(0..3u8);
        let e = Entry {
            size,
            vaddr: rng.gen::<u64>() & !0xFFF,
            paddr: rng.gen::<u64>() & 0x000F_FFFF_FFFF_F000,
        };
        b.write(slot, true, e);
        table.insert(slot, e);
    }
    // Invalidate a few.
    for slot in [1u8, 64, 127] {
        b.write(slot, false, table[&slot]);
        table.remove(&slot);
    }
    let mut reqs = vec![];
    for _ in 0..2000 {
        let slot = rng.gen_range(0..128u8);
        let (vaddr, size) = match (table.get(&slot), rng.gen_range(0..5)) {
            (Some(e), 0..=2) => (
                (e.vaddr & !((1u64 << shift(e.size)) - 1))
                    | (rng.gen::<u64>() & ((1u64 << shift(e.size)) - 1)),
                e.size,
            ),
            // The right page, asked for with another page size.
            (Some(e), 3) => (e.vaddr, (e.size + rng.gen_range(1..3)) % 3),
            _ => (rng.gen(), rng.gen_range(0..3)),
        };
        reqs.push((slot, vaddr, size));
    }
    for stall in [0.0, 0.4] {
        let got = b.lookups(&reqs, stall, &mut rng);
        let mut hits = 0;
        for (req, g) in reqs.iter().zip(&got) {
            assert_eq!(*g, reference(&table, *req), "lookup {req:x?}");
            hits += g.is_some() as usize;
        }
        assert!(
            hits > 500 && hits < 1500,
            "a real mix of hits ({hits}) and misses"
        );
    }
}

#[test]
fn after_reset_every_slot_misses() {
    let mut rng = StdRng::seed_from_u64(8);
    let mut b = Bench::new();
    let e = Entry {
        size: 0,
        vaddr: 0x7000_0000_1000,
        paddr: 0x8000_2000,
    };
    b.write(5, true, e);
    assert_eq!(
        b.lookups(&[(5, 0x7000_0000_1234, 0)], 0.0, &mut rng),
        vec![Some(0x8000_2234)]
    );
    b.d.inputs.reset = true;
    b.d.tick(b.clk);
    b.d.inputs.reset = false;
    // During the sweep and after it.
    assert_eq!(
        b.lookups(&[(5, 0x7000_0000_1234, 0)], 0.0, &mut rng),
        vec![None]
    );
    for _ in 0..130 {
        b.d.tick(b.clk);
    }
    assert_eq!(
        b.lookups(&[(5, 0x7000_0000_1234, 0)], 0.0, &mut rng),
        vec![None]
    );
}

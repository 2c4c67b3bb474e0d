//! The flow-control credit gate of one TLP class: posted writes of random lengths (1 to 1024
//! dwords) from a gap-free source with random pauses, into a link partner
//! (`nanet_sim::world::flow_control`) with a small buffer, credits freed after a delay that changes
//! from phase to phase, and the Hard IP consuming credits of its own at random (MSIs), with
//! random backpressure behind the gate. Checks: no TLP ever overflows the partner's buffer
//! (through several wraps of the 8-bit and 12-bit counters), the TLPs come out whole, gap-free
//! and in order, `blocked` is high exactly while a first beat waits; with infinite credits the
//! gate never holds anything. On the rust-hdl model and its Verilog in lockstep.

use nanet_hdl::pcie::credit_gate::PcieCreditGate;
use nanet_sim::design_ports;
use nanet_sim::engine::driver::CORE_CLOCK_PS;
use nanet_sim::engine::{DesignSim, EngineKind};
use nanet_sim::world::flow_control::{CreditPool, FcClass, FlowControl};
use nanet_sim::world::tlp::{Beat, Tlp};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::pcie::tx_arbiter::Source;

#[derive(Clone, Default)]
pub struct GIn {
    reset: bool,
    hdr_limit: u8,
    data_limit: u16,
    hdr_infinite: bool,
    data_infinite: bool,
    hip_hdr: bool,
    hip_data: bool,
    inp: Beat,
    inp_valid: bool,
    out_ready: bool,
}

#[derive(Clone, Default, Debug)]
pub struct GOut {
    inp_ready: bool,
    out: Beat,
    out_valid: bool,
    blocked: bool,
}

design_ports! {
    pub GateDesign for PcieCreditGate, top "nanet_pcie_credit_gate", inputs GIn, outputs GOut,
    clocks { clock }
    inputs {
        reset => reset, hdr_limit => hdr_limit, data_limit => data_limit,
        hdr_infinite => hdr_infinite, data_infinite => data_infinite, hip_hdr => hip_hdr,
        hip_data => hip_data, inp.data => inp.data, inp.sop => inp.sop, inp.eop => inp.eop,
        inp.empty => inp.empty, inp_valid => inp.valid, out_ready => out.ready,
    }
    outputs {
        inp_ready => inp.ready, out.data => out.data, out.sop => out.sop, out.eop => out.eop,
        out.empty => out.empty, out_valid => out.valid, blocked => blocked,
    }
}

fn writes(rng: &mut StdRng, n: usize) -> Vec<Tlp> {
    (0..n as u64)
        .map(|i| {
            let dwords = if rng.gen_bool(0.05) {
                1024
            } else {
                rng.gen_range(1..=64)
            };
            Tlp::MemWrite {
                requester: 0x0300,
                tag: 0,
                addr: 0x8000_0000 + i * 4096,
                first_be: 0xF,
                last_be: if dwords == 1 { 0 } else { 0xF },
                data: (0..dwords).map(|k| (i as u32) << 16 | k).collect(),
            }
        })
        .collect()
}

/// Runs `tlps` through the gate into `partner`; returns the cycles the gate said it blocked.
fn run(partner: &mut FlowControl, tlps: &[Tlp], seed: u64) -> u64 {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut d = DesignSim::<GateDesign>::new(EngineKind::Both).unwrap_or_else(|e| panic!("{e}"));
    let clk = d.add_clock("core", 0, CORE_CLOCK_PS);
    d.inputs.reset = true;
    d.tick(clk);
    d.inputs.reset = false;
    let mut src = Source::new(tlps);
    let mut current: Vec<Beat> = vec![];
    let mut got = vec![];
    let mut blocked = 0u64;
    let mut cycle = 0u64;
    let mut hip_pending = false;
    while got.len() < tlps.len() {
        assert!(
            cycle < 2_000_000,
            "{} of {} TLPs through",
            got.len(),
            tlps.len()
        );
        if cycle % 5000 == 0 {
            partner.release_delay = rng.gen_range(0..200);
        }
        partner.tick(cycle);
        let limits = partner.limits();
        let beat = src.offer();
        let i = &mut d.inputs;
        i.hdr_limit = limits.hdr[FcClass::Posted as usize];
        i.data_limit = limits.data[FcClass::Posted as usize];
        i.hdr_infinite = limits.infinite & 0b10_0000 != 0;
        i.data_infinite = limits.infinite & 0b01_0000 != 0;
        // The Hard IP reports a credit it consumed (an MSI, sent when the partner had room)
        // one cycle after it took it.
        i.hip_hdr = hip_pending;
        i.hip_data = hip_pending;
        hip_pending = false;
        i.inp_valid = beat.is_some();
        i.inp = beat.unwrap_or_default();
        i.out_ready = rng.gen_bool(0.8);
        let o = d.settle().clone();
        let moved = d.inputs.inp_valid && o.inp_ready;
        assert_eq!(
            o.out_valid && d.inputs.out_ready,
            moved,
            "cycle {cycle}: beat lost or made up"
        );
        assert_eq!(
            o.blocked,
            d.inputs.inp_valid && current.is_empty() && !o.out_valid,
            "cycle {cycle}: blocked only while a first beat waits"
        );
        if !current.is_empty() {
            assert!(o.out_valid, "cycle {cycle}: a gap inside a TLP");
        }
        blocked += o.blocked as u64;
        if moved {
            assert_eq!(o.out, d.inputs.inp);
            if o.out.sop {
                let (class, data) = FcClass::of(o.out.data as u32).unwrap();
                partner
                    .receive(class, data, cycle)
                    .unwrap_or_else(|e| panic!("cycle {cycle}: {e}"));
            }
            current.push(o.out);
            if o.out.eop {
                got.push(std::mem::take(&mut current));
            }
        } else if rng.gen_bool(0.01) && partner.has_room(FcClass::Posted, 2, 1 + 256) {
            // Room for the MSI and for a TLP the gate may start in the same cycle.
            partner.receive(FcClass::Posted, 1, cycle).unwrap();
            hip_pending = true;
        }
        src.step(moved, &mut rng);
        d.tick(clk);
        cycle += 1;
    }
    let want: Vec<_> = tlps.iter().map(|t| t.to_beats()).collect();
    assert_eq!(got, want, "TLPs whole and in order");
    blocked
}

#[test]
fn posted_writes_never_overflow_a_small_buffer_through_counter_wraps() {
    let mut rng = StdRng::seed_from_u64(61);
    let tlps = writes(&mut rng, 700);
    let mut partner = FlowControl::new(
        [
            CreditPool::finite(3, 300),
            CreditPool::INFINITE,
            CreditPool::INFINITE,
        ],
        100,
    );
    let blocked = run(&mut partner, &tlps, 61);
    assert!(blocked > 1000, "the buffer never held the writes back");
    assert_eq!(
        partner.high_water[0].0, 3,
        "the header credits were used to the end"
    );
}

#[test]
fn infinite_credits_never_hold_a_tlp() {
    let mut rng = StdRng::seed_from_u64(62);
    let tlps = writes(&mut rng, 100);
    let mut partner = FlowControl::new([CreditPool::INFINITE; 3], 0);
    assert_eq!(run(&mut partner, &tlps, 62), 0);
}

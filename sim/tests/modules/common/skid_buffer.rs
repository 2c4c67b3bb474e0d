//! The register slices (`SkidBuffer`, and `PairFifo`, the same handshake with its multiplexer
//! after the registers): random stalls on both sides against a scoreboard (every word out once, in
//! order, one per cycle at most; words cancelled as they are taken never come out); its outputs come from flip-flops (changing this cycle's inputs
//! never changes this cycle's outputs); an input offered without a gap comes out without one;
//! reset empties it. On the rust-hdl model and its Verilog in lockstep.

use std::collections::VecDeque;

use nanet_hdl::common::pair_fifo::PairFifo;
use nanet_hdl::common::skid_buffer::SkidBuffer;
use nanet_sim::design_ports;
use nanet_sim::engine::clocks::CORE_CLOCK_PS;
use nanet_sim::engine::{ClockId, Design, DesignSim, EngineKind};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

#[derive(Clone, Default)]
pub struct SkidIn {
    reset: bool,
    in_data: u16,
    in_valid: bool,
    out_ready: bool,
    in_cancel: bool,
}

#[derive(Clone, Default, Debug, PartialEq)]
pub struct SkidOut {
    in_ready: bool,
    out_data: u16,
    out_valid: bool,
}

/// Both slices have the same ports.
macro_rules! slice_design {
    ($design:ident, $block:ty, $top:literal) => {
        design_ports! {
            pub $design for $block, top $top, inputs SkidIn, outputs SkidOut,
            clocks { clock }
            inputs {
                reset => reset, in_data => in_data, in_valid => in_valid, out_ready => out_ready,
                in_cancel => in_cancel,
            }
            outputs { in_ready => in_ready, out_data => out_data, out_valid => out_valid }
        }
    };
}
slice_design!(SkidDesign, SkidBuffer<16>, "nanet_skid_buffer");
slice_design!(PairDesign, PairFifo<16>, "nanet_pair_fifo");

fn new_slice<D: Design<In = SkidIn, Out = SkidOut>>() -> (DesignSim<D>, ClockId) {
    let mut d = DesignSim::<D>::new(EngineKind::Both).unwrap_or_else(|e| panic!("{e}"));
    let clk = d.add_clock("core", 0, CORE_CLOCK_PS);
    d.inputs.reset = true;
    d.tick(clk);
    d.inputs.reset = false;
    (d, clk)
}

#[test]
fn words_pass_once_in_order_under_random_stalls_and_outputs_are_registered() {
    scoreboard::<SkidDesign>();
}

#[test]
fn the_pair_fifo_passes_words_as_the_skid_buffer_does() {
    scoreboard::<PairDesign>();
    gap_free_and_reset::<PairDesign>();
}

fn scoreboard<D: Design<In = SkidIn, Out = SkidOut>>() {
    let mut rng = StdRng::seed_from_u64(5);
    let (mut d, clk) = new_slice::<D>();
    let mut sent = 0u16;
    let mut inside: VecDeque<u16> = VecDeque::new();
    let (mut got, mut stalled_in, mut both_moved, mut cancelled) = (0u32, 0u32, 0u32, 0u32);
    for cycle in 0..20_000u32 {
        // Phases: a slow reader, a fast one, and both at random.
        let (pv, pr) = match (cycle / 2500) % 3 {
            0 => (0.9, 0.3),
            1 => (0.5, 0.95),
            _ => (0.7, 0.7),
        };
        d.inputs.in_valid = rng.gen_bool(pv);
        d.inputs.in_data = sent;
        d.inputs.out_ready = rng.gen_bool(pr);
        d.inputs.in_cancel = rng.gen_bool(0.2);
        let o = d.settle().clone();
        // The same cycle with other inputs: nothing the slice drives may change.
        let keep = d.inputs.clone();
        d.inputs.in_valid = !keep.in_valid;
        d.inputs.in_data = !keep.in_data;
        d.inputs.out_ready = !keep.out_ready;
        d.inputs.in_cancel = !keep.in_cancel;
        assert_eq!(
            d.settle().clone(),
            o,
            "cycle {cycle}: an output follows an input"
        );
        d.inputs = keep;
        d.settle();
        assert!(inside.len() <= 2, "cycle {cycle}: more than two words held");
        assert_eq!(o.out_valid, !inside.is_empty(), "cycle {cycle}: valid");
        assert_eq!(o.in_ready, inside.len() < 2, "cycle {cycle}: ready");
        let took = d.inputs.in_valid && o.in_ready;
        let gave = o.out_valid && d.inputs.out_ready;
        if gave {
            assert_eq!(Some(o.out_data), inside.pop_front(), "cycle {cycle}: order");
            got += 1;
        }
        if took && d.inputs.in_cancel {
            cancelled += 1;
        } else if took {
            inside.push_back(sent);
        }
        sent = sent.wrapping_add(took as u16);
        stalled_in += (d.inputs.in_valid && !o.in_ready) as u32;
        both_moved += (took && gave) as u32;
        d.tick(clk);
    }
    assert!(got > 6_000, "only {got} words through");
    assert!(cancelled > 1_000, "only {cancelled} words cancelled");
    assert!(stalled_in > 500, "the slice never filled up");
    assert!(
        both_moved > 3000,
        "never one in and one out in the same cycle"
    );
}

#[test]
fn a_gap_free_input_stays_gap_free_and_reset_empties_it() {
    gap_free_and_reset::<SkidDesign>();
}

fn gap_free_and_reset<D: Design<In = SkidIn, Out = SkidOut>>() {
    let mut rng = StdRng::seed_from_u64(6);
    let (mut d, clk) = new_slice::<D>();
    d.inputs.in_valid = true;
    let mut next = 0u16;
    let mut expect = 0u16;
    for cycle in 0..5000u32 {
        d.inputs.in_data = next;
        d.inputs.out_ready = rng.gen_bool(0.6);
        let o = d.settle().clone();
        if cycle > 0 {
            assert!(o.out_valid, "cycle {cycle}: a gap out of a gap-free input");
        }
        if o.out_valid && d.inputs.out_ready {
            assert_eq!(o.out_data, expect);
            expect += 1;
        }
        if o.in_ready {
            next += 1;
        }
        d.tick(clk);
    }
    d.inputs.reset = true;
    d.inputs.in_valid = false;
    d.tick(clk);
    d.inputs.reset = false;
    let o = d.settle().clone();
    assert!(
        !o.out_valid && o.in_ready,
        "reset leaves words in the slice"
    );
}

#[derive(Clone, Default)]
pub struct WideIn {
    reset: bool,
    in_data: [u64; 4],
    in_valid: bool,
    out_ready: bool,
    in_cancel: bool,
}

#[derive(Clone, Default, Debug, PartialEq)]
pub struct WideOut {
    in_ready: bool,
    out_data: [u64; 4],
    out_valid: bool,
}

design_ports! {
    pub WideDesign for SkidBuffer<256>, top "nanet_skid_buffer_256", inputs WideIn, outputs WideOut,
    clocks { clock }
    inputs {
        reset => reset, in_data => in_data, in_valid => in_valid, out_ready => out_ready,
        in_cancel => in_cancel,
    }
    outputs { in_ready => in_ready, out_data => out_data, out_valid => out_valid }
}

/// A port of 256 bits (the Gen3 Avalon-ST beat) moves every bit through both engines: random
/// words through a 256-bit slice under random stalls, each out once, in order, bit exact (the
/// engines in lockstep compare all four words of the output every cycle).
#[test]
fn a_256_bit_slice_moves_every_bit_on_both_engines() {
    let mut rng = StdRng::seed_from_u64(256);
    let mut d = DesignSim::<WideDesign>::new(EngineKind::Both).unwrap_or_else(|e| panic!("{e}"));
    let clk = d.add_clock("core", 0, CORE_CLOCK_PS);
    d.inputs.reset = true;
    d.tick(clk);
    d.inputs.reset = false;
    let mut offer: [u64; 4] = rng.gen();
    let mut inside: VecDeque<[u64; 4]> = VecDeque::new();
    let (mut got, mut ones) = (0u32, [0u32; 256]);
    for cycle in 0..4000u32 {
        d.inputs.in_valid = rng.gen_bool(0.7);
        d.inputs.in_data = offer;
        d.inputs.out_ready = rng.gen_bool(0.7);
        d.inputs.in_cancel = false;
        let o = d.settle().clone();
        if o.out_valid && d.inputs.out_ready {
            assert_eq!(Some(o.out_data), inside.pop_front(), "cycle {cycle}");
            for (bit, n) in ones.iter_mut().enumerate() {
                *n += (o.out_data[bit / 64] >> (bit % 64)) as u32 & 1;
            }
            got += 1;
        }
        if d.inputs.in_valid && o.in_ready {
            inside.push_back(offer);
            offer = rng.gen();
        }
        d.tick(clk);
    }
    assert!(got > 2000, "only {got} words through");
    assert!(
        ones.iter().all(|n| *n > 0 && *n < got),
        "a bit of the 256 never toggled"
    );
}

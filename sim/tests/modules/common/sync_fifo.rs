//! Single-clock FIFO (the release queue's): random stalls on both sides, writes refused only when
//! full (and `overflow` then), everything out in order; reset empties it. On the rust-hdl model and
//! its Verilog in lockstep.

use nanet_hdl::common::sync_fifo::SyncFifo;
use nanet_sim::design_ports;
use nanet_sim::engine::clocks::CORE_CLOCK_PS;
use nanet_sim::engine::{DesignSim, EngineKind};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

#[derive(Clone, Default)]
pub struct FifoIn {
    reset: bool,
    in_data: u16,
    in_valid: bool,
    out_ready: bool,
}

#[derive(Clone, Default, Debug)]
pub struct FifoOut {
    in_ready: bool,
    overflow: bool,
    out_data: u16,
    out_valid: bool,
}

design_ports! {
    pub FifoDesign for SyncFifo<14, 4, 5>, top "nanet_sync_fifo", inputs FifoIn, outputs FifoOut,
    clocks { clock }
    inputs { reset => reset, in_data => in_data, in_valid => in_valid, out_ready => out_ready }
    outputs { in_ready => in_ready, overflow => overflow, out_data => out_data, out_valid => out_valid }
}

#[test]
fn words_come_out_in_order_and_full_refuses_with_overflow() {
    let mut rng = StdRng::seed_from_u64(3);
    let mut d = DesignSim::<FifoDesign>::new(EngineKind::Both).unwrap_or_else(|e| panic!("{e}"));
    let clk = d.add_clock("core", 0, CORE_CLOCK_PS);
    d.inputs.reset = true;
    d.tick(clk);
    d.inputs.reset = false;
    let (mut sent, mut got, mut overflows, mut full_seen) = (0u16, 0u16, 0, 0);
    for cycle in 0..6000 {
        // Phases: the reader slower than the writer (fills up), then faster.
        let read_p = if (cycle / 1000) % 2 == 0 { 0.2 } else { 0.9 };
        d.inputs.in_valid = rng.gen_bool(0.7);
        d.inputs.in_data = sent & 0x3FFF;
        d.inputs.out_ready = rng.gen_bool(read_p);
        let o = d.settle().clone();
        if d.inputs.in_valid {
            if o.in_ready {
                sent += 1;
            } else {
                full_seen += 1;
            }
            assert_eq!(o.overflow, !o.in_ready);
        }
        overflows += o.overflow as u32;
        if o.out_valid && d.inputs.out_ready {
            assert_eq!(o.out_data, got & 0x3FFF, "in order");
            got += 1;
        }
        d.tick(clk);
    }
    assert!(full_seen > 100 && overflows == full_seen);
    assert!(got > 1000 && sent - got <= 16, "{sent} sent, {got} read");
    // Reset empties it.
    d.inputs.in_valid = false;
    d.inputs.reset = true;
    d.tick(clk);
    d.inputs.reset = false;
    let o = d.settle().clone();
    assert!(!o.out_valid && o.in_ready);
}

/// A writer and a reader that never stall: after the first words, one word a cycle in and out
/// (the output stage fetches from registers only and still never leaves a bubble), a word
/// written in cycle `t` on the output from `t + 3`.
#[test]
fn a_steady_stream_passes_one_word_a_cycle() {
    let mut d = DesignSim::<FifoDesign>::new(EngineKind::Both).unwrap_or_else(|e| panic!("{e}"));
    let clk = d.add_clock("core", 0, CORE_CLOCK_PS);
    d.inputs.reset = true;
    d.tick(clk);
    d.inputs.reset = false;
    d.inputs.out_ready = true;
    let (mut sent, mut got, mut first_out) = (0u16, 0u16, None);
    for cycle in 0..300u32 {
        d.inputs.in_valid = true;
        d.inputs.in_data = sent;
        let o = d.settle().clone();
        if o.in_ready {
            sent += 1;
        }
        if o.out_valid {
            assert_eq!(o.out_data, got, "in order");
            got += 1;
            first_out.get_or_insert(cycle);
        } else if first_out.is_some() {
            panic!("cycle {cycle}: a bubble in a steady stream");
        }
        d.tick(clk);
    }
    assert_eq!(first_out, Some(3), "the first word's latency");
    assert_eq!(got, 297);
}

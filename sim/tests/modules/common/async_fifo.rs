//! The clock-domain crossing FIFO, on the rust-hdl model and its Verilog in lockstep, with two
//! unrelated clocks (156.25 and 250 MHz, either way round) and random stalls on both sides.

use nanet_hdl::common::async_fifo::AsyncFifo;
use nanet_sim::design_ports;
use nanet_sim::engine::clocks::{CORE_CLOCK_PS, NET_CLOCK_PS};
use nanet_sim::engine::{DesignSim, EngineKind};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// 16 entries, 10 bits of metadata.
pub type SmallFifo = AsyncFifo<64, 10, 4, 5>;

#[derive(Clone, Default)]
pub struct FifoIn {
    write_reset: bool,
    read_reset: bool,
    in_data: u64,
    in_meta: u16,
    in_valid: bool,
    out_ready: bool,
}

#[derive(Clone, Default, Debug)]
pub struct FifoOut {
    in_ready: bool,
    out_data: u64,
    out_meta: u16,
    out_valid: bool,
}

design_ports! {
    pub SmallFifoDesign for SmallFifo, top "nanet_test_async_fifo", inputs FifoIn, outputs FifoOut,
    clocks { write_clock, read_clock }
    inputs {
        write_reset => write_reset,
        read_reset => read_reset,
        in_data => in_data,
        in_meta => in_meta,
        in_valid => in_valid,
        out_ready => out_ready,
    }
    outputs { in_ready => in_ready, out_data => out_data, out_meta => out_meta, out_valid => out_valid }
}

/// What a run saw: the beats that arrived, whether the writer ever met a full FIFO, and the read
/// cycles after the first beat in which the reader was ready and nothing was on the output.
struct Run {
    got: Vec<(u64, u16)>,
    saw_full: bool,
    read_bubbles: usize,
}

/// Sends `n` numbered beats across.
fn run(write_ps: u64, read_ps: u64, stall: f64, n: u64, seed: u64) -> Run {
    let mut d =
        DesignSim::<SmallFifoDesign>::new(EngineKind::Both).unwrap_or_else(|e| panic!("{e}"));
    let w = d.add_clock("write", 0, write_ps);
    let r = d.add_clock("read", 1, read_ps);
    let mut rng = StdRng::seed_from_u64(seed);
    d.inputs.write_reset = true;
    d.inputs.read_reset = true;
    for _ in 0..4 {
        d.tick(w);
        d.tick(r);
    }
    d.inputs.write_reset = false;
    d.inputs.read_reset = false;
    let (mut sent, mut got, mut saw_full, mut read_bubbles) = (0u64, vec![], false, 0);
    let mut steps = 0;
    while (got.len() as u64) < n {
        let o = d.settle().clone();
        let rising = d.next_rising();
        if rising & (1 << w.0) != 0 && d.inputs.in_valid {
            if o.in_ready {
                sent += 1;
            } else {
                saw_full = true;
            }
        }
        if rising & (1 << r.0) != 0 && d.inputs.out_ready {
            if o.out_valid {
                got.push((o.out_data, o.out_meta));
            } else if !got.is_empty() {
                read_bubbles += 1;
            }
        }
        d.try_step().unwrap_or_else(|m| panic!("{m}"));
        // New inputs for whichever side just clocked.
        if rising & (1 << w.0) != 0 {
            d.inputs.in_valid = sent < n && !rng.gen_bool(stall);
            d.inputs.in_data = sent.wrapping_mul(0x9E37_79B9_7F4A_7C15);
            d.inputs.in_meta = (sent & 0x3FF) as u16;
        }
        if rising & (1 << r.0) != 0 {
            d.inputs.out_ready = !rng.gen_bool(stall);
        }
        steps += 1;
        assert!(
            steps < 200 * n + 1000,
            "FIFO wedged after {} of {n} beats",
            got.len()
        );
    }
    Run {
        got,
        saw_full,
        read_bubbles,
    }
}

fn check(got: &[(u64, u16)], n: u64) {
    assert_eq!(got.len() as u64, n);
    for (i, (data, meta)) in got.iter().enumerate() {
        let i = i as u64;
        assert_eq!(
            (*data, *meta),
            (i.wrapping_mul(0x9E37_79B9_7F4A_7C15), (i & 0x3FF) as u16),
            "beat {i}"
        );
    }
}

#[test]
fn slow_writer_fast_reader_delivers_every_beat_in_order() {
    for (stall, seed) in [(0.0, 1), (0.3, 2)] {
        check(&run(NET_CLOCK_PS, CORE_CLOCK_PS, stall, 400, seed).got, 400);
    }
}

#[test]
fn fast_writer_slow_reader_fills_up_and_loses_nothing() {
    for (stall, seed) in [(0.0, 3), (0.3, 4), (0.6, 5)] {
        let run = run(CORE_CLOCK_PS, NET_CLOCK_PS, stall, 400, seed);
        check(&run.got, 400);
        assert!(run.saw_full, "the writer should have met a full FIFO");
        if stall == 0.0 {
            // The writer keeps it full: a steady reader takes a beat in every cycle.
            assert_eq!(run.read_bubbles, 0, "read cycles without a beat");
        }
    }
}

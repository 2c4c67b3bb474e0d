//! Write mux: the DMA writer's requests (A, some of them a lone void beat, as after a TLB miss) and
//! the event queue's (B) onto one write port, with random gaps on both sources and random
//! backpressure on the port. Scoreboard: the port carries every request of each source whole
//! and in its source's order, requests never interleave, and no void beat comes out (nor locks
//! the port: B gets through after it). At 128 and 256 bits, on the rust-hdl model and its Verilog
//! in lockstep.

use std::collections::VecDeque;

use nanet_hdl::rx::write_mux::WriteMux;
use nanet_sim::design_ports;
use nanet_sim::engine::clocks::CORE_CLOCK_PS;
use nanet_sim::engine::{Design, DesignSim, EngineKind};
use nanet_sim::world::dma_port::WriteBeat;
use nanet_sim::world::tlp::{BeatData, MAX_BEAT_DWORDS};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

#[derive(Clone, Default)]
pub struct WmIn<T> {
    reset: bool,
    a_valid: bool,
    a: WriteBeat<T>,
    a_void: bool,
    b_valid: bool,
    b: WriteBeat<T>,
    out_ready: bool,
}

#[derive(Clone, Default, Debug)]
pub struct WmOut<T> {
    a_ready: bool,
    b_ready: bool,
    out_valid: bool,
    out: WriteBeat<T>,
    holds: bool,
}

macro_rules! mux_design {
    ($design:ident, $bits:literal, $data:ty, $top:literal) => {
        design_ports! {
            pub $design for WriteMux<$bits>, top $top, inputs WmIn<$data>, outputs WmOut<$data>,
            clocks { clock }
            inputs {
                reset => reset, a_valid => a.valid, a.sop => a.sop, a.eop => a.eop,
                a.addr => a.addr, a.len => a.len, a.data => a.data, a_void => a_void,
                b_valid => b.valid, b.sop => b.sop, b.eop => b.eop, b.addr => b.addr,
                b.len => b.len, b.data => b.data, out_ready => out.ready,
            }
            outputs {
                a_ready => a.ready, b_ready => b.ready, out_valid => out.valid,
                out.sop => out.sop, out.eop => out.eop, out.addr => out.addr, out.len => out.len,
                out.data => out.data, holds => holds,
            }
        }
    };
}
mux_design!(Mux128, 128, u128, "nanet_write_mux");
mux_design!(Mux256, 256, [u64; 4], "nanet_write_mux_256");

/// Source B's addresses have this bit set, A's not: tells the sources apart at the port.
const FROM_B: u64 = 1 << 63;

/// A request: its beats, each `(beat, void)`; a void request is one beat, marked void.
type Request<T> = Vec<(WriteBeat<T>, bool)>;

/// A beat's data: the request's number, the beat's, and random dwords.
fn numbered<T: BeatData>(rng: &mut StdRng, request: usize, beat: usize) -> T {
    let mut dwords: [u32; MAX_BEAT_DWORDS] = rng.gen();
    dwords[0] = beat as u32;
    dwords[2] = request as u32;
    T::from_dwords(&dwords)
}

/// `n` requests of one source, numbered from `first` (in every beat's data), 1 to 4 beats;
/// with `voids`, about one in five is a lone void beat (sop, eop at random).
fn requests<T: BeatData>(
    rng: &mut StdRng,
    n: usize,
    tag: u64,
    voids: bool,
) -> VecDeque<Request<T>> {
    let lanes = T::VARIANT.beat_bytes();
    (0..n)
        .map(|k| {
            let addr = tag | (k as u64) << 12;
            if voids && rng.gen_bool(0.2) {
                let beat = WriteBeat {
                    sop: true,
                    eop: rng.gen(),
                    addr,
                    len: 64,
                    data: numbered(rng, usize::MAX, 0),
                };
                return vec![(beat, true)];
            }
            let beats = rng.gen_range(1..=4usize);
            (0..beats)
                .map(|i| {
                    let beat = WriteBeat {
                        sop: i == 0,
                        eop: i + 1 == beats,
                        addr: addr + (lanes * i) as u64,
                        len: (lanes * beats) as u16,
                        data: numbered(rng, k, i),
                    };
                    (beat, false)
                })
                .collect()
        })
        .collect()
}

/// Runs both sources through the mux until every request is out; returns how many came out
/// (per source) and the void beats taken.
fn run<D: Design<In = WmIn<T>, Out = WmOut<T>>, T: BeatData + Copy + Default>(
    seed: u64,
    gaps: f64,
    stall: f64,
) -> (usize, usize, usize) {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut d = DesignSim::<D>::new(EngineKind::Both).unwrap_or_else(|e| panic!("{e}"));
    let clk = d.add_clock("core", 0, CORE_CLOCK_PS);
    d.inputs.reset = true;
    d.tick(clk);
    d.inputs.reset = false;

    let mut a = requests::<T>(&mut rng, 300, 0, true);
    let mut b = requests::<T>(&mut rng, 300, FROM_B, false);
    let mut expect_a: VecDeque<Request<T>> = a.iter().filter(|r| !r[0].1).cloned().collect();
    let mut expect_b = b.clone();
    let (want_a, want_b) = (expect_a.len(), expect_b.len());
    // Beats of the request coming out now, checked against the head of its source's queue.
    let mut open: Option<(bool, usize)> = None;
    let (mut out_a, mut out_b, mut voided) = (0, 0, 0);
    let (mut at_a, mut at_b) = (0usize, 0usize);
    let mut cycles = 0u64;
    while out_a < want_a || out_b < want_b {
        let i = &mut d.inputs;
        i.a_valid = !a.is_empty() && !rng.gen_bool(gaps);
        if let Some(r) = a.front() {
            (i.a, i.a_void) = r[at_a];
        }
        i.b_valid = !b.is_empty() && !rng.gen_bool(gaps);
        if let Some(r) = b.front() {
            i.b = r[at_b].0;
        }
        i.out_ready = !rng.gen_bool(stall);
        let o = d.settle().clone();
        assert!(!(o.a_ready && o.b_ready), "both sources taken at once");
        if d.inputs.a_valid && o.a_ready {
            voided += d.inputs.a_void as usize;
            at_a += 1;
            if at_a == a[0].len() {
                a.pop_front();
                at_a = 0;
            }
        }
        if d.inputs.b_valid && o.b_ready {
            at_b += 1;
            if at_b == b[0].len() {
                b.pop_front();
                at_b = 0;
            }
        }
        if o.out_valid && d.inputs.out_ready {
            let from_b = o.out.addr & FROM_B != 0;
            let (queue, done) = if from_b {
                (&mut expect_b, &mut out_b)
            } else {
                (&mut expect_a, &mut out_a)
            };
            let (src, beat) = match open {
                Some((src, beat)) => {
                    assert_eq!(src, from_b, "requests interleaved at cycle {cycles}");
                    (src, beat)
                }
                None => (from_b, 0),
            };
            let head = queue.front().expect("a beat no source sent");
            assert_eq!(
                o.out,
                head[beat].0,
                "beat {beat} of {} request, cycle {cycles}",
                if src { "a B" } else { "an A" }
            );
            open = Some((src, beat + 1));
            if beat + 1 == head.len() {
                queue.pop_front();
                *done += 1;
                open = None;
            }
        }
        assert!(
            o.holds || !o.out_valid,
            "a beat on offer the mux says it lacks"
        );
        d.tick(clk);
        cycles += 1;
        assert!(
            cycles < 100_000,
            "mux wedged: A {out_a}/{want_a}, B {out_b}/{want_b}"
        );
    }
    (out_a, out_b, voided)
}

#[test]
fn both_sources_whole_and_in_order_voids_dropped_random_gaps_and_backpressure() {
    mixes::<Mux128, u128>();
}

#[test]
fn both_sources_whole_and_in_order_voids_dropped_random_gaps_and_backpressure_at_256_bits() {
    mixes::<Mux256, [u64; 4]>();
}

fn mixes<D: Design<In = WmIn<T>, Out = WmOut<T>>, T: BeatData + Copy + Default>() {
    for (seed, gaps, stall) in [(1, 0.3, 0.3), (2, 0.0, 0.0), (3, 0.6, 0.1), (4, 0.1, 0.7)] {
        let (a, b, voided) = run::<D, T>(seed, gaps, stall);
        assert!(a > 200 && b == 300, "seed {seed}: {a} A and {b} B requests");
        assert!(voided > 30, "seed {seed}: only {voided} void beats");
    }
}

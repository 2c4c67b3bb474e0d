//! Write arbiter: four DMA writers' requests (some a lone void beat, as after a TLB miss), each
//! source offering at random times (and holding a beat until it is taken), into a model of the
//! write mux's two-entry slice with random backpressure. Scoreboard: every request comes out whole
//! and in its source's order, requests never interleave, a void beat comes out marked and never
//! holds the port; with the sources waiting, no request waits for more than one request of each
//! other source; and `behind[s]` is set whenever a beat of source `s` is in the slice. The same
//! with one source. At 128 and 256 bits, on the rust-hdl model and its Verilog in lockstep.

use std::collections::VecDeque;

use nanet_hdl::rx::write_arbiter::WriteArbiter;
use nanet_sim::design_ports;
use nanet_sim::engine::clocks::CORE_CLOCK_PS;
use nanet_sim::engine::{Design, DesignSim, EngineKind};
use nanet_sim::world::dma_port::WriteBeat;
use nanet_sim::world::tlp::{BeatData, MAX_BEAT_DWORDS};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

#[derive(Clone, Default)]
pub struct WaIn<T> {
    reset: bool,
    valid: [bool; 4],
    beat: [WriteBeat<T>; 4],
    void: [bool; 4],
    out_ready: bool,
    down_moved: bool,
    down_holds: bool,
}

#[derive(Clone, Default, Debug)]
pub struct WaOut<T> {
    ready: [bool; 4],
    behind: [bool; 4],
    out_valid: bool,
    out: WriteBeat<T>,
    out_void: bool,
}

macro_rules! arbiter_design {
    ($design:ident, $ports:literal, $bits:literal, $data:ty, $top:literal: $($p:literal),*) => {
        design_ports! {
            pub $design for WriteArbiter<$ports, $bits>, top $top, inputs WaIn<$data>,
            outputs WaOut<$data>,
            clocks { clock }
            inputs {
                reset => reset,
                $(valid[$p] => inp[$p].valid, beat[$p].sop => inp[$p].sop,
                  beat[$p].eop => inp[$p].eop, beat[$p].addr => inp[$p].addr,
                  beat[$p].len => inp[$p].len, beat[$p].data => inp[$p].data,
                  void[$p] => inp_void[$p],)*
                out_ready => out.ready, down_moved => down_moved, down_holds => down_holds,
            }
            outputs {
                $(ready[$p] => inp[$p].ready, behind[$p] => behind[$p],)*
                out_valid => out.valid, out.sop => out.sop, out.eop => out.eop,
                out.addr => out.addr, out.len => out.len, out.data => out.data,
                out_void => out_void,
            }
        }
    };
}
arbiter_design!(Arb4x128, 4, 128, u128, "nanet_write_arbiter": 0, 1, 2, 3);
arbiter_design!(Arb4x256, 4, 256, [u64; 4], "nanet_write_arbiter_256": 0, 1, 2, 3);
arbiter_design!(Arb1x128, 1, 128, u128, "nanet_write_arbiter_1p": 0);

/// A request: its beats, each `(beat, void)`; a void request is one beat, marked void.
type Request<T> = Vec<(WriteBeat<T>, bool)>;

/// `n` requests of source `s` (its number in address bits 63:62, the request's in 47:12), 1 to 4
/// beats, about one in five a lone void beat.
fn requests<T: BeatData>(rng: &mut StdRng, s: usize, n: usize) -> VecDeque<Request<T>> {
    let lanes = T::VARIANT.beat_bytes();
    (0..n)
        .map(|k| {
            let addr = (s as u64) << 62 | (k as u64) << 12;
            let mut dwords: [u32; MAX_BEAT_DWORDS] = rng.gen();
            dwords[0] = (s * 1000 + k) as u32;
            if rng.gen_bool(0.2) {
                let beat = WriteBeat {
                    sop: true,
                    eop: rng.gen(),
                    addr,
                    len: 64,
                    data: T::from_dwords(&dwords),
                };
                return vec![(beat, true)];
            }
            let beats = rng.gen_range(1..=4usize);
            (0..beats)
                .map(|i| {
                    dwords[1] = i as u32;
                    let beat = WriteBeat {
                        sop: i == 0,
                        eop: i + 1 == beats,
                        addr: addr + (lanes * i) as u64,
                        len: (lanes * beats) as u16,
                        data: T::from_dwords(&dwords),
                    };
                    (beat, false)
                })
                .collect()
        })
        .collect()
}

/// Runs `sources` sources of 200 requests each through the arbiter into a two-entry slice;
/// returns the void beats that came out.
fn run<D: Design<In = WaIn<T>, Out = WaOut<T>>, T: BeatData + Copy + Default + PartialEq>(
    sources: usize,
    seed: u64,
    gaps: f64,
    stall: f64,
) -> usize {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut d = DesignSim::<D>::new(EngineKind::Both).unwrap_or_else(|e| panic!("{e}"));
    let clk = d.add_clock("core", 0, CORE_CLOCK_PS);
    d.inputs.reset = true;
    d.tick(clk);
    d.inputs.reset = false;

    let mut queues: Vec<VecDeque<Request<T>>> =
        (0..sources).map(|s| requests(&mut rng, s, 200)).collect();
    let mut expect = queues.clone();
    let mut at = vec![0usize; sources];
    let mut offering = vec![false; sources];
    // Requests of other sources finished while each source's current request was on offer.
    let mut passed = vec![0usize; sources];
    // The next stage's slice: (source, void) of each beat in it.
    let mut slice: VecDeque<usize> = VecDeque::new();
    // The request coming out now: its source and next beat.
    let mut open: Option<(usize, usize)> = None;
    let mut voided = 0;
    let mut cycles = 0u64;
    while expect.iter().any(|q| !q.is_empty()) || !slice.is_empty() {
        for s in 0..sources {
            offering[s] = !queues[s].is_empty() && (offering[s] || !rng.gen_bool(gaps));
            d.inputs.valid[s] = offering[s];
            if let Some(r) = queues[s].front() {
                (d.inputs.beat[s], d.inputs.void[s]) = r[at[s]];
            }
        }
        // The slice takes a beat when it has room (a register) and is not held off.
        let room = slice.len() < 2;
        d.inputs.out_ready = room && !rng.gen_bool(stall);
        let leaves = !slice.is_empty() && !rng.gen_bool(stall);
        d.inputs.down_moved = leaves;
        d.inputs.down_holds = !slice.is_empty();
        let o = d.settle().clone();
        for &s in &slice {
            assert!(
                o.behind[s],
                "cycle {cycles}: a beat of source {s} in the slice, not behind"
            );
        }
        for s in 0..sources {
            if slice.is_empty() {
                assert!(
                    !o.behind[s],
                    "cycle {cycles}: source {s} behind an empty slice"
                );
            }
        }
        let taken: Vec<usize> = (0..sources)
            .filter(|&s| d.inputs.valid[s] && o.ready[s])
            .collect();
        assert!(
            taken.len() <= 1,
            "cycle {cycles}: sources {taken:?} taken at once"
        );
        assert_eq!(
            o.out_valid && d.inputs.out_ready,
            !taken.is_empty(),
            "cycle {cycles}: a beat out without its source's handshake, or the reverse"
        );
        if leaves {
            slice.pop_front();
        }
        if let Some(&s) = taken.first() {
            let (beat, void) = queues[s][0][at[s]];
            assert_eq!(o.out, beat, "cycle {cycles}: source {s}'s beat");
            assert_eq!(o.out_void, void, "cycle {cycles}: source {s}'s void mark");
            match open {
                Some((src, _)) => assert_eq!(src, s, "cycle {cycles}: requests interleaved"),
                None => assert!(
                    void || passed[s] < sources,
                    "cycle {cycles}: source {s} waited for {} requests",
                    passed[s]
                ),
            }
            offering[s] = false;
            if void {
                voided += 1;
                assert!(
                    open.is_none(),
                    "cycle {cycles}: a void beat inside a request"
                );
            } else {
                slice.push_back(s);
                open = Some((s, at[s] + 1));
            }
            at[s] += 1;
            if at[s] == queues[s][0].len() {
                queues[s].pop_front();
                expect[s].pop_front();
                at[s] = 0;
                open = None;
                for (o, p) in passed.iter_mut().enumerate() {
                    *p = if o == s {
                        0
                    } else {
                        *p + (offering[o] && !void) as usize
                    };
                }
            }
        }
        d.tick(clk);
        cycles += 1;
        assert!(
            cycles < 100_000,
            "arbiter wedged: {:?} left",
            expect.iter().map(VecDeque::len).collect::<Vec<_>>()
        );
    }
    voided
}

fn mixes<D: Design<In = WaIn<T>, Out = WaOut<T>>, T: BeatData + Copy + Default + PartialEq>(
    sources: usize,
) {
    for (seed, gaps, stall) in [(1, 0.3, 0.3), (2, 0.0, 0.0), (3, 0.6, 0.1), (4, 0.1, 0.7)] {
        let voided = run::<D, T>(sources, seed, gaps, stall);
        assert!(
            voided > 20 * sources,
            "seed {seed}: only {voided} void beats"
        );
    }
}

#[test]
fn four_sources_whole_in_order_round_robin_and_behind_random_gaps_and_backpressure() {
    mixes::<Arb4x128, u128>(4);
}

#[test]
fn four_sources_whole_in_order_round_robin_and_behind_at_256_bits() {
    mixes::<Arb4x256, [u64; 4]>(4);
}

#[test]
fn one_source_passes_through_with_behind() {
    mixes::<Arb1x128, u128>(1);
}

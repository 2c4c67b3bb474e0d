//! The flow-control credit gate of one TLP class: posted writes of random lengths (1 to 1024
//! dwords) from a gap-free source with random pauses, into a link partner
//! (`nanet_sim::world::flow_control`) with a small buffer, credits freed after a delay that changes
//! from phase to phase, and the Hard IP consuming credits of its own (MSIs: unannounced, at random,
//! when the partner has room for one beside four TLPs of the gate's, so never against a buffer of
//! fewer than five headers; or fenced as the card does it), with random backpressure behind the
//! gate. Checks: no TLP ever overflows the partner's buffer
//! (through several wraps of the 8-bit and 12-bit counters), the TLPs come out whole, gap-free
//! and in order, `blocked` counts the waits for credits; with infinite credits the gate never
//! reports one and passes a beat every cycle the far side takes one. MSIs fenced as the card
//! does it (`hold`) find exactly their own credit free. On the rust-hdl model and its Verilog in
//! lockstep.

use nanet_hdl::pcie::credit_gate::PcieCreditGate;
use nanet_sim::design_ports;
use nanet_sim::engine::clocks::CORE_CLOCK_PS;
use nanet_sim::engine::{Design, DesignSim, EngineKind};
use nanet_sim::world::flow_control::{CreditPool, FcClass, FlowControl};
use nanet_sim::world::tlp::{Beat, BeatData, Pins, Tlp};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::pcie::tx_arbiter::Source;

#[derive(Clone, Default)]
pub struct GIn<T> {
    reset: bool,
    hdr_limit: u8,
    data_limit: u16,
    hdr_infinite: bool,
    data_infinite: bool,
    hip_hdr: bool,
    hip_data: bool,
    hold: bool,
    inp: Pins<T>,
    inp_valid: bool,
    out_ready: bool,
}

#[derive(Clone, Default, Debug)]
pub struct GOut<T> {
    inp_ready: bool,
    out: Pins<T>,
    out_valid: bool,
    blocked: bool,
}

/// The gate at one width.
macro_rules! gate_design {
    ($design:ident, $bits:literal, $data:ty, $top:literal) => {
        design_ports! {
            pub $design for PcieCreditGate<$bits>, top $top, inputs GIn<$data>, outputs GOut<$data>,
    clocks { clock }
    inputs {
        reset => reset, hdr_limit => hdr_limit, data_limit => data_limit,
        hdr_infinite => hdr_infinite, data_infinite => data_infinite, hip_hdr => hip_hdr,
        hip_data => hip_data, hold => hold, inp.data => inp.data, inp.sop => inp.sop, inp.eop => inp.eop,
        inp.empty => inp.empty, inp_valid => inp.valid, out_ready => out.ready,
    }
    outputs {
        inp_ready => inp.ready, out.data => out.data, out.sop => out.sop, out.eop => out.eop,
        out.empty => out.empty, out_valid => out.valid, blocked => blocked,
    }
}
    };
}
gate_design!(Gate128, 128, u128, "nanet_pcie_credit_gate");
gate_design!(Gate256, 256, [u64; 4], "nanet_pcie_credit_gate_256");

/// `n` memory writes of 1 to `longest` dwords, and now and then one of 1024 when `longest` > 1;
/// one-dword writes only (`longest` 1) are one beat each.
fn writes(rng: &mut StdRng, n: usize, longest: u32) -> Vec<Tlp> {
    (0..n as u64)
        .map(|i| {
            let dwords = if longest > 1 && rng.gen_bool(0.05) {
                1024
            } else {
                rng.gen_range(1..=longest)
            };
            Tlp::MemWrite {
                requester: 0x0300,
                tag: 0,
                // An odd dword address puts a one-dword write in one beat with its header.
                addr: 0x8000_0000 + i * 4096 + if longest == 1 || i % 2 == 1 { 4 } else { 0 },
                first_be: 0xF,
                last_be: if dwords == 1 { 0 } else { 0xF },
                data: (0..dwords).map(|k| (i as u32) << 16 | k).collect(),
            }
        })
        .collect()
}

/// How the Hard IP's own MSIs (1% of the cycles) meet the gate.
#[derive(Clone, Copy, PartialEq)]
enum Msi {
    /// Sent whenever the partner has room for it and for what the gate may have charged or start
    /// before it counts the MSI: as the Hard IP's own completions come, unannounced.
    Unfenced,
    /// As the card sends them: once every beat that entered the gate has left it, under `hold`
    /// from then until the cycle after the Hard IP's pulse, when the partner has room for the
    /// MSI alone.
    Fenced,
}

/// A link partner with a posted buffer of `hdr` headers and `data` data credits, freed `delay`
/// cycles after arrival (the other classes infinite).
fn posted_only(hdr: u32, data: u32, delay: u64) -> FlowControl {
    FlowControl::new(
        [
            CreditPool::finite(hdr, data),
            CreditPool::INFINITE,
            CreditPool::INFINITE,
        ],
        delay,
    )
}

/// What a run saw: the cycles the gate said it blocked, the beats that came out, the MSIs sent.
struct Outcome {
    blocked: u64,
    beats: u64,
    msis: u64,
}

/// A fenced MSI's progress: wanted, `hold` up until the partner has room for it, `hold` up for
/// the cycles after it until the gate has counted the Hard IP's pulse.
#[derive(Clone, Copy, PartialEq)]
enum Fence {
    Idle,
    Wanted,
    Holding,
    After(u32),
}

/// Runs `tlps` through the 128-bit gate into `partner`, whose release delay is drawn from
/// `delays` anew every `delay_every` cycles.
fn run(
    partner: &mut FlowControl,
    tlps: &[Tlp],
    seed: u64,
    out_ready: f64,
    delays: (u64, std::ops::Range<u64>),
    msi: Msi,
) -> Outcome {
    run_at::<Gate128, u128>(partner, tlps, seed, out_ready, delays, msi)
}

/// [`run`] with the gate `D` of `T`'s width.
fn run_at<D: Design<In = GIn<T>, Out = GOut<T>>, T: BeatData>(
    partner: &mut FlowControl,
    tlps: &[Tlp],
    seed: u64,
    out_ready: f64,
    (delay_every, delays): (u64, std::ops::Range<u64>),
    msi: Msi,
) -> Outcome {
    let v = T::VARIANT;
    let mut rng = StdRng::seed_from_u64(seed);
    let mut d = DesignSim::<D>::new(EngineKind::Both).unwrap_or_else(|e| panic!("{e}"));
    let clk = d.add_clock("core", 0, CORE_CLOCK_PS);
    d.inputs.reset = true;
    d.tick(clk);
    d.inputs.reset = false;
    let mut src = Source::new(tlps, v);
    let mut current: Vec<Beat> = vec![];
    let mut got = vec![];
    let (mut blocked, mut beats) = (0u64, 0u64);
    let mut cycle = 0u64;
    let mut hip_pending = false;
    // Data credits of the TLPs inside the gate (their first beat in, not yet out): the gate may
    // have charged them already, so the Hard IP's own consumption must leave room for them.
    let mut inside: std::collections::VecDeque<u32> = Default::default();
    let mut entered = 0;
    let mut fence = Fence::Idle;
    let mut msis = 0;
    while got.len() < tlps.len() {
        assert!(
            cycle < 2_000_000,
            "{} of {} TLPs through",
            got.len(),
            tlps.len()
        );
        if cycle.is_multiple_of(delay_every) {
            partner.release_delay = rng.gen_range(delays.clone());
        }
        partner.tick(cycle);
        let limits = partner.limits();
        // The limits reach the gate's registers before the first TLP (after a link comes up).
        // A fenced MSI waits for the gate to be empty (the source starts no TLP meanwhile, as
        // the card's writer is idle); nothing enters in that cycle, and `hold` rises in the next.
        let fence_now = fence == Fence::Wanted && inside.is_empty() && current.is_empty();
        let beat = match src.offer() {
            _ if cycle < 4 || fence_now => None,
            Some(b) if b.sop && fence == Fence::Wanted => None,
            b => b,
        };
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
        i.hold = matches!(fence, Fence::Holding | Fence::After(_));
        i.inp_valid = beat.is_some();
        i.inp = Pins::from(beat.unwrap_or_default());
        i.out_ready = rng.gen_bool(out_ready);
        let o = d.settle().clone();
        let took = d.inputs.inp_valid && o.inp_ready;
        if out_ready >= 1.0 && limits.infinite == 0b11_1111 && cycle > 2 {
            assert!(
                o.inp_ready,
                "cycle {cycle}: a stall with infinite credits and a ready sink"
            );
        }
        let gave = o.out_valid && d.inputs.out_ready;
        if !current.is_empty() {
            assert!(o.out_valid, "cycle {cycle}: a gap inside a TLP");
        }
        blocked += o.blocked as u64;
        if took && d.inputs.inp.sop {
            entered += 1;
            inside.push_back(FcClass::of(d.inputs.inp.data.dword(0)).unwrap().1);
        }
        if gave {
            beats += 1;
            if o.out.sop {
                let (class, data) = FcClass::of(o.out.data.dword(0)).unwrap();
                assert_eq!(inside.pop_front(), Some(data), "cycle {cycle}: TLP order");
                partner
                    .receive(class, data, cycle)
                    .unwrap_or_else(|e| panic!("cycle {cycle}: {e}"));
            }
            current.push(Beat::from(o.out));
            if o.out.eop {
                got.push(std::mem::take(&mut current));
            }
        } else if msi == Msi::Unfenced && rng.gen_bool(0.01) {
            // An MSI, when the partner has room for it, for the TLPs inside the gate (it may
            // have charged them) and for the next three, which the gate may start before it
            // counts the MSI (three cycles after the pulse). The Hard IP would hold those until the partner
            // freed credits; this partner has no such check and reports an overflow instead.
            let next: u32 = tlps[entered..]
                .iter()
                .take(3)
                .map(|t| FcClass::of(t.to_beats(v)[0].dwords[0]).unwrap().1)
                .sum();
            if partner.has_room(
                FcClass::Posted,
                4 + inside.len() as u32,
                1 + next + inside.iter().sum::<u32>(),
            ) {
                partner.receive(FcClass::Posted, 1, cycle).unwrap();
                hip_pending = true;
                msis += 1;
            }
        }
        if msi == Msi::Fenced {
            fence = match fence {
                Fence::Idle if rng.gen_bool(0.01) => Fence::Wanted,
                Fence::Wanted if fence_now => Fence::Holding,
                Fence::Holding if partner.has_room(FcClass::Posted, 1, 1) => {
                    // Exactly the MSI's room: anything the gate started under `hold`, or had
                    // not delivered, would overflow here or behind it.
                    partner
                        .receive(FcClass::Posted, 1, cycle)
                        .unwrap_or_else(|e| panic!("cycle {cycle}: MSI: {e}"));
                    hip_pending = true;
                    msis += 1;
                    Fence::After(2)
                }
                Fence::After(1) => Fence::Idle,
                Fence::After(n) => Fence::After(n - 1),
                f => f,
            };
        }
        src.step(took, &mut rng);
        d.tick(clk);
        cycle += 1;
    }
    let want: Vec<_> = tlps.iter().map(|t| t.to_beats(v)).collect();
    assert_eq!(got, want, "TLPs whole and in order");
    Outcome {
        blocked,
        beats,
        msis,
    }
}

#[test]
fn posted_writes_never_overflow_a_small_buffer_through_counter_wraps() {
    let mut rng = StdRng::seed_from_u64(61);
    let tlps = writes(&mut rng, 700, 64);
    // Six headers: room now and then for an unannounced MSI beside the four TLPs the gate may
    // start or hold before it counts one.
    let mut partner = posted_only(6, 300, 100);
    let run = run(&mut partner, &tlps, 61, 0.8, (5000, 0..200), Msi::Unfenced);
    assert!(run.blocked > 1000, "the buffer never held the writes back");
    assert!(run.msis > 20, "only {} MSIs of the Hard IP's own", run.msis);
    assert_eq!(
        partner.high_water[0].0, 6,
        "the header credits were used to the end"
    );
}

/// The same gate at 256 bits (Gen3 x8): it reads only header dword 0, and a TLP's beats pass it
/// whole under the same credits.
#[test]
fn at_256_bits_posted_writes_never_overflow_a_small_buffer_through_counter_wraps() {
    let mut rng = StdRng::seed_from_u64(64);
    // Twice the writes of the 128-bit run: at half the beats, as many cycles.
    let tlps = writes(&mut rng, 1400, 64);
    let mut partner = posted_only(6, 300, 100);
    let run =
        run_at::<Gate256, [u64; 4]>(&mut partner, &tlps, 64, 0.8, (5000, 0..200), Msi::Unfenced);
    assert!(run.blocked > 1000, "the buffer never held the writes back");
    assert!(run.msis > 20, "only {} MSIs of the Hard IP's own", run.msis);
    assert_eq!(partner.high_water[0].0, 6);
}

#[test]
fn infinite_credits_never_hold_a_tlp() {
    let mut rng = StdRng::seed_from_u64(62);
    let tlps = writes(&mut rng, 100, 64);
    let mut partner = FlowControl::new([CreditPool::INFINITE; 3], 0);
    let blocked = run(&mut partner, &tlps, 62, 0.8, (5000, 0..200), Msi::Unfenced).blocked;
    assert_eq!(blocked, 0, "waits for credits that are infinite");
    let beats = run(&mut partner, &tlps, 63, 1.0, (5000, 0..200), Msi::Unfenced).beats;
    assert!(beats > 1000);
}

#[test]
fn back_to_back_single_beat_writes_never_overflow_two_credits() {
    // One-dword writes are one beat each: TLPs start in consecutive cycles, each charging a
    // header and a data credit, against a partner with room for two that frees them 5 to 40
    // cycles after they arrive, each its own delay: a TLP let through on a count that missed the
    // one before it overflows the buffer.
    let mut rng = StdRng::seed_from_u64(64);
    let tlps = writes(&mut rng, 2000, 1);
    let mut partner = posted_only(2, 2, 20);
    let blocked = run(&mut partner, &tlps, 64, 1.0, (1, 5..40), Msi::Unfenced).blocked;
    assert!(blocked > 100, "the two credits never held the writes back");
}

#[test]
fn data_credits_alone_hold_writes_back_to_the_credit() {
    // Headers to spare, six data credits (96 bytes): writes of 1 to 16 dwords (1 to 4 credits)
    // are held back by their data alone, to the exact credit.
    let mut rng = StdRng::seed_from_u64(65);
    let tlps: Vec<Tlp> = writes(&mut rng, 1500, 16)
        .into_iter()
        .filter(|t| matches!(t, Tlp::MemWrite { data, .. } if data.len() <= 16))
        .collect();
    let mut partner = posted_only(64, 6, 20);
    let blocked = run(&mut partner, &tlps, 65, 1.0, (1, 5..40), Msi::Unfenced).blocked;
    assert!(blocked > 100, "the data credits never held the writes back");
    assert_eq!(
        partner.high_water[0].1, 6,
        "the data credits were used to the end"
    );
}

#[test]
fn a_fenced_msi_finds_its_credit_and_the_writes_after_it_find_it_counted() {
    // The card's way (card/nic.rs): an MSI once every beat has left the gate, `hold` up from then
    // until the cycle after the Hard IP's pulse, and the partner asked for the MSI's room alone.
    // Against two credits with back-to-back one-beat writes, a start under `hold` (or a pulse
    // counted late) overflows the buffer at the MSI or at the write behind it.
    let mut rng = StdRng::seed_from_u64(66);
    let tlps = writes(&mut rng, 2000, 1);
    let mut partner = posted_only(2, 2, 20);
    let run = run(&mut partner, &tlps, 66, 1.0, (1, 5..40), Msi::Fenced);
    assert!(run.msis > 15, "only {} MSIs", run.msis);
    assert!(
        run.blocked > 100,
        "the two credits never held the writes back"
    );
}

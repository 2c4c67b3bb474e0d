//! The receive demultiplexer (`nanet_hdl::pcie::rx_demux`) against a Hard IP that uses all of its
//! ready latency: a beat in every cycle whose `rx_ready`, three cycles earlier, was high (Intel's
//! `_hw.tcl` declares `readyLatency 3` for `rx_st`), so the FIFO is driven right to its edge
//! whenever the far sides hold back; random back-pressure from the BAR0 target and the read
//! engine. Checks: every TLP comes out whole and in order on its side (completions to the read
//! engine, requests with their BAR hit to the target), no beat is lost (`overflow` never pulses),
//! and the beats that came after `rx_ready` fell filled the latency. A Hard IP one cycle later than
//! that overflows it, and `overflow` says so. At 128 and 256 bits, on the rust-hdl model and its
//! Verilog in lockstep.

use std::collections::VecDeque;

use nanet_hdl::pcie::rx_demux::PcieRxDemux;
use nanet_sim::design_ports;
use nanet_sim::engine::clocks::CORE_CLOCK_PS;
use nanet_sim::engine::{Design, DesignSim, EngineKind};
use nanet_sim::world::tlp::{BeatData, CplStatus, Pins, Tlp};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

#[derive(Clone, Default)]
pub struct DIn<T> {
    reset: bool,
    rx: Pins<T>,
    rx_valid: bool,
    rx_bar: u8,
    req_ready: bool,
    cpl_ready: bool,
}

#[derive(Clone, Default, Debug)]
pub struct DOut<T> {
    rx_ready: bool,
    req: Pins<T>,
    req_valid: bool,
    req_bar: u8,
    cpl: Pins<T>,
    cpl_valid: bool,
    overflow: bool,
}

/// The demultiplexer at one width.
macro_rules! demux_design {
    ($design:ident, $bits:literal, $data:ty, $top:literal) => {
        design_ports! {
            pub $design for PcieRxDemux<$bits>, top $top, inputs DIn<$data>, outputs DOut<$data>,
            clocks { clock }
            inputs {
                reset => reset, rx.data => rx.data, rx.sop => rx.sop, rx.eop => rx.eop,
                rx.empty => rx.empty, rx_valid => rx.valid, rx_bar => rx.bar,
                req_ready => req.ready, cpl_ready => cpl.ready,
            }
            outputs {
                rx_ready => rx.ready, req.data => req.data, req.sop => req.sop,
                req.eop => req.eop, req.empty => req.empty, req_valid => req.valid,
                req_bar => req.bar, cpl.data => cpl.data, cpl.sop => cpl.sop,
                cpl.eop => cpl.eop, cpl.empty => cpl.empty, cpl_valid => cpl.valid,
                overflow => overflow,
            }
        }
    };
}
demux_design!(Demux128, 128, u128, "nanet_pcie_rx_demux");
demux_design!(Demux256, 256, [u64; 4], "nanet_pcie_rx_demux_256");

/// A TLP from the host or a completion for the card, and the BAR it hits (requests only).
fn tlp(rng: &mut StdRng, i: u32) -> (Tlp, u8, bool) {
    let dwords = rng.gen_range(1..=32u32);
    if rng.gen_bool(0.5) {
        let t = Tlp::Completion {
            completer: 0,
            status: CplStatus::Success,
            byte_count: (dwords * 4) as u16,
            requester: 0x6508,
            tag: (i % 16) as u8,
            lower_addr: 0,
            data: (0..dwords).map(|k| i << 8 | k).collect(),
        };
        (t, 0, true)
    } else if rng.gen_bool(0.5) {
        let t = Tlp::MemWrite {
            requester: 0,
            tag: 0,
            addr: 0xF7A0_0000 + 4 * (i as u64 % 64),
            first_be: 0xF,
            last_be: if dwords == 1 { 0 } else { 0xF },
            data: (0..dwords).map(|k| i << 8 | k).collect(),
        };
        (t, 1, false)
    } else {
        let t = Tlp::MemRead {
            requester: 0,
            tag: i as u8,
            addr: 0xF7A0_0000 + 4 * (i as u64 % 64),
            len_dw: 1,
            first_be: 0xF,
            last_be: 0,
        };
        (t, 1, false)
    }
}

struct Run {
    /// Beats that arrived in a cycle with `rx_ready` low (sent on the latency).
    late_beats: u64,
    /// The longest run of such beats in consecutive cycles.
    longest_late_run: u64,
    overflows: u64,
}

/// `tlps` TLPs from a Hard IP with ready latency `latency`, sending in every cycle it may with
/// probability `eager`; the far sides ready with probability `far_ready`.
fn run<D: Design<In = DIn<T>, Out = DOut<T>>, T: BeatData>(
    seed: u64,
    tlps: u32,
    latency: usize,
    eager: f64,
    far_ready: f64,
) -> Run {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut d = DesignSim::<D>::new(EngineKind::Both).unwrap_or_else(|e| panic!("{e}"));
    let clk = d.add_clock("core", 0, CORE_CLOCK_PS);
    d.inputs.reset = true;
    d.tick(clk);
    d.tick(clk);
    d.inputs.reset = false;

    let mut to_send: VecDeque<(Pins<T>, u8)> = VecDeque::new();
    let (mut want_req, mut want_cpl) = (VecDeque::new(), VecDeque::new());
    for i in 0..tlps {
        let (t, bar, is_cpl) = tlp(&mut rng, i);
        let beats = t.pins::<T>();
        to_send.extend(beats.iter().map(|b| (*b, bar)));
        if is_cpl {
            want_cpl.push_back(beats);
        } else {
            want_req.push_back((beats, bar));
        }
    }
    let (mut got_req, mut got_cpl): (Vec<Pins<T>>, Vec<Pins<T>>) = (vec![], vec![]);
    let mut ready_hist = VecDeque::from(vec![false; latency]);
    let mut r = Run {
        late_beats: 0,
        longest_late_run: 0,
        overflows: 0,
    };
    let mut late_run = 0;
    // Phases of the far sides: both ready, both stalled (the FIFO fills to its edge), random.
    for cycle in 0..200_000u64 {
        if to_send.is_empty() && want_req.is_empty() && want_cpl.is_empty() {
            break;
        }
        let o = d.settle().clone();
        let phase = (cycle / 300) % 3;
        let i = &mut d.inputs;
        (i.req_ready, i.cpl_ready) = match phase {
            0 => (true, true),
            1 => (false, false),
            _ => (rng.gen_bool(far_ready), rng.gen_bool(far_ready)),
        };
        i.rx_valid = false;
        if ready_hist[latency - 1] && rng.gen_bool(eager) {
            if let Some((b, bar)) = to_send.pop_front() {
                (i.rx, i.rx_bar, i.rx_valid) = (b, bar, true);
                if !o.rx_ready {
                    r.late_beats += 1;
                    late_run += 1;
                    r.longest_late_run = r.longest_late_run.max(late_run);
                } else {
                    late_run = 0;
                }
            }
        }
        // A run of late beats ends at an idle cycle or a beat taken.
        if !i.rx_valid || o.rx_ready {
            late_run = 0;
        }
        let o = d.settle().clone();
        if o.req_valid {
            got_req.push(o.req);
            assert_eq!(o.req_bar, 1, "a request keeps its BAR hit");
            if o.req.eop {
                let (want, _) = want_req.pop_front().expect("a request was sent");
                assert_eq!(got_req, want, "request TLP at cycle {cycle}");
                got_req.clear();
            }
        }
        if o.cpl_valid && d.inputs.cpl_ready {
            got_cpl.push(o.cpl);
            if o.cpl.eop {
                let want = want_cpl.pop_front().expect("a completion was sent");
                assert_eq!(got_cpl, want, "completion at cycle {cycle}");
                got_cpl.clear();
            }
        }
        r.overflows += o.overflow as u64;
        ready_hist.pop_back();
        ready_hist.push_front(o.rx_ready);
        d.tick(clk);
        if r.overflows > 0 {
            return r;
        }
    }
    assert!(
        to_send.is_empty() && want_req.is_empty() && want_cpl.is_empty(),
        "{} beats unsent, {} requests and {} completions not out",
        to_send.len(),
        want_req.len(),
        want_cpl.len()
    );
    r
}

fn no_beat_is_lost<D: Design<In = DIn<T>, Out = DOut<T>>, T: BeatData>() {
    let r = run::<D, T>(7, 600, 3, 1.0, 0.5);
    assert_eq!(r.overflows, 0, "beats lost");
    // The FIFO was driven to its edge: three beats in a row after rx_ready fell, many times.
    assert_eq!(r.longest_late_run, 3, "{} late beats", r.late_beats);
    assert!(r.late_beats > 100, "{} late beats", r.late_beats);
    let r = run::<D, T>(8, 600, 3, 0.7, 0.8);
    assert_eq!(r.overflows, 0, "beats lost");
}

#[test]
fn no_beat_is_lost_with_ready_latency_three_under_random_backpressure() {
    no_beat_is_lost::<Demux128, u128>();
}

#[test]
fn no_256_bit_beat_is_lost_with_ready_latency_three_under_random_backpressure() {
    no_beat_is_lost::<Demux256, [u64; 4]>();
}

#[test]
fn a_hard_ip_beyond_its_ready_latency_overflows_the_fifo_and_is_reported() {
    let r = run::<Demux128, u128>(9, 600, 4, 1.0, 0.5);
    assert!(
        r.overflows > 0,
        "a latency of 4 must overrun a FIFO sized for 3"
    );
    let r = run::<Demux256, [u64; 4]>(9, 600, 4, 1.0, 0.5);
    assert!(r.overflows > 0, "at 256 bits too");
}

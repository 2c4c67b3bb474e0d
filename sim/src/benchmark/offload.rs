//! Benchmark of one offload core: receive and transmit at line rate for a sweep of UDP payload
//! sizes, latency in cycles, and simulation speed of the core stepped by `DesignSim` and under
//! rust-hdl's own threaded `Simulation`, on the same stimulus in the same run.

use std::time::Instant;

use nanet_contract::offload::{mac_to_regs, Reg, ARP_COMMAND_ADD_STATIC};
use nanet_hdl::offload::core::OffloadCore;
use rust_hdl::core::prelude::*;
use serde::Serialize;

use crate::engine::clocks::NET_CLOCK_PS;
use crate::engine::designs::{CoreInputs, OffloadCoreDesign};
use crate::engine::{Design, DesignSim, EngineError, EngineKind};
use crate::testbench::core::{CoreBench, TxDatagram};
use crate::traffic::packets::{udp_frame, Endpoint};
use crate::world::link::{line_rate_schedule, Beat, WIRE_OVERHEAD_BYTES};

pub const PAYLOAD_SIZES: [usize; 6] = [18, 64, 256, 512, 1024, 1472];
/// Last header byte (41) arrives with beat 5: cycle 5 after the SOP cycle.
pub const HEADER_ARRIVAL_CYCLES: u64 = 5;

const CARD: Endpoint = Endpoint::new([0x02, 0x4E, 0x41, 0x4E, 0x45, 0x01], [10, 9, 0, 1]);
const PEER: Endpoint = Endpoint::new([0x02, 0x00, 0x00, 0x00, 0x00, 0x02], [10, 9, 0, 2]);
const NS_PER_CYCLE: f64 = NET_CLOCK_PS as f64 / 1000.0;

#[derive(Serialize, Clone, Debug)]
pub struct RateRow {
    pub direction: &'static str,
    pub payload_bytes: usize,
    pub packets_in: usize,
    /// RX: datagrams the core delivered byte-exact. TX: frames on the wire byte-exact.
    pub packets_out: usize,
    pub drops: usize,
    /// Payload goodput where it leaves the core (RX: its client output; TX: the wire), between
    /// the second and the last datagram's last beat, over 10GbE line rate's goodput at this size.
    pub line_rate_fraction: f64,
    pub goodput_gbps: f64,
    /// Cycles in which the core refused a beat from the link (RX) — must be 0 at line rate.
    pub stall_cycles: u64,
    /// RX: SOP at the MAC to first payload beat at the core output, every datagram of the
    /// line-rate run. TX: request presented to SOP at the MAC, every datagram of a run that
    /// presents each request once the wire is idle (so no request waits for the one before).
    pub latency_cycles_min: u64,
    pub latency_cycles_max: u64,
    pub latency_ns_max: f64,
    /// RX only: latency beyond the arrival of the header's last byte (cycle 5).
    pub beyond_header_cycles: u64,
    /// TX only: from the edge at which the core took each request to its SOP's edge at the MAC
    /// (min, max over the spaced run; [`TX_TAKEN_TO_SOP_CYCLES`] by design).
    pub taken_to_sop_cycles: (u64, u64),
}

/// Network cycles from the edge at which UDP TX takes a request to the edge at which the MAC
/// takes its frame's SOP, when the wire is idle. The card's time of flight is this plus the
/// cable; its benchmark checks the transmit stamp with it. (2 since the register slice in front
/// of the MAC.)
pub const TX_TAKEN_TO_SOP_CYCLES: u64 = 2;

#[derive(Serialize, Clone, Debug)]
pub struct EngineSpeed {
    pub engine: &'static str,
    pub cycles: u64,
    pub seconds: f64,
    pub cycles_per_s: f64,
}

#[derive(Serialize, Clone, Debug)]
pub struct OffloadReport {
    pub rates: Vec<RateRow>,
    pub sim_speed: Vec<EngineSpeed>,
    /// Our driver's cycles/s over rust-hdl's threaded Simulation's.
    pub driver_speedup_ratio: f64,
}

impl RateRow {
    /// A row from the cycles at which each delivered datagram's last beat left the core and the
    /// per-packet latencies.
    fn measure(
        direction: &'static str,
        payload: usize,
        n: usize,
        last_beats: &[u64],
        lat: &[u64],
    ) -> Self {
        let max = lat.iter().copied().max().unwrap_or(0);
        let goodput = goodput_gbps(last_beats, payload);
        let wire = ((42 + payload).max(60) as u64 + WIRE_OVERHEAD_BYTES) as f64;
        RateRow {
            direction,
            payload_bytes: payload,
            packets_in: n,
            packets_out: last_beats.len(),
            drops: n - last_beats.len(),
            line_rate_fraction: goodput / (10.0 * payload as f64 / wire),
            goodput_gbps: goodput,
            stall_cycles: 0,
            latency_cycles_min: lat.iter().copied().min().unwrap_or(0),
            latency_cycles_max: max,
            latency_ns_max: max as f64 * NS_PER_CYCLE,
            beyond_header_cycles: if direction == "rx" {
                max.saturating_sub(HEADER_ARRIVAL_CYCLES)
            } else {
                max
            },
            taken_to_sop_cycles: (0, 0),
        }
    }
}

/// Payload goodput between the second and the last datagram's last beat (the first one's way
/// out is the latency's subject, and an idle link lets it start a cycle early).
fn goodput_gbps(last_beats: &[u64], payload: usize) -> f64 {
    if last_beats.len() < 3 {
        return 0.0;
    }
    let cycles = (last_beats[last_beats.len() - 1] - last_beats[1]) as f64;
    ((last_beats.len() - 2) * payload * 8) as f64 / (cycles * NS_PER_CYCLE)
}

/// A distinct payload for datagram `i`.
fn payload_of(i: usize, len: usize) -> Vec<u8> {
    (0..len)
        .map(|j| (i * 31 + j * 7 + (j >> 8)) as u8)
        .collect()
}

/// RX: `n` back-to-back datagrams of `payload` bytes from the link, every payload distinct;
/// the rate and latency of those the core delivers byte-exact.
pub fn rx_rate(payload: usize, n: usize) -> RateRow {
    let mut b = CoreBench::new(0.0, 1);
    b.configure(&CARD, [255, 255, 255, 0], [0, 0, 0, 0]);
    let sent: Vec<Vec<u8>> = (0..n).map(|i| payload_of(i, payload)).collect();
    for body in &sent {
        b.link_rx
            .push(udp_frame(&PEER, &CARD, 1000, 2000, body), false);
    }
    b.run_until(400 * n as u64 + 1_000, |b| {
        b.link_rx.is_idle() && b.rx.len() == n
    });
    b.run(50);
    let sops: Vec<u64> = b.link_rx.sop_cycles.iter().copied().collect();
    // In order: the k-th output is the k-th frame's if the core dropped nothing.
    let good: Vec<(u64, u64)> =
        b.rx.iter()
            .zip(&sent)
            .zip(&sops)
            .filter(|((d, body), _)| !d.error && d.payload == **body)
            .map(|((d, _), sop)| (d.first_beat_cycle - sop, d.last_beat_cycle))
            .collect();
    let lat: Vec<u64> = good.iter().map(|g| g.0).collect();
    let last: Vec<u64> = good.iter().map(|g| g.1).collect();
    let mut row = RateRow::measure("rx", payload, n, &last, &lat);
    row.stall_cycles = b.link_rx.stall_cycles;
    row
}

/// A core with a static ARP entry for the peer, ready to send.
fn tx_bench() -> CoreBench {
    let mut b = CoreBench::new(0.0, 1);
    b.configure(&CARD, [255, 255, 255, 0], [0, 0, 0, 0]);
    let (hi, lo) = mac_to_regs(PEER.mac);
    b.write_reg(Reg::ArpStaticIp.word(), PEER.ip_u32());
    b.write_reg(Reg::ArpStaticMacHi.word(), hi);
    b.write_reg(Reg::ArpStaticMacLo.word(), lo);
    b.write_reg(Reg::ArpCommand.word(), ARP_COMMAND_ADD_STATIC);
    b.run(4);
    b
}

fn datagram(i: usize, payload: usize) -> TxDatagram {
    TxDatagram {
        dst_ip: PEER.ip_u32(),
        src_port: 1000,
        dst_port: 2000,
        payload: payload_of(i, payload),
    }
}

/// The frames on the wire that carry datagram `i`'s payload byte-exact (after the 42 header
/// bytes, whose fields the offload tests check), in order.
fn tx_frames_exact(b: &CoreBench, payload: usize) -> Vec<&crate::world::link::LinkFrame> {
    b.link_tx
        .frames
        .iter()
        .enumerate()
        .filter(|(i, f)| {
            !f.error
                && f.bytes.len() == (42 + payload).max(60)
                && f.bytes[42..42 + payload] == payload_of(*i, payload)
        })
        .map(|(_, f)| f)
        .collect()
}

/// TX: `n` datagrams of `payload` bytes queued at once to a peer with a static ARP entry, for the
/// rate; then `n` more, each presented once the one before has left, for the latency of every
/// one.
pub fn tx_rate(payload: usize, n: usize) -> RateRow {
    let mut b = tx_bench();
    for i in 0..n {
        b.send(datagram(i, payload));
    }
    b.run_until(400 * n as u64 + 1_000, |b| b.link_tx.frames.len() == n);
    let frames = tx_frames_exact(&b, payload);
    let beats = (42 + payload).max(60).div_ceil(8) as u64;
    let last: Vec<u64> = frames.iter().map(|f| f.sop_cycle + beats - 1).collect();

    let mut b = tx_bench();
    for i in 0..n {
        b.send(datagram(i, payload));
        b.run_until(1_000, |b| b.link_tx.frames.len() == i + 1);
        // The wire's inter-frame gap passes too.
        b.run(8);
    }
    let spaced = tx_frames_exact(&b, payload);
    assert_eq!(
        spaced.len(),
        n,
        "tx {payload} B: every spaced datagram sent byte-exact"
    );
    let lat: Vec<u64> = spaced
        .iter()
        .zip(&b.tx_presented)
        .map(|(f, p)| f.sop_cycle - p)
        .collect();
    let taken: Vec<u64> = spaced
        .iter()
        .zip(&b.tx_accepted)
        .map(|(f, t)| f.sop_cycle - t)
        .collect();
    let mut row = RateRow::measure("tx", payload, n, &last, &lat);
    row.taken_to_sop_cycles = (
        *taken.iter().min().unwrap_or(&0),
        *taken.iter().max().unwrap_or(&0),
    );
    row
}

/// Inputs of one cycle of the speed benchmark.
#[derive(Clone, Copy, Default)]
struct Stimulus {
    reset: bool,
    reg: Option<(u32, u32)>,
    beat: Option<Beat>,
}

fn core_inputs(s: &Stimulus) -> CoreInputs {
    let (a, v) = s.reg.unwrap_or((0, 0));
    CoreInputs {
        reset: s.reset,
        reg_write: s.reg.is_some(),
        reg_addr: a as u8,
        reg_wdata: v,
        mac_rx: Beat::pins(s.beat.as_ref()),
        rx_ready: true,
        mac_tx_ready: true,
        ..Default::default()
    }
}

/// Reset, configuration, then a mix of datagram sizes at line rate.
fn stimulus(cycles: usize) -> Vec<Stimulus> {
    let mut s = vec![
        Stimulus {
            reset: true,
            ..Default::default()
        };
        2
    ];
    let (hi, lo) = mac_to_regs(CARD.mac);
    for r in [
        (Reg::MacHi.word(), hi),
        (Reg::MacLo.word(), lo),
        (Reg::Ip.word(), CARD.ip_u32()),
    ] {
        s.push(Stimulus {
            reg: Some(r),
            ..Default::default()
        });
    }
    let frames: Vec<Vec<u8>> = (0..)
        .map(|i| {
            udp_frame(
                &PEER,
                &CARD,
                1,
                2,
                &vec![i as u8; PAYLOAD_SIZES[i % PAYLOAD_SIZES.len()]],
            )
        })
        .take(cycles / 60 + 10)
        .collect();
    s.extend(
        line_rate_schedule(&frames)
            .into_iter()
            .map(|beat| Stimulus {
                beat,
                ..Default::default()
            }),
    );
    s.truncate(cycles);
    s
}

/// Cycles/s of the core on `kind` (engine build time not included).
pub fn speed_engine(kind: EngineKind, cycles: usize) -> Result<EngineSpeed, EngineError> {
    let stim: Vec<CoreInputs> = stimulus(cycles).iter().map(core_inputs).collect();
    let mut d = DesignSim::<OffloadCoreDesign>::new(kind)?;
    let clk = d.add_clock("net", 0, NET_CLOCK_PS);
    let t = Instant::now();
    for s in &stim {
        d.inputs = s.clone();
        d.tick(clk);
    }
    let seconds = t.elapsed().as_secs_f64();
    let engine = match kind {
        EngineKind::Rusthdl => "rusthdl",
        EngineKind::Verilator => "verilator",
        EngineKind::Both => "both",
    };
    Ok(EngineSpeed {
        engine,
        cycles: stim.len() as u64,
        seconds,
        cycles_per_s: stim.len() as f64 / seconds,
    })
}

/// Cycles/s of the core under rust-hdl's threaded `Simulation`, same stimulus.
pub fn speed_rust_hdl_simulation(cycles: usize) -> EngineSpeed {
    let stim: Vec<Vec<u64>> = stimulus(cycles)
        .iter()
        .map(|s| {
            let mut w = vec![0; OffloadCoreDesign::inputs().len()];
            OffloadCoreDesign::pack(&core_inputs(s), &mut w);
            w
        })
        .collect();
    let n = stim.len() as u64;
    let mut uut = OffloadCore::default();
    uut.connect_all();
    let mut sim = Simulation::new();
    sim.add_clock(NET_CLOCK_PS / 2, |x: &mut Box<OffloadCore>| {
        x.clock.next = !x.clock.val()
    });
    sim.add_testbench(move |mut sim: Sim<OffloadCore>| {
        let mut x = sim.init()?;
        for w in &stim {
            OffloadCoreDesign::apply_model(&mut x, w);
            x = sim.watch(|x| x.clock.val().clk, x)?;
            x = sim.watch(|x| !x.clock.val().clk, x)?;
        }
        sim.done(x)
    });
    let t = Instant::now();
    sim.run(Box::new(uut), (n + 10) * NET_CLOCK_PS)
        .expect("rust-hdl simulation runs");
    let seconds = t.elapsed().as_secs_f64();
    EngineSpeed {
        engine: "rust-hdl-simulation",
        cycles: n,
        seconds,
        cycles_per_s: n as f64 / seconds,
    }
}

/// Runs everything; `quick` shortens the runs (for tests of the benchmark itself).
pub fn run(quick: bool, progress: &mut dyn FnMut(&str)) -> OffloadReport {
    let n = if quick { 8 } else { 64 };
    let mut rates = vec![];
    for p in PAYLOAD_SIZES {
        progress(&format!("rx {p} B"));
        rates.push(rx_rate(p, n));
    }
    for p in PAYLOAD_SIZES {
        progress(&format!("tx {p} B"));
        rates.push(tx_rate(p, n));
    }
    let cycles = if quick { 2_000 } else { 20_000 };
    progress("simulation speed: our driver");
    let ours =
        speed_engine(EngineKind::Rusthdl, cycles).expect("the rust-hdl model needs no build");
    progress("simulation speed: rust-hdl Simulation");
    let theirs = speed_rust_hdl_simulation(cycles / 4);
    OffloadReport {
        driver_speedup_ratio: ours.cycles_per_s / theirs.cycles_per_s,
        rates,
        sim_speed: vec![ours, theirs],
    }
}

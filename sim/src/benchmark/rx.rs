//! Receive-path benchmarks, in the style of the NaNet-10 paper's figures 7 (latency) and 8
//! (bandwidth), on the Verilog of the whole four-port receive path (Verilator): real frames at
//! line rate into the MACs, the host-memory model behind the DMA port, and the host model checking
//! every buffer it is given.
//!
//! - Latency: from a frame's SOP at the MAC to its last DMA beat and to its buffer's event record
//!   written, from the card's own stage timestamps; with one packet per buffer and with 8 KiB
//!   buffers (the event follows the packet that fills the buffer).
//! - Bandwidth: payload goodput with every link sending back to back at line rate, one port and
//!   four ports, for the PCIe Gen2 x8 and Gen3 x8 memory presets, and on Gen3 x8 with the receive
//!   path at 128 bits and at the Gen3 card's 256; every datagram not delivered is counted by a drop
//!   counter of the card.

use std::path::Path;

use nanet_contract::rx::{port, PageSize, RxCounter, STREAMS_PER_PORT};
use plotters::prelude::*;
use rand::rngs::StdRng;
use rand::SeedableRng;
use serde::Serialize;

use crate::check::rx_host::{payload, ClopSpec, ReleasePolicy};
use crate::engine::clocks::{CORE_CLOCK_PS, NET_CLOCK_PS};
use crate::engine::{EngineError, EngineKind};
use crate::testbench::rx_path::{stream_udp_port, FourPortBench, RxPathBench, RxPathBench256};
use crate::world::host_mem::MemoryPreset;
use crate::world::link::WIRE_OVERHEAD_BYTES;

const CORE_NS: f64 = CORE_CLOCK_PS as f64 / 1000.0;
const NET_NS: f64 = NET_CLOCK_PS as f64 / 1000.0;
/// Ethernet + IPv4 + UDP headers in front of a payload.
const HEADERS: usize = 42;

/// Payload sizes of the sweeps.
pub const PAYLOADS: [usize; 8] = [16, 32, 64, 128, 256, 512, 1024, 1472];

#[derive(Clone, Debug, Serialize)]
pub struct LatencyRow {
    /// The memory preset, whose latency every visible time includes.
    pub memory: &'static str,
    pub memory_latency_ns: f64,
    pub payload_bytes: usize,
    pub buffer_bytes: u32,
    pub packets_per_buffer: u16,
    pub samples: usize,
    /// Testbench: the edge at which the MAC interface took the frame's first beat to the cycle
    /// its last payload byte became visible in the host memory model (mean, min, max).
    pub last_byte_visible_ns: f64,
    pub last_byte_visible_ns_min: f64,
    pub last_byte_visible_ns_max: f64,
    /// Testbench: the same SOP to the buffer's event record visible (mean).
    pub event_visible_ns: f64,
    /// The frame's own time at the MAC client interface (8 bytes per 6.4 ns cycle).
    pub frame_ns: f64,
    /// What the card adds: `last_byte_visible_ns` less the frame's own time and the memory's
    /// latency.
    pub overhead_ns: f64,
    /// The card's own measure from its stamps: SOP at the MAC to the last DMA beat (mean).
    pub stamped_ns: f64,
    /// Cross-check, ns (min, max over the samples): how much older the card's SOP stamp is than
    /// the testbench's SOP edge (the time synchronizer's steps, [`SOP_STAMP_AGE_PS`]).
    pub sop_stamp_age_ns: (f64, f64),
    /// Cross-check, core cycles (min, max): from the card's stamp of the last DMA beat to the
    /// memory port accepting the write that carries it (the write path's registers and, through
    /// PCIe, the TLP layer; at most [`MakeBench`]'s `beat_to_memory` bound).
    pub last_beat_to_memory_cycles: (u64, u64),
}

#[derive(Clone, Debug, Serialize)]
pub struct BandwidthRow {
    pub ports: usize,
    pub memory: &'static str,
    /// The width of the card's core datapath (bits).
    pub datapath_bits: usize,
    pub payload_bytes: usize,
    pub sent: u64,
    pub delivered: u64,
    /// Datagrams the card dropped, by counter: FIFO full at a port, no free buffer.
    pub fifo_full_drops: u64,
    pub no_buffer_drops: u64,
    /// Payload goodput delivered into host memory.
    pub goodput_gbps: f64,
    /// The goodput of the offered traffic (all ports at 10GbE line rate).
    pub offered_goodput_gbps: f64,
    /// `goodput / offered`.
    pub line_rate_fraction: f64,
    /// Payload bytes per second delivered over the memory preset's payload bandwidth.
    pub memory_fraction: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct RxReport {
    pub engine: &'static str,
    pub latency: Vec<LatencyRow>,
    pub bandwidth: Vec<BandwidthRow>,
}

fn clop(port: u8, buf_size: u32, buf_count: u32) -> ClopSpec {
    ClopSpec {
        port,
        stream: 0,
        buf_size,
        buf_count,
        page: PageSize::Page2M,
        header: false,
        skip_held: false,
        timeout: 0,
    }
}

pub fn frame_bytes(payload: usize) -> usize {
    (payload + HEADERS).max(60)
}

/// A bench of the card on Verilator with a memory preset and a seed: the receive path alone
/// ([`rx_path`]) or the whole card behind PCIe (`crate::testbench::card::CardBench`).
pub trait MakeBench<B>: Fn(MemoryPreset, u64) -> Result<B, EngineError> {}
impl<B, F: Fn(MemoryPreset, u64) -> Result<B, EngineError>> MakeBench<B> for F {}

/// The receive path alone, on its internal buses.
pub fn rx_path(preset: MemoryPreset, seed: u64) -> Result<RxPathBench, EngineError> {
    RxPathBench::new(EngineKind::Verilator, preset, 0.0, seed)
}

/// The receive path at 256 bits (the Gen3 x8 card's width), on its internal buses.
pub fn rx_path_256(preset: MemoryPreset, seed: u64) -> Result<RxPathBench256, EngineError> {
    RxPathBench256::new(EngineKind::Verilator, preset, 0.0, seed)
}

/// How much older (ps, more than the first and at most the second) the card's SOP stamp is than
/// the edge at which the MAC interface took the SOP beat. The port's stamp register takes the
/// synchronized time at that edge; that time left the core domain's Gray register (which took
/// the counter at a core edge) through two synchronizer flip-flops and two conversion registers,
/// one network cycle each: the core edge lies strictly before the first of those four network
/// edges (a flip-flop clocked at the same instant takes the old value) and at most a core cycle
/// before it.
pub const SOP_STAMP_AGE_PS: (u64, u64) = (4 * NET_CLOCK_PS, 4 * NET_CLOCK_PS + CORE_CLOCK_PS);

/// Core cycles from the card's stamp of a packet's last DMA beat to the memory accepting the write
/// that carries it, at most: the receive path's write port (`RxPathBench`) or the TLP layer's
/// store-and-forward of a 256-byte write (`CardBench`).
pub trait BeatToMemory {
    const BEAT_TO_MEMORY: u64;
}

/// The memory model's clock on the testbench's timeline: the model counts core edges, and its
/// cycle `c` begins at `origin + c * CORE_CLOCK_PS` (ps).
#[derive(Clone, Copy, Debug)]
pub struct MemoryClock {
    origin: u64,
}

impl MemoryClock {
    /// Read now: the testbench's time and the memory model's cycle count at the same edge.
    pub fn now(time_ps: u64, memory_cycle: u64) -> Self {
        MemoryClock {
            origin: time_ps - memory_cycle * CORE_CLOCK_PS,
        }
    }

    /// The testbench time (ps) at which memory cycle `cycle` begins.
    pub fn ps(&self, cycle: u64) -> u64 {
        self.origin + cycle * CORE_CLOCK_PS
    }
}

/// How much older the card's SOP stamp (its memory cycle `stamp`) is than the testbench's edge
/// it stamps (`sop_ps`: the SOP on the MAC interface, or UDP TX taking the request), in ps: an
/// error unless within the time synchronizer's [`SOP_STAMP_AGE_PS`].
pub fn sop_stamp_age(
    what: &str,
    clock: MemoryClock,
    sop_ps: u64,
    stamp: u64,
) -> Result<i64, EngineError> {
    let age = sop_ps as i64 - clock.ps(stamp) as i64;
    if age <= SOP_STAMP_AGE_PS.0 as i64 || age > SOP_STAMP_AGE_PS.1 as i64 {
        return Err(EngineError::Io(format!(
            "{what}: the card's SOP stamp is {age} ps older than the testbench's edge, \
             outside the synchronizer's {SOP_STAMP_AGE_PS:?}"
        )));
    }
    Ok(age)
}

/// Latency of one payload size on a memory preset: `per_buffer` packets fill each buffer
/// exactly; `buffers` buffers, one after the other, every payload distinct and checked
/// byte-exact. Measured by the testbench (the MAC interface's SOP edge, the memory model's
/// visibility) and cross-checked with the card's stamps: an error when they disagree by more than
/// [`SOP_STAMP_AGE_PS`] and [`BeatToMemory`].
pub fn latency_row<B: FourPortBench + BeatToMemory>(
    make: impl MakeBench<B>,
    preset: MemoryPreset,
    payload_len: usize,
    per_buffer: usize,
    buffers: usize,
    seed: u64,
) -> Result<LatencyRow, EngineError> {
    let mut b = make(preset, seed)?;
    b.event_ring(10);
    b.map_stream(0, 0);
    let buf = (payload_len * per_buffer) as u32;
    b.register(clop(0, buf, 64), &[]);
    let mut rng = StdRng::seed_from_u64(seed);
    for _ in 0..buffers {
        for _ in 0..per_buffer {
            let body = payload(&mut rng, payload_len);
            b.send(0, stream_udp_port(0), &body, false);
        }
        // The next buffer's packets start once this one is reported.
        let events = b.host().records.len();
        while b.host().records.len() == events {
            b.step();
        }
    }
    let clock = MemoryClock::now(b.time_ps(), b.host().port.cycle);
    let what = format!("rx latency, {payload_len} B");
    let sops: Vec<u64> = b.links()[0].sop_ps.iter().copied().collect();
    let h = b.host();
    assert_eq!(h.totals.delivered, (buffers * per_buffer) as u64);
    let l = h.totals.latencies.clone();
    let latency_cycles = h.port.preset.latency_cycles;
    assert_eq!(l.len(), buffers);
    assert_eq!(sops.len(), buffers * per_buffer, "one SOP per datagram");
    let ps = |cycle: u64| clock.ps(cycle) as i64;
    let mut visible = vec![];
    let mut event = vec![];
    let mut age = vec![];
    let mut to_memory = vec![];
    for (k, x) in l.iter().enumerate() {
        let sop = sops[(k + 1) * per_buffer - 1] as i64;
        visible.push((ps(x.last_byte_visible) - sop) as f64 / 1000.0);
        event.push((ps(x.event_visible) - sop) as f64 / 1000.0);
        age.push(sop_stamp_age(&what, clock, sop as u64, x.stamp_sop)?);
        to_memory
            .push(x.last_byte_visible as i64 - latency_cycles as i64 - x.stamp_last_beat as i64);
    }
    let range = |v: &[i64]| (*v.iter().min().unwrap(), *v.iter().max().unwrap());
    let (age, to_memory) = (range(&age), range(&to_memory));
    if to_memory.0 < 0 || to_memory.1 > B::BEAT_TO_MEMORY as i64 {
        return Err(EngineError::Io(format!(
            "{what}: the memory accepted the last beat {to_memory:?} core \
             cycles after the card's stamp of it, outside 0..={}",
            B::BEAT_TO_MEMORY
        )));
    }
    let n = l.len() as f64;
    let mean = |v: &[f64]| v.iter().sum::<f64>() / n;
    let stamped = l.iter().map(|x| x.stamped() as f64).sum::<f64>() / n * CORE_NS;
    let frame_ns = frame_bytes(payload_len).div_ceil(8) as f64 * NET_NS;
    let memory_latency_ns = latency_cycles as f64 * CORE_NS;
    Ok(LatencyRow {
        memory: preset.name,
        memory_latency_ns,
        payload_bytes: payload_len,
        buffer_bytes: buf,
        packets_per_buffer: per_buffer as u16,
        samples: l.len(),
        last_byte_visible_ns: mean(&visible),
        last_byte_visible_ns_min: visible.iter().copied().fold(f64::MAX, f64::min),
        last_byte_visible_ns_max: visible.iter().copied().fold(0.0, f64::max),
        event_visible_ns: mean(&event),
        frame_ns,
        overhead_ns: mean(&visible) - frame_ns - memory_latency_ns,
        stamped_ns: stamped,
        sop_stamp_age_ns: (age.0 as f64 / 1000.0, age.1 as f64 / 1000.0),
        last_beat_to_memory_cycles: (to_memory.0 as u64, to_memory.1 as u64),
    })
}

/// One port's figures in a [`LoadLatencyRow`].
#[derive(Clone, Debug, Serialize)]
pub struct PortLoadLatency {
    pub port: u8,
    /// Testbench: the SOP edge (the same on every port) to the datagram's last payload byte
    /// visible in host memory (mean, max over the rounds).
    pub last_byte_visible_ns: f64,
    pub last_byte_visible_ns_max: f64,
    /// The card's own measure from its stamps: SOP at the MAC to the last DMA beat (mean, min,
    /// max; what `nanetctl rx` shows).
    pub stamped_ns: f64,
    pub stamped_ns_min: f64,
    pub stamped_ns_max: f64,
    /// How many rounds this port's datagram was the k-th to land, for k = 0 (first) and up.
    pub served_kth: Vec<u32>,
}

/// How a latency-under-load run paces its rounds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Pace {
    /// Each round once the card has reported the last one's datagrams.
    Rounds,
    /// Every round queued at once, each frame followed by the idle wire time that makes this
    /// fraction of line rate offered on each link (0 < f <= 1), as the host library's simulated
    /// traffic does (`make demo`: 0.6).
    Offered(f64),
}

/// Latency under load: every port receives a datagram in the same cycle; the ports' datagrams
/// share the PCIe link (each port has its own CLOP engine and DMA writer, their writes
/// interleaved), so their last bytes land spread over the time the link needs for all of them.
#[derive(Clone, Debug, Serialize)]
pub struct LoadLatencyRow {
    pub memory: &'static str,
    /// The fraction of line rate offered on each link when the rounds stream
    /// ([`Pace::Offered`]); null when each round waits for the last.
    pub offered_line_rate_fraction: Option<f64>,
    pub memory_latency_ns: f64,
    /// The width of the card's core datapath (bits).
    pub datapath_bits: usize,
    pub ports: usize,
    pub payload_bytes: usize,
    pub rounds: usize,
    pub per_port: Vec<PortLoadLatency>,
    /// The k-th datagram to land after the first (k = 0 .. ports - 1; the first is 0): mean
    /// and max over the rounds, from the testbench's visibility times.
    pub kth_after_first_ns: Vec<f64>,
    pub kth_after_first_ns_max: Vec<f64>,
    /// The largest `kth_after_first / k` of any round: the spacing at which the ports are served.
    pub ns_per_k_max: f64,
    /// The memory link's own time for one datagram's payload in max-payload writes (no card
    /// lands the last of `ports` datagrams sooner than `ports` times this after the SOP edge).
    pub link_ns_per_datagram: f64,
    /// Cross-check, core cycles (min, max): from the card's stamp of a datagram's last DMA beat
    /// to the memory accepting it; beyond [`BeatToMemory`]'s bound when the write waited for
    /// other ports' writes on the link.
    pub last_beat_to_memory_cycles: (u64, u64),
}

/// Latency under load: `ports` links deliver a `payload_len`-byte datagram each in the same
/// cycle, `rounds` times, paced by `pace`; every payload checked byte-exact, one per buffer (the
/// host gives each back as soon as it has checked it). Measured by the testbench (SOP edge to
/// last byte visible), cross-checked with the card's SOP stamps as [`latency_row`] does.
pub fn load_latency_row<B: FourPortBench>(
    make: impl MakeBench<B>,
    preset: MemoryPreset,
    (ports, payload_len): (usize, usize),
    rounds: usize,
    pace: Pace,
    seed: u64,
) -> Result<LoadLatencyRow, EngineError> {
    let mut b = make(preset, seed)?;
    b.event_ring(10);
    for p in 0..ports as u8 {
        b.map_stream(p, 0);
        b.register(clop(p, payload_len as u32, 64), &[]);
    }
    let mut rng = StdRng::seed_from_u64(seed);
    let mut send_round = |b: &mut B, gap: u64| {
        for p in 0..ports as u8 {
            let body = payload(&mut rng, payload_len);
            b.send_with_gap(p, stream_udp_port(0), &body, false, gap);
        }
    };
    let what = format!("rx latency under load, {ports} ports, {payload_len} B");
    // Runs until `n` datagrams have landed; fails after `limit` core cycles (a datagram the card
    // dropped never lands).
    let land = |b: &mut B, n: usize, limit: u64| {
        for _ in 0..limit {
            if b.host().totals.latencies.len() >= n {
                return Ok(());
            }
            b.step();
        }
        Err(EngineError::Io(format!(
            "{what}: {n} datagrams sent, {} landed within {limit} core cycles",
            b.host().totals.latencies.len()
        )))
    };
    // (A datagram takes well under a microsecond; the slack is 400 us.)
    const SLACK_CYCLES: u64 = 100_000;
    match pace {
        Pace::Rounds => {
            for round in 1..=rounds {
                send_round(&mut b, 0);
                land(&mut b, round * ports, SLACK_CYCLES)?;
            }
        }
        Pace::Offered(fraction) => {
            assert!(
                fraction > 0.0 && fraction <= 1.0,
                "a fraction of line rate: {fraction}"
            );
            let wire = (frame_bytes(payload_len) as u64 + WIRE_OVERHEAD_BYTES) as f64;
            let gap = (wire * (1.0 / fraction - 1.0)).round() as u64;
            for _ in 0..rounds {
                send_round(&mut b, gap);
            }
            // The traffic's wire time (a byte is 0.8 ns, a core cycle 4 ns), then the slack.
            let traffic_cycles = rounds as u64 * (wire as u64 + gap) / 5;
            land(&mut b, rounds * ports, traffic_cycles + SLACK_CYCLES)?;
        }
    }
    let clock = MemoryClock::now(b.time_ps(), b.host().port.cycle);
    let sops: Vec<Vec<u64>> = (0..ports)
        .map(|p| b.links()[p].sop_ps.iter().copied().collect())
        .collect();
    if sops.iter().any(|s| s.len() != rounds || *s != sops[0]) {
        return Err(EngineError::Io(format!(
            "{what}: the ports' SOP edges differ: {sops:?}"
        )));
    }
    let bits = b.datapath_bits();
    let h = b.host();
    let l = &h.totals.latencies;
    if l.len() != rounds * ports {
        return Err(EngineError::Io(format!(
            "{what}: {} datagrams sent, {} landed (one per buffer)",
            rounds * ports,
            l.len()
        )));
    }
    let latency_cycles = h.port.preset.latency_cycles;
    let ps = |cycle: u64| clock.ps(cycle) as i64;
    // Per round, per port: (visible ns, stamped ns).
    let mut at = vec![vec![(0.0, 0.0); ports]; rounds];
    let mut seen = vec![0; ports];
    let mut to_memory_range = (u64::MAX, 0);
    for x in l {
        let p = x.clop as usize / STREAMS_PER_PORT;
        let round = seen[p];
        seen[p] += 1;
        let sop = sops[p][round] as i64;
        let to_memory =
            x.last_byte_visible as i64 - latency_cycles as i64 - x.stamp_last_beat as i64;
        sop_stamp_age(&format!("{what}, port {p}"), clock, sop as u64, x.stamp_sop)?;
        // Under load a last beat waits for the writes of the ports served before it (the
        // memory link is busy), so only its order is checked here; the range is reported.
        if to_memory < 0 {
            return Err(EngineError::Io(format!(
                "{what}: port {p}'s last beat reached the memory {to_memory} core cycles after \
                 the card's stamp of it, before the stamp"
            )));
        }
        to_memory_range = (
            to_memory_range.0.min(to_memory as u64),
            to_memory_range.1.max(to_memory as u64),
        );
        at[round][p] = (
            (ps(x.last_byte_visible) - sop) as f64 / 1000.0,
            x.stamped() as f64 * CORE_NS,
        );
    }
    let mut served_kth = vec![vec![0; ports]; ports];
    let mut after_first = vec![vec![]; ports];
    let mut ns_per_k_max: f64 = 0.0;
    for round in &at {
        let mut order: Vec<usize> = (0..ports).collect();
        order.sort_by(|&a, &b| round[a].0.total_cmp(&round[b].0));
        let first = round[order[0]].0;
        for (k, &p) in order.iter().enumerate() {
            served_kth[p][k] += 1;
            let after = round[p].0 - first;
            after_first[k].push(after);
            if k > 0 {
                ns_per_k_max = ns_per_k_max.max(after / k as f64);
            }
        }
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let max = |v: &[f64]| v.iter().copied().fold(f64::MIN, f64::max);
    let min = |v: &[f64]| v.iter().copied().fold(f64::MAX, f64::min);
    let per_port = (0..ports)
        .map(|p| {
            let visible: Vec<f64> = at.iter().map(|r| r[p].0).collect();
            let stamped: Vec<f64> = at.iter().map(|r| r[p].1).collect();
            PortLoadLatency {
                port: p as u8,
                last_byte_visible_ns: mean(&visible),
                last_byte_visible_ns_max: max(&visible),
                stamped_ns: mean(&stamped),
                stamped_ns_min: min(&stamped),
                stamped_ns_max: max(&stamped),
                served_kth: served_kth[p].clone(),
            }
        })
        .collect();
    Ok(LoadLatencyRow {
        memory: preset.name,
        offered_line_rate_fraction: match pace {
            Pace::Rounds => None,
            Pace::Offered(f) => Some(f),
        },
        memory_latency_ns: latency_cycles as f64 * CORE_NS,
        datapath_bits: bits,
        ports,
        payload_bytes: payload_len,
        rounds,
        per_port,
        kth_after_first_ns: after_first.iter().map(|v| mean(v)).collect(),
        kth_after_first_ns_max: after_first.iter().map(|v| max(v)).collect(),
        ns_per_k_max,
        link_ns_per_datagram: payload_len as f64 / preset.bytes_per_s() * 1e9,
        last_beat_to_memory_cycles: to_memory_range,
    })
}

/// The bandwidth runs' CLOP flush timeout, core cycles (80 us).
const FLUSH_CYCLES: u32 = 20_000;

/// Goodput with `ports` links sending `per_port` datagrams back to back, every payload distinct:
/// the rate at which payload bytes became visible in the host memory model. Every datagram sent
/// is either found byte-exact in its CLOP or counted by one of the card's drop counters.
pub fn bandwidth_row<B: FourPortBench>(
    make: impl MakeBench<B>,
    ports: usize,
    preset: MemoryPreset,
    payload_len: usize,
    per_port: usize,
    seed: u64,
) -> Result<BandwidthRow, EngineError> {
    let mut b = make(preset, seed)?;
    // Drops are allowed (and counted below); distinct payloads make every match unambiguous.
    b.host().exact = false;
    b.host().release = ReleasePolicy::After(0);
    b.host().port.track_visible = false;
    b.host().port.landed_log = Some(vec![]);
    b.event_ring(12);
    // Buffers of whole packets, 8 KiB or more; the last one, not filled, is flushed by the
    // timeout (far beyond a buffer's time at line rate) so the host checks it too.
    let per_buffer = (8192 / payload_len).max(1);
    for p in 0..ports as u8 {
        b.map_stream(p, 0);
        let spec = ClopSpec {
            timeout: FLUSH_CYCLES,
            ..clop(p, (payload_len * per_buffer) as u32, 64)
        };
        b.register(spec, &[]);
    }
    let mut rng = StdRng::seed_from_u64(seed);
    for _ in 0..per_port {
        for p in 0..ports as u8 {
            let body = payload(&mut rng, payload_len);
            b.send(p, stream_udp_port(0), &body, false);
        }
    }
    // Until the links are silent and nothing has landed for 2000 cycles (the FIFOs may still be
    // draining when the links fall silent).
    let mut quiet_since = 0;
    while !b.input_empty() || b.host().port.cycle - quiet_since < 2000 {
        b.step();
        let h = b.host();
        if h.port
            .landed_log
            .as_ref()
            .is_some_and(|l| l.last().is_some_and(|w| w.0 == h.port.cycle))
        {
            quiet_since = h.port.cycle;
        }
    }
    // The last buffers' flush.
    for _ in 0..FLUSH_CYCLES + 1000 {
        b.step();
    }
    let sent = (ports * per_port) as u64;
    let mut fifo_full = 0;
    for p in 0..ports as u8 {
        fifo_full += b.port_read(p, port::DROP_FIFO_FULL) as u64;
    }
    let no_buffer = b.counter(RxCounter::DropNoFreeBuffer) as u64;
    let delivered = b.counter(RxCounter::Committed) as u64;
    let h = b.host();
    let not_landed = (0..ports as u8)
        .map(|p| h.outstanding(p * 16) as u64)
        .sum::<u64>();
    let missing = h.totals.skipped + not_landed;
    if delivered + fifo_full + no_buffer != sent
        || h.totals.delivered != delivered
        || missing != fifo_full + no_buffer
    {
        return Err(EngineError::Io(format!(
            "rx bandwidth, {ports} port(s), {payload_len} B: {sent} sent; the card counted \
             {delivered} delivered, {fifo_full} FIFO-full and {no_buffer} no-buffer drops; the \
             host found {} in its CLOPs and {missing} missing",
            h.totals.delivered
        )));
    }
    // The rate at which payload bytes became visible, over every datagram but the first (whose
    // way there is the receive latency's subject, not the rate's): from the write by which one
    // datagram's worth of payload had landed to the last one. Event records are left out, so both
    // ends are payload writes.
    let mut landed = 0;
    let mut writes = vec![]; // (cycle, payload bytes so far)
    for &(cycle, addr, bytes) in h.port.landed_log.as_ref().expect("set above") {
        if !h.in_event_ring(addr) {
            landed += bytes;
            writes.push((cycle, landed));
        }
    }
    assert_eq!(
        landed,
        delivered * payload_len as u64,
        "payload bytes landed"
    );
    let first_done = writes
        .iter()
        .find(|w| w.1 >= payload_len as u64)
        .map_or(0, |w| w.0);
    let core_cycles = writes.last().map_or(0, |w| w.0) - first_done;
    let seconds = core_cycles as f64 * CORE_NS * 1e-9;
    let goodput = delivered.saturating_sub(1) as f64 * payload_len as f64 * 8.0 / seconds / 1e9;
    let wire = (frame_bytes(payload_len) as u64 + WIRE_OVERHEAD_BYTES) as f64;
    let offered = ports as f64 * 10.0 * payload_len as f64 / wire;
    Ok(BandwidthRow {
        ports,
        memory: preset.name,
        datapath_bits: b.datapath_bits(),
        payload_bytes: payload_len,
        sent,
        delivered,
        fifo_full_drops: fifo_full,
        no_buffer_drops: no_buffer,
        goodput_gbps: goodput,
        offered_goodput_gbps: offered,
        line_rate_fraction: goodput / offered,
        memory_fraction: goodput * 1e9 / 8.0 / preset.bytes_per_s(),
    })
}

/// Runs both sweeps; `quick` runs fewer sizes and packets (a smoke test, not figures).
pub fn run(quick: bool, progress: &mut dyn FnMut(&str)) -> Result<RxReport, EngineError> {
    let sizes: &[usize] = if quick { &[64, 1472] } else { &PAYLOADS };
    let mut latency = vec![];
    for preset in [MemoryPreset::gen2_x8(), MemoryPreset::gen3_x8()] {
        for &p in sizes {
            progress(&format!(
                "rx latency, {}, {p}-byte payloads, one per buffer",
                preset.name
            ));
            latency.push(latency_row(
                rx_path,
                preset,
                p,
                1,
                if quick { 3 } else { 20 },
                7,
            )?);
        }
    }
    for &p in sizes.iter().filter(|p| 8192 % **p == 0) {
        progress(&format!(
            "rx latency, gen2x8, {p}-byte payloads, 8 KiB buffers"
        ));
        latency.push(latency_row(
            rx_path,
            MemoryPreset::gen2_x8(),
            p,
            8192 / p,
            if quick { 1 } else { 4 },
            8,
        )?);
    }
    let mut bandwidth = vec![];
    let (gen2, gen3) = (MemoryPreset::gen2_x8(), MemoryPreset::gen3_x8());
    for (preset, bits) in [(gen2, 128), (gen3, 128), (gen3, 256)] {
        for ports in [1, 4] {
            for &p in sizes {
                progress(&format!(
                    "rx bandwidth, {ports} port(s), {}, {bits}-bit datapath, {p}-byte payloads",
                    preset.name
                ));
                // About 150 KB of wire time per port (40 KB when quick).
                let wire = frame_bytes(p) as u64 + WIRE_OVERHEAD_BYTES;
                let per_port = ((if quick { 40_000 } else { 150_000 }) / wire).max(20) as usize;
                bandwidth.push(if bits == 256 {
                    bandwidth_row(rx_path_256, ports, preset, p, per_port, 9)?
                } else {
                    bandwidth_row(rx_path, ports, preset, p, per_port, 9)?
                });
            }
        }
    }
    Ok(RxReport {
        engine: "verilator",
        latency,
        bandwidth,
    })
}

fn svg_error(e: impl std::fmt::Display) -> EngineError {
    EngineError::Io(format!("plot: {e}"))
}

/// One line of a plot against payload size.
struct Series {
    label: String,
    color: RGBColor,
    points: Vec<(f64, f64)>,
    /// Draw the measured points (not for reference lines).
    marks: bool,
}

/// A plot against payload size (log scale, 16 to 1472 bytes), in the style of the paper's
/// figures.
fn plot_vs_payload(
    path: &Path,
    caption: &str,
    y_desc: &str,
    series: &[Series],
) -> Result<(), EngineError> {
    let root = SVGBackend::new(path, (800, 500)).into_drawing_area();
    root.fill(&WHITE).map_err(svg_error)?;
    let ymax = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .fold(0.0, f64::max)
        * 1.1;
    let mut chart = ChartBuilder::on(&root)
        .caption(caption, ("sans-serif", 20))
        .margin(10)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d((16f64..1472f64).log_scale(), 0f64..ymax)
        .map_err(svg_error)?;
    chart
        .configure_mesh()
        .x_desc("UDP payload (bytes)")
        .y_desc(y_desc)
        .draw()
        .map_err(svg_error)?;
    for s in series {
        let color = s.color;
        let width = if s.marks { 2 } else { 1 };
        chart
            .draw_series(LineSeries::new(s.points.clone(), color.stroke_width(width)))
            .map_err(svg_error)?
            .label(s.label.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
        if s.marks {
            chart
                .draw_series(s.points.iter().map(|p| Circle::new(*p, 3, color.filled())))
                .map_err(svg_error)?;
        }
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(svg_error)?;
    root.present().map_err(svg_error)
}

/// Figure 7 style: latency against payload size.
pub fn plot_latency(rows: &[LatencyRow], path: &Path) -> Result<(), EngineError> {
    let line =
        |label: &str, color, memory: &str, single: bool, value: fn(&LatencyRow) -> f64| Series {
            label: label.into(),
            color,
            points: rows
                .iter()
                .filter(|r| r.memory == memory && (r.packets_per_buffer == 1) == single)
                .map(|r| (r.payload_bytes as f64, value(r)))
                .collect(),
            marks: label != "frame time at the MAC",
        };
    let series = [
        line(
            "last payload byte visible, gen2x8, 1 packet/buffer",
            BLUE,
            "gen2x8",
            true,
            |r| r.last_byte_visible_ns,
        ),
        line(
            "event record visible, gen2x8, 1 packet/buffer",
            RED,
            "gen2x8",
            true,
            |r| r.event_visible_ns,
        ),
        line(
            "event record visible, gen2x8, 8 KiB buffers",
            MAGENTA,
            "gen2x8",
            false,
            |r| r.event_visible_ns,
        ),
        line(
            "last payload byte visible, gen3x8, 1 packet/buffer",
            GREEN,
            "gen3x8",
            true,
            |r| r.last_byte_visible_ns,
        ),
        line("frame time at the MAC", BLACK, "gen2x8", true, |r| {
            r.frame_ns
        }),
    ];
    plot_vs_payload(
        path,
        "nanet RX latency: SOP at the MAC to visible in host memory",
        "latency (ns)",
        &series,
    )
}

/// Figure 8 style: goodput against payload size, with the line rate for reference.
pub fn plot_bandwidth(rows: &[BandwidthRow], path: &Path) -> Result<(), EngineError> {
    let colors = [BLUE, RED, GREEN, MAGENTA, CYAN, RGBColor(255, 140, 0)];
    let mut series = vec![];
    for (memory, bits) in [("gen2x8", 128), ("gen3x8", 128), ("gen3x8", 256)] {
        for ports in [1, 4] {
            series.push(Series {
                label: format!("{ports} port(s), {memory}, {bits} bits"),
                color: colors[series.len() % colors.len()],
                points: rows
                    .iter()
                    .filter(|r| r.memory == memory && r.datapath_bits == bits && r.ports == ports)
                    .map(|r| (r.payload_bytes as f64, r.goodput_gbps))
                    .collect(),
                marks: true,
            });
        }
    }
    for ports in [1, 4] {
        series.push(Series {
            label: format!("line rate, {ports} port(s)"),
            color: BLACK,
            points: rows
                .iter()
                .filter(|r| r.memory == "gen2x8" && r.ports == ports)
                .map(|r| (r.payload_bytes as f64, r.offered_goodput_gbps))
                .collect(),
            marks: false,
        });
    }
    plot_vs_payload(
        path,
        "nanet RX goodput into host memory",
        "goodput (Gb/s)",
        &series,
    )
}

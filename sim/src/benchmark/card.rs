//! Benchmarks of the whole card behind its PCIe boundary (`testbench/card.rs`, Verilog on
//! Verilator): the paper's loopback time of flight, receive latency into host memory through the
//! TLP layer, and DMA write bandwidth through the TLP layer against the PCIe link's theoretical
//! payload bandwidth (Gen2 x8, and Gen3 x8 for the 256-bit card).
//!
//! - Time of flight: port 0's packet generator sends to port 1 over a cable with no MAC or PHY
//!   (one flip-flop); from the request taken by UDP TX (the payload's transmit time) to the SOP
//!   at port 1's MAC, from the card's own timestamps. The paper's 64 cycles at 156.25 MHz include
//!   both MACs and PHYs; ours exclude them.
//! - Latency: as the receive path's benchmark, with the event record's write crossing the TLP
//!   layer (memory-write TLP taken by the root complex).
//! - Bandwidth: one port, then four ports at line rate into four CLOPs, on the Gen2 x8 card (128
//!   bits) and on the Gen3 x8 card (256 bits); the link charges every TLP its payload, header and
//!   framing; delivered payload bytes per second over the memory preset's payload bandwidth of
//!   256-byte writes with 4-dword headers (the CLOPs sit above 4 GiB).
//! - Transmit: datagrams posted to the ports' transmit rings in host memory for one port or four
//!   (one of them with its link stalled), read by DMA through the TLP layer, each port's share of
//!   line rate on its wire, on both variants; and the latency of one datagram at a time (Gen2 x8).

use nanet_contract::card::CardReg;
use nanet_contract::offload::Counter;
use nanet_contract::pcie::PcieVariant;
use nanet_contract::tx::TxDescriptor;
use nanet_hdl::pcie::read::READ_TAGS;
use serde::Serialize;

use crate::benchmark::offload::TX_TAKEN_TO_SOP_CYCLES;
use crate::benchmark::rx::{
    bandwidth_row, frame_bytes, latency_row, load_latency_row, sop_stamp_age, BandwidthRow,
    LatencyRow, LoadLatencyRow, MakeBench, MemoryClock, Pace,
};
use crate::check::rx_host::RxCard;
use crate::check::rx_host::RxHost;
use crate::engine::clocks::{CORE_CLOCK_PS, NET_CLOCK_PS};
use crate::engine::{EngineError, EngineKind};
use crate::testbench::card::{CardBench, CardDesign, Nic256Design, NicDesign, TxRing};
use crate::testbench::rx_path::FourPortBench;
use crate::world::host_mem::MemoryPreset;
use crate::world::link::WIRE_OVERHEAD_BYTES;

const CORE_NS: f64 = CORE_CLOCK_PS as f64 / 1000.0;

#[derive(Clone, Debug, Serialize)]
pub struct FlightRow {
    pub payload_bytes: usize,
    pub samples: usize,
    pub tof_cycles_min: u32,
    pub tof_cycles_mean: f64,
    pub tof_cycles_max: u32,
    pub tof_ns_mean: f64,
    /// The same mean in network cycles (156.25 MHz), the paper's unit.
    pub tof_net_cycles_mean: f64,
    /// Cross-check, ns (min, max): how much older the card's transmit stamp is than the edge at
    /// which UDP TX took the request (`TX_TAKEN_TO_SOP_CYCLES`, two network cycles, before port
    /// 0's SOP edge, which the offload core's benchmark checks from its testbench), and its
    /// receive stamp than port 1's
    /// SOP edge (one network cycle after port 0's: the cable is one flip-flop); both the time
    /// synchronizer's steps, [`crate::benchmark::rx::SOP_STAMP_AGE_PS`].
    pub tx_stamp_age_ns: (f64, f64),
    pub rx_stamp_age_ns: (f64, f64),
}

/// Transmit from host memory on one port or several at once: each port's ring kept full, every
/// frame checked byte-exact and in order per port, the card's own
/// per-port `TxPackets` counters against the frames on the wires. Each port's share of line rate
/// over a window of wire time after every port has started (or a fixed warm-up): the wire time
/// of its frames (frame, preamble, gap) inside the window over the window.
#[derive(Clone, Debug, Serialize)]
pub struct TxRow {
    pub memory: &'static str,
    /// The width of the card's core datapath (bits).
    pub datapath_bits: usize,
    pub ports: usize,
    /// Ports (from port 0 up) whose MAC never takes a frame ([`crate::world::link::LinkTx`]'s
    /// `stalled`: a link down); their datagrams are posted like the others'.
    pub stalled_ports: usize,
    pub payload_bytes: usize,
    pub window_ns: f64,
    /// Per port: frames whose SOP fell in the window, and the share of line rate.
    pub frames_in_window: Vec<usize>,
    pub line_rate_fraction: Vec<f64>,
    /// The least share of the ports not stalled.
    pub line_rate_fraction_min: f64,
    /// What limits the rate, at the root complex from the window's start to the measurement's
    /// end (the window, a frame and up to 200 cycles more): the card's reads answered in full
    /// (descriptors and payloads) per µs, the mean number of them in flight (taken, not yet
    /// answered in full), their mean round trip (Little's law: in flight / rate), the share
    /// of cycles in which a beat went to the card (completions and the host's register
    /// accesses; one beat a cycle at most), and the share of the link's bytes toward the card
    /// it carried (TLPs with headers and framing, the root port's DLLPs; 0 on an unlimited
    /// link).
    pub reads_per_us: f64,
    pub reads_in_flight_mean: f64,
    pub read_round_trip_ns: f64,
    pub to_card_busy_fraction: f64,
    pub to_card_link_busy_fraction: f64,
    /// The card's own count: the share of core cycles in which a DMA read request waited for a
    /// tag, every one of the read engine's 32 in flight (`CardReg::ReadTagWaits`, read at the
    /// window's start and end).
    pub read_tag_wait_fraction: f64,
}

/// The card's count of cycles a read waited for a tag, and the time of the register read
/// (the middle of its round trip, ps).
fn read_tag_waits<D: CardDesign>(b: &mut CardBench<RxHost, D>) -> (u32, u64) {
    let t0 = b.time_ps();
    let waits = b.bar0_read(4 * CardReg::ReadTagWaits.word() as u64);
    (waits, (t0 + b.time_ps()) / 2)
}

/// The root complex's counts behind [`TxRow`]'s read and link figures, at one instant.
#[derive(Clone, Copy)]
struct ReadCounts {
    ps: u64,
    reads: u64,
    open_cycles: u64,
    beats: u64,
    link_bytes: u64,
}

impl ReadCounts {
    fn of<D: CardDesign>(b: &CardBench<RxHost, D>) -> Self {
        Self {
            ps: b.time_ps(),
            reads: b.rc.card_reads_closed,
            open_cycles: b.rc.card_read_open_cycles,
            beats: b.rc.beats_to_card,
            link_bytes: b.rc.link_bytes_to_card,
        }
    }
}

/// Transmit latency per datagram, one at a time (Gen2 x8 memory latency for the descriptor and
/// payload reads).
#[derive(Clone, Debug, Serialize)]
pub struct TxLatencyRow {
    pub payload_bytes: usize,
    pub samples: usize,
    /// Testbench: the host's doorbell write to the frame's SOP at the MAC (min, mean, max).
    pub doorbell_to_wire_ns_min: f64,
    pub doorbell_to_wire_ns_mean: f64,
    pub doorbell_to_wire_ns_max: f64,
    /// Where it goes, by the card's stamps (means): doorbell to the descriptor read issued, from
    /// there to the datagram's header entry going into the port's FIFO (the descriptor's read),
    /// from there to the SOP on the wire (the payload's read, the payload into the FIFO whole).
    pub doorbell_to_fetch_ns: f64,
    pub fetch_to_header_entry_ns: f64,
    pub header_entry_to_wire_ns: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct CardReport {
    pub engine: &'static str,
    pub time_of_flight: Vec<FlightRow>,
    pub latency: Vec<LatencyRow>,
    pub load_latency: Vec<LoadLatencyRow>,
    /// `make demo`'s traffic: four ports' 1024-byte datagrams at 60% of line rate, in step.
    pub demo_latency: Vec<LoadLatencyRow>,
    pub bandwidth: Vec<BandwidthRow>,
    pub tx: Vec<TxRow>,
    pub tx_latency: Vec<TxLatencyRow>,
}

/// A card from `make` with an event ring, and on its first `ports` ports a static ARP entry for
/// the peer and a transmit ring of `2^log2` descriptors.
fn tx_card<D: CardDesign>(
    make: impl MakeBench<CardBench<RxHost, D>>,
    preset: MemoryPreset,
    ports: usize,
    log2: u32,
) -> Result<(CardBench<RxHost, D>, Vec<TxRing>), EngineError> {
    let mut b = make(preset, 12)?;
    b.event_ring(8);
    for p in 0..ports {
        b.static_arp(p as u8, &crate::testbench::rx_path::PEER);
    }
    let rings = (0..ports as u8).map(|p| b.tx_ring(p, log2)).collect();
    Ok((b, rings))
}

/// A descriptor for port 0 to the peer.
fn tx_descriptor(flags: u8) -> TxDescriptor {
    TxDescriptor {
        port: 0,
        flags,
        dst_ip: crate::testbench::rx_path::PEER.ip,
        src_port: 4000,
        dst_port: 9,
        ..Default::default()
    }
}

/// Payload byte `j` of port `port`'s `seq`-th datagram in [`tx_row`] (a slot's next datagram,
/// a lap of the ring later, differs from it).
fn tx_byte(port: usize, seq: usize, j: usize) -> u8 {
    (port * 61 + seq * 7 + (seq >> 8) * 13 + j) as u8
}

/// [`TxRow`]: `ports` ports sending `len`-byte datagrams, each from its ring of 256 descriptors,
/// the first `stalled` of them with their MAC never ready; the window is `window_bytes` of wire
/// time per port at line rate. Every 200 cycles the host fills each ring's free slots and rings
/// one doorbell per ring (as the host library's `send_batch`).
fn tx_row<D: CardDesign>(
    make: impl MakeBench<CardBench<RxHost, D>>,
    preset: MemoryPreset,
    ports: usize,
    stalled: usize,
    len: usize,
    window_bytes: u64,
) -> Result<TxRow, EngineError> {
    const LOG2: u32 = 8;
    const WARM_UP_FRAMES: usize = 4;
    const WARM_UP_LIMIT_PS: u64 = 40_000_000;
    assert!(stalled < ports, "a port to measure");
    let (mut b, mut rings) = tx_card(make, preset, ports, LOG2)?;
    for p in 0..stalled {
        b.link_tx[p].stalled = true;
    }
    let datapath_bits = b.datapath_bits();
    let wire_bytes = frame_bytes(len) as u64 + WIRE_OVERHEAD_BYTES;
    // A frame's time on the wire at 10 Gb/s, ps.
    let frame_ps = wire_bytes * 800;
    let window_ps = window_bytes.div_ceil(wire_bytes) * frame_ps;
    let mut posted = vec![0usize; ports];
    let mut heads = vec![0u16; ports];
    let mut start: Option<u64> = None;
    let mut counts_at_start = ReadCounts::of(&b);
    let mut tag_waits_at_start = (0, 0);
    let t0 = b.time_ps();
    loop {
        for (p, ring) in rings.iter_mut().enumerate() {
            let free = (1u16 << LOG2) - ring.tail.wrapping_sub(heads[p]);
            for _ in 0..free {
                let body: Vec<u8> = (0..len).map(|j| tx_byte(p, posted[p], j)).collect();
                let desc = TxDescriptor {
                    port: p as u8,
                    ..tx_descriptor(0)
                };
                b.tx_post(ring, desc, &body);
                posted[p] += 1;
            }
            // One doorbell for the slots filled (the host library's `send_batch`).
            if free > 0 {
                b.tx_doorbell(ring);
            }
        }
        for _ in 0..200 {
            b.step();
        }
        for (p, head) in heads.iter_mut().enumerate() {
            *head = b.tx_head(p as u8);
        }
        let now = b.time_ps();
        match start {
            None => {
                let started = (stalled..ports).all(|p| b.link_tx[p].frames.len() >= WARM_UP_FRAMES);
                if started || now - t0 > WARM_UP_LIMIT_PS {
                    start = Some(now);
                    counts_at_start = ReadCounts::of(&b);
                    tag_waits_at_start = read_tag_waits(&mut b);
                }
            }
            Some(s) if now >= s + window_ps + frame_ps => break,
            Some(_) => {}
        }
    }
    let start = start.expect("set before the loop ends");
    let end = start + window_ps;
    // A read is in flight at the root complex only while the card holds its tag.
    if b.rc.card_reads_open_max > READ_TAGS as u64 {
        return Err(EngineError::Io(format!(
            "transmit on {ports} ports, {len} B: {} reads in flight at once at the root complex, \
             more than the card's {READ_TAGS} tags",
            b.rc.card_reads_open_max
        )));
    }
    let (c0, c1) = (counts_at_start, ReadCounts::of(&b));
    let (w0, w1) = (tag_waits_at_start, read_tag_waits(&mut b));
    let read_tag_wait_fraction =
        w1.0.wrapping_sub(w0.0) as f64 / ((w1.1 - w0.1) as f64 / CORE_CLOCK_PS as f64);
    let cycles = ((c1.ps - c0.ps) / CORE_CLOCK_PS) as f64;
    let reads_per_cycle = (c1.reads - c0.reads) as f64 / cycles;
    let reads_in_flight_mean = (c1.open_cycles - c0.open_cycles) as f64 / cycles;
    // Every MAC stops taking frames; those on the wires end; then the card's counters.
    for l in &mut b.link_tx {
        l.stalled = true;
    }
    for _ in 0..(frame_ps / CORE_CLOCK_PS + 200) {
        b.step();
    }
    let counted: Vec<usize> = (0..ports)
        .map(|p| b.port_read(p as u8, Counter::TxPackets.word()) as usize)
        .collect();
    let mut frames_in_window = vec![];
    let mut line_rate_fraction = vec![];
    for (p, &counted) in counted.iter().enumerate() {
        let frames = &b.link_tx[p].frames;
        for (seq, f) in frames.iter().enumerate() {
            let body: Vec<u8> = (0..len).map(|j| tx_byte(p, seq, j)).collect();
            if f.error || f.bytes.len() != frame_bytes(len) || f.bytes[42..42 + len] != body[..] {
                return Err(EngineError::Io(format!(
                    "transmit on {ports} ports, {len} B: frame {seq} on port {p} is not the \
                     datagram posted {seq}th for it"
                )));
            }
        }
        // The card counts a datagram as its UDP transmitter takes it: at most one more than
        // the wire saw (one waiting for its MAC).
        if !(frames.len()..=frames.len() + 1).contains(&counted) {
            return Err(EngineError::Io(format!(
                "transmit on {ports} ports, {len} B: port {p} counts {} frames sent, its wire \
                 saw {}",
                counted,
                frames.len()
            )));
        }
        // Each frame's wire time, clipped to the window.
        let busy: u64 = frames
            .iter()
            .map(|f| {
                (f.sop_ps + frame_ps)
                    .min(end)
                    .saturating_sub(f.sop_ps.max(start))
            })
            .sum();
        frames_in_window.push(
            frames
                .iter()
                .filter(|f| (start..end).contains(&f.sop_ps))
                .count(),
        );
        line_rate_fraction.push(busy as f64 / window_ps as f64);
    }
    Ok(TxRow {
        memory: preset.name,
        datapath_bits,
        ports,
        stalled_ports: stalled,
        payload_bytes: len,
        window_ns: window_ps as f64 / 1000.0,
        line_rate_fraction_min: line_rate_fraction[stalled..]
            .iter()
            .copied()
            .fold(f64::MAX, f64::min),
        frames_in_window,
        line_rate_fraction,
        reads_per_us: reads_per_cycle * 1e6 / CORE_CLOCK_PS as f64,
        reads_in_flight_mean,
        read_round_trip_ns: reads_in_flight_mean / reads_per_cycle * CORE_CLOCK_PS as f64 / 1e3,
        to_card_busy_fraction: (c1.beats - c0.beats) as f64 / cycles,
        to_card_link_busy_fraction: (c1.link_bytes - c0.link_bytes) as f64
            / (cycles * preset.link_bytes_per_cycle),
        read_tag_wait_fraction,
    })
}

/// Transmit latency of every one of `n` datagrams of `len` bytes, each posted once the one before
/// is on the wire and reported: from the host's doorbell write (the testbench cycle it is handed
/// to the root complex) to the edge at which port 0's MAC takes the frame's SOP. The card's
/// stamps in its `TxDone` record (descriptor read issued, datagram checked, its header entry
/// written into the port's FIFO) must lie in that order between the two.
fn tx_latency_row(len: usize, n: usize) -> Result<TxLatencyRow, EngineError> {
    use nanet_contract::events::EventKind;
    use nanet_contract::tx::TX_DESC_EVENT;
    let (mut b, rings) = tx_card(card, MemoryPreset::gen2_x8(), 1, 4)?;
    let mut ring = rings.into_iter().next().expect("port 0's ring");
    let desc = tx_descriptor(TX_DESC_EVENT);
    // The set-up's register writes are through before the first doorbell.
    while !b.host_requests_sent() {
        b.step();
    }
    for _ in 0..200 {
        b.step();
    }
    let clock = MemoryClock::now(b.time_ps(), b.host.port.cycle);
    let mut total = vec![];
    let mut parts = [vec![], vec![], vec![]];
    for i in 0..n {
        let body: Vec<u8> = (0..len).map(|j| (i * 13 + j) as u8).collect();
        let doorbell = b.time_ps();
        b.tx_send(&mut ring, desc, &body);
        let done = |b: &CardBench| {
            b.host
                .records
                .iter()
                .filter(|r| r.kind == EventKind::TxDone)
                .count()
        };
        let mut waited = 0;
        while b.link_tx[0].frames.len() <= i || done(&b) <= i {
            b.step();
            waited += 1;
            if waited > 100_000 {
                return Err(EngineError::Io(format!(
                    "transmit latency, {len} B: datagram {i} not sent in {waited} cycles"
                )));
            }
        }
        let f = &b.link_tx[0].frames[i];
        if f.bytes.len() != frame_bytes(len) || f.bytes[42..42 + len] != body[..] {
            return Err(EngineError::Io(format!(
                "transmit latency, {len} B: datagram {i} on the wire is not the one posted"
            )));
        }
        let rec = b
            .host
            .records
            .iter()
            .filter(|r| r.kind == EventKind::TxDone)
            .nth(i);
        let t = rec.expect("counted above").times;
        // sop_at_mac, header_parsed and first_dma_beat carry the transmit engine's stamps.
        let stamps = [t.sop_at_mac, t.header_parsed, t.first_dma_beat]
            .map(|v| clock.ps(b.host.card_to_port(v)));
        let points = [doorbell, stamps[0], stamps[1], stamps[2], f.sop_ps];
        if points.windows(2).any(|w| w[0] > w[1]) {
            return Err(EngineError::Io(format!(
                "transmit latency, {len} B: datagram {i}: the doorbell, the card's stamps and the \
                 wire SOP are out of order (ps: {points:?})"
            )));
        }
        total.push((f.sop_ps - doorbell) as f64 / 1000.0);
        parts[0].push((stamps[0] - doorbell) as f64 / 1000.0);
        parts[1].push((stamps[2] - stamps[0]) as f64 / 1000.0);
        parts[2].push((f.sop_ps - stamps[2]) as f64 / 1000.0);
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    Ok(TxLatencyRow {
        payload_bytes: len,
        samples: n,
        doorbell_to_wire_ns_min: total.iter().copied().fold(f64::MAX, f64::min),
        doorbell_to_wire_ns_mean: mean(&total),
        doorbell_to_wire_ns_max: total.iter().copied().fold(0.0, f64::max),
        doorbell_to_fetch_ns: mean(&parts[0]),
        fetch_to_header_entry_ns: mean(&parts[1]),
        header_entry_to_wire_ns: mean(&parts[2]),
    })
}

/// `$body` with `$make` the four-port card of PCIe variant `$v` ([`card_at`] of its design).
macro_rules! on_card {
    ($v:expr, |$make:ident| $body:expr) => {
        match $v {
            PcieVariant::Gen2x8 => {
                let $make = card_at::<NicDesign>;
                $body
            }
            PcieVariant::Gen3x8 => {
                let $make = card_at::<Nic256Design>;
                $body
            }
        }
    };
}

fn card(preset: MemoryPreset, seed: u64) -> Result<CardBench, EngineError> {
    card_at(preset, seed)
}

/// The card `D` (`Nic256Design`: Gen3 x8, 256 bits) on Verilator.
fn card_at<D: CardDesign>(
    preset: MemoryPreset,
    seed: u64,
) -> Result<CardBench<RxHost, D>, EngineError> {
    CardBench::new(EngineKind::Verilator, preset, 0.0, seed)
}

fn flight_row(len: usize, count: u32) -> Result<FlightRow, EngineError> {
    let mut b = card(MemoryPreset::gen2_x8(), 11)?;
    // A gap as long as the frame keeps every datagram off the wire's inter-frame wait.
    let gap = frame_bytes(len).div_ceil(8) as u32 + 4;
    let tof = b
        .generator_loopback(len as u32, count, gap, 50_000_000)
        .map_err(EngineError::Io)?;
    // Cross-check of both stamps against the edges at which the MAC interfaces took the SOP
    // (port 1's is one network cycle after port 0's: the cable is one flip-flop).
    let clock = MemoryClock::now(b.time_ps(), b.host.port.cycle);
    let sent: Vec<i64> = b.link_tx[0]
        .frames
        .iter()
        .filter(|f| f.bytes.len() > 23 && f.bytes[12..14] == [8, 0] && f.bytes[23] == 17)
        .map(|f| f.sop_ps as i64)
        .collect();
    let fields = &b.host.totals.sender_fields;
    if sent.len() != fields.len() {
        return Err(EngineError::Io(format!(
            "time of flight: {} datagrams on port 0's wire, {} delivered",
            sent.len(),
            fields.len()
        )));
    }
    let mut tx_age = vec![];
    let mut rx_age = vec![];
    let taken_to_sop = (TX_TAKEN_TO_SOP_CYCLES * NET_CLOCK_PS) as i64;
    let arrival = |wire: i64| wire + NET_CLOCK_PS as i64;
    for (wire, (field, sop)) in sent.iter().zip(fields) {
        let tx = u32::from_le_bytes(field[..4].try_into().expect("4 bytes"));
        tx_age.push(sop_stamp_age(
            &format!("time of flight, {len} B, transmit"),
            clock,
            (wire - taken_to_sop) as u64,
            b.host.card_to_port(tx),
        )?);
        rx_age.push(sop_stamp_age(
            &format!("time of flight, {len} B, receive"),
            clock,
            arrival(*wire) as u64,
            b.host.card_to_port(*sop),
        )?);
    }
    let range = |v: &[i64]| (*v.iter().min().unwrap_or(&0), *v.iter().max().unwrap_or(&0));
    let (tx_age, rx_age) = (range(&tx_age), range(&rx_age));
    let ns = |r: (i64, i64)| (r.0 as f64 / 1000.0, r.1 as f64 / 1000.0);
    // The first datagram waited for ARP.
    let tof = &tof[1..];
    let mean = tof.iter().map(|t| *t as f64).sum::<f64>() / tof.len() as f64;
    Ok(FlightRow {
        payload_bytes: len,
        samples: tof.len(),
        tof_cycles_min: *tof.iter().min().unwrap_or(&0),
        tof_cycles_mean: mean,
        tof_cycles_max: *tof.iter().max().unwrap_or(&0),
        tof_ns_mean: mean * CORE_NS,
        tof_net_cycles_mean: mean * CORE_CLOCK_PS as f64 / NET_CLOCK_PS as f64,
        tx_stamp_age_ns: ns(tx_age),
        rx_stamp_age_ns: ns(rx_age),
    })
}

/// Runs the three measurements; `quick` runs fewer sizes and packets.
pub fn run(quick: bool, progress: &mut dyn FnMut(&str)) -> Result<CardReport, EngineError> {
    let sizes: &[usize] = if quick {
        &[64, 1472]
    } else {
        &[16, 64, 256, 1024, 1472]
    };
    let mut time_of_flight = vec![];
    for &p in sizes {
        progress(&format!("card time of flight, {p}-byte payloads"));
        time_of_flight.push(flight_row(p, if quick { 8 } else { 50 })?);
    }
    let mut latency = vec![];
    for v in PcieVariant::ALL {
        for &p in sizes {
            progress(&format!(
                "card rx latency through PCIe {}, {p}-byte payloads",
                v.describe()
            ));
            let (preset, n) = (MemoryPreset::of(v), if quick { 3 } else { 20 });
            latency.push(on_card!(v, |make| latency_row(make, preset, p, 1, n, 7))?);
        }
    }
    // Four ports' 1024-byte datagrams in the same cycle (`make demo`'s size), a round at a time;
    // then `make demo`'s traffic, the rounds streaming at 60% of line rate.
    let (mut load_latency, mut demo_latency) = (vec![], vec![]);
    for v in PcieVariant::ALL {
        progress(&format!(
            "card rx latency under load through PCIe {}, four ports, 1024-byte payloads",
            v.describe()
        ));
        let (preset, rounds) = (MemoryPreset::of(v), if quick { 3 } else { 20 });
        load_latency.push(on_card!(v, |make| load_latency_row(
            make,
            preset,
            (4, 1024),
            rounds,
            Pace::Rounds,
            13
        ))?);
        progress(&format!(
            "card rx latency with make demo's traffic through PCIe {}, four ports, 1024-byte \
             payloads at 60% of line rate",
            v.describe()
        ));
        let rounds = if quick { 20 } else { 500 };
        demo_latency.push(on_card!(v, |make| load_latency_row(
            make,
            preset,
            (4, 1024),
            rounds,
            Pace::Offered(0.6),
            17
        ))?);
    }
    // One port at 1472 bytes on Gen2 x8, then four ports at every size on both variants.
    let mut bandwidth = vec![];
    let per_port = |p: usize| {
        let wire = frame_bytes(p) as u64 + WIRE_OVERHEAD_BYTES;
        ((if quick { 40_000 } else { 150_000 }) / wire).max(20) as usize
    };
    let four_port_sizes: &[usize] = if quick { &[1472] } else { sizes };
    let mut runs = vec![(1, PcieVariant::Gen2x8, 1472)];
    for v in PcieVariant::ALL {
        runs.extend(four_port_sizes.iter().map(|&p| (4, v, p)));
    }
    for (ports, v, p) in runs {
        progress(&format!(
            "card DMA bandwidth through PCIe {}, {ports} port(s), {p}-byte payloads",
            v.describe()
        ));
        let preset = MemoryPreset::of(v);
        bandwidth.push(on_card!(v, |make| bandwidth_row(
            make,
            ports,
            preset,
            p,
            per_port(p),
            9
        ))?);
    }
    // One port, then four ports at once, on both variants; then four with port 0's link stalled.
    // (The short form keeps the 16-byte one-port row: the most datagrams in flight.)
    let mut tx = vec![];
    let window_bytes = if quick { 20_000 } else { 100_000 };
    let (one_port_sizes, four_port_sizes): (&[usize], &[usize]) = if quick {
        (&[16, 64, 1472], &[64])
    } else {
        (sizes, sizes)
    };
    let mut runs = vec![];
    for v in PcieVariant::ALL {
        runs.extend(one_port_sizes.iter().map(|&p| (v, 1, 0, p)));
        runs.extend(four_port_sizes.iter().map(|&p| (v, 4, 0, p)));
        runs.push((v, 4, 1, 1024));
    }
    for (v, ports, stalled, p) in runs {
        progress(&format!(
            "card transmit from host memory through PCIe {}, {ports} port(s) ({stalled} \
             stalled), {p}-byte payloads",
            v.describe()
        ));
        let preset = MemoryPreset::of(v);
        tx.push(on_card!(v, |make| tx_row(
            make,
            preset,
            ports,
            stalled,
            p,
            window_bytes
        ))?);
    }
    let mut tx_latency = vec![];
    for &p in sizes {
        progress(&format!("card transmit latency, {p}-byte payloads"));
        tx_latency.push(tx_latency_row(p, if quick { 4 } else { 20 })?);
    }
    Ok(CardReport {
        engine: "verilator",
        time_of_flight,
        latency,
        load_latency,
        demo_latency,
        bandwidth,
        tx,
        tx_latency,
    })
}

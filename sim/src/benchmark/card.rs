//! Benchmarks of the whole card behind its PCIe boundary (`testbench/card.rs`, Verilog on
//! Verilator): the paper's loopback time of flight, receive latency into host memory through the
//! TLP layer, and DMA write bandwidth through the TLP layer against the PCIe Gen2 x8 theoretical
//! payload bandwidth.
//!
//! - Time of flight: port 0's packet generator sends to port 1 over a cable with no MAC or PHY
//!   (one flip-flop); from the request taken by UDP TX (the payload's transmit time) to the SOP
//!   at port 1's MAC, from the card's own timestamps. The paper's 64 cycles at 156.25 MHz include
//!   both MACs and PHYs; ours exclude them.
//! - Latency: as the receive path's benchmark, with the event record's write crossing the TLP
//!   layer (memory-write TLP taken by the root complex).
//! - Bandwidth: four ports at line rate into four CLOPs; the link charges every TLP its payload,
//!   header and framing; delivered payload bytes per second over the Gen2 x8 payload bandwidth of
//!   256-byte writes with 4-dword headers (the CLOPs sit above 4 GiB).
//! - Transmit: datagrams posted to port 0's transmit ring in host memory, read by DMA through the
//!   TLP layer (Gen2 x8 memory latency), goodput on the wire against line rate.

use serde::Serialize;

use crate::benchmark::rx::{bandwidth_row, frame_bytes, latency_row, BandwidthRow, LatencyRow};
use crate::check::rx_host::RxCard;
use crate::engine::clocks::{CORE_CLOCK_PS, NET_CLOCK_PS};
use crate::engine::{EngineError, EngineKind};
use crate::testbench::card::CardBench;
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
}

#[derive(Clone, Debug, Serialize)]
pub struct TxRow {
    pub payload_bytes: usize,
    pub datagrams: usize,
    /// Payload goodput on the wire between the first and the last frame's start.
    pub goodput_gbps: f64,
    /// Over 10GbE line rate's goodput at this payload size.
    pub line_rate_fraction: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct CardReport {
    pub engine: &'static str,
    pub time_of_flight: Vec<FlightRow>,
    pub latency: Vec<LatencyRow>,
    pub bandwidth: Vec<BandwidthRow>,
    pub tx: Vec<TxRow>,
}

/// Transmit throughput from host memory: `n` datagrams of `len` bytes posted to port 0's ring
/// (64 descriptors, kept full), the next hop a static ARP entry; Gen2 x8 memory latency.
fn tx_row(len: usize, n: usize) -> Result<TxRow, EngineError> {
    use nanet_contract::offload::{mac_to_regs, Reg, ARP_COMMAND_ADD_STATIC};
    use nanet_contract::tx::TxDescriptor;
    let mut b = card(MemoryPreset::gen2_x8(), 12)?;
    b.event_ring(8);
    let peer = crate::testbench::rx_path::PEER;
    let (hi, lo) = mac_to_regs(peer.mac);
    b.port_write(0, Reg::ArpStaticIp.word(), peer.ip_u32());
    b.port_write(0, Reg::ArpStaticMacHi.word(), hi);
    b.port_write(0, Reg::ArpStaticMacLo.word(), lo);
    b.port_write(0, Reg::ArpCommand.word(), ARP_COMMAND_ADD_STATIC);
    let mut ring = b.tx_ring(6);
    let payload: Vec<u8> = (0..len).map(|i| i as u8).collect();
    let desc = TxDescriptor {
        port: 0,
        dst_ip: peer.ip,
        src_port: 4000,
        dst_port: 9,
        ..Default::default()
    };
    let mut posted = 0;
    let mut head = 0u16;
    let mut cycles = 0u64;
    while b.link_tx[0].frames.len() < n {
        while posted < n && ring.tail.wrapping_sub(head) < 64 {
            b.tx_send(&mut ring, desc, &payload);
            posted += 1;
        }
        for _ in 0..200 {
            b.step();
        }
        cycles += 200;
        head = b.tx_head();
        if cycles > 20_000_000 {
            return Err(EngineError::Io(format!(
                "transmit: {} of {n} frames after {cycles} cycles",
                b.link_tx[0].frames.len()
            )));
        }
    }
    let f = &b.link_tx[0].frames;
    let span = (f[n - 1].sop_cycle - f[0].sop_cycle) as f64 * NET_CLOCK_PS as f64 * 1e-12;
    let goodput = (n - 1) as f64 * len as f64 * 8.0 / span / 1e9;
    let wire = (frame_bytes(len) as u64 + WIRE_OVERHEAD_BYTES) as f64;
    Ok(TxRow {
        payload_bytes: len,
        datagrams: n,
        goodput_gbps: goodput,
        line_rate_fraction: goodput / (10.0 * len as f64 / wire),
    })
}

fn card(preset: MemoryPreset, seed: u64) -> Result<CardBench, EngineError> {
    CardBench::new(EngineKind::Verilator, preset, 0.0, seed)
}

fn flight_row(len: usize, count: u32) -> Result<FlightRow, EngineError> {
    let mut b = card(MemoryPreset::gen2_x8(), 11)?;
    // A gap as long as the frame keeps every datagram off the wire's inter-frame wait.
    let gap = frame_bytes(len).div_ceil(8) as u32 + 4;
    let tof = b
        .generator_loopback(len as u32, count, gap, 50_000_000)
        .map_err(EngineError::Io)?;
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
    })
}

/// Runs the three measurements; `quick` runs fewer sizes and packets.
pub fn run(quick: bool, mut progress: impl FnMut(&str)) -> Result<CardReport, EngineError> {
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
    for &p in sizes {
        progress(&format!("card rx latency through PCIe, {p}-byte payloads"));
        latency.push(latency_row(card, p, 1, if quick { 3 } else { 20 }, 7)?);
    }
    let mut bandwidth = vec![];
    for ports in [1, 4] {
        let p = 1472;
        progress(&format!(
            "card DMA bandwidth through PCIe, {ports} port(s), {p}-byte payloads"
        ));
        let wire = frame_bytes(p) as u64 + WIRE_OVERHEAD_BYTES;
        let per_port = ((if quick { 40_000 } else { 150_000 }) / wire).max(20) as usize;
        bandwidth.push(bandwidth_row(
            card,
            ports,
            MemoryPreset::gen2_x8(),
            p,
            per_port,
            9,
        )?);
    }
    let mut tx = vec![];
    for &p in sizes {
        progress(&format!(
            "card transmit throughput from host memory, {p}-byte payloads"
        ));
        tx.push(tx_row(p, if quick { 30 } else { 200 })?);
    }
    Ok(CardReport {
        engine: "verilator",
        time_of_flight,
        latency,
        bandwidth,
        tx,
    })
}

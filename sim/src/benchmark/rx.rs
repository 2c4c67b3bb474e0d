//! Receive-path benchmarks, in the style of the NaNet-10 paper's figures 7 (latency) and 8
//! (bandwidth), on the Verilog of the whole four-port receive path (Verilator): real frames at
//! line rate into the MACs, the host-memory model behind the DMA port, and the host model checking
//! every buffer it is given.
//!
//! - Latency: from a frame's SOP at the MAC to its last DMA beat and to its buffer's event record
//!   written, from the card's own stage timestamps; with one packet per buffer and with 8 KiB
//!   buffers (the event follows the packet that fills the buffer).
//! - Bandwidth: payload goodput with every link sending back to back at line rate, one port and
//!   four ports, for the PCIe Gen2 x8 and Gen3 x8 memory presets; every datagram not delivered is
//!   counted by a drop counter of the card.

use std::path::Path;

use nanet_contract::rx::{port, PageSize, RxCounter};
use plotters::prelude::*;
use rand::rngs::StdRng;
use rand::SeedableRng;
use serde::Serialize;

use crate::check::rx_host::{payload, ClopSpec, ReleasePolicy};
use crate::engine::clocks::{CORE_CLOCK_PS, NET_CLOCK_PS};
use crate::engine::{EngineError, EngineKind};
use crate::testbench::rx_path::{stream_udp_port, FourPortBench, RxPathBench};
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
    pub payload_bytes: usize,
    pub buffer_bytes: u32,
    pub packets_per_buffer: u16,
    pub samples: usize,
    /// SOP at the MAC to the last payload byte's DMA beat (mean over the samples).
    pub last_write_latency_ns: f64,
    /// SOP at the MAC to the buffer's event record written.
    pub event_latency_ns: f64,
    /// The frame's own time at the MAC client interface (8 bytes per 6.4 ns cycle).
    pub frame_ns: f64,
    /// `last_write_latency_ns - frame_ns`: what the pipeline adds.
    pub overhead_ns: f64,
    pub latency_cycles_min: u64,
    pub latency_cycles_max: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct BandwidthRow {
    pub ports: usize,
    pub memory: &'static str,
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

/// Latency of one payload size: `per_buffer` packets fill each buffer exactly; `buffers`
/// buffers, one after the other.
pub fn latency_row<B: FourPortBench>(
    make: impl MakeBench<B>,
    payload_len: usize,
    per_buffer: usize,
    buffers: usize,
    seed: u64,
) -> Result<LatencyRow, EngineError> {
    let mut preset = MemoryPreset::gen2_x8();
    preset.latency_cycles = 0;
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
    let l = &b.host().totals.latencies;
    assert_eq!(l.len(), buffers);
    let n = l.len() as f64;
    let last = l.iter().map(|x| x.to_last_write as f64).sum::<f64>() / n * CORE_NS;
    let event = l.iter().map(|x| x.to_event_written as f64).sum::<f64>() / n * CORE_NS;
    let frame_ns = frame_bytes(payload_len).div_ceil(8) as f64 * NET_NS;
    Ok(LatencyRow {
        payload_bytes: payload_len,
        buffer_bytes: buf,
        packets_per_buffer: per_buffer as u16,
        samples: l.len(),
        last_write_latency_ns: last,
        event_latency_ns: event,
        frame_ns,
        overhead_ns: last - frame_ns,
        latency_cycles_min: l.iter().map(|x| x.to_last_write).min().unwrap_or(0),
        latency_cycles_max: l.iter().map(|x| x.to_last_write).max().unwrap_or(0),
    })
}

/// Goodput with `ports` links sending `per_port` datagrams back to back.
pub fn bandwidth_row<B: FourPortBench>(
    make: impl MakeBench<B>,
    ports: usize,
    preset: MemoryPreset,
    payload_len: usize,
    per_port: usize,
    seed: u64,
) -> Result<BandwidthRow, EngineError> {
    let mut b = make(preset, seed)?;
    b.host().exact = false;
    b.host().release = ReleasePolicy::After(0);
    b.event_ring(12);
    // Buffers of whole packets, 8 KiB or more.
    let per_buffer = (8192 / payload_len).max(1);
    for p in 0..ports as u8 {
        b.map_stream(p, 0);
        b.register(clop(p, (payload_len * per_buffer) as u32, 64), &[]);
    }
    let mut rng = StdRng::seed_from_u64(seed);
    let body = payload(&mut rng, payload_len);
    for _ in 0..per_port {
        for p in 0..ports as u8 {
            b.send(p, stream_udp_port(0), &body, false);
        }
    }
    // The rate at which payloads land in host memory, over every datagram but the first (whose
    // way there is the receive latency's subject, not the rate's): from the write by which one
    // datagram's worth of payload has landed to the last (the FIFOs may still be draining when
    // the links fall silent). Event records are left out, so both ends are payload writes.
    let mut writes = vec![]; // (cycle, payload bytes so far)
    let mut payload_bytes = 0;
    let mut seen = (b.host().port.bytes_accepted, b.host().port.cycle);
    while !b.input_empty() || b.host().port.cycle - seen.1 < 2000 {
        b.step();
        let h = b.host();
        if h.port.bytes_accepted != seen.0 {
            if !h.in_event_ring(h.port.last_write_addr) {
                payload_bytes += h.port.bytes_accepted - seen.0;
                writes.push((h.port.cycle, payload_bytes));
            }
            seen = (h.port.bytes_accepted, h.port.cycle);
        }
    }
    let sent = (ports * per_port) as u64;
    let mut fifo_full = 0;
    for p in 0..ports as u8 {
        fifo_full += b.port_read(p, port::DROP_FIFO_FULL) as u64;
    }
    let no_buffer = b.counter(RxCounter::DropNoFreeBuffer) as u64;
    let delivered = b.counter(RxCounter::Committed) as u64;
    assert_eq!(
        delivered + fifo_full + no_buffer,
        sent,
        "every datagram is delivered or counted as dropped"
    );
    let per_datagram = payload_bytes / delivered.max(1);
    let first_done = writes
        .iter()
        .find(|w| w.1 >= per_datagram)
        .map_or(0, |w| w.0);
    let core_cycles = writes.last().map_or(0, |w| w.0) - first_done;
    let seconds = core_cycles as f64 * CORE_NS * 1e-9;
    let goodput = delivered.saturating_sub(1) as f64 * payload_len as f64 * 8.0 / seconds / 1e9;
    let wire = (frame_bytes(payload_len) as u64 + WIRE_OVERHEAD_BYTES) as f64;
    let offered = ports as f64 * 10.0 * payload_len as f64 / wire;
    Ok(BandwidthRow {
        ports,
        memory: preset.name,
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
pub fn run(quick: bool, mut progress: impl FnMut(&str)) -> Result<RxReport, EngineError> {
    let sizes: &[usize] = if quick { &[64, 1472] } else { &PAYLOADS };
    let mut latency = vec![];
    for &p in sizes {
        progress(&format!("rx latency, {p}-byte payloads, one per buffer"));
        latency.push(latency_row(rx_path, p, 1, if quick { 3 } else { 20 }, 7)?);
    }
    for &p in sizes.iter().filter(|p| 8192 % **p == 0) {
        progress(&format!("rx latency, {p}-byte payloads, 8 KiB buffers"));
        latency.push(latency_row(
            rx_path,
            p,
            8192 / p,
            if quick { 1 } else { 4 },
            8,
        )?);
    }
    let mut bandwidth = vec![];
    for preset in [MemoryPreset::gen2_x8(), MemoryPreset::gen3_x8()] {
        for ports in [1, 4] {
            for &p in sizes {
                progress(&format!(
                    "rx bandwidth, {ports} port(s), {}, {p}-byte payloads",
                    preset.name
                ));
                // About 150 KB of wire time per port (40 KB when quick).
                let wire = frame_bytes(p) as u64 + WIRE_OVERHEAD_BYTES;
                let per_port = ((if quick { 40_000 } else { 150_000 }) / wire).max(20) as usize;
                bandwidth.push(bandwidth_row(rx_path, ports, preset, p, per_port, 9)?);
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
    let line = |label: &str, color, single: bool, value: fn(&LatencyRow) -> f64| Series {
        label: label.into(),
        color,
        points: rows
            .iter()
            .filter(|r| (r.packets_per_buffer == 1) == single)
            .map(|r| (r.payload_bytes as f64, value(r)))
            .collect(),
        marks: label != "frame time at the MAC",
    };
    let series = [
        line(
            "last payload byte written, 1 packet/buffer",
            BLUE,
            true,
            |r| r.last_write_latency_ns,
        ),
        line("event record written, 1 packet/buffer", RED, true, |r| {
            r.event_latency_ns
        }),
        line("event record written, 8 KiB buffers", MAGENTA, false, |r| {
            r.event_latency_ns
        }),
        line("frame time at the MAC", BLACK, true, |r| r.frame_ns),
    ];
    plot_vs_payload(
        path,
        "nanet RX latency: SOP at the MAC to host memory",
        "latency (ns)",
        &series,
    )
}

/// Figure 8 style: goodput against payload size, with the line rate for reference.
pub fn plot_bandwidth(rows: &[BandwidthRow], path: &Path) -> Result<(), EngineError> {
    let colors = [BLUE, RED, GREEN, MAGENTA];
    let mut series = vec![];
    for memory in ["gen2x8", "gen3x8"] {
        for ports in [1, 4] {
            series.push(Series {
                label: format!("{ports} port(s), {memory}"),
                color: colors[series.len() % colors.len()],
                points: rows
                    .iter()
                    .filter(|r| r.memory == memory && r.ports == ports)
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

//! Replays a capture into one simulated port: every frame of a pcap goes into the offload core's
//! receive side at line rate (or at the capture's own pace), everything the core transmits is
//! recorded, and the counters are read at the end.

use std::path::Path;

use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;

use crate::engine::clocks::NET_CLOCK_PS;
use crate::testbench::core::{CoreBench, RxDatagram};
use crate::traffic::packets::Endpoint;
use crate::traffic::pcap::{pad_runts, read_pcap, write_pcap, CapturedFrame, PcapError};

/// How frames are paced into the port.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Pace {
    /// Back to back at 10 Gb/s (minimum inter-frame gap).
    LineRate,
    /// At the capture's time stamps (never faster than line rate).
    Capture,
}

pub struct ReplayConfig {
    pub port: Endpoint,
    pub netmask: [u8; 4],
    pub gateway: [u8; 4],
    pub pace: Pace,
    /// Frames as captured, runts included; otherwise frames under 60 bytes are padded as the
    /// sending MAC pads them ([`pad_runts`]).
    pub raw: bool,
    /// Cycles to keep running after the last frame, for replies to leave.
    pub drain_cycles: u64,
    pub progress: bool,
    /// Trace every signal of the core into this VCD file (large: about 1 MB per 1000 cycles).
    pub vcd: Option<std::path::PathBuf>,
    pub engine: crate::engine::EngineKind,
}

#[derive(Serialize)]
pub struct DeliveredDatagram {
    pub src_ip: String,
    pub src_port: u16,
    pub dst_port: u16,
    pub len: u16,
    pub first_beat_cycle: u64,
}

#[derive(Serialize)]
pub struct ReplayReport {
    pub frames_in: usize,
    /// Frames shorter than 60 bytes, padded before they went in (0 with `raw`).
    pub padded_frames: usize,
    pub frames_out: usize,
    pub cycles: u64,
    pub simulated_ns: u64,
    pub counters: std::collections::BTreeMap<&'static str, u32>,
    pub delivered: Vec<DeliveredDatagram>,
    #[serde(skip)]
    pub transmitted: Vec<CapturedFrame>,
}

fn ip_string(ip: u32) -> String {
    let b = ip.to_be_bytes();
    format!("{}.{}.{}.{}", b[0], b[1], b[2], b[3])
}

#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error(transparent)]
    Pcap(#[from] PcapError),
    #[error(transparent)]
    Engine(#[from] crate::engine::EngineError),
}

/// Runs the frames through a fresh core (padded first unless `cfg.raw`).
pub fn replay_frames(
    frames: &[CapturedFrame],
    cfg: &ReplayConfig,
) -> Result<ReplayReport, ReplayError> {
    let mut frames = frames.to_vec();
    let padded_frames = if cfg.raw { 0 } else { pad_runts(&mut frames) };
    let frames = &frames[..];
    let mut b = CoreBench::try_traced(cfg.engine, 0.0, 1, cfg.vcd.as_deref())?;
    b.configure(&cfg.port, cfg.netmask, cfg.gateway);
    let start = b.cycle_count();
    let t0 = frames.first().map(|f| f.time_ns).unwrap_or(0);
    let bar = if cfg.progress && frames.len() > 1000 {
        let bar = ProgressBar::new(frames.len() as u64);
        bar.set_style(
            ProgressStyle::with_template("{bar:40} {pos}/{len} frames ({per_sec}, eta {eta})")
                .expect("valid template"),
        );
        bar
    } else {
        ProgressBar::hidden()
    };
    let mut next = 0;
    let mut delivered: Vec<RxDatagram> = vec![];
    while next < frames.len() || !b.link_rx.is_idle() {
        // Keep a short queue in the link model; with capture pacing, release a frame only once
        // simulated time has reached its time stamp.
        while next < frames.len() && b.link_rx.backlog() < 2 {
            let due_cycle = (frames[next].time_ns - t0) * 1000 / NET_CLOCK_PS;
            if cfg.pace == Pace::Capture && b.cycle_count() - start < due_cycle {
                break;
            }
            b.link_rx.push(frames[next].bytes.clone(), false);
            next += 1;
            bar.set_position(next as u64);
        }
        b.cycle();
        delivered.extend(b.rx.drain(..));
    }
    b.run(cfg.drain_cycles);
    delivered.extend(b.rx.drain(..));
    bar.finish_and_clear();
    let cycles = b.cycle_count() - start;
    let transmitted: Vec<CapturedFrame> = b
        .link_tx
        .frames
        .iter()
        .map(|f| CapturedFrame {
            time_ns: t0 + (f.sop_cycle - start) * NET_CLOCK_PS / 1000,
            bytes: f.bytes.clone(),
        })
        .collect();
    Ok(ReplayReport {
        frames_in: frames.len(),
        padded_frames,
        frames_out: transmitted.len(),
        cycles,
        simulated_ns: cycles * NET_CLOCK_PS / 1000,
        counters: b.counters(),
        delivered: delivered
            .iter()
            .filter(|d| !d.error)
            .map(|d| DeliveredDatagram {
                src_ip: ip_string(d.src_ip),
                src_port: d.src_port,
                dst_port: d.dst_port,
                len: d.len,
                first_beat_cycle: d.first_beat_cycle - start,
            })
            .collect(),
        transmitted,
    })
}

/// Reads `input`, replays it, writes what the core transmitted to `output` (if given).
pub fn replay_pcap(
    input: &Path,
    output: Option<&Path>,
    cfg: &ReplayConfig,
) -> Result<ReplayReport, ReplayError> {
    let frames = read_pcap(input)?;
    let report = replay_frames(&frames, cfg)?;
    if let Some(out) = output {
        write_pcap(out, &report.transmitted)?;
    }
    Ok(report)
}

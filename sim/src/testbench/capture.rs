//! A capture through the whole card: every frame of a pcap file into the four ports of the card
//! behind PCIe (offload core, Multi-Stream, packer, clock crossing, arbiter, CLOP engine, DMA
//! writer, TLPs, host memory), with a CLOP for each UDP destination port the reference model
//! ([`classify_rx`]) accepts, up to the card's 64 streams (16 per port, the most frequent ports
//! first). Each port's datagrams go to the card port its CLOP is on; every other frame to the
//! ports in turn. What the run checks:
//! - every datagram the reference accepts for a mapped UDP port lands once, byte-exact, in
//!   order, with its source address and port (header layout) or in sequence (raw layout: half
//!   the CLOPs), through [`RxHost`]'s scoreboard;
//! - every other frame is counted under the reason the reference gives, port by port, and the
//!   accepted datagrams for unmapped UDP ports under `drop_no_stream`; ARP and echo requests
//!   under their counters; no port FIFO overflows.
//!
//! `nanet-sim capture` runs it on a file; the system tests on `../shared/captures/real.pcap`.

use std::collections::BTreeMap;

use nanet_contract::offload::{Counter, Reg};
use nanet_contract::rx::{port, PageSize, RxCounter, MAX_PORTS, STREAMS_PER_PORT};
use nanet_contract::DropReason;

use crate::check::reference::{classify_rx, RxOutcome};
use crate::check::rx_host::{ClopSpec, RxCard, RxPacket};
use crate::engine::{EngineError, EngineKind};
use crate::testbench::card::CardBench;
use crate::testbench::rx_path::FourPortBench;
use crate::traffic::packets::Endpoint;
use crate::traffic::pcap::{pad_runts, CapturedFrame};
use crate::world::host_mem::MemoryPreset;

/// The card's address on every port, and its subnet.
#[derive(Clone, Copy, Debug)]
pub struct CaptureCard {
    pub us: Endpoint,
    pub netmask: u32,
}

/// What a capture run saw and what disagreed with the reference model.
#[derive(Clone, Debug, Default)]
pub struct CaptureReport {
    pub frames: usize,
    /// Frames under 60 bytes, padded as the sending MAC pads them.
    pub padded: usize,
    /// Datagrams delivered into each CLOP, by (card port, UDP destination port).
    pub delivered: BTreeMap<(u8, u16), u64>,
    /// Frames dropped, by counter name (summed over the ports), as the card counted them.
    pub drops: BTreeMap<String, u64>,
    /// ARP requests and replies for the card, echo requests answered or counted busy.
    pub arp: u64,
    pub echo: u64,
    /// Every disagreement with the reference model (empty: the run passed).
    pub mismatches: Vec<String>,
}

/// The counts, a line each: the summary, the datagrams per CLOP, the drops by reason.
impl std::fmt::Display for CaptureReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "{} frames ({} padded to 60 bytes), {} datagrams delivered into {} CLOPs, {} ARP packets for the card, {} echo requests",
            self.frames,
            self.padded,
            self.delivered_total(),
            self.delivered.len(),
            self.arp,
            self.echo
        )?;
        for ((p, udp), n) in &self.delivered {
            writeln!(f, "  port {p} udp {udp}: {n} datagrams")?;
        }
        writeln!(f, "drops by reason (all ports):")?;
        for (name, n) in &self.drops {
            writeln!(f, "  {name} {n}")?;
        }
        Ok(())
    }
}

impl CaptureReport {
    pub fn delivered_total(&self) -> u64 {
        self.delivered.values().sum()
    }
}

/// Where each mapped UDP port's CLOP is: (card port, Multi-Stream entry), by UDP port.
fn assign_streams(outcomes: &[RxOutcome]) -> BTreeMap<u16, (u8, u8)> {
    let mut freq: BTreeMap<u16, u64> = BTreeMap::new();
    for o in outcomes {
        if let RxOutcome::Udp { dst_port, .. } = o {
            *freq.entry(*dst_port).or_default() += 1;
        }
    }
    let mut ports: Vec<(u16, u64)> = freq.into_iter().collect();
    ports.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    ports
        .into_iter()
        .take(MAX_PORTS * STREAMS_PER_PORT)
        .enumerate()
        .map(|(i, (udp, _))| (udp, ((i % MAX_PORTS) as u8, (i / MAX_PORTS) as u8)))
        .collect()
}

/// Runs `frames` (at most `limit` of them) through a fresh card on `engine`; frames go out on
/// each link with as many idle bytes after them as they are long (half of line rate).
pub fn capture_through_card(
    engine: EngineKind,
    frames: &[CapturedFrame],
    card: CaptureCard,
    limit: Option<usize>,
) -> Result<CaptureReport, EngineError> {
    let mut frames = frames[..limit.unwrap_or(frames.len()).min(frames.len())].to_vec();
    let padded = pad_runts(&mut frames);
    let (mac, ip) = (card.us.mac, card.us.ip_u32());
    let outcomes: Vec<RxOutcome> = frames
        .iter()
        .map(|f| classify_rx(&f.bytes, false, mac, ip, card.netmask))
        .collect();
    let streams = assign_streams(&outcomes);

    let mut b: CardBench = CardBench::new(engine, MemoryPreset::gen2_x8(), 0.1, 7)?;
    b.event_ring(10);
    let (mac_hi, mac_lo) = nanet_contract::offload::mac_to_regs(mac);
    for p in 0..MAX_PORTS as u8 {
        b.port_write(p, Reg::MacHi.word(), mac_hi);
        b.port_write(p, Reg::MacLo.word(), mac_lo);
        b.port_write(p, Reg::Ip.word(), ip);
        b.port_write(p, Reg::Netmask.word(), card.netmask);
    }
    for (&udp, &(p, entry)) in &streams {
        let v = port::STREAM_VALID | (entry as u32) << 16 | udp as u32;
        b.port_write(p, port::STREAM_TABLE, v);
        b.register(
            ClopSpec {
                port: p,
                stream: entry,
                // One 64 KiB TLB page each: 64 CLOPs take 64 of the 128 slots.
                buf_size: 8192,
                buf_count: 8,
                page: PageSize::Page64K,
                header: entry % 2 == 0,
                skip_held: false,
                timeout: 2000,
            },
            &[],
        );
    }

    // What each card port must count: (counter word, frames), and the datagrams it must deliver.
    let mut want: Vec<BTreeMap<u32, u64>> = vec![BTreeMap::new(); MAX_PORTS];
    let mut report = CaptureReport {
        frames: frames.len(),
        padded,
        ..Default::default()
    };
    let mut turn = 0usize;
    for (f, o) in frames.iter().zip(&outcomes) {
        let mapped = match o {
            RxOutcome::Udp { dst_port, .. } => streams.get(dst_port).copied(),
            _ => None,
        };
        let p = match mapped {
            Some((p, _)) => p,
            None => {
                turn += 1;
                (turn % MAX_PORTS) as u8
            }
        };
        let w = &mut want[p as usize];
        match o {
            RxOutcome::Udp {
                src_ip,
                src_port,
                payload,
                ..
            } => match mapped {
                Some((_, entry)) => {
                    b.host().expect(&RxPacket {
                        port: p,
                        stream: entry,
                        payload: payload.clone(),
                        src_ip: src_ip.to_be_bytes(),
                        src_port: *src_port,
                        bad: false,
                        unchecked: 0..0,
                    });
                }
                None => *w.entry(port::DROP_NO_STREAM).or_default() += 1,
            },
            RxOutcome::Arp { request, .. } => {
                let c = if *request {
                    Counter::ArpRequestsIn
                } else {
                    Counter::ArpRepliesIn
                };
                *w.entry(c.word()).or_default() += 1;
            }
            // Answered or counted busy: checked as a sum below.
            RxOutcome::IcmpEcho => *w.entry(Counter::IcmpEchoReplies.word()).or_default() += 1,
            RxOutcome::Drop(r) => *w.entry(r.counter().word()).or_default() += 1,
        }
        let gap = f.bytes.len() as u64;
        b.links()[p as usize].push_with_gap(f.bytes.clone(), false, gap);
    }
    b.drain(5_000, 50_000_000);

    // What landed, CLOP by CLOP.
    b.host().check_held();
    for (&udp, &(p, entry)) in &streams {
        let left = b.host().outstanding(p * 16 + entry);
        if left != 0 {
            report
                .mismatches
                .push(format!("port {p} udp {udp}: {left} datagrams missing"));
        }
    }
    let delivered = b.host().totals.delivered;
    let committed = b.counter(RxCounter::Committed) as u64;
    if committed != delivered {
        report.mismatches.push(format!(
            "the card committed {committed} datagrams, the host found {delivered}"
        ));
    }
    for (&udp, &(p, entry)) in &streams {
        let n = b.host().delivered_of(p * 16 + entry);
        if n > 0 {
            report.delivered.insert((p, udp), n);
        }
    }

    // What each port counted.
    let mut words: Vec<(u32, String)> = DropReason::ALL
        .iter()
        .map(|r| (r.counter().word(), r.name().to_string()))
        .collect();
    words.push((port::DROP_NO_STREAM, "drop_no_stream".into()));
    words.push((port::DROP_FIFO_FULL, "drop_fifo_full".into()));
    for p in 0..MAX_PORTS as u8 {
        let w = &want[p as usize];
        for (word, name) in &words {
            let got = b.port_read(p, *word) as u64;
            let expected = w.get(word).copied().unwrap_or(0)
                + if *word == Counter::DropIcmpBusy.word() {
                    // Echo requests not answered are counted busy.
                    w.get(&Counter::IcmpEchoReplies.word())
                        .copied()
                        .unwrap_or(0)
                        .saturating_sub(b.port_read(p, Counter::IcmpEchoReplies.word()) as u64)
                } else {
                    0
                };
            if got != expected {
                report.mismatches.push(format!(
                    "port {p}: {name} counted {got}, the reference says {expected}"
                ));
            }
            if got > 0 {
                *report.drops.entry(name.clone()).or_default() += got;
            }
        }
        for c in [Counter::ArpRequestsIn, Counter::ArpRepliesIn] {
            let got = b.port_read(p, c.word()) as u64;
            let expected = w.get(&c.word()).copied().unwrap_or(0);
            if got != expected {
                report.mismatches.push(format!(
                    "port {p}: {} counted {got}, the reference says {expected}",
                    c.name()
                ));
            }
            report.arp += got;
        }
        report.echo += w
            .get(&Counter::IcmpEchoReplies.word())
            .copied()
            .unwrap_or(0);
    }
    Ok(report)
}

//! The simulated card, in-process: the whole card's gateware (`nanet_hdl::card::nic`: one to four ports,
//! offload cores, Multi-Stream, CLOP engine, TLB, DMA, event queue, PCIe TLP layer, BAR0 register
//! file) cycle by cycle on Verilator or the rust-hdl model, in a thread of its own that runs the
//! clocks continuously, as a card would, behind the root complex model of `nanet_sim`.
//!
//! The library reaches it exactly as it reaches a real card: BAR0 reads and writes (memory-read
//! and memory-write TLPs that the card's own BAR0 target and register file decode), DMA into the
//! application's own memory at the bus addresses the library mapped (memory-write TLPs; a write to
//! an unmapped address is an IOMMU fault: refused and recorded in [`SimStats::faults`]), and the
//! card's MSI on an eventfd, behind the writes sent before it.
//!
//! Beyond the [`Backend`], [`SimBackend`] is the far end of the card's links (what a real card
//! has instead of a programming interface): tests and demos put frames on the wire with it and
//! read what the ports transmit.

use std::collections::VecDeque;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::mpsc::{channel, Receiver, Sender, TryRecvError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use nanet_contract::bar0;
use nanet_contract::pcie::PcieVariant;
use nanet_contract::rx::RxReg;
use nanet_sim::engine::EngineKind;
use nanet_sim::testbench::card::{
    CardBench, CardDesign, Nic1Design, Nic1p256Design, Nic256Design, Nic2Design, Nic3Design,
    NicDesign, GEN3_DESIGN_PORTS,
};
use nanet_sim::testbench::rx_path::CardHost;
use nanet_sim::traffic::packets::udp_frame;
pub use nanet_sim::traffic::packets::Endpoint;
use nanet_sim::world::host_mem::{MemoryPort, MemoryPreset};
use nanet_sim::world::link::WIRE_OVERHEAD_BYTES;
use nanet_sim::world::linux_peer::{LinuxPeer, LinuxPeerConfig};
use nanet_sim::world::tlp::BeatData;

use crate::backend::{Backend, CardAccess, DmaMap};
use crate::error::{Error, Result};

/// What the far end of the links sends: `traffic=PORT:UDP_PORT:BYTES[@GBPS][xCOUNT]` (several
/// joined with `+`), `pcap=FILE@PORT[:raw]`. It starts when the application registers its first
/// CLOP (so an unchanged program receives it), or, after [`SimBackend::hold_option_traffic`], when
/// the application calls [`SimBackend::start_option_traffic`].
#[derive(Clone, Debug, PartialEq)]
pub enum Traffic {
    /// Datagrams of `bytes` payload to UDP port `udp_port` of port `port`, at `gbps` of the
    /// link (10: line rate), `count` of them (None: endless), from [`SIM_PEER`].
    Udp {
        port: u8,
        udp_port: u16,
        bytes: usize,
        gbps: f64,
        count: Option<u64>,
    },
    /// The frames of an Ethernet pcap file, at line rate, on one port; frames under 60 bytes
    /// padded as the sending MAC pads them, unless `raw` (as captured, runts included).
    Pcap {
        path: std::path::PathBuf,
        port: u8,
        raw: bool,
    },
}

impl Traffic {
    /// `PORT:UDP_PORT:BYTES[@GBPS][xCOUNT]`.
    pub fn parse_udp(spec: &str) -> std::result::Result<Self, String> {
        let (spec, count) = match spec.split_once('x') {
            Some((s, c)) => (s, Some(c.parse().map_err(|_| format!("count {c:?}"))?)),
            None => (spec, None),
        };
        let (spec, gbps) = match spec.split_once('@') {
            Some((s, g)) => (s, g.parse().map_err(|_| format!("rate {g:?}"))?),
            None => (spec, 10.0),
        };
        let f: Vec<&str> = spec.split(':').collect();
        let [port, udp, bytes] = f[..] else {
            return Err("expected PORT:UDP_PORT:BYTES[@GBPS][xCOUNT]".into());
        };
        let port: u8 = port.parse().map_err(|_| format!("port {port:?}"))?;
        let bytes: usize = bytes.parse().map_err(|_| format!("bytes {bytes:?}"))?;
        if port as usize >= nanet_contract::rx::MAX_PORTS || !(8..=1472).contains(&bytes) {
            return Err("ports 0..4, payloads of 8 to 1472 bytes".into());
        }
        if !(gbps > 0.0 && gbps <= 10.0) {
            return Err(format!("rate {gbps}: above 0, at most 10 Gb/s"));
        }
        Ok(Traffic::Udp {
            port,
            udp_port: udp.parse().map_err(|_| format!("UDP port {udp:?}"))?,
            bytes,
            gbps,
            count,
        })
    }
}

/// How the simulated card is built: `sim:engine=verilator,memory=gen2x8,stall=0,seed=1`, with
/// optional [`Traffic`] (`traffic=...`, `pcap=...`).
#[derive(Clone, Debug)]
pub struct SimOptions {
    /// `verilator` (the generated Verilog; fast) or `model` (rust-hdl's own model; slow).
    pub engine: EngineKind,
    /// The card's PCIe variant (`pcie=gen2`, `gen3`): the gateware `make verilog PCIE=...`
    /// generates, at that variant's datapath width (Gen3 x8: 256 bits, with 1 or 4 ports).
    pub pcie: PcieVariant,
    /// The PCIe link in front of host memory: `gen2x8`, `gen3x8` or `ideal` ([`Self::parse`]'s
    /// default: the card's own variant's link).
    pub memory: MemoryPreset,
    /// Probability that host memory refuses a write beat in a cycle (backpressure).
    pub stall: f64,
    /// The root complex lets the 8-byte words of each write land apart, the odd ones this many
    /// core cycles late (`tear=CYCLES`; see `nanet_sim::world::host_mem::MemoryPort::tear`).
    pub tear: Option<u64>,
    pub seed: u64,
    pub traffic: Vec<Traffic>,
    /// Pairs of ports cabled to each other (`loopback=0:1`), as for the paper's loopback test:
    /// what one transmits, the other receives; their links carry nothing else.
    pub loopback: Vec<(u8, u8)>,
    /// The card's port count (`ports=1` to `4`): the gateware generated with that many ports.
    pub ports: u8,
    /// Ports whose far end is the Linux kernel (`tap=PORT[@NAMESPACE]`): a TAP device in a network
    /// namespace created for it (`nanet-pPORT` unless named), where the Linux side is
    /// [`SIM_PEER`] on 10.0.0.0/24, so `ip netns exec nanet-p0 ping 10.0.0.10` reaches a port
    /// configured as 10.0.0.10. Needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN); the namespace is
    /// deleted on close.
    pub tap: Vec<(u8, String)>,
}

impl Default for SimOptions {
    fn default() -> Self {
        Self {
            engine: EngineKind::Verilator,
            pcie: PcieVariant::Gen2x8,
            memory: MemoryPreset::gen2_x8(),
            stall: 0.0,
            tear: None,
            seed: 1,
            traffic: vec![],
            loopback: vec![],
            ports: nanet_contract::rx::MAX_PORTS as u8,
            tap: vec![],
        }
    }
}

impl SimOptions {
    /// Parses the part after `sim:` (comma-separated `key=value`; empty: the defaults).
    pub fn parse(spec: &str) -> Result<Self> {
        let mut o = Self::default();
        let mut memory = None;
        for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let bad = |why: String| Error::SimOption {
                option: item.to_string(),
                why,
            };
            let (key, value) = item
                .split_once('=')
                .ok_or_else(|| bad("expected key=value".into()))?;
            match key {
                "engine" => {
                    o.engine = value
                        .parse()
                        .map_err(|_| bad("engines: verilator, model, both".into()))?
                }
                "pcie" => {
                    o.pcie = PcieVariant::from_name(value).ok_or_else(|| {
                        let names: Vec<_> = PcieVariant::ALL.iter().map(|v| v.name()).collect();
                        bad(format!("PCIe variants: {}", names.join(", ")))
                    })?
                }
                "memory" => {
                    memory = Some(
                        MemoryPreset::by_name(value)
                            .ok_or_else(|| bad("memory presets: gen2x8, gen3x8, ideal".into()))?,
                    )
                }
                "stall" => {
                    o.stall = value
                        .parse()
                        .ok()
                        .filter(|s: &f64| (0.0..1.0).contains(s))
                        .ok_or_else(|| bad("a probability in [0, 1)".into()))?
                }
                "tear" => {
                    o.tear = Some(
                        value
                            .parse()
                            .ok()
                            .filter(|c| (1..=1_000_000).contains(c))
                            .ok_or_else(|| bad("1 to 1000000 core cycles".into()))?,
                    )
                }
                "seed" => {
                    o.seed = value
                        .parse()
                        .map_err(|_| bad("an unsigned integer".into()))?
                }
                "ports" => {
                    o.ports = value
                        .parse()
                        .ok()
                        .filter(|p| (1..=nanet_contract::rx::MAX_PORTS as u8).contains(p))
                        .ok_or_else(|| {
                            bad(format!(
                                "a card has 1 to {} ports",
                                nanet_contract::rx::MAX_PORTS
                            ))
                        })?
                }
                "traffic" => {
                    for t in value.split('+') {
                        o.traffic.push(Traffic::parse_udp(t).map_err(bad)?);
                    }
                }
                "pcap" => {
                    let (path, port) = value
                        .rsplit_once('@')
                        .ok_or_else(|| bad("expected FILE@PORT[:raw]".into()))?;
                    let (port, raw) = match port.split_once(':') {
                        Some((p, "raw")) => (p, true),
                        Some((_, other)) => {
                            return Err(bad(format!("{other:?}: the only pcap flag is raw")))
                        }
                        None => (port, false),
                    };
                    let port = port
                        .parse()
                        .ok()
                        .filter(|p| (*p as usize) < nanet_contract::rx::MAX_PORTS)
                        .ok_or_else(|| bad(format!("port {port:?}: 0..4")))?;
                    o.traffic.push(Traffic::Pcap {
                        path: path.into(),
                        port,
                        raw,
                    });
                }
                "loopback" => {
                    let port = |p: &str| {
                        p.parse::<u8>()
                            .ok()
                            .filter(|p| (*p as usize) < nanet_contract::rx::MAX_PORTS)
                    };
                    let pair = value
                        .split_once(':')
                        .and_then(|(a, b)| Some((port(a)?, port(b)?)));
                    let cabled = |p: u8| o.loopback.iter().any(|(a, b)| *a == p || *b == p);
                    match pair {
                        Some((a, b)) if a != b && !cabled(a) && !cabled(b) => {
                            o.loopback.push((a, b))
                        }
                        _ => {
                            return Err(bad(
                                "expected A:B, two different ports 0..4 not cabled yet".into(),
                            ))
                        }
                    }
                }
                "tap" => {
                    let (port, ns) = match value.split_once('@') {
                        Some((p, ns)) => (p, Some(ns)),
                        None => (value, None),
                    };
                    let port = port
                        .parse::<u8>()
                        .ok()
                        .filter(|p| (*p as usize) < nanet_contract::rx::MAX_PORTS)
                        .ok_or_else(|| bad(format!("port {port:?}: 0..4")))?;
                    if o.tap.iter().any(|(p, _)| *p == port) {
                        return Err(bad("that port has its TAP device already".into()));
                    }
                    let ns = ns.map_or_else(|| format!("nanet-p{port}"), str::to_string);
                    if o.tap.iter().any(|(_, other)| *other == ns) {
                        return Err(bad(format!("namespace {ns} is another port's already")));
                    }
                    o.tap.push((port, ns));
                }
                _ => return Err(bad(
                    "unknown option (known: engine, pcie, memory, stall, seed, ports, traffic, \
                         pcap, loopback, tap)"
                        .into(),
                )),
            }
        }
        o.memory = memory.unwrap_or(MemoryPreset::of(o.pcie));
        o.check_card()?;
        // Each link has one far end: generated traffic, a capture, a cable or the Linux kernel.
        let cabled = |p: u8| o.loopback.iter().any(|(a, b)| *a == p || *b == p);
        let tapped = |p: u8| o.tap.iter().any(|(t, _)| *t == p);
        for t in &o.traffic {
            let p = match t {
                Traffic::Udp { port, .. } | Traffic::Pcap { port, .. } => *port,
            };
            if cabled(p) || tapped(p) {
                return Err(Error::SimOption {
                    option: format!("traffic on port {p}"),
                    why: if cabled(p) {
                        "the port is cabled to another: the cable is its link's only far end".into()
                    } else {
                        "the port's link goes to the Linux kernel (tap), its only far end".into()
                    },
                });
            }
            o.check_port(p, "traffic")?;
        }
        for &(a, b) in &o.loopback {
            if tapped(a) || tapped(b) {
                return Err(Error::SimOption {
                    option: format!("loopback={a}:{b}"),
                    why: "a port cabled to another cannot also go to the Linux kernel (tap)".into(),
                });
            }
            o.check_port(a.max(b), "loopback")?;
        }
        for (p, _) in &o.tap {
            o.check_port(*p, "tap")?;
        }
        Ok(o)
    }

    /// Refuses a card the simulator does not build.
    fn check_card(&self) -> Result<()> {
        if self.pcie == PcieVariant::Gen3x8 && !GEN3_DESIGN_PORTS.contains(&self.ports) {
            return Err(Error::SimOption {
                option: format!("pcie=gen3,ports={}", self.ports),
                why: format!(
                    "the simulated Gen3 card has {GEN3_DESIGN_PORTS:?} ports (make verilog \
                     PCIE=gen3 generates any count)"
                ),
            });
        }
        Ok(())
    }

    /// Refuses options naming a port the card does not have.
    fn check_port(&self, port: u8, what: &str) -> Result<()> {
        if port >= self.ports {
            return Err(Error::SimOption {
                option: format!("{what} on port {port}"),
                why: format!(
                    "the card has ports 0..{} (ports={})",
                    self.ports, self.ports
                ),
            });
        }
        Ok(())
    }
}

/// A pointer to application memory travelling to the card thread.
struct SendPtr(*mut u8);
// SAFETY: the memory behind it stays valid while mapped (the caller of `map_dma` promises it).
unsafe impl Send for SendPtr {}

enum Request {
    Read {
        offset: u64,
        reply: Sender<u32>,
    },
    Write {
        offset: u64,
        value: u32,
    },
    Map {
        iova: u64,
        len: usize,
        memory: SendPtr,
        /// The card may only read it (the IOMMU refuses its writes).
        read_only: bool,
        reply: Sender<std::result::Result<(), String>>,
    },
    Unmap {
        iova: u64,
        reply: Sender<bool>,
    },
    Send {
        port: u8,
        frame: Vec<u8>,
    },
    TakeTx {
        port: u8,
        reply: Sender<Vec<Vec<u8>>>,
    },
    WhenIdle {
        reply: Sender<()>,
    },
    /// Generators that start together, in the same cycle.
    Generate(Vec<Generator>),
}

/// A stream of UDP datagrams the far end of a link sends: a frame template whose UDP checksum is
/// zero (not checked), with a 64-bit little-endian sequence number in the payload's first bytes.
#[derive(Clone, Debug)]
pub struct Generator {
    pub port: u8,
    /// Ethernet/IPv4/UDP frame without FCS, UDP checksum 0.
    pub frame: Vec<u8>,
    /// Offset of the payload in `frame` (where the sequence number goes).
    pub payload_at: usize,
    /// Idle wire bytes after each frame (0: line rate).
    pub gap_bytes: u64,
    /// Datagrams to send (None: until the card is closed).
    pub count: Option<u64>,
    pub next_seq: u64,
}

impl Generator {
    /// `count` datagrams (None: endless) of `payload` bytes (at least 8, for the sequence number)
    /// from `src` to `dst` on link `port`, at `gbps` (10: line rate).
    pub fn udp(
        port: u8,
        src: &Endpoint,
        dst: &Endpoint,
        udp_ports: (u16, u16),
        payload: usize,
        gbps: f64,
        count: Option<u64>,
    ) -> Self {
        let mut frame = udp_frame(src, dst, udp_ports.0, udp_ports.1, &vec![0; payload.max(8)]);
        // No UDP checksum: the sequence number changes in every datagram.
        frame[UDP_CHECKSUM_AT..UDP_CHECKSUM_AT + 2].fill(0);
        let wire = (frame.len() as u64 + WIRE_OVERHEAD_BYTES) as f64;
        let gbps = gbps.clamp(0.001, 10.0);
        Self {
            port,
            frame,
            payload_at: UDP_PAYLOAD_AT,
            gap_bytes: (wire * (10.0 / gbps - 1.0)).round() as u64,
            count,
            next_seq: 0,
        }
    }

    /// The sequence number a generated payload carries.
    pub fn sequence_of(payload: &[u8]) -> Option<u64> {
        Some(u64::from_le_bytes(payload.get(..8)?.try_into().ok()?))
    }

    /// The next frame, if any are left.
    fn next_frame(&mut self) -> Option<Vec<u8>> {
        if self.count == Some(0) {
            return None;
        }
        if let Some(c) = &mut self.count {
            *c -= 1;
        }
        let mut f = self.frame.clone();
        let seq = self.next_seq.to_le_bytes();
        let n = seq.len().min(f.len().saturating_sub(self.payload_at));
        f[self.payload_at..self.payload_at + n].copy_from_slice(&seq[..n]);
        self.next_seq += 1;
        Some(f)
    }
}

/// What the simulated card has done, for tests and `nanetctl`.
#[derive(Clone, Debug, Default)]
pub struct SimStats {
    /// The width of the simulated card's core datapath, bits (its PCIe variant's: 128 for Gen2
    /// x8, 256 for Gen3 x8).
    pub datapath_bits: usize,
    pub core_cycles: u64,
    pub irqs: u64,
    pub dma_bytes: u64,
    /// DMA writes the IOMMU refused (outside every mapping), and PCIe protocol faults of the card.
    pub faults: Vec<String>,
    /// BAR0 accesses outside BAR0 or unaligned (never sent to the card; holes inside BAR0 are
    /// counted by the card itself, `CardReg::Unmapped`).
    pub bad_bar0_accesses: u64,
    /// Frames of `pcap=` traffic or from the Linux kernel (`tap=`) shorter than 60 bytes, padded
    /// before they went on the link.
    pub padded_frames: u64,
    /// Frames the Linux kernel sent into the card's ports, and frames the card sent to it (`tap=`).
    pub frames_from_linux: u64,
    pub frames_to_linux: u64,
    /// What went wrong between the card and the Linux kernel: TAP reads or writes that failed,
    /// frames the card ended with an error (a MAC would have corrupted their FCS: not handed on).
    pub linux_peer_errors: Vec<String>,
    /// The last mappings removed (`unmap_dma`), oldest first, with the writes that had landed in
    /// each: shows whether the card was still writing a CLOP's memory while it was deregistered.
    pub unmapped: VecDeque<Unmapped>,
}

/// A mapping removed by `unmap_dma`, and the card's writes that landed in it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unmapped {
    pub iova: u64,
    /// Writes landed in it, and the core cycle the last one landed (0: none).
    pub writes: u64,
    pub last_write_cycle: u64,
    /// The core cycle it was unmapped.
    pub at_cycle: u64,
    /// Of the card's writes into it, those that became visible while the last register read
    /// before the unmap (a deregistration's acknowledgement) was on its way: the card issued them
    /// before it answered, and they were still on their way when the host asked. And those that
    /// landed after that read's answer (none, if the acknowledgement means what it says).
    pub writes_landed_during_last_read: u64,
    pub writes_landed_after_last_read: u64,
    /// Register writes the host made between that read and the unmap.
    pub register_writes_since_last_read: u64,
}

/// The host side of the simulated card: the memory the card writes (the application's own, through
/// the mappings) and the interrupt eventfd.
struct LibHost {
    port: MemoryPort,
    irq: RawFd,
    stats: Arc<Mutex<SimStats>>,
    reported: usize,
    /// The event ring's base as the library last wrote it (low and high word), so the card bench
    /// checks that every MSI reaches the host behind a record landed in the ring.
    ring_base: [Option<u32>; 2],
}

// The library's register writes go to the card as BAR0 TLPs directly: no queued writes.
impl CardHost for LibHost {
    fn memory(&mut self) -> &mut MemoryPort {
        &mut self.port
    }
    fn end_cycle(&mut self, _now: u32) {
        self.port.tick();
        if self.port.violations.len() > self.reported {
            let mut s = self.stats.lock().unwrap();
            let new = self.port.violations[self.reported..].iter();
            s.faults.extend(new.map(|v| v.to_string()));
            self.reported = self.port.violations.len();
        }
    }
    fn event_ring(&self) -> Option<u64> {
        match self.ring_base {
            [Some(lo), Some(hi)] => Some((hi as u64) << 32 | lo as u64),
            _ => None,
        }
    }
    fn interrupt(&mut self) {
        let one = 1u64.to_ne_bytes();
        // SAFETY: writing 8 bytes to our own eventfd.
        unsafe { libc::write(self.irq, one.as_ptr().cast(), 8) };
        self.stats.lock().unwrap().irqs += 1;
    }
}

struct Card<D: CardDesign> {
    bench: CardBench<LibHost, D>,
    stats: Arc<Mutex<SimStats>>,
    generators: Vec<Generator>,
    /// Ports whose far end is the Linux kernel, and how many of its frames were padded so far.
    linux: Vec<(u8, LinuxPeer)>,
    linux_padded_reported: u64,
    /// Register writes since the last register read.
    writes_since_read: u64,
    /// Writes landed in each mapping (by start) when the last register read was sent, and when
    /// its answer arrived.
    landed_at_read: [Vec<(u64, u64)>; 2],
}

/// The host at the far end of every simulated link.
pub const SIM_PEER: Endpoint = Endpoint::new([0x02, 0, 0, 0, 0, 0x99], [10, 0, 0, 99]);

/// Where the UDP checksum and the payload sit in a frame without IP options.
const UDP_CHECKSUM_AT: usize = 14 + 20 + 6;
const UDP_PAYLOAD_AT: usize = 14 + 20 + 8;

/// Frames kept of what each port transmitted (older ones are dropped).
const TX_KEEP: usize = 1024;
/// Errors between the card and the Linux kernel kept in [`SimStats::linux_peer_errors`] (the first
/// ones: a TAP that fails keeps failing).
const LINUX_ERRORS_KEPT: usize = 100;
/// Removed mappings kept in [`SimStats::unmapped`].
const UNMAPPED_KEPT: usize = 64;

impl<D: CardDesign> Card<D> {
    fn handle(&mut self, r: Request) {
        match r {
            Request::Read { offset, reply } => {
                self.landed_at_read[0] = self.bench.host.port.memory.writes_landed_by_region();
                let value = if offset % 4 != 0 || offset >= bar0::BAR0_BYTES {
                    self.stats.lock().unwrap().bad_bar0_accesses += 1;
                    u32::MAX
                } else {
                    // An Unsupported Request reads as all ones, as on a real bus.
                    self.bench.bar0_try_read(offset).unwrap_or(u32::MAX)
                };
                self.landed_at_read[1] = self.bench.host.port.memory.writes_landed_by_region();
                self.writes_since_read = 0;
                self.report_card_faults();
                let _ = reply.send(value);
            }
            Request::Write { offset, value } => {
                if offset % 4 != 0 || offset >= bar0::BAR0_BYTES {
                    self.stats.lock().unwrap().bad_bar0_accesses += 1;
                } else {
                    for (k, r) in [RxReg::EventQueueBaseLo, RxReg::EventQueueBaseHi]
                        .iter()
                        .enumerate()
                    {
                        if offset == bar0::rx_engine(r.word()) {
                            self.bench.host.ring_base[k] = Some(value);
                        }
                    }
                    self.bench.bar0_write(offset, value);
                }
                self.writes_since_read += 1;
            }
            Request::Map {
                iova,
                len,
                memory,
                read_only,
                reply,
            } => {
                let name = format!("dma {iova:#x}");
                // SAFETY: `Backend::map_dma`'s caller keeps the memory valid until unmapped.
                let r = unsafe {
                    self.bench
                        .host
                        .port
                        .memory
                        .register_external(iova, len as u64, &name, memory.0, read_only)
                };
                let _ = reply.send(r.map_err(|e| e.to_string()));
            }
            Request::Unmap { iova, reply } => {
                let port = &mut self.bench.host.port;
                if let Some(w) = port.memory.writes_landed(iova) {
                    let at_read = |k: usize| {
                        let mut landed = self.landed_at_read[k].iter();
                        landed.find(|(start, _)| *start == iova).map_or(0, |l| l.1)
                    };
                    let (asked, answered) = (at_read(0), at_read(1));
                    let mut s = self.stats.lock().unwrap();
                    if s.unmapped.len() == UNMAPPED_KEPT {
                        s.unmapped.pop_front();
                    }
                    s.unmapped.push_back(Unmapped {
                        iova,
                        writes: w.count,
                        last_write_cycle: w.last_cycle,
                        at_cycle: port.cycle,
                        writes_landed_during_last_read: answered.saturating_sub(asked),
                        writes_landed_after_last_read: w.count.saturating_sub(answered),
                        register_writes_since_last_read: self.writes_since_read,
                    });
                }
                let _ = reply.send(port.memory.unregister(iova));
            }
            Request::Send { port, frame } => self.bench.links[port as usize].push(frame, false),
            Request::TakeTx { port, reply } => {
                let frames = self.bench.link_tx[port as usize].frames.drain(..);
                let _ = reply.send(frames.map(|f| f.bytes).collect());
            }
            Request::Generate(g) => self.generators.extend(g),
            Request::WhenIdle { reply } => {
                let endless = self.generators.iter().any(|g| g.count.is_none());
                while !endless && !self.bench.links.iter().all(|l| l.is_idle()) {
                    self.bench.step_core();
                    if self.bench.host.port.cycle.is_multiple_of(32) {
                        self.exchange_with_linux();
                    }
                    if !self.generators.is_empty() {
                        self.feed_links();
                    }
                }
                let _ = reply.send(());
            }
        }
    }

    /// PCIe protocol faults of the card, as the root complex saw them, and faults on its MAC
    /// transmit interfaces.
    fn report_card_faults(&mut self) {
        let mut faults: Vec<String> = std::mem::take(&mut self.bench.rc.violations)
            .into_iter()
            .map(|v| format!("PCIe: {v}"))
            .collect();
        faults.extend(self.bench.take_link_faults());
        if !faults.is_empty() {
            self.stats.lock().unwrap().faults.extend(faults);
        }
    }

    /// Frames between the Linux kernel and the ports attached to it, both ways.
    fn exchange_with_linux(&mut self) {
        if self.linux.is_empty() {
            return;
        }
        let mut errors = vec![];
        for (port, peer) in &mut self.linux {
            let p = *port as usize;
            loop {
                match peer.recv() {
                    Ok(Some(f)) => self.bench.links[p].push(f, false),
                    Ok(None) => break,
                    Err(e) => {
                        errors.push(format!("port {p}: reading the TAP device: {e}"));
                        break;
                    }
                }
            }
            for f in self.bench.link_tx[p].frames.drain(..) {
                if f.error {
                    errors.push(format!(
                        "port {p}: a frame of {} bytes ended with an error; not handed to Linux",
                        f.bytes.len()
                    ));
                } else if let Err(e) = peer.send(&f.bytes) {
                    errors.push(format!("port {p}: writing the TAP device: {e}"));
                }
            }
        }
        let mut s = self.stats.lock().unwrap();
        s.frames_from_linux = self.linux.iter().map(|(_, l)| l.frames_from_linux).sum();
        s.frames_to_linux = self.linux.iter().map(|(_, l)| l.frames_to_linux).sum();
        let padded: u64 = self.linux.iter().map(|(_, l)| l.padded_frames).sum();
        s.padded_frames += padded - self.linux_padded_reported;
        self.linux_padded_reported = padded;
        let room = LINUX_ERRORS_KEPT.saturating_sub(s.linux_peer_errors.len());
        s.linux_peer_errors.extend(errors.into_iter().take(room));
    }

    /// Keeps every generator's link a few frames ahead; trims what the links record.
    fn feed_links(&mut self) {
        for g in &mut self.generators {
            while self.bench.links[g.port as usize].backlog() < 4 {
                let Some(f) = g.next_frame() else { break };
                self.bench.links[g.port as usize].push_with_gap(f, false, g.gap_bytes);
            }
        }
        self.generators.retain(|g| g.count != Some(0));
        for l in &mut self.bench.links {
            l.forget_sops();
        }
        for t in &mut self.bench.link_tx {
            let extra = t.frames.len().saturating_sub(TX_KEEP);
            t.frames.drain(..extra);
        }
    }

    fn run(mut self, requests: Receiver<Request>) {
        loop {
            loop {
                match requests.try_recv() {
                    Ok(r) => self.handle(r),
                    Err(TryRecvError::Empty) => break,
                    Err(TryRecvError::Disconnected) => return,
                }
                // (A register read runs the card until its answer: the time moved on.)
                self.stats.lock().unwrap().core_cycles = self.bench.host.port.cycle;
            }
            for _ in 0..32 {
                self.bench.step_core();
            }
            self.report_card_faults();
            self.exchange_with_linux();
            self.feed_links();
            let mut s = self.stats.lock().unwrap();
            s.core_cycles = self.bench.host.port.cycle;
            s.dma_bytes = self.bench.host.port.bytes_accepted;
        }
    }
}

/// The card thread: builds the card (`D`: its port count), says when it is ready, then serves
/// `requests` until the library lets go.
fn run_card<D: CardDesign>(
    o: &SimOptions,
    linux: Vec<(u8, LinuxPeer)>,
    host: LibHost,
    stats: Arc<Mutex<SimStats>>,
    ready: Sender<std::result::Result<(), String>>,
    requests: Receiver<Request>,
) {
    let mut bench = match CardBench::<LibHost, D>::with_host(o.engine, host) {
        Ok(b) => b,
        Err(e) => {
            let _ = ready.send(Err(e.to_string()));
            return;
        }
    };
    for (a, b) in &o.loopback {
        bench.wire(*a as usize, *b as usize);
    }
    stats.lock().unwrap().datapath_bits = D::Beat::VARIANT.beat_bits();
    for _ in 0..RESET_SWEEP_CYCLES {
        bench.step_core();
    }
    let _ = ready.send(Ok(()));
    Card {
        bench,
        stats,
        generators: vec![],
        linux,
        linux_padded_reported: 0,
        writes_since_read: 0,
        landed_at_read: [vec![], vec![]],
    }
    .run(requests)
}

/// The generator of generated traffic (`Traffic::Udp`), aimed at the port's address as `dev` has
/// it; None for a capture.
fn udp_generator(dev: &crate::Device, t: &Traffic) -> Result<Option<Generator>> {
    let Traffic::Udp {
        port,
        udp_port,
        bytes,
        gbps,
        count,
    } = t
    else {
        return Ok(None);
    };
    let c = dev.port_config(*port)?;
    let to = Endpoint::new(c.mac, c.ip);
    Ok(Some(Generator::udp(
        *port,
        &SIM_PEER,
        &to,
        (4242, *udp_port),
        *bytes,
        *gbps,
        *count,
    )))
}

/// The simulated card as a [`Backend`].
pub struct SimBackend {
    requests: Mutex<Sender<Request>>,
    irq: OwnedFd,
    stats: Arc<Mutex<SimStats>>,
    options: SimOptions,
    thread: Mutex<Option<JoinHandle<()>>>,
    /// The options' traffic: started, or held until the application says so.
    traffic_started: std::sync::atomic::AtomicBool,
    traffic_held: std::sync::atomic::AtomicBool,
}

/// Stack of the card thread: the rust-hdl model of the whole receive path is a very large struct.
const CARD_STACK: usize = 256 << 20;
/// Core cycles after reset before the card takes commands (its tables are swept).
const RESET_SWEEP_CYCLES: u64 = 200;

impl SimBackend {
    pub fn start(options: SimOptions) -> Result<Self> {
        options.check_card()?;
        // SAFETY: plain syscall; the fd is owned below.
        let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
        if fd < 0 {
            return Err(Error::SimStart(format!(
                "eventfd: {}",
                std::io::Error::last_os_error()
            )));
        }
        // SAFETY: a fresh fd we own.
        let irq = unsafe { OwnedFd::from_raw_fd(fd) };
        let stats = Arc::new(Mutex::new(SimStats::default()));
        let (tx, rx) = channel();
        let (ready_tx, ready_rx) = channel();
        let linux = start_linux_peers(&options)?;
        let (o, st, irq_raw) = (options.clone(), stats.clone(), irq.as_raw_fd());
        let thread = std::thread::Builder::new()
            .name("nanet-sim-card".into())
            .stack_size(CARD_STACK)
            .spawn(move || {
                let mut port = MemoryPort::new(o.memory, o.stall, o.seed);
                port.tear = o.tear;
                port.track_visible = false;
                let host = LibHost {
                    port,
                    irq: irq_raw,
                    stats: st.clone(),
                    reported: 0,
                    ring_base: [None; 2],
                };
                // The gateware generated with the variant and port count asked for.
                match (o.pcie, o.ports) {
                    (PcieVariant::Gen2x8, 1) => {
                        run_card::<Nic1Design>(&o, linux, host, st, ready_tx, rx)
                    }
                    (PcieVariant::Gen2x8, 2) => {
                        run_card::<Nic2Design>(&o, linux, host, st, ready_tx, rx)
                    }
                    (PcieVariant::Gen2x8, 3) => {
                        run_card::<Nic3Design>(&o, linux, host, st, ready_tx, rx)
                    }
                    (PcieVariant::Gen2x8, _) => {
                        run_card::<NicDesign>(&o, linux, host, st, ready_tx, rx)
                    }
                    (PcieVariant::Gen3x8, 1) => {
                        run_card::<Nic1p256Design>(&o, linux, host, st, ready_tx, rx)
                    }
                    (PcieVariant::Gen3x8, _) => {
                        run_card::<Nic256Design>(&o, linux, host, st, ready_tx, rx)
                    }
                }
            })
            .map_err(|e| Error::SimStart(format!("cannot start the card thread: {e}")))?;
        // The first start on a machine builds the card's Verilog with Verilator: say so.
        let started = std::time::Instant::now();
        let ready = match ready_rx.recv_timeout(std::time::Duration::from_secs(3)) {
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                eprintln!(
                    "nanet: preparing the simulated card ({} engine; the first start on a machine \
                     builds its Verilog with Verilator, up to a minute)...",
                    options.engine
                );
                let r = ready_rx.recv();
                eprintln!(
                    "nanet: simulated card ready after {:.0} s",
                    started.elapsed().as_secs_f64()
                );
                r
            }
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => Err(std::sync::mpsc::RecvError),
            Ok(r) => Ok(r),
        };
        match ready {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(Error::SimStart(e)),
            Err(_) => {
                let why = match thread.join() {
                    Err(p) => panic_message(&p),
                    Ok(()) => "no reason given".into(),
                };
                return Err(Error::SimStart(why));
            }
        }
        Ok(Self {
            requests: Mutex::new(tx),
            irq,
            stats,
            options,
            thread: Mutex::new(Some(thread)),
            traffic_started: std::sync::atomic::AtomicBool::new(false),
            traffic_held: std::sync::atomic::AtomicBool::new(false),
        })
    }

    fn send(&self, r: Request) -> Result<()> {
        self.requests
            .lock()
            .unwrap()
            .send(r)
            .map_err(|_| self.stopped())
    }

    /// Why the card thread is gone.
    fn stopped(&self) -> Error {
        let handle = self.thread.lock().unwrap().take();
        let why = match handle.map(|t| t.join()) {
            Some(Err(p)) => panic_message(&p),
            _ => "the card thread ended".into(),
        };
        Error::CardStopped(why)
    }

    fn ask<T>(&self, make: impl FnOnce(Sender<T>) -> Request) -> Result<T> {
        let (tx, rx) = channel();
        self.send(make(tx))?;
        rx.recv().map_err(|_| self.stopped())
    }

    pub fn options(&self) -> &SimOptions {
        &self.options
    }

    /// The network namespace where port `port`'s far end is the Linux kernel (`tap=`), if it is.
    /// [`nanet_sim::world::linux_peer::in_namespace`] opens sockets there.
    pub fn linux_namespace(&self, port: u8) -> Option<&str> {
        let ns = self.options.tap.iter().find(|(p, _)| *p == port);
        ns.map(|(_, ns)| ns.as_str())
    }

    pub fn stats(&self) -> SimStats {
        self.stats.lock().unwrap().clone()
    }

    /// Puts an Ethernet frame (without FCS) on port `port`'s receive link, at line rate after
    /// the frames before it.
    pub fn send_frame(&self, port: u8, frame: Vec<u8>) -> Result<()> {
        self.check_port(port)?;
        self.send(Request::Send { port, frame })
    }

    fn check_port(&self, port: u8) -> Result<()> {
        if port >= self.options.ports {
            return Err(Error::NoSuchPort {
                port,
                ports: self.options.ports as usize,
            });
        }
        Ok(())
    }

    /// The far end of link `port` sends one UDP datagram from [`SIM_PEER`] (port 4242) to
    /// `to`, UDP port `dport`, with a correct checksum.
    pub fn send_udp(&self, port: u8, to: &Endpoint, dport: u16, payload: &[u8]) -> Result<()> {
        self.send_frame(port, udp_frame(&SIM_PEER, to, 4242, dport, payload))
    }

    /// Keeps the options' traffic from starting with the first CLOP: a program that registers
    /// several streams calls this first and [`start_option_traffic`](Self::start_option_traffic)
    /// once all are registered, so no frame arrives for a stream not registered yet. Refused
    /// once the traffic has started (it cannot be held back any more).
    pub fn hold_option_traffic(&self) -> Result<()> {
        self.traffic_held
            .store(true, std::sync::atomic::Ordering::Release);
        if self
            .traffic_started
            .load(std::sync::atomic::Ordering::Acquire)
            && !self.options.traffic.is_empty()
        {
            return Err(Error::SimOption {
                option: "hold_option_traffic".into(),
                why: "the options' traffic already started with the first CLOP: hold it before \
                      registering any"
                    .into(),
            });
        }
        Ok(())
    }

    /// Starts the traffic of the options (once; later calls do nothing).
    pub fn start_option_traffic(&self, dev: &crate::Device) -> Result<()> {
        if self
            .traffic_started
            .swap(true, std::sync::atomic::Ordering::AcqRel)
        {
            return Ok(());
        }
        self.start_traffic_together(dev, &self.options.traffic)
    }

    /// Starts `traffic` on its links: the generated streams begin in the same cycle (their links
    /// in step, whatever the host thread's timing), captures are queued as [`Self::start_traffic`]
    /// queues them.
    pub fn start_traffic_together(&self, dev: &crate::Device, traffic: &[Traffic]) -> Result<()> {
        let mut generators = vec![];
        for t in traffic {
            match udp_generator(dev, t)? {
                Some(g) => generators.push(g),
                None => self.start_traffic(dev, t)?,
            }
        }
        self.generate_together(generators)
    }

    /// What registering a CLOP does: starts the options' traffic unless it is held.
    pub(crate) fn clop_registered(&self, dev: &crate::Device) -> Result<()> {
        if self.traffic_held.load(std::sync::atomic::Ordering::Acquire) {
            return Ok(());
        }
        self.start_option_traffic(dev)
    }

    /// Starts `t` on its link: a generator aimed at the port's address as `dev` has it, or a
    /// pcap file's frames as recorded.
    pub fn start_traffic(&self, dev: &crate::Device, t: &Traffic) -> Result<()> {
        match t {
            Traffic::Udp { .. } => self.start_traffic_together(dev, std::slice::from_ref(t)),
            Traffic::Pcap { path, port, raw } => {
                let mut frames =
                    nanet_sim::traffic::pcap::read_pcap(path).map_err(|e| Error::SimOption {
                        option: format!("pcap={}@{port}", path.display()),
                        why: e.to_string(),
                    })?;
                if !raw {
                    let padded = nanet_sim::traffic::pcap::pad_runts(&mut frames);
                    self.stats.lock().unwrap().padded_frames += padded as u64;
                }
                for f in frames {
                    self.send_frame(*port, f.bytes)?;
                }
                Ok(())
            }
        }
    }

    /// Starts a traffic generator on a link (see [`Generator`]).
    pub fn generate(&self, g: Generator) -> Result<()> {
        self.generate_together(vec![g])
    }

    /// Starts traffic generators that begin in the same cycle (each on its own link).
    pub fn generate_together(&self, generators: Vec<Generator>) -> Result<()> {
        for g in &generators {
            self.check_port(g.port)?;
        }
        if generators.is_empty() {
            return Ok(());
        }
        self.send(Request::Generate(generators))
    }

    /// The frames port `port` transmitted since the last call (the last 1024 at most). Refused
    /// for a port whose far end is the Linux kernel (`tap=`): its frames go there.
    pub fn take_transmitted(&self, port: u8) -> Result<Vec<Vec<u8>>> {
        self.check_port(port)?;
        if let Some(ns) = self.linux_namespace(port) {
            return Err(Error::SimOption {
                option: format!("take_transmitted({port})"),
                why: format!("port {port}'s frames go to Linux, in namespace {ns}"),
            });
        }
        self.ask(|reply| Request::TakeTx { port, reply })
    }

    /// Returns when every frame given to the links has entered the card (at once while an
    /// endless generator runs).
    pub fn wait_links_idle(&self) -> Result<()> {
        self.ask(|reply| Request::WhenIdle { reply })
    }
}

/// The Linux side of each `tap=` port: its namespace, TAP device `nanetPORT` and address
/// [`SIM_PEER`] on 10.0.0.0/24; says on stderr how to reach the card from there.
fn start_linux_peers(o: &SimOptions) -> Result<Vec<(u8, LinuxPeer)>> {
    let mut peers = vec![];
    for (port, ns) in &o.tap {
        let config = LinuxPeerConfig {
            namespace: ns.clone(),
            device: format!("nanet{port}"),
            me: SIM_PEER,
            prefix_len: 24,
        };
        let peer = LinuxPeer::create(&config).map_err(|e| Error::SimOption {
            option: format!("tap={port}@{ns}"),
            why: e.to_string(),
        })?;
        eprintln!(
            "nanet: port {port}'s link goes to Linux: TAP device {} in network namespace {ns}, \
             address {}/24 (`ip netns exec {ns} ping <the port's address>`)",
            config.device,
            std::net::Ipv4Addr::from(SIM_PEER.ip)
        );
        peers.push((*port, peer));
    }
    Ok(peers)
}

fn panic_message(p: &Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "it panicked".into())
}

impl Backend for SimBackend {
    fn describe(&self) -> String {
        format!(
            "simulated card ({}, {})",
            self.options.engine, self.options.memory.name
        )
    }

    fn read32(&self, offset: u64) -> Result<u32> {
        self.ask(|reply| Request::Read { offset, reply })
    }

    fn write32(&self, offset: u64, value: u32) -> Result<()> {
        self.send(Request::Write { offset, value })
    }

    unsafe fn map_dma(&self, memory: *mut u8, len: usize, iova: u64, how: DmaMap) -> Result<()> {
        let memory = SendPtr(memory);
        self.ask(|reply| Request::Map {
            iova,
            len,
            memory,
            read_only: how.access == CardAccess::Read,
            reply,
        })?
        .map_err(Error::Memory)
    }

    fn unmap_dma(&self, iova: u64, _len: usize) -> Result<()> {
        if self.ask(|reply| Request::Unmap { iova, reply })? {
            Ok(())
        } else {
            Err(Error::Memory(format!("nothing is mapped at {iova:#x}")))
        }
    }

    fn irq_fd(&self) -> RawFd {
        self.irq.as_raw_fd()
    }

    fn max_payload(&self) -> u32 {
        self.options.memory.max_payload.min(256) as u32
    }
}

impl Drop for SimBackend {
    fn drop(&mut self) {
        // Closing the channel ends the card thread.
        let (dead, _) = channel();
        *self.requests.lock().unwrap() = dead;
        if let Some(t) = self.thread.lock().unwrap().take() {
            let _ = t.join();
        }
    }
}

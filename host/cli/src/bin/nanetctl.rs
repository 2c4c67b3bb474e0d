//! nanetctl: look at a nanet card and receive with it, on a real card (PCI address) or the
//! simulated one (`sim`).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use clap::{Parser, Subcommand};
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use nanet::backend::sim::Traffic;
use nanet::events::CORE_HZ;
use nanet::gpu::{GpuBuffer, GpuMemory};
use nanet::{
    ClopConfig, Datagram, Device, EventKind, FullPolicy, GenConfig, Layout, PortConfig, SendTo,
};
use nanet_contract::bar0;
use nanet_contract::card::{self, CardReg};
use nanet_contract::rx::{PortReg, RxCounter, RxReg};
use nanet_contract::tx::TxReg;
use nanet_contract::{Counter, Reg};

#[derive(Parser)]
#[command(version, about = "Look at a nanet card and receive with it")]
struct Cli {
    /// The card: a PCI address (0000:03:00.0) or `sim`, `sim:engine=model,memory=gen3x8,...`.
    #[arg(short, long, default_value = "sim", env = "NANET_DEVICE")]
    device: String,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// The card, its ports and their addresses.
    Info,
    /// Every register by name, with its BAR0 offset and value.
    Regs,
    /// Counters of the receive engine, of each transmit ring and of each port (non-zero ones
    /// unless --all).
    Stats {
        #[arg(long)]
        all: bool,
    },
    /// Each port's ARP cache.
    Arp,
    /// The streams the card delivers into CLOPs (its Multi-Stream tables), from any program.
    Clops,
    /// Register CLOPs and receive into them, showing rates and the card's latency live.
    Rx(RxArgs),
    /// Send UDP datagrams from a port's built-in packet generator, with live progress.
    Gen(GenArgs),
    /// Send UDP datagrams from host memory through the port's transmit ring, with live progress.
    Tx(TxArgs),
}

#[derive(clap::Args)]
struct TxArgs {
    #[command(flatten)]
    from: Sender,
    /// Payload bytes (1 to 1472); each payload starts with its sequence number (little-endian
    /// u64, from 0), as the generator's.
    #[arg(long, default_value_t = 1472)]
    bytes: usize,
    /// Datagrams to send.
    #[arg(long, default_value_t = 1000)]
    count: u64,
    /// Datagrams handed to the library at once (`send_batch`: a doorbell for them, and one
    /// before each wait for a free slot; 1: a doorbell each).
    #[arg(long, default_value_t = 32, value_parser = clap::value_parser!(u64).range(1..=256))]
    batch: u64,
}

/// Who sends what to where (`gen` and `tx`).
#[derive(clap::Args)]
struct Sender {
    /// The port that sends.
    #[arg(long, default_value_t = 0)]
    port: u8,
    /// Destination IPV4:UDP_PORT (the next hop is resolved by ARP).
    #[arg(long)]
    to: std::net::SocketAddrV4,
    /// Source UDP port.
    #[arg(long, default_value_t = 4000)]
    src_port: u16,
    /// Leave the ports' addresses as they are (default: port p gets 10.0.0.10+p/24, as `rx`).
    #[arg(long)]
    keep_addresses: bool,
}

impl Sender {
    /// Addresses the ports (unless asked not to).
    fn prepare(&self, dev: &Device) -> Result<()> {
        if !self.keep_addresses {
            address_ports(dev, "10.0.0.10".parse()?)?;
        }
        Ok(())
    }
}

#[derive(clap::Args)]
struct GenArgs {
    #[command(flatten)]
    from: Sender,
    /// Payload bytes (16 to 1472).
    #[arg(long, default_value_t = 1472)]
    bytes: u32,
    /// Datagrams to send (default: until --duration ends).
    #[arg(long)]
    count: Option<u32>,
    /// Wire rate in Gb/s (10: line rate).
    #[arg(long, default_value_t = 10.0)]
    gbps: f64,
    /// Stop after this many seconds (wall clock).
    #[arg(long, default_value_t = 5.0)]
    duration: f64,
}

#[derive(clap::Args)]
struct RxArgs {
    /// A stream to receive: PORT:UDP_PORT (repeatable).
    #[arg(long = "stream", default_value = "0:5000")]
    streams: Vec<String>,
    /// Buffers per CLOP.
    #[arg(long, default_value_t = 16)]
    buffers: u32,
    /// Bytes per buffer.
    #[arg(long, default_value_t = 64 << 10)]
    buffer_size: u32,
    /// Put the CLOPs in GPU memory: CUDA device N through GDRCopy on a real card (nanetctl built
    /// with `--features gpu`); on the simulated card a GPU stand-in in host memory (N unused).
    #[arg(long, value_name = "N")]
    gpu: Option<i32>,
    /// Buffer layout: header (per-packet headers) or raw.
    #[arg(long, default_value = "header")]
    layout: String,
    /// Flush timeout of a partly filled buffer, in microseconds (0: none).
    #[arg(long, default_value_t = 100)]
    timeout_us: u64,
    /// Skip buffers the host still holds instead of dropping.
    #[arg(long)]
    skip_held: bool,
    /// Stop after this many seconds (wall clock).
    #[arg(long, default_value_t = 5.0)]
    duration: f64,
    /// Stop once every stream received this many datagrams.
    #[arg(long)]
    datagrams: Option<u64>,
    /// Simulated card only: the far end of each stream's link sends datagrams of BYTES payload at
    /// GBPS (default 10, line rate), e.g. `1024@5`.
    #[arg(long)]
    sim_traffic: Option<String>,
    /// IPv4 address of port 0 (port p gets the next addresses), /24.
    #[arg(long, default_value = "10.0.0.10")]
    ip: std::net::Ipv4Addr,
    /// The card's own generator on PORT sends to the first stream: BYTES payload at GBPS
    /// (default 10), `PORT:BYTES[@GBPS]`, e.g. `0:1024@5` (on the simulated card with
    /// `loopback=0:1`, or a cable between the two ports); shows the time of flight.
    #[arg(long)]
    gen: Option<String>,
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    let dev = Device::open(&cli.device).with_context(|| format!("opening {}", cli.device))?;
    match cli.command {
        Command::Info => info(&dev),
        Command::Regs => regs(&dev),
        Command::Stats { all } => stats(&dev, all),
        Command::Clops => clops(&dev),
        Command::Arp => arp(&dev),
        Command::Rx(a) => rx(&dev, &a),
        Command::Gen(a) => gen(&dev, &a),
        Command::Tx(a) => tx(&dev, &a),
    }
}

fn tx(dev: &Device, a: &TxArgs) -> Result<()> {
    a.from.prepare(dev)?;
    let (port, to_addr) = (a.from.port, a.from.to);
    let to = SendTo {
        dst_ip: to_addr.ip().octets(),
        dst_port: to_addr.port(),
        src_port: a.from.src_port,
    };
    let bar = ProgressBar::new(a.count).with_style(ProgressStyle::with_template(
        "{prefix} [{bar:30}] {pos}/{len} datagrams queued",
    )?);
    bar.set_draw_target(ProgressDrawTarget::stderr_with_hz(4));
    bar.set_prefix(format!("port {} -> {}", port, to_addr));
    let (head0, _) = dev.tx_progress(port)?;
    let card_start = dev.now_cycles()?;
    // One payload buffer per datagram of a batch, filled once; each batch writes its sequence
    // numbers into them.
    let pattern: Vec<u8> = (0..a.bytes).map(|i| i as u8).collect();
    let mut payloads = vec![pattern; a.batch as usize];
    let stamp = payloads[0].len().min(8);
    let mut seq = 0;
    while seq < a.count {
        let n = a.batch.min(a.count - seq);
        for (k, p) in payloads[..n as usize].iter_mut().enumerate() {
            p[..stamp].copy_from_slice(&(seq + k as u64).to_le_bytes()[..stamp]);
        }
        let batch: Vec<Datagram> = payloads[..n as usize]
            .iter()
            .map(|p| Datagram {
                port,
                to,
                payload: p,
            })
            .collect();
        dev.send_batch(&batch)?;
        seq += n;
        bar.inc(n);
    }
    // Until the card has taken every datagram from the port's ring.
    let start = Instant::now();
    loop {
        let (head, tail) = dev.tx_progress(port)?;
        if head == tail || start.elapsed() > Duration::from_secs(10) {
            break;
        }
    }
    bar.finish_and_clear();
    let (head, _) = dev.tx_progress(port)?;
    let taken = head.wrapping_sub(head0) as u64;
    let card_s = dev.now_cycles()?.wrapping_sub(card_start) as f64 / CORE_HZ as f64;
    println!(
        "port {} sent {taken} of {} datagrams of {} bytes to {} from host memory in {:.3} ms card time ({:.2} Gb/s of payload)",
        port,
        a.count,
        a.bytes,
        to_addr,
        card_s * 1e3,
        taken as f64 * a.bytes as f64 * 8.0 / card_s.max(1e-12) / 1e9
    );
    let counters: Vec<String> = dev
        .tx_ring_counters(port)?
        .into_iter()
        .chain(dev.port_counters(port)?)
        .filter(|(n, v)| (n.starts_with("tx") || n.starts_with("arp")) && *v > 0)
        .map(|(n, v)| format!("{n} {v}"))
        .collect();
    println!("counters: {}", counters.join(", "));
    Ok(())
}

/// Gives port p the address `base + p`/24 (gateway .1) and a local MAC.
fn address_ports(dev: &Device, base: std::net::Ipv4Addr) -> Result<()> {
    let base = u32::from(base);
    for p in 0..dev.ports() as u8 {
        let ip = (base + p as u32).to_be_bytes();
        dev.configure_port(
            p,
            &PortConfig {
                mac: [0x02, 0x4E, 0x4E, 0x00, 0x00, p],
                ip,
                netmask: [255, 255, 255, 0],
                gateway: [ip[0], ip[1], ip[2], 1],
            },
        )?;
    }
    Ok(())
}

/// `PORT:BYTES[@GBPS]` of `rx --gen`.
fn parse_gen(spec: &str) -> Result<(u8, u32, f64)> {
    let bad = || anyhow!("--gen {spec:?}: expected PORT:BYTES[@GBPS], e.g. 0:1024@5");
    let (port, rest) = spec.split_once(':').ok_or_else(bad)?;
    let (bytes, gbps) = rest.split_once('@').unwrap_or((rest, "10"));
    Ok((
        port.parse().map_err(|_| bad())?,
        bytes.parse().map_err(|_| bad())?,
        gbps.parse().map_err(|_| bad())?,
    ))
}

fn gen(dev: &Device, a: &GenArgs) -> Result<()> {
    a.from.prepare(dev)?;
    let (port, to) = (a.from.port, a.from.to);
    let mut config = GenConfig::new(to.ip().octets(), to.port(), a.bytes).rate_gbps(a.gbps);
    config.src_port = a.from.src_port;
    config.count = a.count;
    dev.start_generator(port, &config)?;
    let bar = match a.count {
        Some(n) => ProgressBar::new(n as u64).with_style(ProgressStyle::with_template(
            "{prefix} [{bar:30}] {pos}/{len} datagrams {msg}",
        )?),
        None => ProgressBar::new_spinner().with_style(ProgressStyle::with_template(
            "{prefix} {pos} datagrams {msg}",
        )?),
    };
    bar.set_draw_target(ProgressDrawTarget::stderr_with_hz(4));
    bar.set_prefix(format!("port {} -> {}", port, to));
    let start = Instant::now();
    let card_start = dev.now_cycles()?;
    let status = loop {
        let s = dev.generator_status(port)?;
        bar.set_position(s.sent as u64);
        if !s.running || start.elapsed().as_secs_f64() >= a.duration {
            break s;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    if status.running {
        dev.stop_generator(port)?;
    }
    let card_s = dev.now_cycles()?.wrapping_sub(card_start) as f64 / CORE_HZ as f64;
    bar.finish_and_clear();
    let sent = dev.generator_status(port)?.sent;
    println!(
        "port {} sent {sent} datagrams of {} bytes to {} in {:.3} ms card time ({:.2} Gb/s of payload)",
        port,
        a.bytes,
        to,
        card_s * 1e3,
        sent as f64 * a.bytes as f64 * 8.0 / card_s.max(1e-12) / 1e9
    );
    let counters = dev.port_counters(port)?;
    let shown: Vec<String> = counters
        .iter()
        .filter(|(n, v)| (n.starts_with("tx") || n.starts_with("arp")) && *v > 0)
        .map(|(n, v)| format!("{n} {v}"))
        .collect();
    println!("port {} counters: {}", port, shown.join(", "));
    if counters
        .iter()
        .any(|(n, v)| *n == Counter::TxDropArpTimeout.name() && *v > 0)
    {
        println!(
            "datagrams were dropped because {} did not answer ARP (on the simulated card, cable \
             two ports with --device sim:loopback=0:1 and send to the other port)",
            to.ip()
        );
    }
    Ok(())
}

fn ip(a: [u8; 4]) -> std::net::Ipv4Addr {
    a.into()
}

fn mac(m: [u8; 6]) -> String {
    m.iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

fn info(dev: &Device) -> Result<()> {
    println!("device: {}", dev.describe());
    let card = |r: CardReg| dev.read_register(4 * r.word() as u64);
    let version = card(CardReg::Version)?;
    let mut blocks = vec![];
    for i in 0..card(CardReg::Blocks)?.min(64) {
        let w = dev.read_register(4 * (card::BLOCK_TABLE + i) as u64)?;
        if let Some(e) = card::BlockEntry::decode(w) {
            let name = match e.kind {
                card::BlockKind::Card => "card".to_string(),
                card::BlockKind::RxEngine => "receive engine".to_string(),
                card::BlockKind::TxEngine => format!("transmit ring {}", e.instance),
                card::BlockKind::Port => format!("port {}", e.instance),
            };
            blocks.push(format!("{name} at {:#06x}", e.offset));
        }
    }
    let pcie = match card(CardReg::Pcie)? {
        0 => "PCIe variant not stated (contract 3.0)".to_string(),
        w => match nanet::PcieVariant::from_word(w) {
            Some(v) => format!("PCIe {}", v.describe()),
            None => format!("PCIe variant {w:#010x} (unknown to this nanetctl)"),
        },
    };
    println!(
        "card: contract v{}.{}, {} ports, {pcie}; blocks: {}",
        version >> 16,
        version & 0xFFFF,
        card(CardReg::Ports)?,
        blocks.join(", ")
    );
    println!(
        "card time: {} core cycles ({} MHz)",
        dev.now_cycles()?,
        CORE_HZ / 1_000_000
    );
    for p in 0..dev.ports() as u8 {
        let version = dev.read_register(bar0::port(p, Reg::Version.word()))?;
        let c = dev.port_config(p)?;
        println!(
            "port {p}: offload core v{}.{}  mac {}  ip {}/{}  gateway {}",
            version >> 16,
            version & 0xFFFF,
            mac(c.mac),
            ip(c.ip),
            u32::from_be_bytes(c.netmask).count_ones(),
            ip(c.gateway)
        );
    }
    Ok(())
}

fn regs(dev: &Device) -> Result<()> {
    let show = |block: &str, name: &str, off: u64| -> Result<()> {
        println!(
            "{off:#06x}  {block:<9} {name:<24} {:#010x}",
            dev.read_register(off)?
        );
        Ok(())
    };
    for r in CardReg::ALL {
        show("card", r.name(), 4 * r.word() as u64)?;
    }
    for r in RxReg::ALL {
        show("rx", r.name(), bar0::rx_engine(r.word()))?;
    }
    for c in RxCounter::ALL {
        show("rx", c.name(), bar0::rx_engine(c.word()))?;
    }
    for ring in 0..dev.ports() as u8 {
        let block = format!("tx ring {ring}");
        for r in TxReg::ALL {
            show(&block, r.name(), bar0::tx_ring(ring, r.word()))?;
        }
    }
    for p in 0..dev.ports() as u8 {
        let block = format!("port {p}");
        for r in Reg::ALL {
            show(&block, r.name(), bar0::port(p, r.word()))?;
        }
        for c in Counter::ALL {
            show(&block, c.name(), bar0::port(p, c.word()))?;
        }
        for r in PortReg::ALL {
            show(&block, r.name(), bar0::port(p, r.word()))?;
        }
    }
    Ok(())
}

fn arp(dev: &Device) -> Result<()> {
    for p in 0..dev.ports() as u8 {
        let t = dev.arp_table(p)?;
        println!("port {p}: {} entries", t.len());
        for e in t {
            println!("  {:<15} {}", ip(e.ip).to_string(), mac(e.mac));
        }
    }
    Ok(())
}

fn clops(dev: &Device) -> Result<()> {
    let mut n = 0;
    for p in 0..dev.ports() as u8 {
        for (clop, udp) in dev.streams(p)? {
            println!("CLOP {clop:>2}: port {p} UDP port {udp}");
            n += 1;
        }
    }
    if n == 0 {
        println!("no CLOP is registered");
    }
    Ok(())
}

fn stats(dev: &Device, all: bool) -> Result<()> {
    let print = |title: &str, list: Vec<(&str, u32)>| {
        let shown: Vec<_> = list.into_iter().filter(|(_, v)| all || *v != 0).collect();
        if !shown.is_empty() {
            println!("{title}:");
            for (n, v) in shown {
                println!("  {n:<24} {v}");
            }
        }
    };
    print("receive engine", dev.rx_counters()?);
    for p in 0..dev.ports() as u8 {
        print(&format!("transmit ring {p}"), dev.tx_ring_counters(p)?);
    }
    for p in 0..dev.ports() as u8 {
        print(&format!("port {p}"), dev.port_counters(p)?);
    }
    Ok(())
}

/// What one stream received.
#[derive(Default)]
struct StreamStats {
    datagrams: u64,
    bytes: u64,
    buffers: u64,
    events: BTreeMap<&'static str, u64>,
    /// Datagrams missing from the generator's sequence.
    lost: u64,
    next_seq: Option<u64>,
    latency_ns: Vec<f64>,
    /// Times of flight of the card generator's datagrams (core cycles, transmit to SOP).
    flight: Vec<u32>,
}

impl StreamStats {
    fn latency(&self) -> (f64, f64, f64) {
        if self.latency_ns.is_empty() {
            return (0.0, 0.0, 0.0);
        }
        let min = self.latency_ns.iter().copied().fold(f64::MAX, f64::min);
        let max = self.latency_ns.iter().copied().fold(0.0, f64::max);
        (
            min,
            self.latency_ns.iter().sum::<f64>() / self.latency_ns.len() as f64,
            max,
        )
    }

    fn line(&self, card_s: f64) -> String {
        let (min, avg, max) = self.latency();
        let gbps = if card_s > 0.0 {
            self.bytes as f64 * 8.0 / card_s / 1e9
        } else {
            0.0
        };
        let mut s = format!(
            "{:>9} datagrams {:>7.3} Gb/s  {:>6} buffers  latency {:.0}/{:.0}/{:.0} ns (min/avg/max)",
            self.datagrams, gbps, self.buffers, min, avg, max
        );
        if !self.flight.is_empty() {
            let min = self.flight.iter().min().unwrap_or(&0);
            let max = self.flight.iter().max().unwrap_or(&0);
            let avg = self.flight.iter().map(|f| *f as f64).sum::<f64>() / self.flight.len() as f64;
            s += &format!("  flight {min}/{avg:.1}/{max} cycles");
        }
        if self.lost > 0 {
            s += &format!("  lost {}", self.lost);
        }
        for (k, n) in &self.events {
            if *k != EventKind::BufferFull.name() && *k != EventKind::TimeoutFlush.name() {
                s += &format!("  {}: {n}", k.replace('_', " "));
            }
        }
        s
    }
}

fn parse_stream(s: &str) -> Result<(u8, u16)> {
    let (p, u) = s
        .split_once(':')
        .with_context(|| format!("stream {s:?}: expected PORT:UDP_PORT"))?;
    Ok((p.parse()?, u.parse()?))
}

fn rx(dev: &Device, a: &RxArgs) -> Result<()> {
    let streams: Vec<(u8, u16)> = a
        .streams
        .iter()
        .map(|s| parse_stream(s))
        .collect::<Result<_>>()?;
    let layout = match a.layout.as_str() {
        "header" => Layout::Header,
        "raw" => Layout::Raw,
        other => bail!("layout {other:?}: header or raw"),
    };
    address_ports(dev, a.ip)?;
    let gpu = a.gpu.map(|n| gpu_memory(dev, n)).transpose()?;
    let mut memories = vec![];
    let mut clops = vec![];
    // The simulated far end (`--device sim:traffic=...` or `pcap=...`) starts once every stream
    // is registered, not with the first: no frame finds its stream missing.
    if let Some(sim) = dev.sim() {
        sim.hold_option_traffic()?;
    }
    for &(port, udp) in &streams {
        let c = ClopConfig::new(port, udp)
            .buffers(a.buffers, a.buffer_size)
            .layout(layout)
            .flush_timeout((a.timeout_us > 0).then(|| Duration::from_micros(a.timeout_us)))
            .when_full(if a.skip_held {
                FullPolicy::SkipHeld
            } else {
                FullPolicy::Drop
            });
        let clop = match &gpu {
            None => dev.register(&c),
            Some(g) => {
                let m = g.alloc(a.buffers as u64 * a.buffer_size as u64)?;
                let clop = dev.register_provided(&c, g.clone(), m.device_address());
                memories.push(m);
                clop
            }
        };
        clops.push(clop.with_context(|| format!("registering port {port} UDP {udp}"))?);
    }
    if let Some(sim) = dev.sim() {
        sim.start_option_traffic(dev)?;
    }
    if let Some(t) = &a.sim_traffic {
        start_sim_traffic(dev, &streams, t)?;
    }
    if let Some(g) = &a.gen {
        let (port, bytes, gbps) = parse_gen(g)?;
        let (to_port, udp) = streams[0];
        let to = (u32::from(a.ip) + to_port as u32).to_be_bytes();
        dev.start_generator(port, &GenConfig::new(to, udp, bytes).rate_gbps(gbps))?;
    }
    let sequenced = a.sim_traffic.is_some() || a.gen.is_some();
    let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr_with_hz(4));
    let style = ProgressStyle::with_template("{prefix:>14} {msg}")?;
    let bars: Vec<ProgressBar> = streams
        .iter()
        .map(|(p, u)| {
            let b = multi.add(ProgressBar::new_spinner());
            b.set_style(style.clone());
            b.set_prefix(format!("port {p} udp {u}"));
            b
        })
        .collect();
    let mut st: Vec<StreamStats> = streams.iter().map(|_| StreamStats::default()).collect();
    let start = Instant::now();
    let card_start = dev.now_cycles()?;
    let mut card_cycles = 0u64;
    let mut last_now = card_start;
    let mut last_draw = Instant::now();
    let done = |st: &[StreamStats]| {
        a.datagrams
            .is_some_and(|n| st.iter().all(|s| s.datagrams >= n))
    };
    while start.elapsed().as_secs_f64() < a.duration && !done(&st) {
        if let Some(e) = dev.wait(Duration::from_millis(20))? {
            let i = clops.iter().position(|c| c.id() == e.clop).expect("ours");
            record(
                &clops[i],
                &e,
                &mut st[i],
                sequenced,
                a.gen.is_some() && i == 0,
                memories.get(i),
            )?;
        }
        if last_draw.elapsed() > Duration::from_millis(250) {
            let now = dev.now_cycles()?;
            card_cycles += now.wrapping_sub(last_now) as u64;
            last_now = now;
            let card_s = card_cycles as f64 / CORE_HZ as f64;
            for (b, s) in bars.iter().zip(&st) {
                b.set_message(s.line(card_s));
            }
            last_draw = Instant::now();
        }
    }
    card_cycles += dev.now_cycles()?.wrapping_sub(last_now) as u64;
    let card_s = card_cycles as f64 / CORE_HZ as f64;
    if let Some(g) = &a.gen {
        dev.stop_generator(parse_gen(g)?.0)?;
    }
    for b in &bars {
        b.finish_and_clear();
    }
    println!(
        "received for {:.1} s wall clock, {:.3} ms card time ({})",
        start.elapsed().as_secs_f64(),
        card_s * 1e3,
        dev.describe()
    );
    if let Some(g) = &gpu {
        println!("buffers in GPU memory: {}", g.describe());
    }
    for ((p, u), s) in streams.iter().zip(&st) {
        println!("port {p} udp {u:<5} {}", s.line(card_s));
    }
    let drops = |title: String, list: Vec<(&str, u32)>| {
        let d: Vec<String> = list
            .iter()
            .filter(|(n, v)| n.starts_with("drop") && *v > 0)
            .map(|(n, v)| format!("{n} {v}"))
            .collect();
        if !d.is_empty() {
            println!("{title} drops: {}", d.join(", "));
        }
    };
    drops("receive engine".into(), dev.rx_counters()?);
    for p in 0..dev.ports() as u8 {
        drops(format!("port {p}"), dev.port_counters(p)?);
    }
    if let Some(sim) = dev.sim() {
        let stats = sim.stats();
        let padded = stats.padded_frames;
        if padded > 0 {
            println!(
                "simulated link: {padded} captured frames shorter than 60 bytes padded as the \
                 sending MAC pads them (pcap=FILE@PORT:raw feeds them as captured)"
            );
        }
        let f = stats.faults;
        if !f.is_empty() {
            bail!("the simulated card faulted {} times: {}", f.len(), f[0]);
        }
    }
    Ok(())
}

/// Takes the event's buffer (if it has one), counts its datagrams and checks the sequence.
/// `seq`: payloads carry a sequence number; `flight`: they come from the card's generator (with
/// their transmit time).
fn record(
    clop: &nanet::Clop,
    e: &nanet::Event,
    s: &mut StreamStats,
    seq: bool,
    flight: bool,
    gpu: Option<&GpuBuffer>,
) -> Result<()> {
    *s.events.entry(e.kind.name()).or_default() += 1;
    if !matches!(e.kind, EventKind::BufferFull | EventKind::TimeoutFlush) {
        return Ok(());
    }
    s.buffers += 1;
    s.datagrams += e.packets as u64;
    s.latency_ns.push(e.latency_ns());
    let header = clop.config().layout == Layout::Header;
    let Some(memory) = gpu else {
        let buf = clop.take(e)?;
        return match buf.packets() {
            Ok(packets) => s.count(packets, seq, flight),
            Err(_) => {
                s.bytes += buf.data().len() as u64;
                Ok(())
            }
        };
    };
    // GPU memory: copied out (slowly, as a check), then given back.
    let at = clop.device_address(e.buffer).ok_or_else(|| {
        anyhow!(
            "event for buffer {}, which CLOP {} does not have",
            e.buffer,
            clop.id()
        )
    })? - memory.device_address();
    let mut bytes = vec![0; e.bytes as usize];
    memory.copy_to_host(at, &mut bytes)?;
    clop.release(e.buffer)?;
    if header {
        s.count(
            nanet::clop::Packets::in_copy(&bytes, e.packets),
            seq,
            flight,
        )
    } else {
        s.bytes += bytes.len() as u64;
        Ok(())
    }
}

impl StreamStats {
    /// Counts a buffer's datagrams and checks their sequence numbers.
    fn count<'a>(
        &mut self,
        packets: impl Iterator<Item = nanet::Packet<'a>>,
        seq: bool,
        flight: bool,
    ) -> Result<()> {
        for p in packets {
            self.bytes += p.payload.len() as u64;
            if let Some(n) = seq
                .then(|| nanet::backend::sim::Generator::sequence_of(p.payload))
                .flatten()
            {
                if let Some(want) = self.next_seq {
                    self.lost += n.saturating_sub(want);
                }
                self.next_seq = Some(n + 1);
                if flight {
                    // The card's generator: its transmit time follows the sequence number.
                    let tx = u32::from_le_bytes(p.payload[8..12].try_into()?);
                    self.flight.push(p.header.sop_time.wrapping_sub(tx));
                }
            }
        }
        Ok(())
    }
}

/// The GPU memory of `--gpu N`: CUDA device N on a real card, a stand-in on the simulated card.
fn gpu_memory(dev: &Device, ordinal: i32) -> Result<Arc<GpuMemory>> {
    if dev.sim().is_some() {
        return Ok(GpuMemory::new(Arc::new(nanet::gpu::HostGpu::new())));
    }
    #[cfg(feature = "gpu")]
    return Ok(GpuMemory::new(Arc::new(nanet::gpu::CudaGdrcopy::open(
        ordinal,
    )?)));
    #[cfg(not(feature = "gpu"))]
    bail!(
        "--gpu {ordinal} on a real card needs a nanetctl built with GPU support: \
         cargo build --release -p nanet-cli --features gpu --bin nanetctl"
    )
}

fn start_sim_traffic(dev: &Device, streams: &[(u8, u16)], spec: &str) -> Result<()> {
    let Some(sim) = dev.sim() else {
        bail!("--sim-traffic needs the simulated card (--device sim)");
    };
    // Streams sharing a port share its line rate.
    let mut per_port = [0usize; 4];
    for (p, _) in streams {
        per_port[*p as usize] += 1;
    }
    let mut traffic = vec![];
    for &(p, udp) in streams {
        let mut t = Traffic::parse_udp(&format!("{p}:{udp}:{spec}"))
            .map_err(|e| anyhow!("--sim-traffic {spec}: {e}"))?;
        if let Traffic::Udp { gbps, .. } = &mut t {
            *gbps /= per_port[p as usize] as f64;
        }
        traffic.push(t);
    }
    // Every stream's first datagram in the same cycle (the links in step).
    Ok(sim.start_traffic_together(dev, &traffic)?)
}

//! `nanet-sim`: run the nanet gateware in simulation. `nanet-sim --help` lists the commands.

use std::net::Ipv4Addr;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::{Args, Parser, Subcommand};
use nanet_contract::Counter;
use nanet_sim::benchmark;
use nanet_sim::engine::EngineKind;
use nanet_sim::testbench::capture::{capture_through_card, CaptureCard};
use nanet_sim::testbench::core::TxDatagram;
use nanet_sim::testbench::session::{Dir, PeerSession};
use nanet_sim::traffic::describe::describe_frame;
use nanet_sim::traffic::packets::{fix_ipv4_checksum, udp_frame, Endpoint};
use nanet_sim::traffic::pcap::{read_pcap, write_pcap};
use nanet_sim::traffic::replay::{replay_pcap, Pace, ReplayConfig};

#[derive(Parser)]
#[command(
    name = "nanet-sim",
    version,
    about = "Run the nanet gateware in cycle-accurate simulation"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// One port of the card talking to a real IP stack (smoltcp): ARP, UDP both ways, ping, and
    /// broken frames; prints the exchange and the counters.
    Demo {
        /// Also write every frame exchanged to this pcap file (open it with Wireshark or tshark).
        #[arg(long)]
        pcap: Option<PathBuf>,
        /// Engine: the rust-hdl model, the generated Verilog under Verilator, or both in lockstep.
        #[arg(long, value_enum, default_value_t = EngineKind::Rusthdl)]
        engine: EngineKind,
    },
    /// Replay a pcap capture into one port's receive side; record what the port transmits.
    Replay(ReplayArgs),
    /// Feed a pcap capture through the whole card (four ports behind PCIe, a CLOP per UDP
    /// destination port up to 64) and check it against the reference receiver: every datagram it
    /// accepts lands byte-exact and in order, every other frame is counted under its reason.
    /// Prints the datagrams per stream and the drops by reason; fails on any disagreement.
    Capture(CaptureArgs),
    /// One port with the Linux kernel as its peer: a TAP device in a network namespace this
    /// creates (and deletes on exit), so `ip netns exec NAMESPACE ping IP`, arping and UDP sockets
    /// there talk to the port. Prints every datagram the port delivers, the counters at the end.
    /// Needs root (CAP_NET_ADMIN, CAP_SYS_ADMIN).
    Tap(TapArgs),
    /// Benchmarks: the offload core's line rate, latency and simulation speed
    /// (OUT/offload.json), engines (OUT/engines.json), the receive path's latency and goodput
    /// (OUT/rx_latency.json, OUT/rx_bandwidth.json and their SVG plots), the whole card behind
    /// PCIe (OUT/card.json).
    Bench {
        #[arg(long, default_value = "target/bench")]
        out: PathBuf,
        /// Short runs (a smoke test of the benchmark, not figures to report).
        #[arg(long)]
        quick: bool,
        /// Run one group only.
        #[arg(long, value_enum)]
        only: Option<BenchGroup>,
    },
}

#[derive(Args)]
struct CaptureArgs {
    /// Ethernet capture to feed (frames without FCS; those under 60 bytes are padded as the
    /// sending MAC pads them).
    #[arg(long)]
    pcap: PathBuf,
    /// The card's MAC address on every port.
    #[arg(long, default_value = "02:4e:41:4e:45:54")]
    mac: String,
    /// The card's IPv4 address on every port.
    #[arg(long, default_value = "192.0.2.10")]
    ip: Ipv4Addr,
    #[arg(long, default_value = "255.255.255.0")]
    netmask: Ipv4Addr,
    /// Feed only the first N frames.
    #[arg(long)]
    frames: Option<usize>,
    /// Engine: the rust-hdl model, the generated Verilog under Verilator, or both in lockstep.
    #[arg(long, value_enum, default_value_t = EngineKind::Verilator)]
    engine: EngineKind,
}

#[derive(Args)]
struct ReplayArgs {
    /// Ethernet capture to feed into the port (frames without FCS, as Wireshark saves them).
    #[arg(long)]
    pcap: PathBuf,
    /// Write every frame the port transmits (ARP and echo replies, ...) to this pcap file.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Write the port's counters and a summary as JSON to this file.
    #[arg(long)]
    counters: Option<PathBuf>,
    /// Write the list of UDP datagrams delivered to the host side as JSON to this file.
    #[arg(long)]
    delivered: Option<PathBuf>,
    /// The port's MAC address.
    #[arg(long, default_value = "02:4e:41:4e:45:54")]
    mac: String,
    /// The port's IPv4 address.
    #[arg(long)]
    ip: Ipv4Addr,
    #[arg(long, default_value = "255.255.255.0")]
    netmask: Ipv4Addr,
    #[arg(long, default_value = "0.0.0.0")]
    gateway: Ipv4Addr,
    /// Frame pacing: back to back at line rate, or at the capture's time stamps.
    #[arg(long, value_enum, default_value_t = Pace::LineRate)]
    pace: Pace,
    /// Feed frames exactly as captured. By default frames shorter than Ethernet's 60-byte minimum
    /// are padded with zeros, as the sending host's MAC pads them on the wire (a capture taken on
    /// the sender holds them unpadded); --raw keeps them short, to test how the port counts runts.
    #[arg(long)]
    raw: bool,
    /// Trace every signal of the core into this VCD file (GTKWave opens it; about 1 MB per 1000
    /// cycles). With `--engine both`, the Verilog's trace goes beside it as NAME.verilator.vcd.
    #[arg(long)]
    vcd: Option<PathBuf>,
    /// Engine: the rust-hdl model, the generated Verilog under Verilator, or both in lockstep.
    #[arg(long, value_enum, default_value_t = EngineKind::Rusthdl)]
    engine: EngineKind,
}

#[derive(Args)]
struct TapArgs {
    /// The network namespace to create (it must not exist).
    #[arg(long, default_value = "nanet")]
    namespace: String,
    /// The port's IPv4 address.
    #[arg(long, default_value = "10.0.0.10")]
    ip: Ipv4Addr,
    /// The port's MAC address.
    #[arg(long, default_value = "02:4e:41:4e:45:54")]
    mac: String,
    /// The Linux side's IPv4 address, on the port's subnet.
    #[arg(long, default_value = "10.0.0.99")]
    linux_ip: Ipv4Addr,
    /// The subnet's prefix length.
    #[arg(long, default_value_t = 24, value_parser = clap::value_parser!(u8).range(8..=30))]
    prefix: u8,
    /// Send every datagram the port delivers back to where it came from, from the port it was
    /// sent to (a UDP echo through the port's transmit path).
    #[arg(long)]
    echo: bool,
    /// Stop after this many seconds of wall time (default: at Ctrl-C).
    #[arg(long)]
    seconds: Option<f64>,
    /// Engine: the generated Verilog under Verilator (fast enough for ping), the rust-hdl model,
    /// or both in lockstep.
    #[arg(long, value_enum, default_value_t = EngineKind::Verilator)]
    engine: EngineKind,
}

fn main() -> Result<()> {
    match Cli::parse().cmd {
        Cmd::Demo { pcap, engine } => demo(pcap, engine),
        Cmd::Replay(a) => replay(a),
        Cmd::Capture(a) => capture(a),
        Cmd::Tap(a) => tap(a),
        Cmd::Bench { out, quick, only } => bench(&out, quick, only),
    }
}

fn parse_mac(s: &str) -> Result<[u8; 6]> {
    let parts: Vec<&str> = s.split([':', '-']).collect();
    if parts.len() != 6 {
        bail!("MAC address {s:?} must have six bytes, like 02:4e:41:4e:45:54");
    }
    let mut mac = [0u8; 6];
    for (m, p) in mac.iter_mut().zip(parts) {
        *m = u8::from_str_radix(p, 16)
            .with_context(|| format!("MAC address {s:?}: {p:?} is not a hex byte"))?;
    }
    Ok(mac)
}

fn capture(a: CaptureArgs) -> Result<()> {
    let frames = read_pcap(&a.pcap).with_context(|| format!("reading {}", a.pcap.display()))?;
    let card = CaptureCard {
        us: Endpoint::new(parse_mac(&a.mac)?, a.ip.octets()),
        netmask: u32::from(a.netmask),
    };
    eprintln!(
        "feeding {} frames through the card ({:?}) ...",
        a.frames.unwrap_or(frames.len()).min(frames.len()),
        a.engine
    );
    // The card's simulation state is large: it runs on a thread with a stack to match.
    let (engine, limit) = (a.engine, a.frames);
    let r = std::thread::Builder::new()
        .stack_size(512 << 20)
        .spawn(move || capture_through_card(engine, &frames, card, limit))?
        .join()
        .map_err(|_| anyhow::anyhow!("the simulation thread panicked"))??;
    print!("{r}");
    if !r.mismatches.is_empty() {
        for m in &r.mismatches {
            eprintln!("mismatch: {m}");
        }
        bail!(
            "{} disagreements with the reference receiver",
            r.mismatches.len()
        );
    }
    println!("every datagram and every drop as the reference receiver says");
    Ok(())
}

fn replay(a: ReplayArgs) -> Result<()> {
    let cfg = ReplayConfig {
        port: Endpoint::new(parse_mac(&a.mac)?, a.ip.octets()),
        netmask: a.netmask.octets(),
        gateway: a.gateway.octets(),
        pace: a.pace,
        raw: a.raw,
        drain_cycles: 2_000,
        progress: true,
        vcd: a.vcd.clone(),
        engine: a.engine,
    };
    let report = replay_pcap(&a.pcap, a.out.as_deref(), &cfg)
        .with_context(|| format!("replaying {}", a.pcap.display()))?;
    println!(
        "{} frames in, {} frames out, {} datagrams delivered, {} cycles ({:.3} ms simulated)",
        report.frames_in,
        report.frames_out,
        report.delivered.len(),
        report.cycles,
        report.simulated_ns as f64 / 1e6
    );
    if report.padded_frames > 0 {
        println!(
            "{} frames shorter than 60 bytes padded as the sending MAC pads them (--raw: as captured)",
            report.padded_frames
        );
    }
    print_counters(report.counters.iter().map(|(k, v)| (*k, *v)));
    if let Some(p) = &a.counters {
        let summary = serde_json::json!({
            "frames_in": report.frames_in,
            "padded_frames": report.padded_frames,
            "frames_out": report.frames_out,
            "delivered": report.delivered.len(),
            "cycles": report.cycles,
            "simulated_ns": report.simulated_ns,
            "counters": report.counters,
        });
        write_json(p, &summary)?;
    }
    if let Some(p) = &a.delivered {
        write_json(p, &report.delivered)?;
    }
    if let Some(p) = &a.out {
        println!("transmitted frames written to {}", p.display());
    }
    Ok(())
}

fn tap(a: TapArgs) -> Result<()> {
    use nanet_sim::testbench::core::CoreBench;
    use nanet_sim::world::linux_peer::{LinuxPeer, LinuxPeerConfig};
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    let us = Endpoint::new(parse_mac(&a.mac)?, a.ip.octets());
    let mask = u32::MAX << (32 - a.prefix);
    if u32::from(a.ip) & mask != u32::from(a.linux_ip) & mask || a.ip == a.linux_ip {
        bail!(
            "{} and {} are not two addresses of one /{} subnet",
            a.ip,
            a.linux_ip,
            a.prefix
        );
    }
    let stop = Arc::new(AtomicBool::new(false));
    let on_signal = stop.clone();
    ctrlc::set_handler(move || on_signal.store(true, Ordering::Relaxed))
        .context("installing the Ctrl-C handler")?;
    let mut card = CoreBench::try_with_engine(a.engine, 0.0, 1)?;
    card.configure(&us, mask.to_be_bytes(), [0; 4]);
    let config = LinuxPeerConfig {
        namespace: a.namespace.clone(),
        device: "nanet0".into(),
        me: Endpoint::new([0x02, 0, 0, 0, 0, 0x99], a.linux_ip.octets()),
        prefix_len: a.prefix,
    };
    let mut linux = LinuxPeer::create(&config)?;
    let ns = &a.namespace;
    println!(
        "port {} ({}) <-> Linux {}/{} on TAP device nanet0 in network namespace {ns}",
        a.ip, a.mac, a.linux_ip, a.prefix
    );
    println!("try: ip netns exec {ns} ping {}", a.ip);
    println!(
        "     ip netns exec {ns} bash -c 'echo hello > /dev/udp/{}/5000'{}",
        a.ip,
        if a.echo { "   (echoed back)" } else { "" }
    );
    println!(
        "{}",
        match a.seconds {
            Some(s) => format!("running for {s} s"),
            None => "Ctrl-C stops".into(),
        }
    );
    let deadline = a
        .seconds
        .map(|s| Instant::now() + Duration::from_secs_f64(s));
    let mut errored = 0u64;
    while !stop.load(Ordering::Relaxed) && deadline.is_none_or(|d| Instant::now() < d) {
        let mut busy = false;
        while let Some(f) = linux.recv().context("reading the TAP device")? {
            card.link_rx.push(f, false);
            busy = true;
        }
        card.run(64);
        while let Some(f) = card.link_tx.frames.pop_front() {
            busy = true;
            if f.error {
                errored += 1; // a MAC would corrupt its FCS: Linux never sees it
            } else {
                linux.send(&f.bytes).context("writing the TAP device")?;
            }
        }
        while let Some(d) = card.rx.pop_front() {
            busy = true;
            let from = Ipv4Addr::from(d.src_ip);
            if d.error {
                println!(
                    "{from}:{} -> port {}: ended with an error, discarded",
                    d.src_port, d.dst_port
                );
                continue;
            }
            println!(
                "{from}:{} -> port {}: {} bytes {:?}",
                d.src_port,
                d.dst_port,
                d.payload.len(),
                String::from_utf8_lossy(&d.payload[..d.payload.len().min(40)])
            );
            if a.echo {
                card.send(TxDatagram {
                    dst_ip: d.src_ip,
                    src_port: d.dst_port,
                    dst_port: d.src_port,
                    payload: d.payload,
                });
            }
        }
        if !busy && card.link_rx.is_idle() && card.tx_pending() == 0 {
            // Nothing in flight: let wall time pass instead of simulating an idle port.
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    println!(
        "\n{} frames from Linux ({} padded to 60 bytes), {} to Linux, {} simulated cycles",
        linux.frames_from_linux,
        linux.padded_frames,
        linux.frames_to_linux,
        card.cycle_count()
    );
    if errored > 0 {
        println!("{errored} frames the port ended with an error were not handed to Linux");
    }
    let counters: Vec<(&str, u32)> = card.counters().into_iter().collect();
    print_counters(counters.into_iter());
    Ok(())
}

fn print_counters<'a>(counters: impl Iterator<Item = (&'a str, u32)>) {
    let nonzero: Vec<_> = counters.filter(|(_, v)| *v != 0).collect();
    if nonzero.is_empty() {
        println!("all counters are zero");
        return;
    }
    println!("counters:");
    for (k, v) in nonzero {
        println!("  {k:<24} {v}");
    }
}

fn demo(pcap: Option<PathBuf>, engine: EngineKind) -> Result<()> {
    let card = Endpoint::new([0x02, 0x4E, 0x41, 0x4E, 0x45, 0x54], [192, 168, 10, 1]);
    let peer = Endpoint::new([0x02, 0x00, 0x5E, 0x00, 0x00, 0x02], [192, 168, 10, 2]);
    let (card_port, peer_port) = (4000, 9000);
    let mut s =
        PeerSession::try_with_engine(engine, card, peer, 24, [192, 168, 10, 254], peer_port)?;
    let engine_name = match engine {
        EngineKind::Rusthdl => "rust-hdl model",
        EngineKind::Verilator => "generated Verilog under Verilator",
        EngineKind::Both => "rust-hdl model and Verilog in lockstep",
    };
    println!(
        "nanet offload core ({engine_name}, 156.25 MHz) <-> smoltcp, over a simulated 10GbE link"
    );
    println!("card 192.168.10.1 (02:4e:41:4e:45:54), peer 192.168.10.2 (02:00:5e:00:00:02)\n");

    // 1. The card sends first: it must resolve the peer with its own ARP request.
    for i in 0..3u8 {
        let payload = format!("datagram {i} from the card").into_bytes();
        s.card.send(TxDatagram {
            dst_ip: peer.ip_u32(),
            src_port: card_port,
            dst_port: peer_port,
            payload,
        });
    }
    let mut at_peer = vec![];
    let ok = s.run_until(200_000, |s| {
        while let Some(d) = s.peer.recv_udp() {
            at_peer.push(d);
        }
        at_peer.len() == 3
    });
    if !ok {
        bail!(
            "the peer received {} of 3 datagrams from the card",
            at_peer.len()
        );
    }
    // 2. The peer answers each datagram.
    for (_, port, data) in &at_peer {
        let reply = format!("reply to '{}'", String::from_utf8_lossy(data));
        s.peer.send_udp(card.ip, *port, reply.as_bytes());
    }
    if !s.run_until(200_000, |s| s.card.rx.len() == 3) {
        bail!(
            "the card received {} of 3 datagrams from the peer",
            s.card.rx.len()
        );
    }
    // 3. The peer pings the card.
    for seq in 1..=3u16 {
        s.peer.ping(card.ip, seq, &[seq as u8; 56]);
        let mut got = None;
        if !s.run_until(100_000, |s| {
            got = s.peer.recv_echo_reply();
            got.is_some()
        }) {
            bail!("no echo reply to ping {seq}");
        }
    }
    // 4. Broken frames from the wire.
    let good = udp_frame(
        &peer,
        &card,
        peer_port,
        card_port,
        b"0123456789abcdef01234567",
    );
    let mut bad_sum = good.clone();
    bad_sum[50] ^= 0xFF;
    let mut frag = good.clone();
    frag[20] |= 0x20;
    fix_ipv4_checksum(&mut frag);
    s.card.link_rx.push(bad_sum, false);
    s.card.link_rx.push(good.clone(), true);
    s.card.link_rx.push(frag, false);
    s.card.link_rx.push(good[..40].to_vec(), false);
    s.run(2_000);

    println!("{:>10}  {:<13} frame", "time (ns)", "direction");
    for (dir, f) in &s.capture {
        let d = match dir {
            Dir::CardToPeer => "card -> peer",
            Dir::PeerToCard => "peer -> card",
        };
        println!("{:>10}  {d:<13} {}", f.time_ns, describe_frame(&f.bytes));
    }
    println!(
        "{:>10}  {:<13} 4 broken frames (bad UDP checksum, bad FCS, fragment, runt)",
        s.now_ns(),
        "wire -> card"
    );
    println!("\nthe peer received from the card:");
    for (ip, port, data) in &at_peer {
        println!(
            "  {}.{}.{}.{}:{port}  {:?}",
            ip[0],
            ip[1],
            ip[2],
            ip[3],
            String::from_utf8_lossy(data)
        );
    }
    println!("the card delivered to its host side:");
    for d in s.card.rx.iter().filter(|d| !d.error) {
        let ip = d.src_ip.to_be_bytes();
        println!(
            "  {}.{}.{}.{}:{} -> port {}  {:?}",
            ip[0],
            ip[1],
            ip[2],
            ip[3],
            d.src_port,
            d.dst_port,
            String::from_utf8_lossy(&d.payload)
        );
    }
    let counters: Vec<(&str, u32)> = Counter::ALL
        .into_iter()
        .map(|c| (c.name(), s.card.counter(c)))
        .collect();
    println!();
    print_counters(counters.into_iter());
    if let Some(p) = pcap {
        let frames: Vec<_> = s.capture.iter().map(|(_, f)| f.clone()).collect();
        write_pcap(&p, &frames).with_context(|| format!("writing {}", p.display()))?;
        println!(
            "\n{} frames written to {} (tshark -r {} shows them)",
            frames.len(),
            p.display(),
            p.display()
        );
    }
    Ok(())
}

/// Benchmark groups of `nanet-sim bench`.
#[derive(Copy, Clone, PartialEq, Eq, clap::ValueEnum)]
enum BenchGroup {
    /// The offload core and the simulation engines.
    Core,
    /// The four-port receive path into host memory.
    Rx,
    /// The whole card behind PCIe: loopback time of flight, latency and DMA bandwidth.
    Card,
}

fn bench(out: &std::path::Path, quick: bool, only: Option<BenchGroup>) -> Result<()> {
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let run = |g: BenchGroup| only.is_none() || only == Some(g);
    if run(BenchGroup::Core) {
        bench_core(out, quick)?;
    }
    if run(BenchGroup::Rx) {
        bench_rx_path(out, quick)?;
    }
    if run(BenchGroup::Card) {
        bench_card(out, quick)?;
    }
    Ok(())
}

/// The whole card's benchmarks (OUT/card.json), on a thread with room for the model's structs.
fn bench_card(out: &std::path::Path, quick: bool) -> Result<()> {
    let r = std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || benchmark::card::run(quick, &mut |step| eprintln!("bench: {step}")))
        .context("starting the benchmark thread")?
        .join()
        .map_err(|_| anyhow::anyhow!("the card benchmark panicked"))??;
    println!(
        "\nwhole card, loopback port 0 -> port 1 (no MAC/PHY): time of flight, generator request \
         to SOP at the MAC, from the card's stamps, and how old the stamps are"
    );
    println!(
        "{:>8} {:>8} {:>10} {:>10} {:>10} {:>12} {:>12} {:>12}",
        "payload", "samples", "min", "mean", "max", "mean", "tx age", "rx age"
    );
    for f in &r.time_of_flight {
        println!(
            "{:>8} {:>8} {:>4} cycles {:>6.1} cycles {:>4} cycles {:>6.1} ns ({:.1} net cycles) {:>5.1}-{:<5.1} ns {:>5.1}-{:<5.1} ns",
            f.payload_bytes,
            f.samples,
            f.tof_cycles_min,
            f.tof_cycles_mean,
            f.tof_cycles_max,
            f.tof_ns_mean,
            f.tof_net_cycles_mean,
            f.tx_stamp_age_ns.0,
            f.tx_stamp_age_ns.1,
            f.rx_stamp_age_ns.0,
            f.rx_stamp_age_ns.1,
        );
    }
    println!("\nwhole card: latency from SOP at the MAC, through the TLP layer");
    print_latency(&r.latency);
    println!(
        "\nwhole card: latency under load, every port's datagram arriving in the same cycle; \
         per port, SOP to last byte visible (mean) and the card's stamp of its last DMA beat (min/mean/max)"
    );
    for row in &r.load_latency {
        print_load_latency(row);
    }
    println!(
        "\nwhole card: make demo's traffic, every port's datagrams at 60% of line rate, in step; \
         per port, SOP to last byte visible (mean) and the card's stamp of its last DMA beat (min/mean/max)"
    );
    for row in &r.demo_latency {
        print_load_latency(row);
    }
    println!("\nwhole card: DMA write bandwidth through the TLP layer, every port at line rate");
    println!(
        "{:>7} {:>5} {:>8} {:>11} {:>8} {:>15} {:>9} {:>8}",
        "memory",
        "ports",
        "payload",
        "goodput",
        "of line",
        "of PCIe payload",
        "fifo drop",
        "no buf"
    );
    for b in &r.bandwidth {
        println!(
            "{:>7} {:>5} {:>8} {:>6.2} Gb/s {:>7.1}% {:>14.1}% {:>9} {:>8}",
            b.memory,
            b.ports,
            b.payload_bytes,
            b.goodput_gbps,
            b.line_rate_fraction * 100.0,
            b.memory_fraction * 100.0,
            b.fifo_full_drops,
            b.no_buffer_drops
        );
    }
    println!(
        "\nwhole card: transmit from host memory, each port from its own ring, each port's share \
         of line rate on its wire over the window (a stalled port's MAC takes nothing); at the \
         root complex: the card's reads answered per us, in flight (mean), their round trip, the \
         share of cycles a beat went to the card, the share of the link's bytes toward it used; \
         the card's own share of cycles a read waited for a tag (all 32 in flight)"
    );
    println!(
        "{:>8} {:>5} {:>6} {:>8} {:>8} {:>10} {:>8} {:>9} {:>8} {:>7} {:>6} {:>6}  per port (frames in window)",
        "memory",
        "bits",
        "ports",
        "stalled",
        "payload",
        "least",
        "reads/us",
        "in flight",
        "trip",
        "to card",
        "link",
        "tags"
    );
    for t in &r.tx {
        let per_port: Vec<String> = t
            .line_rate_fraction
            .iter()
            .zip(&t.frames_in_window)
            .map(|(f, n)| format!("{:.1}% ({n})", f * 100.0))
            .collect();
        println!(
            "{:>8} {:>5} {:>6} {:>8} {:>8} {:>9.1}% {:>8.1} {:>9.1} {:>5.0} ns {:>6.1}% {:>5.1}% {:>5.1}%  {}",
            t.memory,
            t.datapath_bits,
            t.ports,
            t.stalled_ports,
            t.payload_bytes,
            t.line_rate_fraction_min * 100.0,
            t.reads_per_us,
            t.reads_in_flight_mean,
            t.read_round_trip_ns,
            t.to_card_busy_fraction * 100.0,
            t.to_card_link_busy_fraction * 100.0,
            t.read_tag_wait_fraction * 100.0,
            per_port.join(" ")
        );
    }
    println!(
        "\nwhole card: transmit latency, one datagram at a time, doorbell to SOP at the MAC \
         (Gen2 x8 memory latency); where it goes by the card's stamps"
    );
    println!(
        "{:>8} {:>8} {:>22} {:>14} {:>18} {:>14}",
        "payload", "samples", "min / mean / max", "to desc read", "to header entry", "to wire"
    );
    for t in &r.tx_latency {
        println!(
            "{:>8} {:>8} {:>5.0} / {:>5.0} / {:>5.0} ns {:>11.0} ns {:>15.0} ns {:>11.0} ns",
            t.payload_bytes,
            t.samples,
            t.doorbell_to_wire_ns_min,
            t.doorbell_to_wire_ns_mean,
            t.doorbell_to_wire_ns_max,
            t.doorbell_to_fetch_ns,
            t.fetch_to_header_entry_ns,
            t.header_entry_to_wire_ns,
        );
    }
    let path = out.join("card.json");
    write_json(&path, &r)?;
    println!("written: {}", path.display());
    Ok(())
}

fn bench_core(out: &std::path::Path, quick: bool) -> Result<()> {
    let report = benchmark::offload::run(quick, &mut |step| eprintln!("bench: {step}"));
    println!("offload core, one port, 156.25 MHz, 64 packets per size back to back");
    println!(
        "{:<4} {:>8} {:>6} {:>6} {:>6} {:>10} {:>9} {:>7} {:>13} {:>8}",
        "dir",
        "payload",
        "in",
        "out",
        "drops",
        "line rate",
        "goodput",
        "stalls",
        "latency (cyc)",
        "beyond hdr"
    );
    for r in &report.rates {
        println!(
            "{:<4} {:>8} {:>6} {:>6} {:>6} {:>9.1}% {:>6.2} Gb/s {:>4} {:>8}..{:<4} {:>8}",
            r.direction,
            r.payload_bytes,
            r.packets_in,
            r.packets_out,
            r.drops,
            r.line_rate_fraction * 100.0,
            r.goodput_gbps,
            r.stall_cycles,
            r.latency_cycles_min,
            r.latency_cycles_max,
            r.beyond_header_cycles
        );
    }
    println!("\nsimulation speed of the offload core (same stimulus, same run):");
    for e in &report.sim_speed {
        println!(
            "  {:<22} {:>10.0} cycles/s  ({} cycles in {:.2} s)",
            e.engine, e.cycles_per_s, e.cycles, e.seconds
        );
    }
    println!(
        "  our driver / rust-hdl Simulation: {:.1}x",
        report.driver_speedup_ratio
    );
    let path = out.join("offload.json");
    write_json(&path, &report)?;
    println!("\nwritten: {}", path.display());

    let e = benchmark::engines::run(quick, &mut |step| eprintln!("bench: {step}"))?;
    println!("\nengines on the offload core (same stimulus, same run):");
    for s in &e.bare {
        println!(
            "  bare           {:<10} {:>12.0} cycles/s ({} cycles in {:.2} s)",
            s.engine, s.cycles_per_s, s.cycles, s.seconds
        );
    }
    println!(
        "  Verilator / rust-hdl model, bare: {:.0}x",
        e.verilator_over_rusthdl_ratio
    );
    for s in &e.with_testbench {
        println!(
            "  with testbench {:<10} {:>12.0} cycles/s ({} cycles in {:.2} s, {} datagrams)",
            s.engine, s.cycles_per_s, s.cycles, s.seconds, s.datagrams_delivered
        );
    }
    println!(
        "  Verilator / rust-hdl model, with testbench: {:.0}x",
        e.with_testbench_verilator_over_rusthdl_ratio
    );
    let r = &e.rebuild;
    println!(
        "  rebuild after a one-line change: {:.1} s (Verilog {:.2} s + Verilator model {:.1} s); runtime once {:.1} s; cache hit {:.3} s",
        r.rebuild_after_change_s, r.verilog_generation_s, r.model_rebuild_s, r.runtime_build_s, r.cache_hit_s
    );
    let path = out.join("engines.json");
    write_json(&path, &e)?;
    println!("written: {}", path.display());
    Ok(())
}

/// The receive-path benchmarks (figures 7 and 8 of the paper), on a thread with room for the
/// model's very large structs.
fn bench_rx_path(out: &std::path::Path, quick: bool) -> Result<()> {
    let r = std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || benchmark::rx::run(quick, &mut |step| eprintln!("bench: {step}")))
        .context("starting the benchmark thread")?
        .join()
        .map_err(|_| anyhow::anyhow!("the receive-path benchmark panicked"))??;
    println!("\nreceive path, four ports, Verilog (Verilator): latency from SOP at the MAC");
    print_latency(&r.latency);
    println!("\nreceive path: goodput with every port at line rate");
    println!(
        "{:>5} {:>7} {:>8} {:>11} {:>11} {:>9} {:>9} {:>8} {:>8}",
        "ports",
        "memory",
        "payload",
        "goodput",
        "offered",
        "of line",
        "of memory",
        "fifo drop",
        "no buf"
    );
    for b in &r.bandwidth {
        println!(
            "{:>5} {:>7} {:>8} {:>6.2} Gb/s {:>6.2} Gb/s {:>8.1}% {:>8.1}% {:>9} {:>8}",
            b.ports,
            b.memory,
            b.payload_bytes,
            b.goodput_gbps,
            b.offered_goodput_gbps,
            b.line_rate_fraction * 100.0,
            b.memory_fraction * 100.0,
            b.fifo_full_drops,
            b.no_buffer_drops
        );
    }
    let lat = out.join("rx_latency.json");
    let bw = out.join("rx_bandwidth.json");
    write_json(
        &lat,
        &serde_json::json!({ "engine": r.engine, "rows": r.latency }),
    )?;
    write_json(
        &bw,
        &serde_json::json!({ "engine": r.engine, "rows": r.bandwidth }),
    )?;
    let lat_svg = out.join("rx_latency.svg");
    let bw_svg = out.join("rx_bandwidth.svg");
    benchmark::rx::plot_latency(&r.latency, &lat_svg)?;
    benchmark::rx::plot_bandwidth(&r.bandwidth, &bw_svg)?;
    for p in [lat, bw, lat_svg, bw_svg] {
        println!("written: {}", p.display());
    }
    Ok(())
}

/// Writes `value` as pretty JSON to `path`.
fn write_json(path: &std::path::Path, value: &impl serde::Serialize) -> Result<()> {
    std::fs::write(path, serde_json::to_string_pretty(value)?)
        .with_context(|| format!("writing {}", path.display()))
}

/// A latency-under-load row: per port, the testbench's and the card's figures, then how the
/// ports were served.
fn print_load_latency(row: &benchmark::rx::LoadLatencyRow) {
    let ports: Vec<String> = row
        .per_port
        .iter()
        .map(|p| {
            format!(
                "port {} {:.0} ns (stamped {:.0}/{:.0}/{:.0})",
                p.port, p.last_byte_visible_ns, p.stamped_ns_min, p.stamped_ns, p.stamped_ns_max
            )
        })
        .collect();
    println!(
        "{:>7} {:>4} bits {:>5} B x {:>3} rounds: {}",
        row.memory,
        row.datapath_bits,
        row.payload_bytes,
        row.rounds,
        ports.join(", ")
    );
    println!(
        "{:>7} k-th after the first: {:.0?} ns (max {:.0?}); at most {:.0} ns per k (the link \
         alone: {:.0} ns a datagram)",
        "",
        row.kth_after_first_ns,
        row.kth_after_first_ns_max,
        row.ns_per_k_max,
        row.link_ns_per_datagram
    );
}

/// The latency table of the receive-path and card benchmarks: the testbench's measure (SOP edge
/// at the MAC interface to visible in host memory) beside the card's stamps and their
/// cross-check.
fn print_latency(rows: &[benchmark::rx::LatencyRow]) {
    println!(
        "{:>7} {:>7} {:>6} {:>4} {:>19} {:>9} {:>7} {:>8} {:>8} {:>9} {:>9}",
        "memory",
        "payload",
        "buffer",
        "pkts",
        "last byte min-max",
        "event",
        "frame",
        "overhead",
        "stamped",
        "sop age",
        "beat->mem"
    );
    for l in rows {
        println!(
            "{:>7} {:>7} {:>6} {:>4} {:>8.0}-{:>7.0} ns {:>6.0} ns {:>4.0} ns {:>5.0} ns {:>5.0} ns {:>4.1}-{:<4.1} {:>4}-{:<4}",
            l.memory,
            l.payload_bytes,
            l.buffer_bytes,
            l.packets_per_buffer,
            l.last_byte_visible_ns_min,
            l.last_byte_visible_ns_max,
            l.event_visible_ns,
            l.frame_ns,
            l.overhead_ns,
            l.stamped_ns,
            l.sop_stamp_age_ns.0,
            l.sop_stamp_age_ns.1,
            l.last_beat_to_memory_cycles.0,
            l.last_beat_to_memory_cycles.1,
        );
    }
}

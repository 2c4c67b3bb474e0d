//! `nanet-sim`: run the nanet gateware in simulation.
//!
//! - `nanet-sim demo`: the receive engine of the offload core fed with a mix of real traffic (UDP
//!   datagrams, ARP, ping) and broken frames, showing what it made of each frame.

use anyhow::Result;
use clap::{Parser, Subcommand};
use nanet_sim::packets::*;
use nanet_sim::rx_bench::{RxParserBench, Seen};

#[derive(Parser)]
#[command(
    name = "nanet-sim",
    version,
    about = "Run the nanet gateware in simulation"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Feed the offload core's receive engine a traffic mix and show its verdict on every frame.
    Demo {
        /// Probability that the source withholds a beat / the sink refuses one, each cycle.
        #[arg(long, default_value_t = 0.1)]
        stall: f64,
    },
}

fn main() -> Result<()> {
    match Cli::parse().cmd {
        Cmd::Demo { stall } => demo(stall),
    }
}

fn demo(stall: f64) -> Result<()> {
    let us = Endpoint::new([0x02, 0x4E, 0x41, 0x4E, 0x45, 0x54], [192, 168, 10, 1]);
    let peer = Endpoint::new([0x02, 0x00, 0x5E, 0x00, 0x00, 0x02], [192, 168, 10, 2]);
    let stranger = Endpoint::new([0x02, 0x00, 0x5E, 0x00, 0x00, 0x03], [192, 168, 10, 3]);
    let mut frames: Vec<(String, Vec<u8>, bool)> = vec![
        (
            "ARP request for us".into(),
            arp_request(&peer, us.ip),
            false,
        ),
        (
            "ping (ICMP echo request)".into(),
            icmp_echo_request(&peer, &us, 0x1234, 1, b"abcdefghijklmnop"),
            false,
        ),
        (
            "ARP request for another host".into(),
            arp_request(&peer, stranger.ip),
            false,
        ),
        (
            "UDP to another host".into(),
            udp_frame(&peer, &stranger, 5000, 6000, b"not ours"),
            false,
        ),
    ];
    for (i, len) in [0usize, 18, 64, 512, 1472].into_iter().enumerate() {
        let payload: Vec<u8> = (0..len).map(|b| (b * 3 + i) as u8).collect();
        frames.push((
            format!("UDP {len} B payload"),
            udp_frame(&peer, &us, 5000 + i as u16, 6000, &payload),
            false,
        ));
    }
    let good = udp_frame(&peer, &us, 5000, 6000, b"0123456789abcdef0123");
    let mut bad_csum = good.clone();
    bad_csum[45] ^= 0x40;
    let mut frag = good.clone();
    frag[20] |= 0x20;
    fix_ipv4_checksum(&mut frag);
    frames.push(("UDP, payload corrupted (checksum)".into(), bad_csum, false));
    frames.push(("UDP, MAC reports bad FCS".into(), good.clone(), true));
    frames.push(("UDP fragment".into(), frag, false));
    frames.push(("runt (40 bytes)".into(), good[..40].to_vec(), false));

    println!("nanet offload core, receive engine, in simulation (rust-hdl model, 156.25 MHz)");
    println!("our MAC {}  IP {}", fmt_mac(&us.mac), fmt_ip(&us.ip));
    println!("random stalls on both sides: {:.0}%\n", stall * 100.0);
    let mut bench = RxParserBench::new(us, stall, stall, 7);
    let list: Vec<(Vec<u8>, bool)> = frames.iter().map(|(_, f, e)| (f.clone(), *e)).collect();
    let cycles = bench.run(&list);
    bench.check(&list);

    let mut delivered = bench
        .sidebands
        .iter()
        .zip(bench.sink.packets.iter())
        .filter(|(s, p)| !p.error && !s.4)
        .map(|(_, p)| p);
    println!("{:<36} {:>6}  verdict", "frame", "bytes");
    for ((name, f, _), seen) in frames.iter().zip(&bench.outcomes) {
        let verdict = match seen {
            Seen::Delivered => {
                let p = delivered.next().expect("checked above");
                let head: String = p.bytes.iter().take(8).map(|b| format!("{b:02x}")).collect();
                format!(
                    "delivered {} B payload [{head}{}]",
                    p.bytes.len(),
                    if p.bytes.len() > 8 { "..." } else { "" }
                )
            }
            Seen::Arp {
                request, sender_ip, ..
            } => format!(
                "ARP {} from {} for us (handed to the ARP engine)",
                if *request { "request" } else { "reply" },
                fmt_ip(&sender_ip.to_be_bytes())
            ),
            Seen::Icmp => "valid echo request (handed to the echo responder)".to_string(),
            Seen::Drop(r) => format!("dropped: {}", r.name()),
        };
        println!("{name:<36} {:>6}  {verdict}", f.len());
    }
    println!("\n{} frames in {cycles} cycles ({:.2} us at 156.25 MHz); every verdict matches the reference model.",
        frames.len(), cycles as f64 * 6.4e-3);
    Ok(())
}

fn fmt_mac(m: &[u8; 6]) -> String {
    m.iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}
fn fmt_ip(ip: &[u8; 4]) -> String {
    format!("{}.{}.{}.{}", ip[0], ip[1], ip[2], ip[3])
}

//! Receive: open a card, register a CLOP for UDP port 5000 on port 0, and print what lands in it
//! until `N` datagrams arrived. On the simulated card (the default) its peer sends them, 256 bytes
//! each at 5 Gb/s; on a real card, send them from the link's far end.
//!
//! ```sh
//! cargo run --release -p nanet --features sim --example rx            # simulated card, 200 datagrams
//! cargo run --release -p nanet --features sim --example rx -- 0000:03:00.0 1000
//! ```

use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use nanet::{ClopConfig, Device};

fn main() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let device = args.next().unwrap_or_else(|| "sim".to_string());
    let want: u64 = match args.next() {
        Some(n) => n.parse().with_context(|| format!("datagram count {n:?}"))?,
        None => 200,
    };
    let dev = Device::open(&device).with_context(|| format!("opening {device}"))?;
    println!("{}", dev.describe());
    // 8 buffers of 16 KiB; a buffer is reported when full, or 50 us after its first datagram.
    let clop = dev.register(
        &ClopConfig::new(0, 5000)
            .buffers(8, 16 << 10)
            .flush_timeout(Some(Duration::from_micros(50))),
    )?;
    if let Some(sim) = dev.sim() {
        let traffic = nanet::backend::sim::Traffic::parse_udp(&format!("0:5000:256@5x{want}"))
            .map_err(|e| anyhow!("traffic: {e}"))?;
        sim.start_traffic(&dev, &traffic)?;
    }

    let (mut datagrams, mut bytes, mut buffers) = (0u64, 0usize, 0u64);
    let mut worst_latency_ns = 0f64;
    while datagrams < want {
        let Some(event) = clop.wait(Duration::from_secs(30))? else {
            bail!("no event for 30 s after {datagrams} of {want} datagrams");
        };
        if !event.is_buffer() {
            println!("event: {event:?}");
            continue;
        }
        worst_latency_ns = worst_latency_ns.max(event.latency_ns());
        let buffer = clop.take(&event)?;
        for p in buffer.packets()? {
            datagrams += 1;
            bytes += p.payload.len();
        }
        buffers += 1;
        // `buffer` goes back to the card here.
    }
    println!(
        "{datagrams} datagrams, {bytes} payload bytes in {buffers} buffers; \
         worst latency the card measured: {worst_latency_ns:.0} ns"
    );
    for (name, value) in dev.rx_counters()? {
        if value != 0 {
            println!("  {name}: {value}");
        }
    }
    clop.deregister()?;
    Ok(())
}

//! The paper's loopback: ports 0 and 1 cabled together, port 0's built-in packet generator sends
//! `N` datagrams of 1024 bytes at 5 Gb/s to port 1, which delivers them into a CLOP. Each payload
//! carries the cycle it was sent at; the CLOP's per-packet header carries the cycle its first byte
//! reached port 1's MAC interface, so their difference is the time of flight.
//!
//! ```sh
//! cargo run --release -p nanet --features sim --example loopback          # 100 datagrams
//! ```
//! On a real card, cable ports 0 and 1 and name it: `-- 0000:03:00.0 1000`.

use std::time::Duration;

use anyhow::{bail, Context, Result};
use nanet::{ClopConfig, Device, GenConfig};
use nanet_contract::rx::gen_payload;

const PAYLOAD: u32 = 1024;

fn main() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let device = args
        .next()
        .unwrap_or_else(|| "sim:loopback=0:1".to_string());
    let want: u32 = match args.next() {
        Some(n) => n.parse().with_context(|| format!("datagram count {n:?}"))?,
        None => 100,
    };
    let dev = Device::open(&device).with_context(|| format!("opening {device}"))?;
    println!("{}", dev.describe());
    let clop = dev.register(
        &ClopConfig::new(1, 5000)
            .buffers(16, 64 << 10)
            .flush_timeout(Some(Duration::from_micros(20))),
    )?;
    let to = dev.port_config(1)?.ip;
    dev.start_generator(
        0,
        &GenConfig::new(to, 5000, PAYLOAD).count(want).rate_gbps(5.0),
    )?;

    let mut seq = 0u64;
    let (mut min_flight, mut max_flight) = (u32::MAX, 0u32);
    while seq < want as u64 {
        let Some(event) = clop.wait(Duration::from_secs(30))? else {
            bail!("no event for 30 s after {seq} of {want} datagrams");
        };
        if !event.is_buffer() {
            println!("event: {event:?}");
            continue;
        }
        let buffer = clop.take(&event)?;
        for p in buffer.packets()? {
            let tx_time = u32::from_le_bytes(p.payload[8..12].try_into()?);
            if p.payload != gen_payload(seq, tx_time, PAYLOAD as usize) {
                bail!("datagram {seq} is not the generator's");
            }
            // The first datagram also waited for ARP: left out of the time of flight.
            if seq > 0 {
                let flight = p.header.sop_time.wrapping_sub(tx_time);
                min_flight = min_flight.min(flight);
                max_flight = max_flight.max(flight);
            }
            seq += 1;
        }
    }
    let status = dev.generator_status(0)?;
    println!(
        "{seq} datagrams of {PAYLOAD} bytes looped back (generator sent {}); time of flight \
         {min_flight}..{max_flight} core cycles (4 ns each)",
        status.sent
    );
    clop.deregister()?;
    Ok(())
}

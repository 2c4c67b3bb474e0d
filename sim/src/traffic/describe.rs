//! One-line, tcpdump-like descriptions of frames, for the demo and the CLI.

use etherparse::{NetSlice, SlicedPacket, TransportSlice};

fn ip(b: &[u8]) -> String {
    format!("{}.{}.{}.{}", b[0], b[1], b[2], b[3])
}

/// Describes an Ethernet frame (without FCS).
pub fn describe_frame(f: &[u8]) -> String {
    if f.len() >= 42 && f[12..14] == [0x08, 0x06] {
        return match u16::from_be_bytes([f[20], f[21]]) {
            1 => format!("ARP who-has {} tell {}", ip(&f[38..42]), ip(&f[28..32])),
            2 => format!(
                "ARP {} is-at {}",
                ip(&f[28..32]),
                f[22..28]
                    .iter()
                    .map(|b| format!("{b:02x}"))
                    .collect::<Vec<_>>()
                    .join(":")
            ),
            op => format!("ARP operation {op}"),
        };
    }
    match SlicedPacket::from_ethernet(f) {
        Ok(p) => {
            let (src, dst) = match &p.net {
                Some(NetSlice::Ipv4(v4)) => {
                    (ip(&v4.header().source()), ip(&v4.header().destination()))
                }
                _ => return format!("{} bytes, not IPv4", f.len()),
            };
            match &p.transport {
                Some(TransportSlice::Udp(u)) => format!(
                    "UDP {src}:{} > {dst}:{} {} bytes{}",
                    u.source_port(),
                    u.destination_port(),
                    u.payload().len(),
                    if u.checksum() == 0 {
                        " (no checksum)"
                    } else {
                        ""
                    }
                ),
                Some(TransportSlice::Icmpv4(i)) => {
                    let kind = match i.type_u8() {
                        8 => "echo request",
                        0 => "echo reply",
                        _ => "other",
                    };
                    format!(
                        "ICMP {src} > {dst} {kind} seq {} ({} data bytes)",
                        u16::from_be_bytes([f[40], f[41]]),
                        i.payload().len()
                    )
                }
                _ => format!("IPv4 {src} > {dst}, other protocol"),
            }
        }
        Err(e) => format!("{} bytes, malformed ({e})", f.len()),
    }
}

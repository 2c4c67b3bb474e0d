//! Reference model of the offload core's receive decisions, written from the protocol rules (not
//! from the gateware) so that scoreboards can tell what every frame must produce.

use nanet_contract::offload::{MAX_FRAME_BYTES, MIN_FRAME_BYTES};
use nanet_contract::DropReason;

use crate::traffic::packets::ones_complement_sum;

/// What the core must do with one received frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RxOutcome {
    /// A UDP datagram delivered on the RX output.
    Udp {
        src_ip: u32,
        src_port: u16,
        dst_port: u16,
        payload: Vec<u8>,
    },
    /// A well-formed ARP request or reply for our address.
    Arp {
        request: bool,
        sender_mac: [u8; 6],
        sender_ip: u32,
    },
    /// A valid ICMP echo request for us.
    IcmpEcho,
    Drop(DropReason),
}

fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}
fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// The address that is not a single host's (RFC 1122 3.2.1.3): class E and limited broadcast
/// (240/4), multicast (224/4), loopback (127/8), the subnet's broadcast address (when the subnet
/// has two host bits or more); 0.0.0.0 is told apart by the caller (allowed for UDP only).
pub fn not_a_host(src: u32, our_ip: u32, our_netmask: u32) -> bool {
    let bcast = our_ip | !our_netmask;
    src >> 29 == 7 || src >> 24 == 127 || (our_netmask >> 1 != 0x7FFF_FFFF && src == bcast)
}

/// Classifies a frame (without FCS) received with the MAC's `mac_error` flag, by a card at
/// `our_ip` in the subnet of `our_netmask`.
pub fn classify_rx(
    frame: &[u8],
    mac_error: bool,
    our_mac: [u8; 6],
    our_ip: u32,
    our_netmask: u32,
) -> RxOutcome {
    use DropReason::*;
    let drop = RxOutcome::Drop;
    if mac_error {
        return drop(MacError);
    }
    if frame.len() < MIN_FRAME_BYTES {
        return drop(Runt);
    }
    if frame.len() > MAX_FRAME_BYTES {
        return drop(Oversize);
    }
    if frame[0..6] != our_mac && frame[0..6] != [0xFF; 6] {
        return drop(NotForUs);
    }
    match be16(frame, 12) {
        0x0806 => {
            let a = &frame[14..];
            let well_formed = be16(a, 0) == 1 && be16(a, 2) == 0x0800 && a[4] == 6 && a[5] == 4;
            let op = be16(a, 6);
            if !well_formed || !(op == 1 || op == 2) {
                return drop(UnknownProtocol);
            }
            if be32(a, 24) != our_ip {
                return drop(NotForUs);
            }
            let mut sender_mac = [0u8; 6];
            sender_mac.copy_from_slice(&a[8..14]);
            RxOutcome::Arp {
                request: op == 1,
                sender_mac,
                sender_ip: be32(a, 14),
            }
        }
        0x0800 => {
            let ip = &frame[14..];
            if ip[0] != 0x45 {
                return drop(IpVersionIhl);
            }
            if ones_complement_sum(&ip[..20]) != 0xFFFF {
                return drop(IpChecksum);
            }
            let total = be16(ip, 2) as usize;
            if total < 20 {
                return drop(IpLength);
            }
            if be32(ip, 16) != our_ip {
                return drop(NotForUs);
            }
            let src = be32(ip, 12);
            if not_a_host(src, our_ip, our_netmask) || (src == 0 && ip[9] != 17) {
                return drop(BadSource);
            }
            if be16(ip, 6) & 0x3FFF != 0 {
                return drop(Fragment);
            }
            match ip[9] {
                17 => {
                    let udp_len = be16(ip, 24) as usize;
                    if udp_len < 8 || udp_len + 20 != total {
                        return drop(UdpLength);
                    }
                    if 14 + total > frame.len() {
                        return drop(IpLength);
                    }
                    let seg = &ip[20..total];
                    if be16(seg, 6) != 0 {
                        let mut pseudo = Vec::with_capacity(12 + seg.len());
                        pseudo.extend_from_slice(&ip[12..20]);
                        pseudo.extend_from_slice(&[0, 17]);
                        pseudo.extend_from_slice(&(udp_len as u16).to_be_bytes());
                        pseudo.extend_from_slice(seg);
                        if ones_complement_sum(&pseudo) != 0xFFFF {
                            return drop(UdpChecksum);
                        }
                    }
                    RxOutcome::Udp {
                        src_ip: be32(ip, 12),
                        src_port: be16(seg, 0),
                        dst_port: be16(seg, 2),
                        payload: seg[8..].to_vec(),
                    }
                }
                1 if be16(ip, 20) == 0x0800 && total >= 28 => {
                    if 14 + total > frame.len() {
                        return drop(IpLength);
                    }
                    if ones_complement_sum(&ip[20..total]) != 0xFFFF {
                        return drop(IcmpInvalid);
                    }
                    RxOutcome::IcmpEcho
                }
                _ => drop(UnknownProtocol),
            }
        }
        _ => drop(UnknownProtocol),
    }
}

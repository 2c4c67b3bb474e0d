//! Frames for testbenches and traffic generators, built with etherparse (IPv4/UDP/ICMP) and
//! smoltcp's wire module (ARP). Frames exclude the FCS, as on the MAC client interface, and are
//! padded to the 60-byte minimum.

use etherparse::PacketBuilder;
use nanet_contract::offload::MIN_FRAME_BYTES;
use smoltcp::wire::{
    ArpOperation, ArpPacket, ArpRepr, EthernetAddress, EthernetFrame, EthernetProtocol,
    EthernetRepr, Ipv4Address,
};

pub const BROADCAST: [u8; 6] = [0xFF; 6];

/// A host on the link: MAC and IPv4 address.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Endpoint {
    pub mac: [u8; 6],
    pub ip: [u8; 4],
}

impl Endpoint {
    pub const fn new(mac: [u8; 6], ip: [u8; 4]) -> Self {
        Self { mac, ip }
    }
    pub fn ip_u32(&self) -> u32 {
        u32::from_be_bytes(self.ip)
    }
    pub fn mac_u64(&self) -> u64 {
        self.mac.iter().fold(0, |a, b| (a << 8) | *b as u64)
    }
}

/// Pads a frame with zeros to the Ethernet minimum.
pub fn pad(mut frame: Vec<u8>) -> Vec<u8> {
    if frame.len() < MIN_FRAME_BYTES {
        frame.resize(MIN_FRAME_BYTES, 0);
    }
    frame
}

/// An IPv4/UDP frame with a correct UDP checksum.
pub fn udp_frame(
    src: &Endpoint,
    dst: &Endpoint,
    sport: u16,
    dport: u16,
    payload: &[u8],
) -> Vec<u8> {
    let b = PacketBuilder::ethernet2(src.mac, dst.mac)
        .ipv4(src.ip, dst.ip, 64)
        .udp(sport, dport);
    let mut out = Vec::with_capacity(b.size(payload.len()));
    b.write(&mut out, payload)
        .expect("writing to a Vec cannot fail");
    pad(out)
}

/// An ICMP echo request frame.
pub fn icmp_echo_request(
    src: &Endpoint,
    dst: &Endpoint,
    id: u16,
    seq: u16,
    payload: &[u8],
) -> Vec<u8> {
    let b = PacketBuilder::ethernet2(src.mac, dst.mac)
        .ipv4(src.ip, dst.ip, 64)
        .icmpv4_echo_request(id, seq);
    let mut out = Vec::with_capacity(b.size(payload.len()));
    b.write(&mut out, payload)
        .expect("writing to a Vec cannot fail");
    pad(out)
}

fn arp_frame(
    eth_dst: [u8; 6],
    src: &Endpoint,
    op: ArpOperation,
    target_mac: [u8; 6],
    target_ip: [u8; 4],
) -> Vec<u8> {
    let arp = ArpRepr::EthernetIpv4 {
        operation: op,
        source_hardware_addr: EthernetAddress(src.mac),
        source_protocol_addr: Ipv4Address::from(src.ip),
        target_hardware_addr: EthernetAddress(target_mac),
        target_protocol_addr: Ipv4Address::from(target_ip),
    };
    let eth = EthernetRepr {
        src_addr: EthernetAddress(src.mac),
        dst_addr: EthernetAddress(eth_dst),
        ethertype: EthernetProtocol::Arp,
    };
    let mut buf = vec![0u8; eth.buffer_len() + arp.buffer_len()];
    let mut frame = EthernetFrame::new_unchecked(&mut buf[..]);
    eth.emit(&mut frame);
    arp.emit(&mut ArpPacket::new_unchecked(frame.payload_mut()));
    pad(buf)
}

/// A broadcast ARP request from `src` for `target_ip`.
pub fn arp_request(src: &Endpoint, target_ip: [u8; 4]) -> Vec<u8> {
    arp_frame(BROADCAST, src, ArpOperation::Request, [0; 6], target_ip)
}

/// An ARP reply from `src` to `dst`.
pub fn arp_reply(src: &Endpoint, dst: &Endpoint) -> Vec<u8> {
    arp_frame(dst.mac, src, ArpOperation::Reply, dst.mac, dst.ip)
}

/// Recomputes the IPv4 header checksum of a frame (after a test has edited the header).
pub fn fix_ipv4_checksum(frame: &mut [u8]) {
    frame[24] = 0;
    frame[25] = 0;
    let ihl = (frame[14] & 0x0F) as usize * 4;
    let sum = ones_complement_sum(&frame[14..14 + ihl]);
    frame[24..26].copy_from_slice(&(!sum).to_be_bytes());
}

/// RFC 1071 ones' complement sum of a byte string (odd length padded with a zero byte).
pub fn ones_complement_sum(bytes: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    for c in bytes.chunks(2) {
        let w = if c.len() == 2 {
            u16::from_be_bytes([c[0], c[1]])
        } else {
            u16::from_be_bytes([c[0], 0])
        };
        sum += w as u32;
    }
    while sum > 0xFFFF {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    sum as u16
}

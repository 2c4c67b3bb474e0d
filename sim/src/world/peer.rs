//! A real, independent IPv4 stack on the simulated link: smoltcp, with one UDP socket and one ICMP
//! socket. Frames the card transmits are handed to smoltcp; frames smoltcp transmits are queued for
//! the card's receive side. smoltcp's clock follows simulated time.

use std::collections::VecDeque;

use smoltcp::iface::{Config, Interface, SocketHandle, SocketSet};
use smoltcp::phy::{self, Device, DeviceCapabilities, Medium};
use smoltcp::socket::{icmp, udp};
use smoltcp::time::Instant;
use smoltcp::wire::{EthernetAddress, HardwareAddress, IpAddress, IpCidr, IpEndpoint, Ipv4Address};

use crate::traffic::packets::Endpoint;

/// The peer's side of the link: frames in both directions.
#[derive(Default)]
pub struct LinkQueues {
    /// Frames from the card, waiting for smoltcp.
    pub to_peer: VecDeque<Vec<u8>>,
    /// Frames from smoltcp, waiting to go to the card.
    pub from_peer: VecDeque<Vec<u8>>,
}

pub struct RxTok(Vec<u8>);
pub struct TxTok<'a>(&'a mut VecDeque<Vec<u8>>);

impl phy::RxToken for RxTok {
    fn consume<R, F: FnOnce(&[u8]) -> R>(self, f: F) -> R {
        f(&self.0)
    }
}

impl phy::TxToken for TxTok<'_> {
    fn consume<R, F: FnOnce(&mut [u8]) -> R>(self, len: usize, f: F) -> R {
        let mut buf = vec![0u8; len];
        let r = f(&mut buf);
        self.0.push_back(buf);
        r
    }
}

impl Device for LinkQueues {
    type RxToken<'a> = RxTok;
    type TxToken<'a> = TxTok<'a>;

    fn receive(&mut self, _: Instant) -> Option<(RxTok, TxTok<'_>)> {
        let f = self.to_peer.pop_front()?;
        Some((RxTok(f), TxTok(&mut self.from_peer)))
    }

    fn transmit(&mut self, _: Instant) -> Option<TxTok<'_>> {
        Some(TxTok(&mut self.from_peer))
    }

    fn capabilities(&self) -> DeviceCapabilities {
        let mut c = DeviceCapabilities::default();
        c.medium = Medium::Ethernet;
        c.max_transmission_unit = 1514;
        c
    }
}

pub struct SmoltcpPeer {
    pub me: Endpoint,
    pub link: LinkQueues,
    iface: Interface,
    sockets: SocketSet<'static>,
    udp: SocketHandle,
    icmp: SocketHandle,
    pub udp_port: u16,
    pub icmp_ident: u16,
}

impl SmoltcpPeer {
    pub fn new(me: Endpoint, prefix_len: u8, udp_port: u16) -> Self {
        let mut link = LinkQueues::default();
        let config = Config::new(HardwareAddress::Ethernet(EthernetAddress(me.mac)));
        let mut iface = Interface::new(config, &mut link, Instant::ZERO);
        iface.update_ip_addrs(|a| {
            a.push(IpCidr::new(
                IpAddress::Ipv4(Ipv4Address::from(me.ip)),
                prefix_len,
            ))
            .expect("one address fits");
        });
        let mut sockets = SocketSet::new(vec![]);
        let mut u = udp::Socket::new(
            udp::PacketBuffer::new(vec![udp::PacketMetadata::EMPTY; 64], vec![0; 128 * 1024]),
            udp::PacketBuffer::new(vec![udp::PacketMetadata::EMPTY; 64], vec![0; 128 * 1024]),
        );
        u.bind(udp_port).expect("bind the UDP port");
        let udp = sockets.add(u);
        let icmp_ident = 0x4E41;
        let mut i = icmp::Socket::new(
            icmp::PacketBuffer::new(vec![icmp::PacketMetadata::EMPTY; 16], vec![0; 16 * 1024]),
            icmp::PacketBuffer::new(vec![icmp::PacketMetadata::EMPTY; 16], vec![0; 16 * 1024]),
        );
        i.bind(icmp::Endpoint::Ident(icmp_ident))
            .expect("bind the ICMP socket");
        let icmp = sockets.add(i);
        Self {
            me,
            link,
            iface,
            sockets,
            udp,
            icmp,
            udp_port,
            icmp_ident,
        }
    }

    /// Lets smoltcp process received frames and emit what it has to send, at time `ns`.
    pub fn poll(&mut self, ns: u64) {
        let now = Instant::from_micros((ns / 1000) as i64);
        self.iface.poll(now, &mut self.link, &mut self.sockets);
    }

    pub fn send_udp(&mut self, to: [u8; 4], port: u16, data: &[u8]) {
        let s = self.sockets.get_mut::<udp::Socket>(self.udp);
        let ep = IpEndpoint::new(IpAddress::Ipv4(Ipv4Address::from(to)), port);
        s.send_slice(data, ep).expect("UDP send buffer has room");
    }

    /// A received datagram: (source IP, source port, payload).
    pub fn recv_udp(&mut self) -> Option<([u8; 4], u16, Vec<u8>)> {
        let s = self.sockets.get_mut::<udp::Socket>(self.udp);
        let (data, meta) = s.recv().ok()?;
        let IpAddress::Ipv4(a) = meta.endpoint.addr;
        Some((a.octets(), meta.endpoint.port, data.to_vec()))
    }

    /// Sends an ICMP echo request with `seq` and `data` to `to`.
    pub fn ping(&mut self, to: [u8; 4], seq: u16, data: &[u8]) {
        use smoltcp::phy::ChecksumCapabilities;
        use smoltcp::wire::{Icmpv4Packet, Icmpv4Repr};
        let repr = Icmpv4Repr::EchoRequest {
            ident: self.icmp_ident,
            seq_no: seq,
            data,
        };
        let s = self.sockets.get_mut::<icmp::Socket>(self.icmp);
        let buf = s
            .send(repr.buffer_len(), IpAddress::Ipv4(Ipv4Address::from(to)))
            .expect("ICMP send buffer has room");
        repr.emit(
            &mut Icmpv4Packet::new_unchecked(buf),
            &ChecksumCapabilities::default(),
        );
    }

    /// A received echo reply: (from, sequence number, data).
    pub fn recv_echo_reply(&mut self) -> Option<([u8; 4], u16, Vec<u8>)> {
        use smoltcp::phy::ChecksumCapabilities;
        use smoltcp::wire::{Icmpv4Packet, Icmpv4Repr};
        let s = self.sockets.get_mut::<icmp::Socket>(self.icmp);
        let (data, from) = s.recv().ok()?;
        let pkt = Icmpv4Packet::new_checked(data).ok()?;
        let IpAddress::Ipv4(a) = from;
        match Icmpv4Repr::parse(&pkt, &ChecksumCapabilities::default()).ok()? {
            Icmpv4Repr::EchoReply { seq_no, data, .. } => Some((a.octets(), seq_no, data.to_vec())),
            _ => None,
        }
    }
}

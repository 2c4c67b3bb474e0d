//! UDP/IPv4/Ethernet transmit: builds the 42-byte header of a datagram whose next-hop MAC is known
//! and sends it with its payload through a [`FrameTx`].
//!
//! IPv4 header: version 4, IHL 5, TOS 0, identification counting up per datagram, DF set, TTL
//! `ttl` (the port's register), protocol 17, checksum computed here. UDP checksum: as given by the request (0 = none; the
//! `udp_tx_checksum` stage fills it in when enabled).
//!
//! Timing: the frame starts the cycle the request is accepted, as before any pipelining. The
//! header checksum is not needed until the frame's beat 3 (bytes 24..25), which leaves three
//! cycles after the start at the earliest: the header words `FrameTx` holds from the start are
//! summed in the next cycle and folded in the one after, so the checksum is a register when
//! `FrameTx` reads it (its `late_checksum`). It holds until the next request, which `FrameTx`
//! takes only after this frame's last beat. The payload reaches `FrameTx` through a register
//! slice (the checksum stage's and the resolver's payload selects end there, the frame's byte
//! mask starts there); its cycle is absorbed, since the frame's first body beat leaves five
//! cycles after the start.

use rust_hdl::prelude::*;

use crate::common::adders::Add4;
use crate::common::checksum::ChecksumFold;
use crate::common::stream::{StreamSink, StreamSkid, StreamSource};
use crate::offload::frame_tx::FrameTx;

#[derive(LogicBlock, Default)]
pub struct UdpTx {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub our_mac: Signal<In, Bits<48>>,
    pub our_ip: Signal<In, Bits<32>>,
    /// TTL of the datagrams (a register: it changes only by a register write).
    pub ttl: Signal<In, Bits<8>>,
    /// Request: accepted when `start && start_ready`, fields valid with `start`.
    pub start: Signal<In, Bit>,
    pub start_ready: Signal<Out, Bit>,
    pub dst_mac: Signal<In, Bits<48>>,
    pub dst_ip: Signal<In, Bits<32>>,
    pub src_port: Signal<In, Bits<16>>,
    pub dst_port: Signal<In, Bits<16>>,
    pub payload_len: Signal<In, Bits<16>>,
    pub udp_checksum: Signal<In, Bits<16>>,
    pub payload: StreamSink,
    pub out: StreamSource,

    frame: FrameTx,
    payload_slice: StreamSkid,
    ip_id: DFF<Bits<16>>,
    total_len: Signal<Local, Bits<16>>,
    /// The IPv4 header's words in two sums, then its checksum.
    ip_sum_a: DFF<Bits<32>>,
    ip_sum_b: DFF<Bits<32>>,
    ip_checksum: DFF<Bits<16>>,
    add_a: Add4,
    add_b: Add4,
    ip_fold: ChecksumFold,
}

impl Logic for UdpTx {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, ip_id, ip_sum_a, ip_sum_b, ip_checksum);
        self.frame.clock.next = self.clock.val();
        self.frame.reset.next = self.reset.val();
        self.payload_slice.clock.next = self.clock.val();
        self.payload_slice.reset.next = self.reset.val();
        StreamSink::link(&mut self.payload, &mut self.payload_slice.inp);
        StreamSource::join(&mut self.payload_slice.out, &mut self.frame.body);
        StreamSource::link(&mut self.out, &mut self.frame.out);

        self.total_len.next = self.payload_len.val() + 28;
        self.frame.start.next = self.start.val();
        self.start_ready.next = self.frame.start_ready.val();
        if self.start.val() & self.frame.start_ready.val() {
            self.ip_id.d.next = self.ip_id.q.val() + 1;
        }

        // ---- the header checksum, two registered stages behind the frame's start -------------
        // Total length and identification; source IP; destination IP (bytes 16..19 of w2..w4).
        self.add_a.a.next = bit_cast::<32, 16>(self.frame.held_w2.val().get_bits::<16>(48));
        self.add_a.b.next = bit_cast::<32, 16>(self.frame.held_w2.val().get_bits::<16>(32));
        self.add_a.c.next = bit_cast::<32, 16>(self.frame.held_w3.val().get_bits::<16>(32));
        self.add_a.d.next = bit_cast::<32, 16>(self.frame.held_w3.val().get_bits::<16>(16));
        self.add_b.a.next = bit_cast::<32, 16>(self.frame.held_w3.val().get_bits::<16>(0));
        self.add_b.b.next = bit_cast::<32, 16>(self.frame.held_w4.val().get_bits::<16>(48));
        // Version/IHL and TOS, DF and UDP; the TTL.
        self.add_b.c.next = (0x4500 + 0x4000 + 0x0011).into();
        self.add_b.d.next = bit_cast::<32, 8>(self.ttl.val()) << 8;
        self.ip_sum_a.d.next = self.add_a.sum.val();
        self.ip_sum_b.d.next = self.add_b.sum.val();
        self.ip_fold.sum.next = self.ip_sum_a.q.val() + self.ip_sum_b.q.val();
        self.ip_checksum.d.next = !self.ip_fold.folded.val();
        self.frame.late_checksum.next = self.ip_checksum.q.val();

        self.frame.w0.next = (bit_cast::<64, 48>(self.dst_mac.val()) << 16)
            | bit_cast::<64, 16>(self.our_mac.val().get_bits::<16>(32));
        self.frame.w1.next =
            (bit_cast::<64, 32>(self.our_mac.val().get_bits::<32>(0)) << 32) | 0x0800_4500; // EtherType IPv4, version/IHL, TOS
        self.frame.w2.next = (bit_cast::<64, 16>(self.total_len.val()) << 48)
            | (bit_cast::<64, 16>(self.ip_id.q.val()) << 32)
            | (bit_cast::<64, 8>(self.ttl.val()) << 8)
            | 0x4000_0011; // DF, protocol UDP
                           // The checksum (bits 63:48) arrives late.
        self.frame.w3.next = (bit_cast::<64, 32>(self.our_ip.val()) << 16)
            | bit_cast::<64, 16>(self.dst_ip.val().get_bits::<16>(16));
        self.frame.w4.next = (bit_cast::<64, 16>(self.dst_ip.val().get_bits::<16>(0)) << 48)
            | (bit_cast::<64, 16>(self.src_port.val()) << 32)
            | (bit_cast::<64, 16>(self.dst_port.val()) << 16)
            | bit_cast::<64, 16>(self.payload_len.val() + 8);
        self.frame.carry.next = self.udp_checksum.val();
        self.frame.frame_len.next = self.payload_len.val() + 42;

        if self.reset.val() {
            self.ip_id.d.next = 0.into();
        }
    }
}

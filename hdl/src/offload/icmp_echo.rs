//! ICMP echo responder, so that `ping` works against the card.
//!
//! The receive engine pulses `header` with an echo request's header words, then streams its data
//! (bytes 42.. of the frame), ending it with `error` when the request turned out bad. The data is stored in a 256-beat RAM (the largest echo
//! fits: 1472 bytes) of a [`PacketBuffer`]; when the data packet ends without error the reply is sent: addresses swapped,
//! type 0, the ICMP checksum updated incrementally (RFC 1624: HC' = ~(~HC + ~0x0800)), the IPv4
//! header copied with the port's own TTL (`ttl`, the port's configurable TTL of RFC 1122 3.2.1.7,
//! not the request's), its checksum updated for the TTL the same way (swapping source and destination
//! leaves it unchanged), the identifier, sequence and data replayed.
//!
//! One reply at a time: a request whose data arrives while a reply is pending is discarded and
//! `busy_drop` pulses when it ends. The request's header is latched when it is announced and becomes
//! the reply's header when its data has been stored, so a discarded or bad request never touches a
//! pending reply.

use rust_hdl::prelude::*;

use crate::common::adders::Add3;
use crate::common::checksum::ChecksumFold;
use crate::common::stream::{StreamSink, StreamSource};
use crate::offload::frame_tx::FrameTx;
use crate::offload::packet_buffer::PacketBuffer;

#[derive(LogicBlock, Default)]
pub struct IcmpEcho {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub our_mac: Signal<In, Bits<48>>,
    pub our_ip: Signal<In, Bits<32>>,
    /// TTL of the replies.
    pub ttl: Signal<In, Bits<8>>,
    /// The data of an echo request follows; its header words are valid in this cycle.
    pub header: Signal<In, Bit>,
    pub hdr_w0: Signal<In, Bits<64>>,
    pub hdr_w1: Signal<In, Bits<64>>,
    pub hdr_w2: Signal<In, Bits<64>>,
    pub hdr_w3: Signal<In, Bits<64>>,
    pub hdr_w4: Signal<In, Bits<64>>,
    pub hdr_w5: Signal<In, Bits<64>>,
    /// Echo data from the receive engine (a packet ending with `error` is discarded).
    pub data: StreamSink,
    pub out: StreamSource,
    pub sent: Signal<Out, Bit>,
    pub busy_drop: Signal<Out, Bit>,

    frame: FrameTx,
    buffer: PacketBuffer,
    icmp_sum: ChecksumFold,
    /// The IPv4 header checksum for the reply's TTL: `~HC + ~m + m'` (RFC 1624) of the TTL and
    /// protocol word `m`, summed when a request is announced, folded when it becomes the pending
    /// reply (a cycle later at the earliest).
    ip_add: Add3,
    c_ip_sum: DFF<Bits<32>>,
    ip_fold: ChecksumFold,
    /// Reply header of the last announced request (c*), and of the reply pending (r*).
    c0: DFF<Bits<64>>,
    c1: DFF<Bits<64>>,
    c2: DFF<Bits<64>>,
    c3: DFF<Bits<64>>,
    c4: DFF<Bits<64>>,
    c_carry: DFF<Bits<16>>,
    c_len: DFF<Bits<16>>,
    r0: DFF<Bits<64>>,
    r1: DFF<Bits<64>>,
    r2: DFF<Bits<64>>,
    r3: DFF<Bits<64>>,
    r4: DFF<Bits<64>>,
    r_carry: DFF<Bits<16>>,
    r_len: DFF<Bits<16>>,
    was_full: DFF<Bit>,
    started: DFF<Bit>,
    old_sum_inv: Signal<Local, Bits<16>>,
    new_sum: Signal<Local, Bits<16>>,
    /// The request's IPv4 header checksum and TTL/protocol word, inverted; the reply's checksum
    /// (locals: an operator inside `bit_cast` works at the wider width in the Verilog).
    old_ip_sum_inv: Signal<Local, Bits<16>>,
    old_ttl_proto_inv: Signal<Local, Bits<16>>,
    new_ip_sum: Signal<Local, Bits<16>>,
}

impl Logic for IcmpEcho {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, c0, c1, c2, c3, c4, c_carry, c_len, c_ip_sum, r0, r1, r2, r3, r4, r_carry,
            r_len, was_full, started
        );
        self.frame.clock.next = self.clock.val();
        self.frame.reset.next = self.reset.val();
        self.buffer.clock.next = self.clock.val();
        self.buffer.reset.next = self.reset.val();
        StreamSource::link(&mut self.out, &mut self.frame.out);
        StreamSink::link(&mut self.data, &mut self.buffer.inp);
        StreamSource::join(&mut self.buffer.out, &mut self.frame.body);
        self.buffer.drop_when_full.next = true;
        self.buffer.keep_errors.next = false;
        self.busy_drop.next = self.buffer.dropped.val();

        // ---- reply header of an announced request ----------------------------------------------
        // ICMP checksum with the type changed from 8 to 0.
        self.old_sum_inv.next = !self.hdr_w4.val().get_bits::<16>(16);
        self.icmp_sum.sum.next = bit_cast::<32, 16>(self.old_sum_inv.val()) + 0xF7FF;
        self.new_sum.next = !self.icmp_sum.folded.val();
        self.old_ip_sum_inv.next = !self.hdr_w3.val().get_bits::<16>(48);
        self.old_ttl_proto_inv.next = !self.hdr_w2.val().get_bits::<16>(0);
        self.ip_add.a.next = bit_cast::<32, 16>(self.old_ip_sum_inv.val());
        self.ip_add.b.next = bit_cast::<32, 16>(self.old_ttl_proto_inv.val());
        self.ip_add.c.next = (bit_cast::<32, 8>(self.ttl.val()) << 8)
            | bit_cast::<32, 8>(self.hdr_w2.val().get_bits::<8>(0));
        self.ip_fold.sum.next = self.c_ip_sum.q.val();
        self.new_ip_sum.next = !self.ip_fold.folded.val();
        if self.header.val() {
            // dst MAC = requester (bytes 6..11), src MAC = ours.
            self.c0.d.next = (bit_cast::<64, 16>(self.hdr_w0.val().get_bits::<16>(0)) << 48)
                | (bit_cast::<64, 32>(self.hdr_w1.val().get_bits::<32>(32)) << 16)
                | bit_cast::<64, 16>(self.our_mac.val().get_bits::<16>(32));
            self.c1.d.next = (bit_cast::<64, 32>(self.our_mac.val().get_bits::<32>(0)) << 32)
                | bit_cast::<64, 32>(self.hdr_w1.val().get_bits::<32>(0));
            // Our TTL.
            self.c2.d.next = (self.hdr_w2.val() & 0xFFFF_FFFF_FFFF_00FFu64)
                | (bit_cast::<64, 8>(self.ttl.val()) << 8);
            self.c_ip_sum.d.next = self.ip_add.sum.val();
            // IPv4 checksum (for the old TTL: replaced as the reply is taken), src = us, dst =
            // requester.
            self.c3.d.next = (bit_cast::<64, 16>(self.hdr_w3.val().get_bits::<16>(48)) << 48)
                | (bit_cast::<64, 32>(self.our_ip.val()) << 16)
                | bit_cast::<64, 16>(self.hdr_w3.val().get_bits::<16>(32));
            // Rest of the requester's address, type 0 code 0, new checksum, identifier.
            self.c4.d.next = (bit_cast::<64, 16>(self.hdr_w3.val().get_bits::<16>(16)) << 48)
                | (bit_cast::<64, 16>(self.new_sum.val()) << 16)
                | bit_cast::<64, 16>(self.hdr_w4.val().get_bits::<16>(0));
            self.c_carry.d.next = self.hdr_w5.val().get_bits::<16>(48);
            self.c_len.d.next = self.hdr_w2.val().get_bits::<16>(48) + 14;
        }
        // The request's data is stored: its header becomes the pending reply's.
        self.was_full.d.next = self.buffer.full.val();
        if self.buffer.full.val() & !self.was_full.q.val() {
            self.r0.d.next = self.c0.q.val();
            self.r1.d.next = self.c1.q.val();
            self.r2.d.next = self.c2.q.val();
            self.r3.d.next = (bit_cast::<64, 16>(self.new_ip_sum.val()) << 48)
                | bit_cast::<64, 48>(self.c3.q.val().get_bits::<48>(0));
            self.r4.d.next = self.c4.q.val();
            self.r_carry.d.next = self.c_carry.q.val();
            self.r_len.d.next = self.c_len.q.val();
            self.started.d.next = false;
        }

        // ---- sending the reply -----------------------------------------------------------------
        self.frame.w0.next = self.r0.q.val();
        self.frame.w1.next = self.r1.q.val();
        self.frame.w2.next = self.r2.q.val();
        self.frame.w3.next = self.r3.q.val();
        self.frame.w4.next = self.r4.q.val();
        self.frame.late_checksum.next = 0.into();
        self.frame.carry.next = self.r_carry.q.val();
        self.frame.frame_len.next = self.r_len.q.val();
        // Start once the header has been copied (the cycle after the data is stored).
        self.frame.start.next =
            self.buffer.full.val() & self.was_full.q.val() & !self.started.q.val();
        self.buffer.play.next = self.started.q.val();
        self.sent.next = false;
        if self.buffer.full.val()
            & self.was_full.q.val()
            & !self.started.q.val()
            & self.frame.start_ready.val()
        {
            self.started.d.next = true;
            self.sent.next = true;
        }
        if self.reset.val() {
            self.started.d.next = false;
        }
    }
}

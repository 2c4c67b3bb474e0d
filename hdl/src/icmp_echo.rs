//! ICMP echo responder, so that `ping` works against the card.
//!
//! The receive engine streams the data of a valid echo request (bytes 42.. of the frame) and pulses
//! `echo` with the request's header words. The data is stored in a 256-beat RAM (the largest echo
//! fits: 1472 bytes); when the data packet ends without error the reply is sent: addresses swapped,
//! type 0, the ICMP checksum updated incrementally (RFC 1624: HC' = ~(~HC + ~0x0800)), the IPv4
//! header copied (swapping source and destination leaves its checksum unchanged), the data replayed.
//!
//! One reply at a time: a request whose data starts while a reply is being sent is discarded and
//! `busy_drop` pulses when it ends.

use rust_hdl::prelude::*;

use crate::checksum::ChecksumFold;
use crate::frame_tx::FrameTx;
use crate::stream::{StreamSink, StreamSource};

#[derive(LogicBlock, Default)]
pub struct IcmpEcho {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub our_mac: Signal<In, Bits<48>>,
    pub our_ip: Signal<In, Bits<32>>,
    /// A valid echo request was received; its header words are valid in this cycle.
    pub echo: Signal<In, Bit>,
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
    icmp_sum: ChecksumFold,
    /// `{last[72], keep[71:64], data[63:0]}`
    ram: RAM<Bits<73>, 8>,
    wr_ptr: DFF<Bits<8>>,
    in_packet: DFF<Bit>,
    discarding: DFF<Bit>,
    replying: DFF<Bit>,
    started: DFF<Bit>,
    rd_ptr: DFF<Bits<8>>,
    r0: DFF<Bits<64>>,
    r1: DFF<Bits<64>>,
    r2: DFF<Bits<64>>,
    r3: DFF<Bits<64>>,
    r4: DFF<Bits<64>>,
    carry: DFF<Bits<16>>,
    frame_len: DFF<Bits<16>>,
    body_fire: Signal<Local, Bit>,
    data_fire: Signal<Local, Bit>,
}

impl Logic for IcmpEcho {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, wr_ptr, in_packet, discarding, replying, started, rd_ptr, r0, r1, r2, r3,
            r4, carry, frame_len
        );
        self.frame.clock.next = self.clock.val();
        self.frame.reset.next = self.reset.val();
        self.ram.read_clock.next = self.clock.val();
        self.ram.write_clock.next = self.clock.val();
        StreamSource::link(&mut self.out, &mut self.frame.out);

        // ---- reply header, latched when the request is reported -------------------------------
        // ICMP checksum with the type changed from 8 to 0.
        self.icmp_sum.sum.next = bit_cast::<32, 16>(!self.hdr_w4.val().get_bits::<16>(16)) + 0xF7FF;
        if self.echo.val() {
            // dst MAC = requester (bytes 6..11), src MAC = ours.
            self.r0.d.next = (bit_cast::<64, 16>(self.hdr_w0.val().get_bits::<16>(0)) << 48)
                | (bit_cast::<64, 32>(self.hdr_w1.val().get_bits::<32>(32)) << 16)
                | bit_cast::<64, 16>(self.our_mac.val().get_bits::<16>(32));
            self.r1.d.next = (bit_cast::<64, 32>(self.our_mac.val().get_bits::<32>(0)) << 32)
                | bit_cast::<64, 32>(self.hdr_w1.val().get_bits::<32>(0));
            self.r2.d.next = self.hdr_w2.val();
            // IPv4 checksum unchanged, src = us, dst = requester.
            self.r3.d.next = (bit_cast::<64, 16>(self.hdr_w3.val().get_bits::<16>(48)) << 48)
                | (bit_cast::<64, 32>(self.our_ip.val()) << 16)
                | bit_cast::<64, 16>(self.hdr_w3.val().get_bits::<16>(32));
            // Rest of the requester's address, type 0 code 0, new checksum, identifier.
            self.r4.d.next = (bit_cast::<64, 16>(self.hdr_w3.val().get_bits::<16>(16)) << 48)
                | (bit_cast::<64, 16>(!self.icmp_sum.folded.val()) << 16)
                | bit_cast::<64, 16>(self.hdr_w4.val().get_bits::<16>(0));
            self.carry.d.next = self.hdr_w5.val().get_bits::<16>(48);
            self.frame_len.d.next = self.hdr_w2.val().get_bits::<16>(48) + 14;
        }

        // ---- storing the data ------------------------------------------------------------------
        self.data.ready.next = true;
        self.data_fire.next = self.data.valid.val();
        self.busy_drop.next = false;
        self.ram.write_enable.next = false;
        self.ram.write_address.next = self.wr_ptr.q.val();
        self.ram.write_data.next = (bit_cast::<73, 1>(self.data.last.val().into()) << 72)
            | (bit_cast::<73, 8>(self.data.keep.val()) << 64)
            | bit_cast::<73, 64>(self.data.data.val());
        if self.data_fire.val() {
            // A packet that starts while a reply is out is discarded whole.
            if !self.in_packet.q.val() {
                self.discarding.d.next = self.replying.q.val();
            }
            self.in_packet.d.next = !self.data.last.val();
            if !(self.replying.q.val() | (self.in_packet.q.val() & self.discarding.q.val())) {
                self.ram.write_enable.next = true;
                self.wr_ptr.d.next = self.wr_ptr.q.val() + 1;
            }
            if self.data.last.val() {
                self.wr_ptr.d.next = 0.into();
                if self.replying.q.val() | (self.in_packet.q.val() & self.discarding.q.val()) {
                    self.busy_drop.next = !self.data.error.val();
                } else if !self.data.error.val() {
                    self.replying.d.next = true;
                    self.started.d.next = false;
                    self.rd_ptr.d.next = 0.into();
                }
            }
        }

        // ---- sending the reply -----------------------------------------------------------------
        self.frame.w0.next = self.r0.q.val();
        self.frame.w1.next = self.r1.q.val();
        self.frame.w2.next = self.r2.q.val();
        self.frame.w3.next = self.r3.q.val();
        self.frame.w4.next = self.r4.q.val();
        self.frame.carry.next = self.carry.q.val();
        self.frame.frame_len.next = self.frame_len.q.val();
        self.frame.start.next = self.replying.q.val() & !self.started.q.val();
        self.sent.next = false;
        if self.replying.q.val() & !self.started.q.val() & self.frame.start_ready.val() {
            self.started.d.next = true;
            self.sent.next = true;
        }
        // Replay: the RAM reads the entry the pointer will hold after this edge, so its output is
        // always the entry at the pointer.
        self.frame.body.valid.next = self.replying.q.val() & self.started.q.val();
        self.frame.body.data.next = self.ram.read_data.val().get_bits::<64>(0);
        self.frame.body.keep.next = self.ram.read_data.val().get_bits::<8>(64);
        self.frame.body.last.next = self.ram.read_data.val().get_bit(72);
        self.frame.body.error.next = false;
        self.body_fire.next =
            self.replying.q.val() & self.started.q.val() & self.frame.body.ready.val();
        self.ram.read_address.next = self.rd_ptr.q.val();
        if self.body_fire.val() {
            self.rd_ptr.d.next = self.rd_ptr.q.val() + 1;
            self.ram.read_address.next = self.rd_ptr.q.val() + 1;
            if self.ram.read_data.val().get_bit(72) {
                self.replying.d.next = false;
            }
        }

        if self.reset.val() {
            self.wr_ptr.d.next = 0.into();
            self.in_packet.d.next = false;
            self.discarding.d.next = false;
            self.replying.d.next = false;
        }
    }
}

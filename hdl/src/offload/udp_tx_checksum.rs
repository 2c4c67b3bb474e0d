//! UDP transmit checksum. With `enable` clear (the default) a request and its payload pass straight
//! through (checksum 0, cut-through). With `enable` set the request is taken at once and its fields
//! kept here, the payload (which a sender streams only once its request is taken: the port's
//! feeder and generator) is stored in a [`PacketBuffer`] while its sum is taken, then the request
//! goes on with the checksum of pseudo header, UDP header and payload (0 is sent as 0xFFFF, RFC
//! 768) and the payload is replayed. Downstream reads the request's fields from here (`f_*`): the
//! sender's while a request passes, the kept ones while one is stored (a stage that waited for the
//! payload before taking the request would deadlock a port's transmitter with the checksum on at
//! its first datagram). The mode is taken when a request arrives and kept until its payload has
//! passed. A payload that ends with `error` (a failed DMA read of the
//! transmit engine) is stored and replayed with its error like any other, so its frame leaves
//! ending with a MAC error, as without the checksum. Not yet safe (found in review, untested):
//! setting `enable` while a request passes and is not yet taken downstream (the resolver still
//! looking up its next hop) moves this stage to `Store` under it: the resolver starts the frame
//! with the request's fields and checksum 0, the stage offers the request again after storing the
//! payload, and the port's transmitter deadlocks. Change `enable` while the port is idle.
//!
//! Timing: the pseudo and UDP headers are summed from the kept fields while the payload is stored;
//! once it is stored, the whole sum and then its fold are registered (two cycles) before the
//! request is offered with its checksum.

use rust_hdl::prelude::*;

use crate::common::adders::{Add3, Add4};
use crate::common::checksum::ChecksumFold;
use crate::common::stream::{StreamSink, StreamSource};
use crate::offload::packet_buffer::PacketBuffer;

#[derive(Copy, Clone, Debug, PartialEq, LogicState)]
enum CsumState {
    /// Resting state: requests and payloads pass through (checksum 0).
    Pass,
    Store,
    /// The payload is stored: its sum and the headers' are added.
    Sum,
    /// The sum is folded into the checksum.
    Fold,
    Offer,
    Replay,
}

#[derive(LogicBlock, Default)]
pub struct UdpTxChecksum {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub enable: Signal<In, Bit>,
    pub our_ip: Signal<In, Bits<32>>,
    /// Request from the user; its fields go on unchanged, held until `req_ready`.
    pub req_valid: Signal<In, Bit>,
    pub req_ready: Signal<Out, Bit>,
    pub req_dst_ip: Signal<In, Bits<32>>,
    pub req_src_port: Signal<In, Bits<16>>,
    pub req_dst_port: Signal<In, Bits<16>>,
    pub req_len: Signal<In, Bits<16>>,
    pub payload_in: StreamSink,
    /// Request downstream, with its checksum and fields; `f_early`: the fields hold from now
    /// until `out_ready` (the ARP resolver judges them a cycle ahead).
    pub out_valid: Signal<Out, Bit>,
    pub out_ready: Signal<In, Bit>,
    pub out_checksum: Signal<Out, Bits<16>>,
    pub f_early: Signal<Out, Bit>,
    pub f_dst_ip: Signal<Out, Bits<32>>,
    pub f_src_port: Signal<Out, Bits<16>>,
    pub f_dst_port: Signal<Out, Bits<16>>,
    pub f_len: Signal<Out, Bits<16>>,
    pub payload_out: StreamSource,

    buffer: PacketBuffer,
    fold: ChecksumFold,
    state: DFF<CsumState>,
    taken: DFF<Bit>,
    /// The stored request's fields, and whether the stage is in a stored request (downstream
    /// reads these then).
    k_dst_ip: DFF<Bits<32>>,
    k_src_port: DFF<Bits<16>>,
    k_dst_port: DFF<Bits<16>>,
    k_len: DFF<Bits<16>>,
    kept: DFF<Bit>,
    udp_len: Signal<Local, Bits<16>>,
    /// Pseudo header and UDP header, summed over two registered steps.
    addr_add: Add4,
    udp_add: Add4,
    header_add: Add3,
    addr_sum: DFF<Bits<32>>,
    udp_sum: DFF<Bits<32>>,
    header_sum: DFF<Bits<32>>,
    total: DFF<Bits<32>>,
    checksum: DFF<Bits<16>>,
}

impl Logic for UdpTxChecksum {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, state, taken, k_dst_ip, k_src_port, k_dst_port, k_len, kept, addr_sum,
            udp_sum, header_sum, total, checksum
        );
        self.buffer.clock.next = self.clock.val();
        self.buffer.reset.next = self.reset.val();
        self.buffer.drop_when_full.next = false;
        self.buffer.keep_errors.next = true;

        // Valid two cycles after the kept fields (from the first cycle of `Store`); read no
        // earlier than `Sum`, two cycles after it at least (the payload's first beat is stored in
        // `Store`, `full` rises a cycle later and `Sum` follows).
        self.udp_len.next = self.k_len.q.val() + 8;
        self.addr_add.a.next = bit_cast::<32, 16>(self.our_ip.val().get_bits::<16>(16));
        self.addr_add.b.next = bit_cast::<32, 16>(self.our_ip.val().get_bits::<16>(0));
        self.addr_add.c.next = bit_cast::<32, 16>(self.k_dst_ip.q.val().get_bits::<16>(16));
        self.addr_add.d.next = bit_cast::<32, 16>(self.k_dst_ip.q.val().get_bits::<16>(0));
        self.udp_add.a.next = bit_cast::<32, 16>(self.udp_len.val());
        self.udp_add.b.next = bit_cast::<32, 16>(self.udp_len.val());
        self.udp_add.c.next = bit_cast::<32, 16>(self.k_src_port.q.val());
        self.udp_add.d.next = bit_cast::<32, 16>(self.k_dst_port.q.val());
        self.addr_sum.d.next = self.addr_add.sum.val();
        self.udp_sum.d.next = self.udp_add.sum.val();
        // The pseudo header's protocol: 17.
        self.header_add.a.next = self.addr_sum.q.val();
        self.header_add.b.next = self.udp_sum.q.val();
        self.header_add.c.next = 17.into();
        self.header_sum.d.next = self.header_add.sum.val();
        self.fold.sum.next = self.total.q.val();
        self.out_checksum.next = 0.into();

        // The fields downstream: the sender's, or the kept ones of a stored request.
        self.f_dst_ip.next = self.req_dst_ip.val();
        self.f_src_port.next = self.req_src_port.val();
        self.f_dst_port.next = self.req_dst_port.val();
        self.f_len.next = self.req_len.val();
        self.f_early.next = self.req_valid.val() & (self.state.q.val() == CsumState::Pass);
        if self.kept.q.val() {
            self.f_dst_ip.next = self.k_dst_ip.q.val();
            self.f_src_port.next = self.k_src_port.q.val();
            self.f_dst_port.next = self.k_dst_port.q.val();
            self.f_len.next = self.k_len.q.val();
            self.f_early.next =
                (self.state.q.val() == CsumState::Fold) | (self.state.q.val() == CsumState::Offer);
        }

        // Defaults: nothing moves.
        self.out_valid.next = false;
        self.req_ready.next = false;
        self.payload_in.ready.next = false;
        self.buffer.inp.valid.next = false;
        self.buffer.inp.data.next = self.payload_in.data.val();
        self.buffer.inp.keep.next = self.payload_in.keep.val();
        self.buffer.inp.last.next = self.payload_in.last.val();
        self.buffer.inp.error.next = self.payload_in.error.val();
        self.buffer.play.next = false;
        self.buffer.out.ready.next = false;
        self.payload_out.valid.next = false;
        self.payload_out.data.next = self.payload_in.data.val();
        self.payload_out.keep.next = self.payload_in.keep.val();
        self.payload_out.last.next = self.payload_in.last.val();
        self.payload_out.error.next = self.payload_in.error.val();

        match self.state.q.val() {
            CsumState::Pass => {
                // A new request with the checksum enabled is taken and kept, its payload stored;
                // otherwise it passes. Once passed, the next request waits until this one's
                // payload has gone through.
                if self.req_valid.val() & !self.taken.q.val() & self.enable.val() {
                    self.req_ready.next = true;
                    self.k_dst_ip.d.next = self.req_dst_ip.val();
                    self.k_src_port.d.next = self.req_src_port.val();
                    self.k_dst_port.d.next = self.req_dst_port.val();
                    self.k_len.d.next = self.req_len.val();
                    self.kept.d.next = true;
                    self.state.d.next = CsumState::Store;
                } else {
                    self.out_valid.next = self.req_valid.val() & !self.taken.q.val();
                    self.req_ready.next = self.out_ready.val() & !self.taken.q.val();
                    if self.req_valid.val() & self.out_ready.val() {
                        self.taken.d.next = true;
                    }
                }
                // The passed request's payload follows it (`taken`: a register, so the mode
                // decision above never reaches the payload's handshake).
                self.payload_out.valid.next = self.payload_in.valid.val() & self.taken.q.val();
                self.payload_in.ready.next = self.payload_out.ready.val() & self.taken.q.val();
                if self.taken.q.val()
                    & self.payload_in.valid.val()
                    & self.payload_out.ready.val()
                    & self.payload_in.last.val()
                {
                    self.taken.d.next = false;
                }
            }
            CsumState::Store => {
                self.buffer.inp.valid.next = self.payload_in.valid.val();
                self.payload_in.ready.next = self.buffer.inp.ready.val();
                if self.buffer.full.val() {
                    self.state.d.next = CsumState::Sum;
                }
            }
            CsumState::Sum => {
                // The buffer's sum is complete one cycle after `full` rose: this is that cycle.
                self.total.d.next = self.buffer.sum.val() + self.header_sum.q.val();
                self.state.d.next = CsumState::Fold;
            }
            CsumState::Fold => {
                // A computed 0 is sent as 0xFFFF (0 means "no checksum").
                self.checksum.d.next = !self.fold.folded.val();
                if self.fold.folded.val() == 0xFFFF {
                    self.checksum.d.next = 0xFFFF.into();
                }
                self.state.d.next = CsumState::Offer;
            }
            CsumState::Offer => {
                self.out_valid.next = true;
                self.out_checksum.next = self.checksum.q.val();
                if self.out_ready.val() {
                    self.state.d.next = CsumState::Replay;
                }
            }
            CsumState::Replay => {
                self.buffer.play.next = true;
                self.payload_out.valid.next = self.buffer.out.valid.val();
                self.payload_out.data.next = self.buffer.out.data.val();
                self.payload_out.keep.next = self.buffer.out.keep.val();
                self.payload_out.last.next = self.buffer.out.last.val();
                self.payload_out.error.next = self.buffer.out.error.val();
                self.buffer.out.ready.next = self.payload_out.ready.val();
                if self.buffer.out.valid.val()
                    & self.payload_out.ready.val()
                    & self.buffer.out.last.val()
                {
                    self.state.d.next = CsumState::Pass;
                    self.kept.d.next = false;
                }
            }
            _ => self.state.d.next = CsumState::Pass,
        }
        if self.reset.val() {
            self.state.d.next = CsumState::Pass;
            self.taken.d.next = false;
            self.kept.d.next = false;
        }
    }
}

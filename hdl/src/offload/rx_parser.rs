//! Receive engine of the offload core: captures the fixed-offset Ethernet/IPv4/UDP (or ARP) header,
//! asks each layer's checker for its verdict, and streams the UDP payload (or the data of an ICMP
//! echo request, flagged by `out_icmp`) out cut-through, realigned to start at byte 0 of the output.
//!
//! Timing (beats counted from 0 at start of frame, one beat per cycle at line rate):
//! - beats 0..4 are captured into `w0..w4`, beat 5 into `w5` (UDP checksum + first 6 payload bytes);
//! - the header verdict is registered when beat 5 is accepted;
//! - output beat `j` is `{beat(5+j)[47:0], beat(6+j)[63:48]}` and leaves when beat `6+j` arrives;
//! - the payload's final beat is held back until the frame's end is seen, and goes out one cycle
//!   after the frame's last input beat with `last` set and `error` telling whether the frame ended
//!   badly (MAC error, runt, oversize, truncation, UDP checksum).
//!
//! Drops decided on the header produce no output at all. A drop decided at the end of the frame
//! ends an already started output packet with `error` set (consumers discard it: safe commit).
//!
//! Every frame produces exactly one outcome pulse in the cycle its verdict is final (`done`):
//! a delivered UDP datagram, a good ARP packet for us, a good ICMP echo request, or one drop reason.
//! The header words stay valid during that cycle, so consumers latch what they need from `w*` then.
//!
//! Everything moves only when the output register is free (`!out.valid || out.ready`), so
//! backpressure on the output stalls the input; at line rate with no output stall the engine never
//! stalls.

use rust_hdl::prelude::*;

use crate::common::checksum::{BeatSum, ChecksumFold};
use crate::common::stream::{KeepForLen, KeepLen, StreamSink, StreamSource};
use crate::offload::arp::ArpRxCheck;
use crate::offload::eth::EthRxCheck;
use crate::offload::icmp::IcmpRxCheck;
use crate::offload::ipv4::Ipv4RxCheck;
use crate::offload::udp::UdpRxCheck;

/// What a frame is, once its header has been checked.
#[derive(Copy, Clone, Debug, PartialEq, LogicState)]
pub enum FrameKind {
    Drop,
    Udp,
    Arp,
    IcmpEcho,
}

macro_rules! define_rx_drop {
    ($($(#[$doc:meta])* $name:ident,)*) => {
        /// Drop reasons in hardware: the contract's list (`nanet_contract::with_drop_reasons`), so
        /// the encoding is the contract's index.
        #[derive(Copy, Clone, Debug, PartialEq, LogicState)]
        pub enum RxDrop {
            $($(#[$doc])* $name,)*
        }
    };
}
nanet_contract::with_drop_reasons!(define_rx_drop);

#[derive(LogicBlock, Default)]
pub struct RxParser {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub inp: StreamSink,
    pub our_mac: Signal<In, Bits<48>>,
    pub our_ip: Signal<In, Bits<32>>,

    /// UDP payload, with the datagram's sideband held for every beat; or, when `out_icmp` is set,
    /// the data of an ICMP echo request (bytes 42..), for the echo responder.
    pub out: StreamSource,
    pub out_icmp: Signal<Out, Bit>,
    pub out_src_ip: Signal<Out, Bits<32>>,
    pub out_src_port: Signal<Out, Bits<16>>,
    pub out_dst_port: Signal<Out, Bits<16>>,
    pub out_len: Signal<Out, Bits<16>>,

    /// Outcome pulse of one frame, with exactly one of the following set.
    pub done: Signal<Out, Bit>,
    pub delivered: Signal<Out, Bit>,
    pub arp: Signal<Out, Bit>,
    pub icmp_echo: Signal<Out, Bit>,
    pub dropped: Signal<Out, Bit>,
    pub drop_reason: Signal<Out, RxDrop>,

    /// ARP fields of the frame whose outcome is `arp`.
    pub arp_is_request: Signal<Out, Bit>,
    pub arp_sender_mac: Signal<Out, Bits<48>>,
    pub arp_sender_ip: Signal<Out, Bits<32>>,
    /// Header words of the current frame (bytes 0..47), for the echo responder; valid with `done`.
    pub hdr_w0: Signal<Out, Bits<64>>,
    pub hdr_w1: Signal<Out, Bits<64>>,
    pub hdr_w2: Signal<Out, Bits<64>>,
    pub hdr_w3: Signal<Out, Bits<64>>,
    pub hdr_w4: Signal<Out, Bits<64>>,
    pub hdr_w5: Signal<Out, Bits<64>>,
    /// Every accepted input beat, with its index in the frame (saturating at 255), for the echo
    /// responder; `tap_icmp` says the frame so far looks like an ICMP packet for us.
    pub tap_valid: Signal<Out, Bit>,
    pub tap_index: Signal<Out, Bits<8>>,
    pub tap_data: Signal<Out, Bits<64>>,
    pub tap_icmp: Signal<Out, Bit>,

    eth: EthRxCheck,
    ipv4: Ipv4RxCheck,
    udp: UdpRxCheck,
    arp_check: ArpRxCheck,
    icmp: IcmpRxCheck,
    beat_sum: BeatSum,
    fold: ChecksumFold,

    idx: DFF<Bits<8>>,
    w0: DFF<Bits<64>>,
    w1: DFF<Bits<64>>,
    w2: DFF<Bits<64>>,
    w3: DFF<Bits<64>>,
    w4: DFF<Bits<64>>,
    w5: DFF<Bits<64>>,
    prev: DFF<Bits<64>>,
    kind: DFF<FrameKind>,
    reason: DFF<RxDrop>,
    remaining: DFF<Bits<16>>,
    csum_left: DFF<Bits<16>>,
    acc: DFF<Bits<32>>,
    hold_valid: DFF<Bit>,
    hold_data: DFF<Bits<64>>,
    hold_keep: DFF<Bits<8>>,
    emitted: DFF<Bit>,
    end_pending: DFF<Bit>,
    end_error: DFF<Bit>,
    end_len: DFF<Bits<16>>,
    o_valid: DFF<Bit>,
    o_data: DFF<Bits<64>>,
    o_keep: DFF<Bits<8>>,
    o_last: DFF<Bit>,
    o_error: DFF<Bit>,
    sb_src_ip: DFF<Bits<32>>,
    sb_src_port: DFF<Bits<16>>,
    sb_dst_port: DFF<Bits<16>>,
    sb_len: DFF<Bits<16>>,
    sb_icmp: DFF<Bit>,

    o_free: Signal<Local, Bit>,
    fire: Signal<Local, Bit>,
    hdr_kind: Signal<Local, FrameKind>,
    hdr_reason: Signal<Local, RxDrop>,
    end_drop: Signal<Local, Bit>,
    end_reason: Signal<Local, RxDrop>,
    beat_bytes: KeepLen,
    rem_keep: KeepForLen,
    rem_after: Signal<Local, Bits<16>>,
    tail_keep: KeepForLen,
    csum_keep: KeepForLen,
    frame_end: Signal<Local, Bits<32>>,
    data_len: Signal<Local, Bits<16>>,
    streams: Signal<Local, Bit>,
}

impl Logic for RxParser {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            idx,
            w0,
            w1,
            w2,
            w3,
            w4,
            w5,
            prev,
            kind,
            reason,
            remaining,
            csum_left,
            acc,
            hold_valid,
            hold_data,
            hold_keep,
            emitted,
            end_pending,
            end_error,
            end_len,
            o_valid,
            o_data,
            o_keep,
            o_last,
            o_error,
            sb_src_ip,
            sb_src_port,
            sb_dst_port,
            sb_len,
            sb_icmp
        );

        // ---- layer checkers, all on the registered header words -------------------------------
        self.eth.w0.next = self.w0.q.val();
        self.eth.w1.next = self.w1.q.val();
        self.eth.our_mac.next = self.our_mac.val();
        self.ipv4.w1.next = self.w1.q.val();
        self.ipv4.w2.next = self.w2.q.val();
        self.ipv4.w3.next = self.w3.q.val();
        self.ipv4.w4.next = self.w4.q.val();
        self.ipv4.our_ip.next = self.our_ip.val();
        self.udp.w4.next = self.w4.q.val();
        self.udp.ip_total_len.next = self.ipv4.total_len.val();
        self.icmp.w4.next = self.w4.q.val();
        self.icmp.ip_total_len.next = self.ipv4.total_len.val();
        self.arp_check.w1.next = self.w1.q.val();
        self.arp_check.w2.next = self.w2.q.val();
        self.arp_check.w3.next = self.w3.q.val();
        self.arp_check.w4.next = self.w4.q.val();
        // The target IP's low half is in beat 5: live while beat 5 is accepted, then in w5.
        self.arp_check.tpa_low.next = self.w5.q.val().get_bits::<16>(48);
        if self.idx.q.val() == 5 {
            self.arp_check.tpa_low.next = self.inp.data.val().get_bits::<16>(48);
        }
        self.arp_check.our_ip.next = self.our_ip.val();

        // Header verdict, in layer order; only registered when beat 5 is accepted.
        self.hdr_kind.next = FrameKind::Drop;
        self.hdr_reason.next = RxDrop::UnknownProtocol;
        if !self.eth.for_us.val() {
            self.hdr_reason.next = RxDrop::NotForUs;
        } else if self.eth.is_arp.val() {
            if !self.arp_check.well_formed.val() {
                self.hdr_reason.next = RxDrop::UnknownProtocol;
            } else if !self.arp_check.target_is_us.val() {
                self.hdr_reason.next = RxDrop::NotForUs;
            } else {
                self.hdr_kind.next = FrameKind::Arp;
            }
        } else if self.eth.is_ipv4.val() {
            if !self.ipv4.version_ihl_ok.val() {
                self.hdr_reason.next = RxDrop::IpVersionIhl;
            } else if !self.ipv4.checksum_ok.val() {
                self.hdr_reason.next = RxDrop::IpChecksum;
            } else if !self.ipv4.length_ok.val() {
                self.hdr_reason.next = RxDrop::IpLength;
            } else if !self.ipv4.dst_ok.val() {
                self.hdr_reason.next = RxDrop::NotForUs;
            } else if self.ipv4.fragment.val() {
                self.hdr_reason.next = RxDrop::Fragment;
            } else if self.ipv4.proto_udp.val() {
                if !self.udp.length_ok.val() {
                    self.hdr_reason.next = RxDrop::UdpLength;
                } else {
                    self.hdr_kind.next = FrameKind::Udp;
                }
            } else if self.ipv4.proto_icmp.val() & self.icmp.is_echo_request.val() {
                self.hdr_kind.next = FrameKind::IcmpEcho;
            }
        }

        // Bytes streamed on `out` after the 42-byte header: the UDP payload, or the echo data.
        self.data_len.next = self.udp.payload_len.val();
        if self.hdr_kind.val() == FrameKind::IcmpEcho {
            self.data_len.next = self.ipv4.total_len.val() - 28;
        }
        self.streams.next =
            (self.kind.q.val() == FrameKind::Udp) | (self.kind.q.val() == FrameKind::IcmpEcho);

        // ---- handshake -----------------------------------------------------------------------
        self.o_free.next = !self.o_valid.q.val() | self.out.ready.val();
        self.inp.ready.next = self.o_free.val();
        self.fire.next = self.inp.valid.val() & self.o_free.val();
        if self.out.ready.val() {
            self.o_valid.d.next = false;
        }

        self.out.valid.next = self.o_valid.q.val();
        self.out.data.next = self.o_data.q.val();
        self.out.keep.next = self.o_keep.q.val();
        self.out.last.next = self.o_last.q.val();
        self.out.error.next = self.o_error.q.val();
        self.out_src_ip.next = self.sb_src_ip.q.val();
        self.out_src_port.next = self.sb_src_port.q.val();
        self.out_dst_port.next = self.sb_dst_port.q.val();
        self.out_len.next = self.sb_len.q.val();
        self.out_icmp.next = self.sb_icmp.q.val();

        self.hdr_w0.next = self.w0.q.val();
        self.hdr_w1.next = self.w1.q.val();
        self.hdr_w2.next = self.w2.q.val();
        self.hdr_w3.next = self.w3.q.val();
        self.hdr_w4.next = self.w4.q.val();
        self.hdr_w5.next = self.w5.q.val();
        self.arp_is_request.next = self.arp_check.is_request.val();
        self.arp_sender_mac.next = self.arp_check.sender_mac.val();
        self.arp_sender_ip.next = self.arp_check.sender_ip.val();
        self.tap_valid.next = self.fire.val();
        self.tap_index.next = self.idx.q.val();
        self.tap_data.next = self.inp.data.val();
        self.tap_icmp.next =
            self.eth.for_us.val() & self.eth.is_ipv4.val() & self.ipv4.proto_icmp.val();

        // ---- keep masks for the payload and checksum region -----------------------------------
        // Keep for a beat holding the next `remaining` payload bytes.
        self.rem_keep.len.next = self.remaining.q.val();
        // Payload bytes left after the beat produced now.
        self.rem_after.next = 0.into();
        if self.remaining.q.val() > 8 {
            self.rem_after.next = self.remaining.q.val() - 8;
        }
        // Keep for the tail beat flushed at the end of frame (at most 6 bytes when consistent);
        // used only when more than 8 bytes remain. Fed from the register, not from `rem_after`,
        // so that no kernel output loops back through the child (see "Kernels" in lib.rs).
        self.tail_keep.len.next = self.remaining.q.val() - 8;
        // Bytes of the checksum region (frame bytes 34 .. 14 + IPv4 total length) in this beat.
        self.csum_keep.len.next = self.csum_left.q.val();
        self.beat_bytes.keep.next = self.inp.keep.val();

        // ---- checksum accumulation (UDP and ICMP share the region) ----------------------------
        self.beat_sum.data.next = self.inp.data.val();
        self.beat_sum.keep.next = 0.into();
        if self.idx.q.val() == 4 {
            // Bytes 34..39: the last six bytes of the beat.
            self.beat_sum.data.next = self.inp.data.val() & 0x0000_FFFF_FFFF_FFFFu64;
            self.beat_sum.keep.next = 0xFF.into();
        } else if self.idx.q.val() >= 5 {
            self.beat_sum.keep.next = self.csum_keep.keep.val();
        }

        // ---- end-of-frame verdict (one cycle after the last beat) -----------------------------
        // Pseudo header (source, our address, protocol 17, UDP length) only for UDP.
        self.fold.sum.next = self.acc.q.val();
        if self.kind.q.val() == FrameKind::Udp {
            self.fold.sum.next = self.acc.q.val()
                + bit_cast::<32, 16>(self.w3.q.val().get_bits::<16>(32))
                + bit_cast::<32, 16>(self.w3.q.val().get_bits::<16>(16))
                + bit_cast::<32, 16>(self.our_ip.val().get_bits::<16>(16))
                + bit_cast::<32, 16>(self.our_ip.val().get_bits::<16>(0))
                + bit_cast::<32, 16>(self.w4.q.val().get_bits::<16>(0))
                + 17;
        }
        self.frame_end.next = bit_cast::<32, 16>(self.ipv4.total_len.val()) + 14;
        self.end_drop.next = true;
        self.end_reason.next = self.reason.q.val();
        if self.end_error.q.val() {
            self.end_reason.next = RxDrop::MacError;
        } else if self.end_len.q.val() < 60 {
            self.end_reason.next = RxDrop::Runt;
        } else if self.end_len.q.val() > 1514 {
            self.end_reason.next = RxDrop::Oversize;
        } else if self.kind.q.val() == FrameKind::Drop {
            self.end_reason.next = self.reason.q.val();
        } else if ((self.kind.q.val() == FrameKind::Udp)
            | (self.kind.q.val() == FrameKind::IcmpEcho))
            & (self.frame_end.val() > bit_cast::<32, 16>(self.end_len.q.val()))
        {
            self.end_reason.next = RxDrop::IpLength;
        } else if (self.kind.q.val() == FrameKind::Udp)
            & self.w5.q.val().get_bits::<16>(48).any()
            & !self.fold.all_ones.val()
        {
            self.end_reason.next = RxDrop::UdpChecksum;
        } else if (self.kind.q.val() == FrameKind::IcmpEcho) & !self.fold.all_ones.val() {
            self.end_reason.next = RxDrop::IcmpInvalid;
        } else {
            self.end_drop.next = false;
        }

        self.done.next = false;
        self.delivered.next = false;
        self.arp.next = false;
        self.icmp_echo.next = false;
        self.dropped.next = false;
        self.drop_reason.next = self.end_reason.val();
        if self.end_pending.q.val() & self.o_free.val() {
            self.done.next = true;
            self.dropped.next = self.end_drop.val();
            if !self.end_drop.val() {
                self.delivered.next = self.kind.q.val() == FrameKind::Udp;
                self.arp.next = self.kind.q.val() == FrameKind::Arp;
                self.icmp_echo.next = self.kind.q.val() == FrameKind::IcmpEcho;
            }
            // Close the output packet: the held final beat, or an empty beat if none is held
            // (empty datagram, or a started packet that ended badly).
            if self.streams.val() & (!self.end_drop.val() | self.emitted.q.val()) {
                self.o_valid.d.next = true;
                self.o_data.d.next = self.hold_data.q.val();
                self.o_keep.d.next = 0.into();
                if self.hold_valid.q.val() {
                    self.o_keep.d.next = self.hold_keep.q.val();
                }
                self.o_last.d.next = true;
                self.o_error.d.next = self.end_drop.val();
            }
            self.end_pending.d.next = false;
            self.hold_valid.d.next = false;
            self.emitted.d.next = false;
        }

        // ---- input beat ----------------------------------------------------------------------
        if self.fire.val() {
            self.prev.d.next = self.inp.data.val();
            if self.idx.q.val() != 255 {
                self.idx.d.next = self.idx.q.val() + 1;
            }
            self.acc.d.next = self.acc.q.val() + self.beat_sum.sum.val();
            if self.csum_left.q.val() > 8 {
                self.csum_left.d.next = self.csum_left.q.val() - 8;
            } else {
                self.csum_left.d.next = 0.into();
            }
            match self.idx.q.val().index() {
                0 => {
                    self.w0.d.next = self.inp.data.val();
                    self.acc.d.next = 0.into();
                }
                1 => self.w1.d.next = self.inp.data.val(),
                2 => self.w2.d.next = self.inp.data.val(),
                3 => self.w3.d.next = self.inp.data.val(),
                4 => {
                    self.w4.d.next = self.inp.data.val();
                    // Region bytes from beat 5 on: 14 + total length - 40.
                    self.csum_left.d.next = self.ipv4.total_len.val() - 26;
                }
                5 => {
                    self.w5.d.next = self.inp.data.val();
                    self.kind.d.next = self.hdr_kind.val();
                    self.reason.d.next = self.hdr_reason.val();
                    self.remaining.d.next = self.data_len.val();
                    self.sb_src_ip.d.next = self.ipv4.src_ip.val();
                    self.sb_src_port.d.next = self.udp.src_port.val();
                    self.sb_dst_port.d.next = self.udp.dst_port.val();
                    self.sb_len.d.next = self.data_len.val();
                    self.sb_icmp.d.next = self.hdr_kind.val() == FrameKind::IcmpEcho;
                }
                _ => {}
            }
            // Payload: one realigned beat per input beat from beat 6 on.
            if (self.idx.q.val() >= 6) & self.streams.val() & self.remaining.q.val().any() {
                self.remaining.d.next = self.rem_after.val();
                if self.remaining.q.val() > 8 {
                    self.o_valid.d.next = true;
                    self.o_data.d.next = (bit_cast::<64, 48>(self.prev.q.val().get_bits::<48>(0))
                        << 16)
                        | bit_cast::<64, 16>(self.inp.data.val().get_bits::<16>(48));
                    self.o_keep.d.next = 0xFF.into();
                    self.o_last.d.next = false;
                    self.o_error.d.next = false;
                    self.emitted.d.next = true;
                    if self.inp.last.val() {
                        // The rest of the payload is in this beat's tail: it is the final beat.
                        self.hold_valid.d.next = true;
                        self.hold_data.d.next =
                            bit_cast::<64, 48>(self.inp.data.val().get_bits::<48>(0)) << 16;
                        self.hold_keep.d.next = self.tail_keep.keep.val();
                        self.remaining.d.next = 0.into();
                    }
                } else {
                    self.hold_valid.d.next = true;
                    self.hold_data.d.next =
                        (bit_cast::<64, 48>(self.prev.q.val().get_bits::<48>(0)) << 16)
                            | bit_cast::<64, 16>(self.inp.data.val().get_bits::<16>(48));
                    self.hold_keep.d.next = self.rem_keep.keep.val();
                }
            }
            if self.inp.last.val() {
                self.idx.d.next = 0.into();
                self.end_pending.d.next = true;
                self.end_error.d.next = self.inp.error.val();
                // Frame length: 8 bytes per earlier beat plus this beat's bytes (idx saturates at
                // 255, far beyond the oversize limit).
                self.end_len.d.next = (bit_cast::<16, 8>(self.idx.q.val()) << 3)
                    + bit_cast::<16, 4>(self.beat_bytes.len.val());
                if self.idx.q.val() < 5 {
                    // Too short to reach the header verdict: only the runt check applies.
                    self.kind.d.next = FrameKind::Drop;
                }
            }
        }

        if self.reset.val() {
            self.idx.d.next = 0.into();
            self.end_pending.d.next = false;
            self.hold_valid.d.next = false;
            self.emitted.d.next = false;
            self.o_valid.d.next = false;
            self.kind.d.next = FrameKind::Drop;
        }
    }
}

//! Receive engine of the offload core: captures the fixed-offset Ethernet/IPv4/UDP (or ARP) header,
//! asks each layer's checker for its verdict, and streams the UDP payload (or the data of an ICMP
//! echo request, flagged by `out_icmp`) out cut-through, realigned to start at byte 0 of the output.
//!
//! Two stages a beat apart, so that every decision is taken on registers (the network clock's
//! budget is 8 levels):
//! - the header stage (`h_*`) sees each beat first, at the output of the input register slice. It
//!   captures beats 0..5 into `w0..w5`, sums the IPv4 header's ten words as they pass (beats 1..4),
//!   and latches each layer's checks when the beat that completes them passes (Ethernet, IPv4, UDP,
//!   ICMP and the pseudo-header sum with beat 4; ARP and the UDP checksum field with beat 5);
//! - the payload stage (`p_*`) sees the same beat one stage later. It takes the header verdict, a
//!   priority over the latched checks, when beat 5 passes it; output beat `j` is
//!   `{beat(5+j)[47:0], beat(6+j)[63:48]}` and leaves when beat `6+j` passes it;
//! - the payload's final beat is held back until the frame's end: one cycle after the frame's last
//!   beat the end checks (length, runt, oversize, the UDP/ICMP checksum's fold) are registered, and
//!   the cycle after that the final beat goes out with `last` set and `error` telling whether the
//!   frame ended badly (MAC error, runt, oversize, truncation, UDP checksum).
//!
//! Every latched check is read before the next frame can overwrite it. The header stage is at
//! most one beat ahead: when a frame's last beat passes the payload stage, the header stage has
//! taken at most the next frame's beat 0, and that frame's first latch (beat 4) needs four more
//! advances. This frame's end checks are registered the cycle after its last beat and its outcome
//! leaves at the next advance, so both read the latches at most two advances later.
//!
//! Drops decided on the header produce no output at all. A drop decided at the end of the frame
//! ends an already started output packet with `error` set (consumers discard it: safe commit).
//!
//! Every frame produces exactly one outcome pulse (`done`, registered: the cycle after the final
//! beat left): a delivered UDP datagram, a good ARP packet for us (with its fields), a good ICMP echo
//! request, or one drop reason. The header words of an echo request are shown on `hdr_w*` in the
//! cycle `icmp_header` pulses, before its data (bytes 42..) streams on `out`.
//!
//! Everything moves only when the output register is free (`!out.valid || out.ready`), so
//! backpressure on the output stalls the input; at line rate with no output stall the engine never
//! stalls, except that a frame's last beat waits while the previous frame's end is being decided
//! (two cycles after that frame's last beat: only frames of one or two beats come that close).
//! Latency: two cycles more than a single-stage parser (the input slice and the header stage), one
//! more to the final beat (the registered end checks), one more to the outcome.

use rust_hdl::prelude::*;

use crate::common::adders::{Add3, Add4};
use crate::common::checksum::ChecksumFold;
use crate::common::skid_buffer::SkidBuffer;
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

/// A stream beat in the input register slice: data, keep, last, error.
const BEAT_BITS: usize = 74;

#[derive(LogicBlock, Default)]
pub struct RxParser {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub inp: StreamSink,
    pub our_mac: Signal<In, Bits<48>>,
    pub our_ip: Signal<In, Bits<32>>,
    /// Our subnet's mask: a datagram from the subnet's broadcast address is dropped.
    pub our_netmask: Signal<In, Bits<32>>,

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
    /// An echo request's data follows on `out`: its header words (bytes 0..47) are on `hdr_w*` in
    /// this cycle. Its outcome (`icmp_echo` or a drop) comes when its data has ended.
    pub icmp_header: Signal<Out, Bit>,
    pub hdr_w0: Signal<Out, Bits<64>>,
    pub hdr_w1: Signal<Out, Bits<64>>,
    pub hdr_w2: Signal<Out, Bits<64>>,
    pub hdr_w3: Signal<Out, Bits<64>>,
    pub hdr_w4: Signal<Out, Bits<64>>,
    pub hdr_w5: Signal<Out, Bits<64>>,

    /// Input register slice: the MAC's beats land in registers, and its ready leaves from one.
    in_slice: SkidBuffer<BEAT_BITS>,

    // ---- header stage ---------------------------------------------------------------------
    eth: EthRxCheck,
    ipv4: Ipv4RxCheck,
    udp: UdpRxCheck,
    arp_check: ArpRxCheck,
    icmp: IcmpRxCheck,
    ip_fold: ChecksumFold,
    /// Configuration, registered here (a change applies a cycle later).
    our_mac_q: DFF<Bits<48>>,
    our_ip_q: DFF<Bits<32>>,
    /// Our address's halves summed, for the UDP pseudo header.
    our_ip_sum: DFF<Bits<32>>,
    /// Our subnet's broadcast address, and whether the subnet has one (two host bits or more).
    our_bcast: DFF<Bits<32>>,
    bcast_valid: DFF<Bit>,
    h_idx: DFF<Bits<8>>,
    w0: DFF<Bits<64>>,
    w1: DFF<Bits<64>>,
    w2: DFF<Bits<64>>,
    w3: DFF<Bits<64>>,
    w4: DFF<Bits<64>>,
    w5: DFF<Bits<64>>,
    /// The IPv4 header's words summed as they pass: a beat's word pairs are added first
    /// (`ip_pair_*`), into `ip_sum` with the next beat.
    ip_pair_hi: DFF<Bits<32>>,
    ip_pair_lo: DFF<Bits<32>>,
    ip_sum: DFF<Bits<32>>,
    ip_sum_ok: DFF<Bit>,
    /// Bytes of the UDP/ICMP checksum region (frame bytes 34 .. 14 + IPv4 total length) from the
    /// current beat on.
    h_csum_left: DFF<Bits<16>>,
    /// The checksum region's bytes of the beat now in the header stage, as a count from the
    /// beat's first byte (0..8) or, for beat 4, its last six (`h_csum_tail6`); the mask is made
    /// from these registers as the beat is summed (a 64-bit mask decoded behind the length
    /// compares was one level too many).
    h_csum_bytes: DFF<Bits<4>>,
    h_csum_tail6: DFF<Bit>,
    h_csum_mask: Signal<Local, Bits<64>>,
    h_next_bytes: Signal<Local, Bits<4>>,
    /// IPv4 total length minus 26: the bytes of beat 5 in the UDP/ICMP checksum, when below 8.
    ip_tail: Signal<Local, Bits<16>>,
    h_csum_data: Signal<Local, Bits<64>>,
    ip_add: Add4,
    our_ip_add: Add3,
    pseudo_add: Add3,
    acc_add: Add3,
    /// Checks latched with beat 4.
    eth_for_us: DFF<Bit>,
    eth_ipv4: DFF<Bit>,
    eth_arp: DFF<Bit>,
    ip_version_ok: DFF<Bit>,
    ip_length_ok: DFF<Bit>,
    ip_dst_ok: DFF<Bit>,
    ip_fragment: DFF<Bit>,
    /// The source is no single host (`Ipv4RxCheck::src_bad`, or our subnet's broadcast); it is
    /// 0.0.0.0.
    ip_src_bad: DFF<Bit>,
    ip_src_zero: DFF<Bit>,
    ip_udp: DFF<Bit>,
    ip_icmp: DFF<Bit>,
    udp_length_ok: DFF<Bit>,
    udp_payload_len: DFF<Bits<16>>,
    icmp_echo_request: DFF<Bit>,
    icmp_data_len: DFF<Bits<16>>,
    /// 14 + IPv4 total length: the frame's length without padding.
    frame_end: DFF<Bits<32>>,
    /// UDP pseudo header: source and our address halves + 17 (beat 3), then + the UDP length.
    pseudo_part: DFF<Bits<32>>,
    pseudo_sum: DFF<Bits<32>>,
    /// Checks latched with beat 5.
    arp_well_formed: DFF<Bit>,
    arp_for_us: DFF<Bit>,
    arp_request: DFF<Bit>,
    arp_mac: DFF<Bits<48>>,
    arp_ip: DFF<Bits<32>>,
    udp_checksum_used: DFF<Bit>,

    // ---- payload stage --------------------------------------------------------------------
    p_valid: DFF<Bit>,
    p_data: DFF<Bits<64>>,
    p_keep: DFF<Bits<8>>,
    p_last: DFF<Bit>,
    p_error: DFF<Bit>,
    /// The beat's bytes in the checksum region, summed by word pairs in the header stage.
    p_csum_hi: DFF<Bits<32>>,
    p_csum_lo: DFF<Bits<32>>,
    idx: DFF<Bits<8>>,
    prev: DFF<Bits<64>>,
    kind: DFF<FrameKind>,
    reason: DFF<RxDrop>,
    remaining: DFF<Bits<16>>,
    acc: DFF<Bits<32>>,
    hold_valid: DFF<Bit>,
    hold_data: DFF<Bits<64>>,
    hold_keep: DFF<Bits<8>>,
    emitted: DFF<Bit>,
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
    icmp_header_q: DFF<Bit>,

    // ---- end of frame ---------------------------------------------------------------------
    /// The last beat has passed: the end checks are registered next.
    end_pending: DFF<Bit>,
    end_error: DFF<Bit>,
    end_len: DFF<Bits<16>>,
    end_fold: ChecksumFold,
    /// The end checks are registered: the verdict is taken when the output is free.
    end_ready: DFF<Bit>,
    end_checksum_ok: DFF<Bit>,
    end_truncated: DFF<Bit>,
    end_runt: DFF<Bit>,
    end_oversize: DFF<Bit>,
    done_q: DFF<Bit>,
    delivered_q: DFF<Bit>,
    arp_q: DFF<Bit>,
    icmp_echo_q: DFF<Bit>,
    dropped_q: DFF<Bit>,
    drop_reason_q: DFF<RxDrop>,
    arp_is_request_q: DFF<Bit>,
    arp_sender_mac_q: DFF<Bits<48>>,
    arp_sender_ip_q: DFF<Bits<32>>,

    o_free: Signal<Local, Bit>,
    advance: Signal<Local, Bit>,
    h_fire: Signal<Local, Bit>,
    h_data: Signal<Local, Bits<64>>,
    fire: Signal<Local, Bit>,
    hdr_kind: Signal<Local, FrameKind>,
    hdr_reason: Signal<Local, RxDrop>,
    end_drop: Signal<Local, Bit>,
    end_reason: Signal<Local, RxDrop>,
    beat_bytes: KeepLen,
    rem_keep: KeepForLen,
    rem_after: Signal<Local, Bits<16>>,
    tail_keep: KeepForLen,
    streams: Signal<Local, Bit>,
}

impl Logic for RxParser {
    // rust-hdl's subset, translated to Verilog as written (clippy's rewrite would change it).
    #[allow(clippy::single_match)]
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            h_idx,
            w0,
            w1,
            w2,
            w3,
            w4,
            w5,
            our_mac_q,
            our_ip_q,
            our_ip_sum,
            our_bcast,
            bcast_valid,
            ip_pair_hi,
            ip_pair_lo,
            ip_sum,
            ip_sum_ok,
            h_csum_left,
            h_csum_bytes,
            h_csum_tail6,
            eth_for_us,
            eth_ipv4,
            eth_arp,
            ip_version_ok,
            ip_length_ok,
            ip_dst_ok,
            ip_fragment,
            ip_src_bad,
            ip_src_zero,
            ip_udp,
            ip_icmp,
            udp_length_ok,
            udp_payload_len,
            icmp_echo_request,
            icmp_data_len,
            frame_end,
            pseudo_part,
            pseudo_sum,
            arp_well_formed,
            arp_for_us,
            arp_request,
            arp_mac,
            arp_ip,
            udp_checksum_used,
            p_valid,
            p_data,
            p_keep,
            p_last,
            p_error,
            p_csum_hi,
            p_csum_lo,
            idx,
            prev,
            kind,
            reason,
            remaining,
            acc,
            hold_valid,
            hold_data,
            hold_keep,
            emitted,
            o_valid,
            o_data,
            o_keep,
            o_last,
            o_error,
            sb_src_ip,
            sb_src_port,
            sb_dst_port,
            sb_len,
            sb_icmp,
            icmp_header_q,
            end_pending,
            end_error,
            end_len,
            end_ready,
            end_checksum_ok,
            end_truncated,
            end_runt,
            end_oversize,
            done_q,
            delivered_q,
            arp_q,
            icmp_echo_q,
            dropped_q,
            drop_reason_q,
            arp_is_request_q,
            arp_sender_mac_q,
            arp_sender_ip_q
        );

        // ---- handshake: every stage moves when the output register is free ----------------------
        self.o_free.next = !self.o_valid.q.val() | self.out.ready.val();
        // A frame's last beat waits while the previous frame's end is still being decided (only
        // frames of one or two beats come that close).
        self.advance.next = self.o_free.val()
            & !(self.p_valid.q.val()
                & self.p_last.q.val()
                & (self.end_pending.q.val() | self.end_ready.q.val()));
        self.in_slice.clock.next = self.clock.val();
        self.in_slice.reset.next = self.reset.val();
        self.in_slice.in_cancel.next = false;
        self.in_slice.in_data.next = (bit_cast::<BEAT_BITS, 64>(self.inp.data.val()) << 10)
            | (bit_cast::<BEAT_BITS, 8>(self.inp.keep.val()) << 2)
            | (bit_cast::<BEAT_BITS, 1>(self.inp.last.val().into()) << 1)
            | bit_cast::<BEAT_BITS, 1>(self.inp.error.val().into());
        self.in_slice.in_valid.next = self.inp.valid.val();
        self.inp.ready.next = self.in_slice.in_ready.val();
        self.in_slice.out_ready.next = self.advance.val();
        self.h_data.next = self.in_slice.out_data.val().get_bits::<64>(10);
        self.h_fire.next = self.in_slice.out_valid.val() & self.advance.val();
        self.fire.next = self.p_valid.q.val() & self.advance.val();
        if self.advance.val() {
            self.p_valid.d.next = self.in_slice.out_valid.val();
            self.p_data.d.next = self.h_data.val();
            self.p_keep.d.next = self.in_slice.out_data.val().get_bits::<8>(2);
            self.p_last.d.next = self.in_slice.out_data.val().get_bit(1);
            self.p_error.d.next = self.in_slice.out_data.val().get_bit(0);
        }
        if self.out.ready.val() {
            self.o_valid.d.next = false;
        }

        // ==== header stage =========================================================================
        // Layer checkers: the words before the current beat are registered, the current beat is
        // `h_data`; each one's outputs are latched when the beat completing its fields passes.
        self.eth.w0.next = self.w0.q.val();
        self.eth.w1.next = self.w1.q.val();
        self.our_mac_q.d.next = self.our_mac.val();
        self.our_ip_q.d.next = self.our_ip.val();
        // With the pseudo header's protocol (17) added.
        self.our_ip_add.a.next = bit_cast::<32, 16>(self.our_ip_q.q.val().get_bits::<16>(16));
        self.our_ip_add.b.next = bit_cast::<32, 16>(self.our_ip_q.q.val().get_bits::<16>(0));
        self.our_ip_add.c.next = 17.into();
        self.our_ip_sum.d.next = self.our_ip_add.sum.val();
        self.our_bcast.d.next = self.our_ip_q.q.val() | !self.our_netmask.val();
        self.bcast_valid.d.next = self.our_netmask.val().get_bits::<31>(1) != 0x7FFF_FFFF;
        self.eth.our_mac.next = self.our_mac_q.q.val();
        self.ipv4.w1.next = self.w1.q.val();
        self.ipv4.w2.next = self.w2.q.val();
        self.ipv4.w3.next = self.w3.q.val();
        // (Child inputs take the slice's output directly, not the `h_data` local: see "Kernels".)
        self.ipv4.w4.next = self.in_slice.out_data.val().get_bits::<64>(10);
        self.ipv4.our_ip.next = self.our_ip_q.q.val();
        self.udp.w4.next = self.in_slice.out_data.val().get_bits::<64>(10);
        self.udp.ip_total_len.next = self.ipv4.total_len.val();
        self.icmp.w4.next = self.in_slice.out_data.val().get_bits::<64>(10);
        self.icmp.ip_total_len.next = self.ipv4.total_len.val();
        self.arp_check.w1.next = self.w1.q.val();
        self.arp_check.w2.next = self.w2.q.val();
        self.arp_check.w3.next = self.w3.q.val();
        self.arp_check.w4.next = self.w4.q.val();
        // The target IP's low half is the first word of beat 5.
        self.arp_check.tpa_low.next = self.in_slice.out_data.val().get_bits::<16>(58);
        self.arp_check.our_ip.next = self.our_ip_q.q.val();

        // The checksum region's bytes of the next beat: the last six of beat 4, then up to the end
        // of the IPv4 packet (whatever padding follows is not summed); registered with this beat.
        self.h_next_bytes.next = 0.into();
        self.ip_tail.next = self.ipv4.total_len.val() - 26;
        if self.h_idx.q.val() == 4 {
            // 14 + total length - 40 bytes from beat 5 on (all of them if the length is absurd).
            self.h_next_bytes.next = 8.into();
            if (self.ipv4.total_len.val() >= 26) & (self.ipv4.total_len.val() < 34) {
                // `total_len - 26` (0..7) in a signal of its own: an arithmetic expression inside
                // `bit_cast` is evaluated at the wider width in the Verilog, not modulo 8.
                self.h_next_bytes.next = bit_cast::<4, 3>(self.ip_tail.val().get_bits::<3>(0));
            }
        } else if self.h_idx.q.val() >= 5 {
            if self.h_csum_left.q.val() >= 16 {
                self.h_next_bytes.next = 8.into();
            } else if self.h_csum_left.q.val() > 8 {
                self.h_next_bytes.next =
                    bit_cast::<4, 3>(self.h_csum_left.q.val().get_bits::<3>(0));
            }
        }
        self.h_csum_mask.next = 0xFFFF_FFFF_FFFF_FFFFu64.into();
        match self.h_csum_bytes.q.val().index() {
            0 => self.h_csum_mask.next = 0.into(),
            1 => self.h_csum_mask.next = 0xFF00_0000_0000_0000u64.into(),
            2 => self.h_csum_mask.next = 0xFFFF_0000_0000_0000u64.into(),
            3 => self.h_csum_mask.next = 0xFFFF_FF00_0000_0000u64.into(),
            4 => self.h_csum_mask.next = 0xFFFF_FFFF_0000_0000u64.into(),
            5 => self.h_csum_mask.next = 0xFFFF_FFFF_FF00_0000u64.into(),
            6 => self.h_csum_mask.next = 0xFFFF_FFFF_FFFF_0000u64.into(),
            7 => self.h_csum_mask.next = 0xFFFF_FFFF_FFFF_FF00u64.into(),
            _ => {}
        }
        if self.h_csum_tail6.q.val() {
            self.h_csum_mask.next = 0x0000_FFFF_FFFF_FFFFu64.into();
        }
        self.h_csum_data.next = self.h_data.val() & self.h_csum_mask.val();
        // Moves into the payload stage with the beat.
        if self.advance.val() {
            self.p_csum_hi.d.next = bit_cast::<32, 16>(self.h_csum_data.val().get_bits::<16>(48))
                + bit_cast::<32, 16>(self.h_csum_data.val().get_bits::<16>(32));
            self.p_csum_lo.d.next = bit_cast::<32, 16>(self.h_csum_data.val().get_bits::<16>(16))
                + bit_cast::<32, 16>(self.h_csum_data.val().get_bits::<16>(0));
        }
        // Summed with beats 1..4 only; its check registered every cycle: valid two cycles after
        // beat 4, until two cycles after the next frame's beat 1.
        self.ip_fold.sum.next = self.ip_sum.q.val();
        self.ip_sum_ok.d.next = self.ip_fold.all_ones.val();

        // Beat 3's words into the header sum with beat 3, beat 3's and beat 4's first with beat 4.
        self.ip_add.a.next = self.ip_sum.q.val();
        self.ip_add.b.next = self.ip_pair_hi.q.val();
        self.ip_add.c.next = self.ip_pair_lo.q.val();
        self.ip_add.d.next = 0.into();
        if self.h_idx.q.val() == 4 {
            self.ip_add.d.next =
                bit_cast::<32, 16>(self.in_slice.out_data.val().get_bits::<16>(58));
        }
        self.pseudo_add.a.next =
            bit_cast::<32, 16>(self.in_slice.out_data.val().get_bits::<16>(42));
        self.pseudo_add.b.next =
            bit_cast::<32, 16>(self.in_slice.out_data.val().get_bits::<16>(26));
        self.pseudo_add.c.next = self.our_ip_sum.q.val();

        if self.h_fire.val() {
            self.h_csum_bytes.d.next = self.h_next_bytes.val();
            self.h_csum_tail6.d.next = self.h_idx.q.val() == 3;
            if self.in_slice.out_data.val().get_bit(1) {
                // The next beat starts a frame.
                self.h_csum_bytes.d.next = 0.into();
                self.h_csum_tail6.d.next = false;
            }
            if self.h_idx.q.val() != 255 {
                self.h_idx.d.next = self.h_idx.q.val() + 1;
            }
            self.ip_pair_hi.d.next = bit_cast::<32, 16>(self.h_data.val().get_bits::<16>(48))
                + bit_cast::<32, 16>(self.h_data.val().get_bits::<16>(32));
            self.ip_pair_lo.d.next = bit_cast::<32, 16>(self.h_data.val().get_bits::<16>(16))
                + bit_cast::<32, 16>(self.h_data.val().get_bits::<16>(0));
            if self.h_csum_left.q.val() > 8 {
                self.h_csum_left.d.next = self.h_csum_left.q.val() - 8;
            } else {
                self.h_csum_left.d.next = 0.into();
            }
            match self.h_idx.q.val().index() {
                0 => self.w0.d.next = self.h_data.val(),
                1 => {
                    self.w1.d.next = self.h_data.val();
                    // The header's first word.
                    self.ip_sum.d.next = bit_cast::<32, 16>(self.h_data.val().get_bits::<16>(0));
                }
                2 => self.w2.d.next = self.h_data.val(),
                3 => {
                    self.w3.d.next = self.h_data.val();
                    self.ip_sum.d.next = self.ip_add.sum.val();
                    self.pseudo_part.d.next = self.pseudo_add.sum.val();
                }
                4 => {
                    self.w4.d.next = self.h_data.val();
                    // Now the whole header.
                    self.ip_sum.d.next = self.ip_add.sum.val();
                    // Region bytes from beat 5 on: 14 + total length - 40.
                    self.h_csum_left.d.next = self.ipv4.total_len.val() - 26;
                    self.eth_for_us.d.next = self.eth.for_us.val();
                    self.eth_ipv4.d.next = self.eth.is_ipv4.val();
                    self.eth_arp.d.next = self.eth.is_arp.val();
                    self.ip_version_ok.d.next = self.ipv4.version_ihl_ok.val();
                    self.ip_length_ok.d.next = self.ipv4.length_ok.val();
                    self.ip_dst_ok.d.next = self.ipv4.dst_ok.val();
                    self.ip_fragment.d.next = self.ipv4.fragment.val();
                    self.ip_src_bad.d.next = self.ipv4.src_bad.val()
                        | (self.bcast_valid.q.val()
                            & (self.ipv4.src_ip.val() == self.our_bcast.q.val()));
                    self.ip_src_zero.d.next = self.ipv4.src_zero.val();
                    self.ip_udp.d.next = self.ipv4.proto_udp.val();
                    self.ip_icmp.d.next = self.ipv4.proto_icmp.val();
                    self.udp_length_ok.d.next = self.udp.length_ok.val();
                    self.udp_payload_len.d.next = self.udp.payload_len.val();
                    self.icmp_echo_request.d.next = self.icmp.is_echo_request.val();
                    self.icmp_data_len.d.next = self.ipv4.total_len.val() - 28;
                    self.frame_end.d.next = bit_cast::<32, 16>(self.ipv4.total_len.val()) + 14;
                    self.pseudo_sum.d.next =
                        self.pseudo_part.q.val() + bit_cast::<32, 16>(self.udp.udp_len.val());
                }
                5 => {
                    self.w5.d.next = self.h_data.val();
                    self.arp_well_formed.d.next = self.arp_check.well_formed.val();
                    self.arp_for_us.d.next = self.arp_check.target_is_us.val();
                    self.arp_request.d.next = self.arp_check.is_request.val();
                    self.arp_mac.d.next = self.arp_check.sender_mac.val();
                    self.arp_ip.d.next = self.arp_check.sender_ip.val();
                    self.udp_checksum_used.d.next = self.h_data.val().get_bits::<16>(48).any();
                }
                _ => {}
            }
            if self.in_slice.out_data.val().get_bit(1) {
                self.h_idx.d.next = 0.into();
            }
        }

        // ==== payload stage ========================================================================
        // Header verdict, in layer order, from the latched checks; taken when beat 5 passes.
        self.hdr_kind.next = FrameKind::Drop;
        self.hdr_reason.next = RxDrop::UnknownProtocol;
        if !self.eth_for_us.q.val() {
            self.hdr_reason.next = RxDrop::NotForUs;
        } else if self.eth_arp.q.val() {
            if !self.arp_well_formed.q.val() {
                self.hdr_reason.next = RxDrop::UnknownProtocol;
            } else if !self.arp_for_us.q.val() {
                self.hdr_reason.next = RxDrop::NotForUs;
            } else {
                self.hdr_kind.next = FrameKind::Arp;
            }
        } else if self.eth_ipv4.q.val() {
            if !self.ip_version_ok.q.val() {
                self.hdr_reason.next = RxDrop::IpVersionIhl;
            } else if !self.ip_sum_ok.q.val() {
                self.hdr_reason.next = RxDrop::IpChecksum;
            } else if !self.ip_length_ok.q.val() {
                self.hdr_reason.next = RxDrop::IpLength;
            } else if !self.ip_dst_ok.q.val() {
                self.hdr_reason.next = RxDrop::NotForUs;
            } else if self.ip_src_bad.q.val() | (self.ip_src_zero.q.val() & !self.ip_udp.q.val()) {
                // RFC 1122 3.2.1.3: not from a single host (0.0.0.0 only as a UDP source).
                self.hdr_reason.next = RxDrop::BadSource;
            } else if self.ip_fragment.q.val() {
                self.hdr_reason.next = RxDrop::Fragment;
            } else if self.ip_udp.q.val() {
                if !self.udp_length_ok.q.val() {
                    self.hdr_reason.next = RxDrop::UdpLength;
                } else {
                    self.hdr_kind.next = FrameKind::Udp;
                }
            } else if self.ip_icmp.q.val() & self.icmp_echo_request.q.val() {
                self.hdr_kind.next = FrameKind::IcmpEcho;
            }
        }
        self.streams.next =
            (self.kind.q.val() == FrameKind::Udp) | (self.kind.q.val() == FrameKind::IcmpEcho);

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

        // The header stage's words are still this frame's in the cycle after its beat 6 passed
        // the payload stage (the next frame's beat 0 can pass the header stage that cycle at the
        // earliest).
        self.icmp_header.next = self.icmp_header_q.q.val();
        self.icmp_header_q.d.next =
            self.fire.val() & (self.idx.q.val() == 6) & (self.kind.q.val() == FrameKind::IcmpEcho);
        self.hdr_w0.next = self.w0.q.val();
        self.hdr_w1.next = self.w1.q.val();
        self.hdr_w2.next = self.w2.q.val();
        self.hdr_w3.next = self.w3.q.val();
        self.hdr_w4.next = self.w4.q.val();
        self.hdr_w5.next = self.w5.q.val();

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
        self.beat_bytes.keep.next = self.p_keep.q.val();

        // The region starts with beat 4; a UDP datagram's sum starts with its pseudo header.
        self.acc_add.a.next = self.acc.q.val();
        if self.idx.q.val() == 4 {
            self.acc_add.a.next = 0.into();
            if self.ip_udp.q.val() {
                self.acc_add.a.next = self.pseudo_sum.q.val();
            }
        }
        self.acc_add.b.next = self.p_csum_hi.q.val();
        self.acc_add.c.next = self.p_csum_lo.q.val();

        // ---- end of frame: the checks registered the cycle after the last beat -----------------
        self.end_fold.sum.next = self.acc.q.val();
        if self.end_pending.q.val() {
            self.end_pending.d.next = false;
            self.end_ready.d.next = true;
            self.end_checksum_ok.d.next = self.end_fold.all_ones.val();
            self.end_truncated.d.next =
                self.frame_end.q.val() > bit_cast::<32, 16>(self.end_len.q.val());
            self.end_runt.d.next = self.end_len.q.val() < 60;
            self.end_oversize.d.next = self.end_len.q.val() > 1514;
        }
        self.end_drop.next = true;
        self.end_reason.next = self.reason.q.val();
        if self.end_error.q.val() {
            self.end_reason.next = RxDrop::MacError;
        } else if self.end_runt.q.val() {
            self.end_reason.next = RxDrop::Runt;
        } else if self.end_oversize.q.val() {
            self.end_reason.next = RxDrop::Oversize;
        } else if self.kind.q.val() == FrameKind::Drop {
            self.end_reason.next = self.reason.q.val();
        } else if self.streams.val() & self.end_truncated.q.val() {
            self.end_reason.next = RxDrop::IpLength;
        } else if (self.kind.q.val() == FrameKind::Udp)
            & self.udp_checksum_used.q.val()
            & !self.end_checksum_ok.q.val()
        {
            self.end_reason.next = RxDrop::UdpChecksum;
        } else if (self.kind.q.val() == FrameKind::IcmpEcho) & !self.end_checksum_ok.q.val() {
            self.end_reason.next = RxDrop::IcmpInvalid;
        } else {
            self.end_drop.next = false;
        }

        // The outcome, registered: the ARP fields are the header stage's, which the next frame
        // overwrites with its beat 4 at the earliest.
        self.done_q.d.next = false;
        self.delivered_q.d.next = false;
        self.arp_q.d.next = false;
        self.icmp_echo_q.d.next = false;
        self.dropped_q.d.next = false;
        if self.end_ready.q.val() & self.o_free.val() {
            self.done_q.d.next = true;
            self.dropped_q.d.next = self.end_drop.val();
            self.drop_reason_q.d.next = self.end_reason.val();
            self.arp_is_request_q.d.next = self.arp_request.q.val();
            self.arp_sender_mac_q.d.next = self.arp_mac.q.val();
            self.arp_sender_ip_q.d.next = self.arp_ip.q.val();
            if !self.end_drop.val() {
                self.delivered_q.d.next = self.kind.q.val() == FrameKind::Udp;
                self.arp_q.d.next = self.kind.q.val() == FrameKind::Arp;
                self.icmp_echo_q.d.next = self.kind.q.val() == FrameKind::IcmpEcho;
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
            self.end_ready.d.next = false;
            self.hold_valid.d.next = false;
            self.emitted.d.next = false;
        }
        self.done.next = self.done_q.q.val();
        self.delivered.next = self.delivered_q.q.val();
        self.arp.next = self.arp_q.q.val();
        self.icmp_echo.next = self.icmp_echo_q.q.val();
        self.dropped.next = self.dropped_q.q.val();
        self.drop_reason.next = self.drop_reason_q.q.val();
        self.arp_is_request.next = self.arp_is_request_q.q.val();
        self.arp_sender_mac.next = self.arp_sender_mac_q.q.val();
        self.arp_sender_ip.next = self.arp_sender_ip_q.q.val();

        // ---- a beat passing the payload stage --------------------------------------------------
        if self.fire.val() {
            self.prev.d.next = self.p_data.q.val();
            if self.idx.q.val() != 255 {
                self.idx.d.next = self.idx.q.val() + 1;
            }
            self.acc.d.next = self.acc_add.sum.val();
            match self.idx.q.val().index() {
                5 => {
                    self.kind.d.next = self.hdr_kind.val();
                    self.reason.d.next = self.hdr_reason.val();
                    self.sb_src_ip.d.next = self.w3.q.val().get_bits::<32>(16);
                    self.sb_src_port.d.next = self.w4.q.val().get_bits::<16>(32);
                    self.sb_dst_port.d.next = self.w4.q.val().get_bits::<16>(16);
                    self.remaining.d.next = self.udp_payload_len.q.val();
                    self.sb_len.d.next = self.udp_payload_len.q.val();
                    self.sb_icmp.d.next = false;
                    if self.hdr_kind.val() == FrameKind::IcmpEcho {
                        self.remaining.d.next = self.icmp_data_len.q.val();
                        self.sb_len.d.next = self.icmp_data_len.q.val();
                        self.sb_icmp.d.next = true;
                    }
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
                        | bit_cast::<64, 16>(self.p_data.q.val().get_bits::<16>(48));
                    self.o_keep.d.next = 0xFF.into();
                    self.o_last.d.next = false;
                    self.o_error.d.next = false;
                    self.emitted.d.next = true;
                    if self.p_last.q.val() {
                        // The rest of the payload is in this beat's tail: it is the final beat.
                        self.hold_valid.d.next = true;
                        self.hold_data.d.next =
                            bit_cast::<64, 48>(self.p_data.q.val().get_bits::<48>(0)) << 16;
                        self.hold_keep.d.next = self.tail_keep.keep.val();
                        self.remaining.d.next = 0.into();
                    }
                } else {
                    self.hold_valid.d.next = true;
                    self.hold_data.d.next =
                        (bit_cast::<64, 48>(self.prev.q.val().get_bits::<48>(0)) << 16)
                            | bit_cast::<64, 16>(self.p_data.q.val().get_bits::<16>(48));
                    self.hold_keep.d.next = self.rem_keep.keep.val();
                }
            }
            if self.p_last.q.val() {
                self.idx.d.next = 0.into();
                self.end_pending.d.next = true;
                self.end_error.d.next = self.p_error.q.val();
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
            self.h_idx.d.next = 0.into();
            self.p_valid.d.next = false;
            self.idx.d.next = 0.into();
            self.end_pending.d.next = false;
            self.end_ready.d.next = false;
            self.done_q.d.next = false;
            self.icmp_header_q.d.next = false;
            self.hold_valid.d.next = false;
            self.emitted.d.next = false;
            self.o_valid.d.next = false;
            self.kind.d.next = FrameKind::Drop;
        }
    }
}

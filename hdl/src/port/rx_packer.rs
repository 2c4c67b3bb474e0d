//! Packs one port's received datagrams into the 128-bit words of its clock-crossing FIFO: a meta
//! word (`nanet_contract::packed::rx_meta`, by [`RxMetaPack`]), then the payload, two 64-bit beats per word (first beat in bits
//! 127:64, network order kept), the last word flagged `last` (and `error` if the datagram ended
//! badly). An empty datagram (UDP length 8) still has one payload word: a placeholder of zeros
//! that carries its `last` and `error`, so every layer after this one sees the same word shape.
//!
//! It never stalls the offload core (a 10G MAC cannot be held off): a datagram is taken into the
//! FIFO only if, at its first beat, the FIFO has room for all of its words (`fifo_used`, as the
//! write side sees it, only overstates what is used); otherwise it is dropped whole and
//! `drop_full` pulses. Writes are at most one per cycle: the meta word goes in with the first
//! payload beat, which waits for its pair; a one-beat datagram's lone word goes in the next cycle
//! (the next datagram's payload is at least six beats of header away).
//!
//! Timing: the FIFO word leaves from an output register, a cycle after the beat that completed
//! it. The room check is registered too: the first beat uses the check of the cycle before, so
//! `in_len` must be valid from the cycle before the first beat on (the offload core holds it from
//! its header's last beat); `fifo_used` then need not count the word in the output register, nor
//! the one written since, as every word of the datagram before was written six cycles earlier.

use rust_hdl::prelude::*;

use crate::common::stream::StreamSink;
use crate::rx::words::RxMetaPack;

#[derive(LogicBlock, Default)]
pub struct RxPacker {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub inp: StreamSink,
    pub in_stream: Signal<In, Bits<4>>,
    pub in_len: Signal<In, Bits<16>>,
    pub in_src_ip: Signal<In, Bits<32>>,
    pub in_src_port: Signal<In, Bits<16>>,
    /// Core time of the latest SOP at the MAC, and now.
    pub sop_time: Signal<In, Bits<32>>,
    pub now: Signal<In, Bits<32>>,

    /// FIFO word: bits 127:64 on `fifo_hi`, `{meta, last, error, bits 63:0}` on `fifo_meta`.
    pub fifo_hi: Signal<Out, Bits<64>>,
    pub fifo_meta: Signal<Out, Bits<67>>,
    pub fifo_valid: Signal<Out, Bit>,
    pub fifo_used: Signal<In, Bits<10>>,

    pub drop_full: Signal<Out, Bit>,
    pub forwarded: Signal<Out, Bit>,

    /// The datagram's meta word (`nanet_contract::packed::rx_meta`).
    meta_word: RxMetaPack,
    /// The FIFO word on its way out.
    out_hi: DFF<Bits<64>>,
    out_meta: DFF<Bits<67>>,
    out_valid: DFF<Bit>,
    word_valid: Signal<Local, Bit>,
    in_packet: DFF<Bit>,
    dropping: DFF<Bit>,
    half: DFF<Bit>,
    hi: DFF<Bits<64>>,
    /// A one-beat datagram's word, written the cycle after its meta word.
    lone: DFF<Bit>,
    lone_error: DFF<Bit>,
    len_up: Signal<Local, Bits<17>>,
    /// FIFO words in use plus the datagram's payload words.
    words: Signal<Local, Bits<14>>,
    room: Signal<Local, Bit>,
    /// `room` of the previous cycle, what a first beat goes by.
    room_q: DFF<Bit>,
    word_hi: Signal<Local, Bits<64>>,
    word_lo: Signal<Local, Bits<64>>,
    flags: Signal<Local, Bits<3>>,
    delta: Signal<Local, Bits<32>>,
}

impl Logic for RxPacker {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, in_packet, dropping, half, hi, lone, lone_error, out_hi, out_meta,
            out_valid, room_q
        );
        self.inp.ready.next = true;
        self.meta_word.stream.next = self.in_stream.val();
        self.meta_word.len.next = self.in_len.val();
        self.meta_word.src_ip.next = self.in_src_ip.val();
        self.meta_word.src_port.next = self.in_src_port.val();
        self.meta_word.sop_time.next = self.sop_time.val();
        // Words this datagram needs: its meta word and ceil(len / 16) payload words, at least one
        // (an empty datagram still ends with a word flagged `last`). Room for them:
        // `used + 1 + ceil(len / 16) <= 512`, and `used + 2 <= 512` for an empty one; as one add
        // and two tests beside it, not an add behind another (timing).
        self.len_up.next = bit_cast::<17, 16>(self.in_len.val()) + 15;
        self.words.next = bit_cast::<14, 13>(self.len_up.val().get_bits::<13>(4))
            + bit_cast::<14, 10>(self.fifo_used.val());
        self.room.next =
            (self.words.val() < 512) & (self.in_len.val().any() | (self.fifo_used.val() < 511));
        self.room_q.d.next = self.room.val();
        self.delta.next = self.now.val() - self.sop_time.val();
        self.meta_word.hdr_delta.next = self.delta.val().get_bits::<16>(0);

        self.word_valid.next = false;
        self.word_hi.next = self.hi.q.val();
        self.word_lo.next = self.inp.data.val();
        // flags: {meta, last, error}
        self.flags.next = (bit_cast::<3, 1>(self.inp.last.val().into()) << 1)
            | bit_cast::<3, 1>((self.inp.last.val() & self.inp.error.val()).into());
        self.drop_full.next = false;
        self.forwarded.next = false;

        if self.lone.q.val() {
            self.word_valid.next = true;
            self.word_lo.next = 0.into();
            self.flags.next = 2.into();
            if self.lone_error.q.val() {
                self.flags.next = 3.into();
            }
            self.lone.d.next = false;
        }
        if self.inp.valid.val() {
            if !self.in_packet.q.val() {
                if self.room_q.q.val() {
                    // The meta word.
                    self.word_valid.next = true;
                    self.forwarded.next = true;
                    self.word_hi.next = self.meta_word.word.val().get_bits::<64>(64);
                    self.word_lo.next = self.meta_word.word.val().get_bits::<64>(0);
                    self.flags.next = 4.into();
                    self.hi.d.next = self.inp.data.val();
                    self.half.d.next = true;
                    if self.inp.last.val() {
                        self.half.d.next = false;
                        self.lone.d.next = true;
                        self.lone_error.d.next = self.inp.error.val();
                    }
                } else {
                    self.drop_full.next = true;
                    self.dropping.d.next = true;
                }
                self.in_packet.d.next = !self.inp.last.val();
                if self.inp.last.val() {
                    self.dropping.d.next = false;
                }
            } else {
                if !self.dropping.q.val() {
                    if self.half.q.val() {
                        self.word_valid.next = true;
                        self.half.d.next = false;
                    } else if self.inp.last.val() {
                        self.word_valid.next = true;
                        self.word_hi.next = self.inp.data.val();
                        self.word_lo.next = 0.into();
                    } else {
                        self.hi.d.next = self.inp.data.val();
                        self.half.d.next = true;
                    }
                }
                if self.inp.last.val() {
                    self.in_packet.d.next = false;
                    self.dropping.d.next = false;
                    self.half.d.next = false;
                }
            }
        }
        self.out_hi.d.next = self.word_hi.val();
        self.out_meta.d.next =
            (bit_cast::<67, 3>(self.flags.val()) << 64) | bit_cast::<67, 64>(self.word_lo.val());
        self.out_valid.d.next = self.word_valid.val();
        self.fifo_hi.next = self.out_hi.q.val();
        self.fifo_meta.next = self.out_meta.q.val();
        self.fifo_valid.next = self.out_valid.q.val();

        if self.reset.val() {
            self.in_packet.d.next = false;
            self.dropping.d.next = false;
            self.half.d.next = false;
            self.lone.d.next = false;
            self.out_valid.d.next = false;
        }
    }
}

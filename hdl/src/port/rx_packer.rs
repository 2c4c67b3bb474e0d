//! Packs one port's received datagrams into the `W`-bit words (128 or 256) of its clock-crossing
//! FIFO: a meta word (`nanet_contract::packed::rx_meta`, by [`RxMetaPack`], in the word's low 128
//! bits), then the payload, `W / 64` beats of 64 bits per word (first beat in the top bits,
//! network order kept), the last word flagged `last` (and `error` if the datagram ended badly) and
//! padded with zeros below its last beat. An empty datagram (UDP length 8) still has one payload
//! word: a placeholder of zeros that carries its `last` and `error`, so every layer after this one
//! sees the same word shape.
//!
//! It never stalls the offload core (a 10G MAC cannot be held off): a datagram is taken into the
//! FIFO only if, at its first beat, the FIFO has room for all of its words (`fifo_used`, as the
//! write side sees it, only overstates what is used); otherwise it is dropped whole and
//! `drop_full` pulses. Writes are at most one per cycle: the meta word goes in with the first
//! payload beat, whose word is written when its last beat comes; a one-beat datagram's lone word
//! goes in the next cycle (the next datagram's payload is at least six beats of header away).
//!
//! Timing: the FIFO word leaves from an output register, a cycle after the beat that completed
//! it. The room check is registered too: the first beat uses the check of the cycle before, so
//! `in_len` must be valid from the cycle before the first beat on (the offload core holds it from
//! its header's last beat); `fifo_used` then need not count the word in the output register, nor
//! the one written since, as every word of the datagram before was written six cycles earlier.

use rust_hdl::prelude::*;

use crate::common::stream::StreamSink;
use crate::rx::words::RxMetaPack;

#[derive(LogicBlock)]
pub struct RxPacker<const W: usize> {
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

    /// FIFO word: the data, and its flags `{meta, last, error}`.
    pub fifo_data: Signal<Out, Bits<W>>,
    pub fifo_flags: Signal<Out, Bits<3>>,
    pub fifo_valid: Signal<Out, Bit>,
    pub fifo_used: Signal<In, Bits<10>>,

    pub drop_full: Signal<Out, Bit>,
    pub forwarded: Signal<Out, Bit>,

    /// The datagram's meta word (`nanet_contract::packed::rx_meta`).
    meta_word: RxMetaPack,
    /// The FIFO word on its way out.
    out_data: DFF<Bits<W>>,
    out_flags: DFF<Bits<3>>,
    out_valid: DFF<Bit>,
    word_valid: Signal<Local, Bit>,
    in_packet: DFF<Bit>,
    dropping: DFF<Bit>,
    /// The place in its word of the next payload beat (0 to `W / 64 - 1`), and the word's beats
    /// before it, the latest in the low 64 bits.
    slot: DFF<Bits<2>>,
    acc: DFF<Bits<W>>,
    /// The last place in a word; a word's bytes less one, and log2 of its bytes.
    last_slot: Constant<Bits<2>>,
    word_bytes_less1: Constant<Bits<17>>,
    word_bytes_log2: Constant<Bits<17>>,
    /// The word's beats with this one (`acc` and the beat), and the zero bits below them in a word
    /// that ends at this beat.
    filled: Signal<Local, Bits<W>>,
    pad: Signal<Local, Bits<9>>,
    /// A one-beat datagram's word, written the cycle after its meta word.
    lone: DFF<Bit>,
    lone_error: DFF<Bit>,
    len_up: Signal<Local, Bits<17>>,
    len_words: Signal<Local, Bits<17>>,
    /// FIFO words in use plus the datagram's payload words.
    words: Signal<Local, Bits<14>>,
    room: Signal<Local, Bit>,
    /// `room` of the previous cycle, what a first beat goes by.
    room_q: DFF<Bit>,
    word: Signal<Local, Bits<W>>,
    flags: Signal<Local, Bits<3>>,
    delta: Signal<Local, Bits<32>>,
}

impl<const W: usize> RxPacker<W> {
    const WIDTH_OK: () = assert!(W == 128 || W == 256, "RxPacker: 128 or 256 bits");
}

impl<const W: usize> Default for RxPacker<W> {
    fn default() -> Self {
        let () = Self::WIDTH_OK;
        let bytes = (W / 8) as u64;
        Self {
            clock: Default::default(),
            reset: Default::default(),
            inp: Default::default(),
            in_stream: Default::default(),
            in_len: Default::default(),
            in_src_ip: Default::default(),
            in_src_port: Default::default(),
            sop_time: Default::default(),
            now: Default::default(),
            fifo_data: Default::default(),
            fifo_flags: Default::default(),
            fifo_valid: Default::default(),
            fifo_used: Default::default(),
            drop_full: Default::default(),
            forwarded: Default::default(),
            meta_word: Default::default(),
            out_data: Default::default(),
            out_flags: Default::default(),
            out_valid: Default::default(),
            word_valid: Default::default(),
            in_packet: Default::default(),
            dropping: Default::default(),
            slot: Default::default(),
            acc: Default::default(),
            last_slot: Constant::new((W as u64 / 64 - 1).into()),
            word_bytes_less1: Constant::new((bytes - 1).into()),
            word_bytes_log2: Constant::new((bytes.trailing_zeros() as u64).into()),
            filled: Default::default(),
            pad: Default::default(),
            lone: Default::default(),
            lone_error: Default::default(),
            len_up: Default::default(),
            len_words: Default::default(),
            words: Default::default(),
            room: Default::default(),
            room_q: Default::default(),
            word: Default::default(),
            flags: Default::default(),
            delta: Default::default(),
        }
    }
}

impl<const W: usize> Logic for RxPacker<W> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, in_packet, dropping, slot, acc, lone, lone_error, out_data, out_flags,
            out_valid, room_q
        );
        self.inp.ready.next = true;
        self.meta_word.stream.next = self.in_stream.val();
        self.meta_word.len.next = self.in_len.val();
        self.meta_word.src_ip.next = self.in_src_ip.val();
        self.meta_word.src_port.next = self.in_src_port.val();
        self.meta_word.sop_time.next = self.sop_time.val();
        // Words this datagram needs: its meta word and ceil(len / word bytes) payload words, at
        // least one (an empty datagram still ends with a word flagged `last`). Room for them:
        // `used + 1 + payload words <= 512`, and `used + 2 <= 512` for an empty one; as one add
        // and two tests beside it, not an add behind another (timing).
        self.len_up.next = bit_cast::<17, 16>(self.in_len.val()) + self.word_bytes_less1.val();
        self.len_words.next = self.len_up.val() >> self.word_bytes_log2.val();
        self.words.next = bit_cast::<14, 13>(self.len_words.val().get_bits::<13>(0))
            + bit_cast::<14, 10>(self.fifo_used.val());
        self.room.next =
            (self.words.val() < 512) & (self.in_len.val().any() | (self.fifo_used.val() < 511));
        self.room_q.d.next = self.room.val();
        self.delta.next = self.now.val() - self.sop_time.val();
        self.meta_word.hdr_delta.next = self.delta.val().get_bits::<16>(0);

        // A word ending at the beat in place `slot` has `last_slot - slot` beats of zeros below.
        self.filled.next = (self.acc.q.val() << 64) | bit_cast::<W, 64>(self.inp.data.val());
        self.pad.next = bit_cast::<9, 2>(self.last_slot.val() - self.slot.q.val()) << 6;
        self.word_valid.next = false;
        self.word.next = self.filled.val() << self.pad.val();
        // flags: {meta, last, error}
        self.flags.next = (bit_cast::<3, 1>(self.inp.last.val().into()) << 1)
            | bit_cast::<3, 1>((self.inp.last.val() & self.inp.error.val()).into());
        self.drop_full.next = false;
        self.forwarded.next = false;

        if self.lone.q.val() {
            // The first beat alone, in place 0 (`slot` is back at 0).
            self.word_valid.next = true;
            self.word.next = self.acc.q.val() << self.pad.val();
            self.flags.next = 2.into();
            if self.lone_error.q.val() {
                self.flags.next = 3.into();
            }
            self.lone.d.next = false;
        }
        if self.inp.valid.val() {
            if !self.in_packet.q.val() {
                if self.room_q.q.val() {
                    // The meta word; the beat is the first of the first payload word.
                    self.word_valid.next = true;
                    self.forwarded.next = true;
                    self.word.next = bit_cast::<W, 128>(self.meta_word.word.val());
                    self.flags.next = 4.into();
                    self.acc.d.next = bit_cast::<W, 64>(self.inp.data.val());
                    self.slot.d.next = 1.into();
                    if self.inp.last.val() {
                        self.slot.d.next = 0.into();
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
                    if self.inp.last.val() | (self.slot.q.val() == self.last_slot.val()) {
                        self.word_valid.next = true;
                        self.acc.d.next = 0.into();
                        self.slot.d.next = 0.into();
                    } else {
                        self.acc.d.next = self.filled.val();
                        self.slot.d.next = self.slot.q.val() + 1;
                    }
                }
                if self.inp.last.val() {
                    self.in_packet.d.next = false;
                    self.dropping.d.next = false;
                }
            }
        }
        self.out_data.d.next = self.word.val();
        self.out_flags.d.next = self.flags.val();
        self.out_valid.d.next = self.word_valid.val();
        self.fifo_data.next = self.out_data.q.val();
        self.fifo_flags.next = self.out_flags.q.val();
        self.fifo_valid.next = self.out_valid.q.val();

        if self.reset.val() {
            self.in_packet.d.next = false;
            self.dropping.d.next = false;
            self.slot.d.next = 0.into();
            self.lone.d.next = false;
            self.out_valid.d.next = false;
        }
    }
}

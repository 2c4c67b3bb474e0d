//! Store-and-forward buffer for one packet (up to 256 beats, 2 KiB), with the ones' complement sum
//! of its bytes. Used where a packet must be complete before it can go on: ICMP echo replies and
//! UDP transmit checksums.
//!
//! Input: a packet ending with `error` is discarded, or, with `keep_errors`, held like any other
//! and replayed with `error` on its last beat (the UDP transmit checksum: its datagram must still
//! leave as an errored frame, see `udp_tx_checksum`; a truncated one, below, loses its error with
//! its end: only payloads over 2 KiB, which the UDP transmitter drops anyway). While a packet is held (`full`), a new input
//! packet is stalled, or, with `drop_when_full`, consumed and discarded whole (`dropped` pulses at its
//! last beat). A packet longer than 256 beats is truncated to 256 (its last stored beat is marked
//! last), so the replay always ends.
//! Output: while `play` is set the held packet is replayed; the buffer is empty again after its last
//! beat.
//! Sum: each beat's words are summed in the cycle it arrives and added to the packet's sum in the
//! next (two short paths rather than one long one), so `sum` is complete one cycle after `full`
//! rises.

use rust_hdl::prelude::*;

use crate::common::checksum::BeatSum;
use crate::common::stream::{StreamSink, StreamSource};

#[derive(LogicBlock, Default)]
pub struct PacketBuffer {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub inp: StreamSink,
    pub out: StreamSource,
    pub play: Signal<In, Bit>,
    pub drop_when_full: Signal<In, Bit>,
    pub keep_errors: Signal<In, Bit>,
    pub full: Signal<Out, Bit>,
    pub dropped: Signal<Out, Bit>,
    /// Unfolded sum of the held packet's 16-bit words (bytes outside `keep` count as zero),
    /// complete from the cycle after `full` rises.
    pub sum: Signal<Out, Bits<32>>,

    /// Beat data, and `{error[9], last[8], keep[7:0]}` beside it (two RAMs: no word wider than
    /// 64 bits; `error` only on a last beat).
    data_ram: RAM<Bits<64>, 8>,
    meta_ram: RAM<Bits<10>, 8>,
    beat_sum: BeatSum,
    wr_ptr: DFF<Bits<8>>,
    rd_ptr: DFF<Bits<8>>,
    held: DFF<Bit>,
    /// The RAM output holds the first stored beat (one cycle after `held`).
    primed: DFF<Bit>,
    in_packet: DFF<Bit>,
    discarding: DFF<Bit>,
    truncated: DFF<Bit>,
    acc: DFF<Bits<32>>,
    /// The previous cycle's stored beat, its word sum, and whether it began a packet.
    beat_stored: DFF<Bit>,
    beat_first: DFF<Bit>,
    beat_sum_q: DFF<Bits<32>>,
    fire_in: Signal<Local, Bit>,
    store: Signal<Local, Bit>,
    fire_out: Signal<Local, Bit>,
}

impl Logic for PacketBuffer {
    // rust-hdl's subset, translated to Verilog as written (clippy's rewrite would change it).
    #[allow(clippy::if_same_then_else)]
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            wr_ptr,
            rd_ptr,
            held,
            primed,
            in_packet,
            discarding,
            truncated,
            acc,
            beat_stored,
            beat_first,
            beat_sum_q
        );
        self.data_ram.read_clock.next = self.clock.val();
        self.data_ram.write_clock.next = self.clock.val();
        self.meta_ram.read_clock.next = self.clock.val();
        self.meta_ram.write_clock.next = self.clock.val();
        self.full.next = self.held.q.val();
        self.sum.next = self.acc.q.val();
        self.dropped.next = false;

        // ---- input -------------------------------------------------------------------------------
        self.inp.ready.next = !self.held.q.val() | self.drop_when_full.val();
        self.fire_in.next = self.inp.valid.val() & (!self.held.q.val() | self.drop_when_full.val());
        // Whether this beat is kept: decided at a packet's first beat, for the whole packet.
        self.store.next = !self.held.q.val();
        if self.in_packet.q.val() {
            self.store.next = !self.discarding.q.val() & !self.truncated.q.val();
        }
        self.beat_sum.data.next = self.inp.data.val();
        self.beat_sum.keep.next = self.inp.keep.val();
        self.beat_sum_q.d.next = self.beat_sum.sum.val();
        self.beat_stored.d.next = self.fire_in.val() & self.store.val();
        self.beat_first.d.next = !self.in_packet.q.val();
        if self.beat_stored.q.val() {
            if self.beat_first.q.val() {
                self.acc.d.next = self.beat_sum_q.q.val();
            } else {
                self.acc.d.next = self.acc.q.val() + self.beat_sum_q.q.val();
            }
        }
        self.data_ram.write_enable.next = false;
        self.data_ram.write_address.next = self.wr_ptr.q.val();
        self.data_ram.write_data.next = self.inp.data.val();
        self.meta_ram.write_enable.next = false;
        self.meta_ram.write_address.next = self.wr_ptr.q.val();
        self.meta_ram.write_data.next =
            (bit_cast::<10, 1>((self.inp.last.val() & self.inp.error.val()).into()) << 9)
                | (bit_cast::<10, 1>(self.inp.last.val().into()) << 8)
                | bit_cast::<10, 8>(self.inp.keep.val());
        if self.fire_in.val() {
            self.in_packet.d.next = !self.inp.last.val();
            if !self.in_packet.q.val() {
                self.discarding.d.next = self.held.q.val();
                self.truncated.d.next = false;
            }
            if self.store.val() {
                self.data_ram.write_enable.next = true;
                self.meta_ram.write_enable.next = true;
                self.wr_ptr.d.next = self.wr_ptr.q.val() + 1;
                if self.wr_ptr.q.val() == 255 {
                    // Full RAM: keep this beat as the last one, drop the rest of the packet.
                    self.meta_ram.write_data.next = (bit_cast::<10, 1>(true.into()) << 8)
                        | bit_cast::<10, 8>(self.inp.keep.val());
                    self.truncated.d.next = true;
                }
            }
            if self.inp.last.val() {
                self.wr_ptr.d.next = 0.into();
                if self.in_packet.q.val() & self.discarding.q.val() {
                    self.dropped.next = !self.inp.error.val();
                } else if self.held.q.val() & !self.in_packet.q.val() {
                    self.dropped.next = !self.inp.error.val();
                } else if !self.inp.error.val() | self.keep_errors.val() {
                    self.held.d.next = true;
                }
            }
        }

        // ---- replay: the RAM reads the entry the pointer holds after this edge; the pointer rests
        // at 0 between packets, so the first beat is at the RAM output one cycle after `held`.
        self.primed.d.next = self.held.q.val();
        self.out.valid.next = self.held.q.val() & self.primed.q.val() & self.play.val();
        self.out.data.next = self.data_ram.read_data.val();
        self.out.keep.next = self.meta_ram.read_data.val().get_bits::<8>(0);
        self.out.last.next = self.meta_ram.read_data.val().get_bit(8);
        self.out.error.next = self.meta_ram.read_data.val().get_bit(9);
        self.fire_out.next =
            self.held.q.val() & self.primed.q.val() & self.play.val() & self.out.ready.val();
        self.data_ram.read_address.next = self.rd_ptr.q.val();
        self.meta_ram.read_address.next = self.rd_ptr.q.val();
        if self.fire_out.val() {
            self.rd_ptr.d.next = self.rd_ptr.q.val() + 1;
            self.data_ram.read_address.next = self.rd_ptr.q.val() + 1;
            self.meta_ram.read_address.next = self.rd_ptr.q.val() + 1;
            if self.meta_ram.read_data.val().get_bit(8) {
                self.held.d.next = false;
                self.primed.d.next = false;
                self.rd_ptr.d.next = 0.into();
                self.data_ram.read_address.next = 0.into();
                self.meta_ram.read_address.next = 0.into();
            }
        }

        if self.reset.val() {
            self.wr_ptr.d.next = 0.into();
            self.held.d.next = false;
            self.rd_ptr.d.next = 0.into();
            self.in_packet.d.next = false;
            self.discarding.d.next = false;
            self.truncated.d.next = false;
            self.beat_stored.d.next = false;
        }
    }
}

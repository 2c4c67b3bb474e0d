//! DMA write engine: writes one packet's payload at a virtual address of a CLOP region, as write
//! requests ready for the PCIe TLP layer.
//!
//! Per command (`req.cmd_*`: the CLOP region's virtual base and first TLB slot, its page size, the
//! byte offset of the write in the region and its length) it
//! - translates the address through the TLB at the start and at every boundary of the CLOP's pages
//!   (the slot is the CLOP's first slot plus the page index of the offset; the base's bits below
//!   the page size are ignored, so a region always starts at a page); a miss stops the writes
//!   and the rest of the payload is consumed and dropped — never an untranslated write;
//! - realigns the payload (`W`-bit beats in network order: first byte in `data[W-1:W-8]`) onto
//!   `W`-bit little-endian beats of memory (`B = W / 8` lanes: byte at address `A` in lane
//!   `A % B`, bits `[8*(A%B)+7 : 8*(A%B)]`), so it lands at any byte offset;
//! - splits the writes at every max-payload-size boundary of the address (128 or 256 bytes), hence
//!   also at every 4 KiB boundary.
//!
//! Write requests (`wr`, see `write_request`) leave through a register slice (`out`), so neither
//! the beat nor the write port's `ready` passes through logic here. (A slice on the payload's side
//! too was measured: a cycle more per packet, which cost four ports of 32- to 256-byte datagrams
//! 4-16% of their goodput.) The first beat of a page goes
//! into the slice in the cycle its translation arrives, whatever the tag compare says, and on a
//! miss it is marked void a cycle later (`WriteRequestSkid::void_late`, from `void_q`, the
//! registered miss; the mark leaves with the beat as `wr_void`) and the next stage (the write
//! mux) drops it. The compare feeds that one register only (`void_q`): neither the handshake nor
//! the slice (as a cancel into the slice's valids, then as a mark into its data registers, it took
//! a level more than the core domain's budget on the four-port card), nor the state or `miss`,
//! which follow the registered miss: `Stream` writes nothing in the cycle after a miss and goes to
//! `Drain` (with the compare in them, they took a level too many). Every beat of a request is
//! sent even if the payload ends early (its bytes are in the space reserved for the packet, which is then
//! reported bad and overwritten later).
//!
//! `done` pulses once per command, in the cycle after its last beat went into the slice (or its
//! payload's last beat is consumed, when that comes later or nothing is written), from a register
//! (for timing: the outcome depends on the TLB's answer in that cycle), with the outcome. After a
//! miss whose payload was already all taken, and after a last beat that went with its page's
//! translation (a one-beat command's), the command ends in `Drain` with nothing left to decide:
//! `done` is then told from the registers in that very cycle, also a cycle after the beat
//! (registered first, a one-beat datagram took a cycle more: four ports of 16-byte datagrams
//! reached 83.7% of line rate instead of 100%). The outcome:
//! `done_ok`, or `done_tlb_miss`, or `done_error` (the payload ended with `error`, or had fewer or
//! more beats than `cmd_len` says). A zero-length command's payload is one placeholder beat (an
//! empty datagram's, see `port/rx_packer.rs`): nothing is written, and the command ends well if
//! that beat is its last and not in error, a cycle after it (told from registers in `Drain`).
//! `first_write` pulses when the command's first beat goes into
//! the slice (the "first DMA beat" timestamp of the event record; it also pulses for a first beat
//! dropped on a miss, whose packet reports no DMA times); `done` comes a cycle after the last.
//! `holds_writes` says beats still wait in the slice or behind it (`wr_behind`), after `done`.

use rust_hdl::prelude::*;

use crate::pcie::write_request::{WriteRequestSkid, WriteRequestSource};
use crate::rx::tlb::Tlb;

/// The CLOP engine's side of its link to the DMA writer: a command (where and how long), the
/// payload (`W`-bit beats, network order), and the outcome (see `DmaWriter`).
#[derive(LogicInterface, Default)]
#[join = "DmaWriteServer"]
pub struct DmaWriteRequester<const W: usize> {
    pub cmd_valid: Signal<Out, Bit>,
    pub cmd_ready: Signal<In, Bit>,
    pub cmd_base: Signal<Out, Bits<64>>,
    pub cmd_offset: Signal<Out, Bits<32>>,
    pub cmd_len: Signal<Out, Bits<16>>,
    pub cmd_slot: Signal<Out, Bits<7>>,
    pub cmd_page: Signal<Out, Bits<2>>,
    pub data: Signal<Out, Bits<W>>,
    pub data_last: Signal<Out, Bit>,
    pub data_error: Signal<Out, Bit>,
    pub data_valid: Signal<Out, Bit>,
    pub data_ready: Signal<In, Bit>,
    pub first_write: Signal<In, Bit>,
    pub done: Signal<In, Bit>,
    pub done_ok: Signal<In, Bit>,
    pub done_tlb_miss: Signal<In, Bit>,
    pub done_error: Signal<In, Bit>,
    /// Write beats still wait in the DMA writer's output slice (after `done`).
    pub holds_writes: Signal<In, Bit>,
}

/// The DMA writer's side of the link (see [`DmaWriteRequester`]).
#[derive(LogicInterface, Default)]
#[join = "DmaWriteRequester"]
pub struct DmaWriteServer<const W: usize> {
    pub cmd_valid: Signal<In, Bit>,
    pub cmd_ready: Signal<Out, Bit>,
    pub cmd_base: Signal<In, Bits<64>>,
    pub cmd_offset: Signal<In, Bits<32>>,
    pub cmd_len: Signal<In, Bits<16>>,
    pub cmd_slot: Signal<In, Bits<7>>,
    pub cmd_page: Signal<In, Bits<2>>,
    pub data: Signal<In, Bits<W>>,
    pub data_last: Signal<In, Bit>,
    pub data_error: Signal<In, Bit>,
    pub data_valid: Signal<In, Bit>,
    pub data_ready: Signal<Out, Bit>,
    pub first_write: Signal<Out, Bit>,
    pub done: Signal<Out, Bit>,
    pub done_ok: Signal<Out, Bit>,
    pub done_tlb_miss: Signal<Out, Bit>,
    pub done_error: Signal<Out, Bit>,
    pub holds_writes: Signal<Out, Bit>,
}

/// The writer's states, one command at a time.
#[derive(Copy, Clone, Debug, PartialEq, LogicState)]
enum DmaState {
    /// Waiting for a command (its first translation is requested as it is taken).
    Idle,
    /// Waiting for a translation; the first beat of its page goes out with it (dropped on a miss).
    Translate,
    /// Streaming write beats.
    Stream,
    /// Consuming what is left of the payload (after the last beat, a TLB miss or a zero length).
    Drain,
}

#[derive(LogicBlock)]
pub struct DmaWriter<const W: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// Maximum payload size of a write request: 128 bytes, or 256 when set.
    pub mps_256: Signal<In, Bit>,

    /// Commands and payloads from the CLOP engine, outcomes back.
    pub req: DmaWriteServer<W>,

    /// TLB entry writes from the host (see `tlb`).
    pub tlb_wr: Signal<In, Bit>,
    pub tlb_wr_slot: Signal<In, Bits<7>>,
    pub tlb_wr_valid: Signal<In, Bit>,
    pub tlb_wr_size: Signal<In, Bits<2>>,
    pub tlb_wr_vpn: Signal<In, Bits<52>>,
    pub tlb_wr_ppn: Signal<In, Bits<52>>,

    pub wr: WriteRequestSource<W>,
    /// The beat on offer at `wr` is void (the first beat of a page whose translation missed):
    /// whoever takes it drops it.
    pub wr_void: Signal<Out, Bit>,
    /// Write beats wait behind `wr`, in a register slice the writer's requests pass (counted in
    /// `holds_writes`).
    pub wr_behind: Signal<In, Bit>,

    tlb: Tlb,
    out: WriteRequestSkid<W>,
    state: DFF<DmaState>,
    /// Offset in the region of the next byte to write.
    off: DFF<Bits<32>>,
    /// Bytes still to write.
    rem: DFF<Bits<16>>,
    /// Write beats still to send, fixed when the command is taken.
    out_beats: DFF<Bits<13>>,
    page: DFF<Bits<2>>,
    /// The TLB slot and virtual address of the page being translated or written (`page_*`), and
    /// of the page after it (`next_*`, prepared a cycle ahead for a page crossing).
    page_slot: DFF<Bits<7>>,
    next_slot: DFF<Bits<7>>,
    page_vaddr: DFF<Bits<64>>,
    next_vaddr: DFF<Bits<64>>,
    /// The lane of the payload's first byte (registered at the command): each payload beat is
    /// rotated up by this many lanes, and the lanes below it (`low_bytes`, a byte mask) come
    /// from the beat before.
    shift: DFF<Bits<5>>,
    low_bytes: DFF<Bits<W>>,
    /// `out_beats == 1`: the command's last write beat.
    last_beat: DFF<Bit>,
    /// Payload beats still expected, and whether `data_last` has been taken.
    in_left: DFF<Bits<12>>,
    in_done: DFF<Bit>,
    /// A zero-length command's placeholder beat is still to come (taken in `Drain`).
    placeholder: DFF<Bit>,
    /// In `Translate`: the first beat may go with the translation (bytes left, and the beat does
    /// not end a 4 KiB block). Set on the way in (`rem` and `off` do not move in `Translate`):
    /// at a command from its length and offset; at a page crossing always (bytes are left, and
    /// the new page starts at a 4 KiB boundary).
    xlat_ok: DFF<Bit>,
    /// `in_left != 0` and not `in_done`: the next write beat takes a payload beat (a register,
    /// for timing: it gates the payload and the handshakes).
    wants_in: DFF<Bit>,
    /// The payload beat taken last, rotated (its top `shift` lanes are the low lanes of the next
    /// write beat), kept without a handshake in any register's enable (for timing): `offered` is
    /// the beat on offer in the last cycle and `took` whether it was taken; `held` the last beat
    /// taken before that.
    offered: DFF<Bits<W>>,
    took: DFF<Bit>,
    held: DFF<Bits<W>>,
    last_in: Signal<Local, Bits<W>>,
    /// The payload beat on offer in memory lanes, rotated up by `shift` lanes (by 16 lanes at
    /// 256 bits, then in two steps of four ways each), or zeros when no payload beat is wanted.
    /// The rotations are of 256 bits: at 128 the beat is there twice (`in_twice`), so rotating
    /// the pair rotates each copy.
    in_twice: Signal<Local, Bits<256>>,
    rot_halves: Signal<Local, Bits<256>>,
    rot_quads: Signal<Local, Bits<256>>,
    rot_bytes: Signal<Local, Bits<256>>,
    in_rot: Signal<Local, Bits<W>>,
    /// The payload beat on offer, or zeros when none is wanted.
    in_word: Signal<Local, Bits<W>>,
    /// The command's first lane, and the bytes below it.
    cmd_lane: Signal<Local, Bits<5>>,
    cmd_low_bytes: Signal<Local, Bits<W>>,
    /// Beats of 256 bits; all bytes of a beat; its byte count (`B`, a single bit of an offset,
    /// whose low 6 bits are the count) and the lanes below it (`below_beat`: `B - 1`, `to_beat`:
    /// `2B - 1`).
    beat256: Constant<Bit>,
    all_bytes: Constant<Bits<W>>,
    beat_bit: Constant<Bits<32>>,
    below_beat: Constant<Bits<32>>,
    to_beat: Constant<Bits<32>>,
    /// `cmd_offset` and `off` with the lane bits set (a block boundary test looks at the bits
    /// above the lane only).
    cmd_off_filled: Signal<Local, Bits<32>>,
    off_filled: Signal<Local, Bits<32>>,
    /// `off` with the lane bits and the beat's bit set, and whether the beat's bit was clear:
    /// the next beat starts a block when the bits above are all ones.
    off_to_beat: Signal<Local, Bits<32>>,
    beat_bit_clear: Signal<Local, Bit>,
    bus_page: DFF<Bits<52>>,
    seg_first: DFF<Bit>,
    started: DFF<Bit>,
    err: DFF<Bit>,
    /// The command met a TLB miss before this cycle's last (set from `void_q`, the registered
    /// compare).
    miss: DFF<Bit>,
    /// The command met a TLB miss: `miss`, or `void_q` in the cycle after the compare.
    missed: Signal<Local, Bit>,
    /// The outcome, a cycle after the command ended.
    done: DFF<Bit>,
    done_ok: DFF<Bit>,
    done_tlb_miss: DFF<Bit>,
    done_error: DFF<Bit>,

    page_cross: Signal<Local, Bit>,
    /// `off`'s bits from the lane's (log2 of the beat's bytes) up to the page size are all ones
    /// but the lowest (the next beat starts a page), kept
    /// with `off`; and the test for the offset after the next beat, and for a command's.
    at_page_q: DFF<Bit>,
    page_end_next: Signal<Local, Bit>,
    page_end_cmd: Signal<Local, Bit>,
    xlat_beat: Signal<Local, Bit>,
    /// The translation missed, a cycle later: the beat taken with it is void.
    void_q: DFF<Bit>,
    /// The offset bits of a page of the CLOP's size.
    page_low: Signal<Local, Bits<64>>,
    base_mask: Signal<Local, Bits<64>>,
    b_addr: Signal<Local, Bits<64>>,
    b_len: Signal<Local, Bits<9>>,
    b_data: Signal<Local, Bits<W>>,
    b_sop: Signal<Local, Bit>,
    streaming: Signal<Local, Bit>,
    page_now: Signal<Local, Bits<52>>,
    page_index: Signal<Local, Bits<7>>,
    beat_valid: Signal<Local, Bit>,
    eop: Signal<Local, Bit>,
    in_le: Signal<Local, Bits<W>>,
    in_byte: Signal<Local, Bits<8>>,
    /// `len + B - 1`: its bits from the lane's up are the payload beats.
    len_beats: Signal<Local, Bits<17>>,
    lane0: Signal<Local, Bits<5>>,
    avail: Signal<Local, Bits<6>>,
    /// `offset % B + len % B`, and the beats it adds to `len / B`: 0 (nothing), 1 (up to `B`
    /// bytes) or 2. The write beats are `len / B` plus those, one short chain after a small
    /// function of ten bits or less (for timing, rather than `(offset % B + len + B - 1) / B`).
    low_sum: Signal<Local, Bits<6>>,
    low_beats: Signal<Local, Bits<2>>,
    len_hi: Signal<Local, Bits<13>>,
    /// `len_hi + 1` and `+ 2`, beside `low_beats` (for timing: no carry chain after another).
    len_hi_p1: Signal<Local, Bits<13>>,
    len_hi_p2: Signal<Local, Bits<13>>,
    off_next: Signal<Local, Bits<32>>,
    /// Bytes to the next 128- and 256-byte boundary, and whether what is left is less: each from
    /// registers, the max payload size choosing at the end.
    room_128: Signal<Local, Bits<9>>,
    room_256: Signal<Local, Bits<9>>,
    end_128: Signal<Local, Bits<8>>,
    end_256: Signal<Local, Bits<9>>,
    rem_lt_128: Signal<Local, Bit>,
    rem_lt_256: Signal<Local, Bit>,
    seg_end: Signal<Local, Bit>,
    need_in: Signal<Local, Bit>,
    take_in: Signal<Local, Bit>,
    /// `Drain` with the payload all taken: the command ends in this cycle whatever the inputs, its
    /// outcome told from registers in this cycle (not registered first, see the module doc).
    drain_ends: Signal<Local, Bit>,
    /// The command ends well in this cycle: `ends_now` without an error, worked out on its own
    /// (for timing: the error register's multiplexer stays off the outcome's path).
    ends_ok: Signal<Local, Bit>,
    fire: Signal<Local, Bit>,
    ends_now: Signal<Local, Bit>,
    ends_4k: Signal<Local, Bit>,
}

impl<const W: usize> DmaWriter<W> {
    /// The beat is 128 or 256 bits (the rotations and the lane arithmetic assume it).
    const WIDTH_OK: () = assert!(W == 128 || W == 256, "DmaWriter: W must be 128 or 256");
}

impl<const W: usize> Default for DmaWriter<W> {
    fn default() -> Self {
        #[allow(clippy::let_unit_value)]
        let () = Self::WIDTH_OK;
        let lanes = (W / 8) as u64;
        Self {
            clock: Default::default(),
            reset: Default::default(),
            mps_256: Default::default(),
            req: Default::default(),
            tlb_wr: Default::default(),
            tlb_wr_slot: Default::default(),
            tlb_wr_valid: Default::default(),
            tlb_wr_size: Default::default(),
            tlb_wr_vpn: Default::default(),
            tlb_wr_ppn: Default::default(),
            wr: Default::default(),
            wr_void: Default::default(),
            wr_behind: Default::default(),
            tlb: Default::default(),
            out: Default::default(),
            state: Default::default(),
            off: Default::default(),
            rem: Default::default(),
            out_beats: Default::default(),
            page: Default::default(),
            page_slot: Default::default(),
            next_slot: Default::default(),
            page_vaddr: Default::default(),
            next_vaddr: Default::default(),
            shift: Default::default(),
            low_bytes: Default::default(),
            last_beat: Default::default(),
            in_left: Default::default(),
            in_done: Default::default(),
            placeholder: Default::default(),
            xlat_ok: Default::default(),
            wants_in: Default::default(),
            offered: Default::default(),
            took: Default::default(),
            held: Default::default(),
            last_in: Default::default(),
            in_twice: Default::default(),
            rot_halves: Default::default(),
            rot_quads: Default::default(),
            rot_bytes: Default::default(),
            in_rot: Default::default(),
            in_word: Default::default(),
            cmd_lane: Default::default(),
            cmd_low_bytes: Default::default(),
            beat256: Constant::new(W > 128),
            all_bytes: Constant::new(Bits::<W>::mask()),
            beat_bit: Constant::new(lanes.into()),
            below_beat: Constant::new((lanes - 1).into()),
            to_beat: Constant::new((2 * lanes - 1).into()),
            cmd_off_filled: Default::default(),
            off_filled: Default::default(),
            off_to_beat: Default::default(),
            beat_bit_clear: Default::default(),
            bus_page: Default::default(),
            seg_first: Default::default(),
            started: Default::default(),
            err: Default::default(),
            miss: Default::default(),
            missed: Default::default(),
            done: Default::default(),
            done_ok: Default::default(),
            done_tlb_miss: Default::default(),
            done_error: Default::default(),
            page_cross: Default::default(),
            at_page_q: Default::default(),
            page_end_next: Default::default(),
            page_end_cmd: Default::default(),
            xlat_beat: Default::default(),
            void_q: Default::default(),
            page_low: Default::default(),
            base_mask: Default::default(),
            b_addr: Default::default(),
            b_len: Default::default(),
            b_data: Default::default(),
            b_sop: Default::default(),
            streaming: Default::default(),
            page_now: Default::default(),
            page_index: Default::default(),
            beat_valid: Default::default(),
            eop: Default::default(),
            in_le: Default::default(),
            in_byte: Default::default(),
            len_beats: Default::default(),
            lane0: Default::default(),
            avail: Default::default(),
            low_sum: Default::default(),
            low_beats: Default::default(),
            len_hi: Default::default(),
            len_hi_p1: Default::default(),
            len_hi_p2: Default::default(),
            off_next: Default::default(),
            room_128: Default::default(),
            room_256: Default::default(),
            end_128: Default::default(),
            end_256: Default::default(),
            rem_lt_128: Default::default(),
            rem_lt_256: Default::default(),
            seg_end: Default::default(),
            need_in: Default::default(),
            take_in: Default::default(),
            drain_ends: Default::default(),
            ends_ok: Default::default(),
            fire: Default::default(),
            ends_now: Default::default(),
            ends_4k: Default::default(),
        }
    }
}

impl<const W: usize> Logic for DmaWriter<W> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            state,
            off,
            rem,
            out_beats,
            page,
            page_slot,
            next_slot,
            page_vaddr,
            next_vaddr,
            shift,
            low_bytes,
            last_beat,
            in_left,
            in_done,
            placeholder,
            wants_in,
            xlat_ok,
            offered,
            took,
            held,
            bus_page,
            seg_first,
            started,
            err,
            miss,
            void_q,
            at_page_q,
            done,
            done_ok,
            done_tlb_miss,
            done_error
        );
        self.tlb.clock.next = self.clock.val();
        self.tlb.reset.next = self.reset.val();
        self.tlb.wr.next = self.tlb_wr.val();
        self.tlb.wr_slot.next = self.tlb_wr_slot.val();
        self.tlb.wr_valid.next = self.tlb_wr_valid.val();
        self.tlb.wr_size.next = self.tlb_wr_size.val();
        self.tlb.wr_vpn.next = self.tlb_wr_vpn.val();
        self.tlb.wr_ppn.next = self.tlb_wr_ppn.val();
        self.out.clock.next = self.clock.val();
        self.out.reset.next = self.reset.val();
        WriteRequestSource::<W>::link(&mut self.wr, &mut self.out.out);
        self.req.holds_writes.next = self.out.holds.val() | self.wr_behind.val();

        // ---- realignment: network order to memory lanes, shifted by the first byte's lane ----
        // Beats with no payload left (the tail of a shifted payload, or a payload that ended
        // early) carry zeros: the beat on offer is cleared before the rotation, where the clear
        // shares a level with the choice of that beat (for timing).
        self.in_word.next = self.req.data.val();
        if !self.wants_in.q.val() {
            self.in_word.next = 0.into();
        }
        // Network order to memory lanes: the beat's last byte (bits 7:0) to the top lane.
        self.in_le.next = 0.into();
        for lane in 0..(W / 8) {
            self.in_byte.next = self.in_word.val().get_bits::<8>(lane * 8);
            self.in_le.next = (self.in_le.val() << 8) | bit_cast::<W, 8>(self.in_byte.val());
        }
        self.need_in.next = self.in_left.q.val() != 0;
        // Output beat: this beat rotated up by `shift` lanes, its low lanes from the previous
        // beat's rotation (so only the beat on offer is rotated in this cycle, for timing).
        self.in_twice.next = bit_cast::<256, W>(self.in_le.val());
        if !self.beat256.val() {
            self.in_twice.next = (self.in_twice.val() << 128) | self.in_twice.val();
        }
        self.rot_halves.next = self.in_twice.val();
        if self.shift.q.val().get_bit(4) {
            self.rot_halves.next = (self.in_twice.val() << 128) | (self.in_twice.val() >> 128);
        }
        self.rot_quads.next = self.rot_halves.val();
        match self.shift.q.val().get_bits::<2>(2).index() {
            1 => {
                self.rot_quads.next = (self.rot_halves.val() << 32) | (self.rot_halves.val() >> 224)
            }
            2 => {
                self.rot_quads.next = (self.rot_halves.val() << 64) | (self.rot_halves.val() >> 192)
            }
            3 => {
                self.rot_quads.next = (self.rot_halves.val() << 96) | (self.rot_halves.val() >> 160)
            }
            _ => {}
        }
        self.rot_bytes.next = self.rot_quads.val();
        match self.shift.q.val().get_bits::<2>(0).index() {
            1 => self.rot_bytes.next = (self.rot_quads.val() << 8) | (self.rot_quads.val() >> 248),
            2 => self.rot_bytes.next = (self.rot_quads.val() << 16) | (self.rot_quads.val() >> 240),
            3 => self.rot_bytes.next = (self.rot_quads.val() << 24) | (self.rot_quads.val() >> 232),
            _ => {}
        }
        self.in_rot.next = self.rot_bytes.val().get_bits::<W>(0);
        self.offered.d.next = self.in_rot.val();
        self.last_in.next = self.held.q.val();
        if self.took.q.val() {
            self.last_in.next = self.offered.q.val();
        }
        self.held.d.next = self.last_in.val();
        self.b_data.next = (self.in_rot.val() & !self.low_bytes.q.val())
            | (self.last_in.val() & self.low_bytes.q.val());

        // ---- this beat's lanes, the next address, segment boundaries --------------------------
        self.lane0.next =
            self.off.q.val().get_bits::<5>(0) & self.below_beat.val().get_bits::<5>(0);
        self.avail.next = self.beat_bit.val().get_bits::<6>(0) - bit_cast::<6, 5>(self.lane0.val());
        self.off_next.next = (self.off.q.val() & !self.below_beat.val()) + self.beat_bit.val();
        self.off_filled.next = self.off.q.val() | self.below_beat.val();
        self.off_to_beat.next = self.off.q.val() | self.to_beat.val();
        self.beat_bit_clear.next = (self.off.q.val() & self.beat_bit.val()) == 0;
        // The next beat starts a segment when `off_next` is a multiple of the max payload size,
        // i.e. when `off`'s bits from the lane's up to it are all ones (no adder in the way).
        self.room_128.next = 128.into();
        self.room_128.next =
            self.room_128.val() - bit_cast::<9, 7>(self.off.q.val().get_bits::<7>(0));
        self.room_256.next = 256.into();
        self.room_256.next =
            self.room_256.val() - bit_cast::<9, 8>(self.off.q.val().get_bits::<8>(0));
        // `rem < room`, i.e. `rem + off` stays inside the segment: the high bits of `rem` clear and
        // no carry out of the low ones (one carry chain beside the room's, not after it).
        self.end_128.next = bit_cast::<8, 7>(self.rem.q.val().get_bits::<7>(0))
            + bit_cast::<8, 7>(self.off.q.val().get_bits::<7>(0));
        self.end_256.next = bit_cast::<9, 8>(self.rem.q.val().get_bits::<8>(0))
            + bit_cast::<9, 8>(self.off.q.val().get_bits::<8>(0));
        self.rem_lt_128.next =
            (self.rem.q.val().get_bits::<9>(7) == 0) & !self.end_128.val().get_bit(7);
        self.rem_lt_256.next =
            (self.rem.q.val().get_bits::<8>(8) == 0) & !self.end_256.val().get_bit(8);
        self.seg_end.next = self.off_filled.val().get_bits::<7>(0) == 0x7F;
        self.b_len.next = self.room_128.val();
        if self.rem_lt_128.val() {
            self.b_len.next = self.rem.q.val().get_bits::<9>(0);
        }
        if self.mps_256.val() {
            self.seg_end.next = self.off_filled.val().get_bits::<8>(0) == 0xFF;
            self.b_len.next = self.room_256.val();
            if self.rem_lt_256.val() {
                self.b_len.next = self.rem.q.val().get_bits::<9>(0);
            }
        }
        // A translation is used in the cycle it arrives: the first beat of a page goes out with it,
        // whatever the compare says (dropped on a miss, see the module doc), unless it ends a 4 KiB
        // block of a larger page (the next beat's bus page is then the translated one plus one,
        // added from the register a cycle later, for timing). `off_next` ends a 4 KiB block when
        // `off`'s bits from the lane's up to 11 are all ones.
        self.ends_4k.next = self.off_filled.val().get_bits::<12>(0) == 0xFFF;
        self.xlat_beat.next = (self.state.q.val() == DmaState::Translate)
            & self.tlb.resp_valid.val()
            & self.xlat_ok.q.val();
        // A response is only ever pending in `Translate` (a request is made entering it, and
        // never with a first beat that could also miss: `xlat_ok` keeps a page's first beat from
        // ending it), so the miss needs no state decode: the tag compare's cone stays narrow.
        self.void_q.d.next = self.tlb.resp_valid.val() & !self.tlb.resp_hit.val();
        // (Not in the cycle after a miss: `Stream` is left for `Drain` then, see below.)
        self.streaming.next = ((self.state.q.val() == DmaState::Stream) & !self.void_q.q.val())
            | self.xlat_beat.val();
        self.page_now.next = self.bus_page.q.val();
        if self.state.q.val() == DmaState::Translate {
            self.page_now.next = self.tlb.resp_addr.val().get_bits::<52>(12);
        }
        self.b_addr.next = (bit_cast::<64, 52>(self.page_now.val()) << 12)
            | bit_cast::<64, 12>(self.off.q.val().get_bits::<12>(0));
        self.b_sop.next = self.seg_first.q.val();
        self.eop.next = self.last_beat.q.val() | self.seg_end.val();

        // ---- handshakes -------------------------------------------------------------------------
        self.beat_valid.next =
            self.streaming.val() & (!self.wants_in.q.val() | self.req.data_valid.val());
        self.out.inp.sop.next = self.b_sop.val();
        self.out.inp.eop.next = self.eop.val();
        self.out.inp.len.next = self.b_len.val();
        self.out.inp.addr.next = self.b_addr.val();
        self.out.inp.data.next = self.b_data.val();
        self.out.inp.valid.next = self.beat_valid.val();
        self.out.cancel.next = false;
        self.missed.next = self.miss.q.val() | self.void_q.q.val();
        self.out.void_late.next = self.void_q.q.val();
        self.wr_void.next = self.out.void_out.val();
        self.fire.next = self.beat_valid.val() & self.out.inp.ready.val();
        self.take_in.next = self.fire.val() & self.wants_in.q.val();
        self.took.d.next = self.take_in.val();
        self.req.data_ready.next = ((self.state.q.val() == DmaState::Drain)
            & !self.in_done.q.val())
            | (self.streaming.val() & self.wants_in.q.val() & self.out.inp.ready.val());
        self.req.first_write.next = self.fire.val() & !self.started.q.val();

        // ---- translation request: at a command, or when the next beat starts a page -----------
        // At a command the slot is the CLOP's first slot plus the page index of the offset; at a
        // page crossing, the next slot and page address, prepared a cycle ahead. The next beat
        // starts a page when `off_next` is a multiple of the page size, i.e. when `off`'s bits
        // from the lane's up to the page size are all ones: `at_page_q`, kept with `off` (for
        // timing: the test fed the page crossing's request and the state a cycle late). When a
        // beat moves `off` on, the new offset's bits are all ones when the old ones were all ones
        // but the lowest (the beat's bit); at a command, the test is of the command's offset.
        self.page_end_next.next =
            self.beat_bit_clear.val() & (self.off_to_beat.val().get_bits::<12>(0) == 0xFFF);
        if self.page.q.val() == 1 {
            self.page_end_next.next =
                self.beat_bit_clear.val() & (self.off_to_beat.val().get_bits::<16>(0) == 0xFFFF);
        }
        if self.page.q.val() == 2 {
            self.page_end_next.next =
                self.beat_bit_clear.val() & (self.off_to_beat.val().get_bits::<21>(0) == 0x1F_FFFF);
        }
        self.cmd_off_filled.next = self.req.cmd_offset.val() | self.below_beat.val();
        self.page_end_cmd.next = self.cmd_off_filled.val().get_bits::<12>(0) == 0xFFF;
        if self.req.cmd_page.val() == 1 {
            self.page_end_cmd.next = self.cmd_off_filled.val().get_bits::<16>(0) == 0xFFFF;
        }
        if self.req.cmd_page.val() == 2 {
            self.page_end_cmd.next = self.cmd_off_filled.val().get_bits::<21>(0) == 0x1F_FFFF;
        }
        self.page_low.next = 0xFFF.into();
        self.base_mask.next = 0xFFFF_FFFF_FFFF_F000u64.into();
        self.page_index.next = self.req.cmd_offset.val().get_bits::<7>(12);
        if self.req.cmd_page.val() == 1 {
            self.page_index.next = self.req.cmd_offset.val().get_bits::<7>(16);
            self.base_mask.next = 0xFFFF_FFFF_FFFF_0000u64.into();
        }
        if self.req.cmd_page.val() == 2 {
            self.page_index.next = self.req.cmd_offset.val().get_bits::<7>(21);
            self.base_mask.next = 0xFFFF_FFFF_FFE0_0000u64.into();
        }
        if self.page.q.val() == 1 {
            self.page_low.next = 0xFFFF.into();
        }
        if self.page.q.val() == 2 {
            self.page_low.next = 0x1F_FFFF.into();
        }
        self.page_cross.next = self.streaming.val()
            & self.fire.val()
            & !self.last_beat.q.val()
            & self.at_page_q.q.val();
        self.tlb.req_valid.next = self.page_cross.val();
        self.tlb.req_slot.next = self.next_slot.q.val();
        self.tlb.req_vaddr.next = self.next_vaddr.q.val();
        self.tlb.req_size.next = self.page.q.val();
        if self.state.q.val() == DmaState::Idle {
            self.tlb.req_valid.next = self.req.cmd_valid.val();
            self.tlb.req_slot.next = self.req.cmd_slot.val() + self.page_index.val();
            self.tlb.req_vaddr.next = (self.req.cmd_base.val() & self.base_mask.val())
                + bit_cast::<64, 32>(self.req.cmd_offset.val());
            self.tlb.req_size.next = self.req.cmd_page.val();
        }
        // The page being translated or written, and the one after it.
        if self.tlb.req_valid.val() & self.tlb.req_ready.val() {
            self.page_slot.d.next = self.tlb.req_slot.val();
            self.page_vaddr.d.next = self.tlb.req_vaddr.val();
        }
        self.next_slot.d.next = self.page_slot.q.val() + 1;
        self.next_vaddr.d.next = (self.page_vaddr.q.val() | self.page_low.val()) + 1;
        // The TLB answers in the Translate state.
        self.tlb.resp_ready.next = self.state.q.val() == DmaState::Translate;
        self.req.cmd_ready.next = (self.state.q.val() == DmaState::Idle) & self.tlb.req_ready.val();

        self.len_beats.next =
            bit_cast::<17, 16>(self.req.cmd_len.val()) + self.below_beat.val().get_bits::<17>(0);
        self.cmd_lane.next =
            self.req.cmd_offset.val().get_bits::<5>(0) & self.below_beat.val().get_bits::<5>(0);
        // (A shift by eight times the lane: by the lane with three zero bits below.)
        self.cmd_low_bytes.next =
            !(self.all_bytes.val() << (bit_cast::<8, 5>(self.cmd_lane.val()) << 3));
        self.low_sum.next = bit_cast::<6, 5>(self.cmd_lane.val())
            + bit_cast::<6, 5>(
                self.req.cmd_len.val().get_bits::<5>(0) & self.below_beat.val().get_bits::<5>(0),
            );
        self.low_beats.next = 1.into();
        if self.low_sum.val() == 0 {
            self.low_beats.next = 0.into();
        }
        if self.low_sum.val() > self.beat_bit.val().get_bits::<6>(0) {
            self.low_beats.next = 2.into();
        }
        self.len_hi.next = bit_cast::<13, 12>(self.req.cmd_len.val().get_bits::<12>(4));
        if self.beat256.val() {
            self.len_hi.next = bit_cast::<13, 11>(self.req.cmd_len.val().get_bits::<11>(5));
        }
        self.len_hi_p1.next = self.len_hi.val() + 1;
        self.len_hi_p2.next = self.len_hi.val() + 2;
        // `xlat_ok` for the translation that follows: in `Idle` the command on offer's (the one
        // taken in the last `Idle` cycle), in `Stream` a page crossing's. Set in every cycle of
        // either state (for timing: no handshake in its enable).
        if self.state.q.val() == DmaState::Idle {
            self.xlat_ok.d.next = (self.req.cmd_len.val() != 0)
                & (self.cmd_off_filled.val().get_bits::<12>(0) != 0xFFF);
        }
        if self.state.q.val() == DmaState::Stream {
            self.xlat_ok.d.next = true;
        }
        self.ends_now.next = false;
        match self.state.q.val() {
            DmaState::Idle => {
                // The command on offer is loaded in every `Idle` cycle (for timing: the loads do
                // not wait for the handshake), so the registers hold the one taken in the last.
                self.off.d.next = self.req.cmd_offset.val();
                self.at_page_q.d.next = self.page_end_cmd.val();
                self.rem.d.next = self.req.cmd_len.val();
                self.out_beats.d.next = self.len_hi.val();
                if self.low_beats.val() == 1 {
                    self.out_beats.d.next = self.len_hi_p1.val();
                }
                if self.low_beats.val() == 2 {
                    self.out_beats.d.next = self.len_hi_p2.val();
                }
                self.page.d.next = self.req.cmd_page.val();
                self.shift.d.next = self.cmd_lane.val();
                self.low_bytes.d.next = self.cmd_low_bytes.val();
                // One write beat: `out_beats == 1`.
                self.last_beat.d.next = ((self.len_hi.val() == 0) & (self.low_beats.val() == 1))
                    | ((self.len_hi.val() == 1) & (self.low_beats.val() == 0));
                self.in_left.d.next = self.len_beats.val().get_bits::<12>(4);
                if self.beat256.val() {
                    self.in_left.d.next = self.len_beats.val().get_bits::<12>(5);
                }
                self.in_done.d.next = false;
                // `(len + B - 1) / B != 0`, i.e. `len != 0`.
                self.wants_in.d.next = self.req.cmd_len.val() != 0;
                self.placeholder.d.next = self.req.cmd_len.val() == 0;
                self.held.d.next = 0.into();
                self.seg_first.d.next = true;
                self.started.d.next = false;
                self.err.d.next = false;
                self.miss.d.next = false;
                if self.req.cmd_valid.val() & self.tlb.req_ready.val() {
                    self.state.d.next = DmaState::Translate;
                }
            }
            DmaState::Translate => {
                // A miss is handled below, after the beat that may have gone with it.
                if self.tlb.resp_valid.val() {
                    self.bus_page.d.next = self.tlb.resp_addr.val().get_bits::<52>(12);
                    self.state.d.next = DmaState::Stream;
                    if self.rem.q.val() == 0 {
                        // Nothing to write (zero length): only the payload, if any, to consume
                        // (`Drain` ends the command, see below).
                        self.state.d.next = DmaState::Drain;
                    }
                }
            }
            DmaState::Stream => {
                // Streaming: see the beat handling below.
            }
            DmaState::Drain => {
                if self.in_done.q.val() {
                    // Entered with the payload all taken: on a miss, with nothing to write, or
                    // after a last beat that went with its translation.
                    self.ends_now.next = true;
                } else if self.req.data_valid.val() {
                    self.placeholder.d.next = false;
                    if !self.missed.val()
                        & (!self.placeholder.q.val()
                            | !self.req.data_last.val()
                            | self.req.data_error.val())
                    {
                        // Payload beyond the length (a placeholder is one beat), or an empty
                        // payload that ended badly.
                        self.err.d.next = true;
                    }
                    if self.req.data_last.val() {
                        self.in_done.d.next = true;
                        self.wants_in.d.next = false;
                        // After a placeholder the command ends in the next cycle, its outcome
                        // told from registers (`drain_ends`).
                        self.ends_now.next = !self.placeholder.q.val();
                    }
                }
            }
        }
        // A beat moved (streaming, or with the translation that just arrived).
        if self.streaming.val() & self.fire.val() {
            self.started.d.next = true;
            self.seg_first.d.next = self.eop.val();
            self.rem.d.next = self.rem.q.val() - bit_cast::<16, 6>(self.avail.val());
            self.out_beats.d.next = self.out_beats.q.val() - 1;
            self.last_beat.d.next = self.out_beats.q.val() == 2;
            self.off.d.next = self.off_next.val();
            self.at_page_q.d.next = self.page_end_next.val();
            if self.take_in.val() {
                self.in_left.d.next = self.in_left.q.val() - 1;
                self.wants_in.d.next = self.in_left.q.val() != 1;
                if self.req.data_last.val() {
                    self.in_done.d.next = true;
                    self.wants_in.d.next = false;
                    // Fewer beats than the length says, or a bad ending.
                    if (self.in_left.q.val() != 1) | self.req.data_error.val() {
                        self.err.d.next = true;
                    }
                }
            }
            if self.need_in.val() & self.in_done.q.val() {
                self.err.d.next = true;
            }
            if self.last_beat.q.val() {
                // Ends now, or in `Drain` when the payload is not all taken, or when the beat
                // went with the translation (a command never ends in `Translate`: its outcome
                // never waits for the tag compare; `Drain` tells it at once, see `drain_ends`).
                self.state.d.next = DmaState::Drain;
                if (self.in_done.q.val() | (self.take_in.val() & self.req.data_last.val()))
                    & (self.state.q.val() == DmaState::Stream)
                {
                    self.ends_now.next = true;
                }
            } else if self.page_cross.val() {
                // A new page of the region: translated again (requested above).
                self.state.d.next = DmaState::Translate;
            } else if self.ends_4k.val() {
                // The next 4 KiB of a larger page: contiguous on the bus too (never in the cycle
                // of a translation, see `xlat_beat`).
                self.bus_page.d.next = self.bus_page.q.val() + 1;
            }
        }
        // A miss: the beat that went with the translation is marked void, nothing more
        // of the command is written (`Stream` writes nothing in the cycle after it), and the rest
        // of its payload is consumed in `Drain`, entered a cycle later (which ends the command a
        // cycle later still if the payload has all been taken). The tag compare feeds only the
        // `miss` and `void_q` flags: the state follows the registered miss, for timing (the
        // translation's beat never ends a page, so the state is then `Stream` or `Drain`).
        if self.void_q.q.val() {
            self.miss.d.next = true;
            self.state.d.next = DmaState::Drain;
        }
        // The outcome is registered in the cycle the command ends (its last beat, or its last
        // payload beat consumed), with the flags as they are after this cycle; or, in `Drain`
        // with the payload all taken (nothing changes the flags there), told in this cycle.
        if self.ends_now.val() {
            self.state.d.next = DmaState::Idle;
        }
        self.drain_ends.next = (self.state.q.val() == DmaState::Drain) & self.in_done.q.val();
        self.done.d.next = self.ends_now.val() & !self.drain_ends.val();
        // (A miss is only found in `Translate`, where no command ends: `miss` is already set.)
        // Well on the last beat in `Stream` with the payload ending exactly there.
        self.ends_ok.next = !self.err.q.val()
            & !self.missed.val()
            & (self.state.q.val() == DmaState::Stream)
            & self.last_beat.q.val()
            & self.fire.val()
            & ((self.in_done.q.val() & !self.need_in.val())
                | (self.take_in.val()
                    & self.req.data_last.val()
                    & (self.in_left.q.val() == 1)
                    & !self.req.data_error.val()));
        self.done_ok.d.next = self.ends_ok.val();
        self.done_tlb_miss.d.next =
            self.ends_now.val() & self.missed.val() & !self.drain_ends.val();
        self.done_error.d.next =
            self.ends_now.val() & self.err.d.val() & !self.missed.val() & !self.drain_ends.val();
        // (`done.q` and `drain_ends` never together: the cycle after an end is in `Idle`.)
        self.req.done.next = self.done.q.val() | self.drain_ends.val();
        self.req.done_ok.next =
            self.done_ok.q.val() | (self.drain_ends.val() & !self.err.q.val() & !self.missed.val());
        self.req.done_tlb_miss.next =
            self.done_tlb_miss.q.val() | (self.drain_ends.val() & self.missed.val());
        self.req.done_error.next = self.done_error.q.val()
            | (self.drain_ends.val() & self.err.q.val() & !self.missed.val());

        if self.reset.val() {
            self.state.d.next = DmaState::Idle;
            self.wants_in.d.next = false;
            self.done.d.next = false;
            self.done_ok.d.next = false;
            self.done_tlb_miss.d.next = false;
            self.done_error.d.next = false;
        }
    }
}

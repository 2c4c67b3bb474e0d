//! DMA writes as PCIe memory-write TLPs: takes the write-request interface (`pcie/write_request.rs`:
//! `W`-bit beats in little-endian memory lanes, one request per TLP, never over the max payload
//! size or a 4 KiB boundary) and sends each request as one MWr on the Stratix V Hard IP's `W`-bit
//! Avalon-ST transmit interface (128 bits for Gen2 x8, 256 for Gen3 x8).
//!
//! The header is 3 dwords below 4 GiB and 4 above (PCIe forbids the 64-bit form for low
//! addresses); the first/last byte enables come from the request's address and length. The Hard IP
//! wants the payload qword aligned: its first dword in slot 3 (3-dword header, address bit 2 set),
//! 4 (address bit 2 clear: after a 3-dword header slot 3 is padding) or 5 (4-dword header, bit 2
//! set: slot 4 is padding) of the TLP's dword stream. A memory-lane beat has that dword in
//! slot `address[log2(W/8)-1:2]`, so the payload moves by `first slot - lane` dwords, an even
//! number: every output beat joins the upper `k` qwords of one input beat (the carry) with the
//! lower qwords of the next, `k` being that move in qwords modulo the beat's. The header beat
//! takes the first input beat (the move is less than a beat), comes alone (at 128 bits, a move of
//! a whole beat: slot 4 from lane 0, slot 5 from lane 1), or waits for the second (at 256 bits, a
//! move backwards: a lane beyond the first slot): then the first goes into the carry in a cycle of
//! its own. The header beat's payload slots start at the first payload dword: a padding slot
//! there carries zeros. (At 128 bits the padding after a 4-dword header is in the second beat
//! and carries the input beat's lane below the address; the Hard IP does not send padding.)
//! The TLPs leave as a TLP source (`pcie/tx_arbiter.rs`: a beat moves when valid and ready, no
//! gap inside a TLP), since the Hard IP allows no gap inside a TLP other than those its ready
//! causes. So a request's beats are collected first (a 32-beat FIFO, room for a whole request
//! beside one going out) and its TLP starts only once its last beat is in: store and forward per
//! TLP, at most 17 cycles (68 ns) more than cut-through for a 256-byte write at 128 bits, 9 (36
//! ns) at 256.
//! The next request's header and beat counts are decoded into registers while it waits (for
//! timing): a request starts the cycle after its head has been decoded, or, when the writer is
//! busy, in the cycle the last beat of the TLP before it goes out, so TLPs of several beats leave
//! back to back (a 256-byte write every 9 cycles at 256 bits, the interface's own floor; after a
//! TLP of one or two beats the next head may still be decoding). A head reaches the
//! decode three cycles after it was written (the head queue's output stage), so a short request
//! into an idle writer waits up to three cycles for it (one, two or three for a request of three,
//! two or one beats), and a backwards move one more for the preload.

use rust_hdl::prelude::*;

use crate::common::sync_fifo::SyncFifo;
use crate::pcie::tlp_stream::TlpSource;
use crate::pcie::write_request::WriteRequestSink;

#[derive(Copy, Clone, Debug, PartialEq, LogicState)]
enum WriterState {
    Idle,
    /// The first input beat into the carry, before the header beat (a move backwards).
    Preload,
    Header,
    Body,
}

#[derive(LogicBlock)]
pub struct PcieWriteTlp<const W: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// Our bus/device/function number (the requester ID).
    pub requester_id: Signal<In, Bits<16>>,
    pub wr: WriteRequestSink<W>,

    /// The memory-write TLPs.
    pub tx: TlpSource<W>,
    /// Nothing held: every request taken so far has left as a TLP (an interrupt may follow).
    pub idle: Signal<Out, Bit>,

    /// Input beats' data and request heads (whether the address needs the 4-dword header,
    /// `addr`, `len - 1`).
    beats: SyncFifo<W, 5, 6>,
    heads: SyncFifo<74, 2, 3>,
    /// Requests whose last beat is in `beats` and whose TLP has not started.
    complete: DFF<Bits<3>>,
    state: DFF<WriterState>,
    /// Beats of 256 bits; the dword lanes of a beat, less one; the `empty` of a last beat
    /// whose last dword is in its first qword.
    beat256: Constant<Bit>,
    lane_mask: Constant<Bits<3>>,
    empty_max: Constant<Bits<2>>,
    /// The payload slots of a header beat from slot 3, 4 and 5 up.
    from_slot3: Constant<Bits<W>>,
    from_slot4: Constant<Bits<W>>,
    from_slot5: Constant<Bits<W>>,
    /// The request's header dwords.
    hdr: DFF<Bits<128>>,
    /// Qwords of an output beat from the carry (the payload's move modulo a beat), 0 to 3.
    shift: DFF<Bits<2>>,
    /// Output beats left (after the one going out), input beats left to take.
    out_left: DFF<Bits<5>>,
    in_left: DFF<Bits<5>>,
    /// `in_left == 0`, kept beside it (for timing: the handshake reads flip-flops); the header
    /// beat comes alone.
    in_none: DFF<Bit>,
    hdr_alone: DFF<Bit>,
    /// The last output beat's `empty`.
    last_empty: DFF<Bits<2>>,
    /// The previous input beat.
    carry: DFF<Bits<W>>,
    /// The head of `heads`, decoded in the previous cycle: its header, shift, output and input
    /// beats, `last_empty`, whether its header beat comes alone or after a preload; `decoded`
    /// says it was there and not taken (still the head).
    decoded: DFF<Bit>,
    next_hdr: DFF<Bits<128>>,
    next_shift: DFF<Bits<2>>,
    next_out_beats: DFF<Bits<5>>,
    next_in_beats: DFF<Bits<5>>,
    next_last_empty: DFF<Bits<2>>,
    next_hdr_alone: DFF<Bit>,
    next_preload: DFF<Bit>,

    // Decoding of the next request (the head of `heads`).
    head_addr: Signal<Local, Bits<64>>,
    head_len_m1: Signal<Local, Bits<9>>,
    wr_len_m1: Signal<Local, Bits<9>>,
    in_data: Signal<Local, Bits<W>>,
    accept: Signal<Local, Bit>,
    started: Signal<Local, Bit>,
    addr_lo: Signal<Local, Bits<32>>,
    addr_hi: Signal<Local, Bits<32>>,
    /// The 4-dword header (an address above 4 GiB).
    long_hdr: Signal<Local, Bit>,
    start_byte: Signal<Local, Bits<2>>,
    /// Offset of the last byte from the first dword's start; its dword (`len_dw - 1`).
    end_byte: Signal<Local, Bits<12>>,
    end_lane: Signal<Local, Bits<2>>,
    end_dw: Signal<Local, Bits<10>>,
    len_dw: Signal<Local, Bits<10>>,
    first_be: Signal<Local, Bits<4>>,
    last_be: Signal<Local, Bits<4>>,
    /// Dword lane of the first payload dword in the input beat.
    dw_lane: Signal<Local, Bits<3>>,
    /// Dword slot of the first payload dword in the output stream (3, 4 or 5).
    first_slot: Signal<Local, Bits<4>>,
    /// `first_slot - dw_lane`, two's complement: -4 to 4 dwords, always even.
    offset_dw: Signal<Local, Bits<4>>,
    /// The slots up to the last payload dword, less one, in the output and input streams (so
    /// each beat count is one chain more: `slots / (W / 32) + 1`); the low bits of `out_last`
    /// are the dwords used in the last output beat, minus one.
    out_last: Signal<Local, Bits<12>>,
    in_last: Signal<Local, Bits<12>>,
    out_beats: Signal<Local, Bits<10>>,
    in_beats: Signal<Local, Bits<10>>,
    dw0: Signal<Local, Bits<32>>,
    dw1: Signal<Local, Bits<32>>,
    /// Payload bits of the header beat: from its first payload dword's slot (3, 4 or 5) up.
    hdr_mask: Signal<Local, Bits<W>>,
    /// The input beat, or nothing once every input beat is in the carry.
    in_eff: Signal<Local, Bits<W>>,
    /// The carry in the top `W` bits of 256, and below the input beat: the output beat is a
    /// window of `W` bits, `shift` qwords down from the input beat.
    carry_view: Signal<Local, Bits<256>>,
    joined: Signal<Local, Bits<512>>,
    shifted: Signal<Local, Bits<W>>,
    need_input: Signal<Local, Bit>,
    /// The beat of this cycle is there (always, once a request started: its beats are in).
    avail: Signal<Local, Bit>,
    take: Signal<Local, Bit>,
    preload_take: Signal<Local, Bit>,
    send: Signal<Local, Bit>,
    /// The last beat of a TLP goes out in this cycle; the next request may start.
    last_sent: Signal<Local, Bit>,
    can_start: Signal<Local, Bit>,
}

impl<const W: usize> PcieWriteTlp<W> {
    /// The beat is 128 or 256 bits (the `joined` window and the header beat's slots assume it).
    const WIDTH_OK: () = assert!(W == 128 || W == 256, "PcieWriteTlp: W must be 128 or 256");
}

impl<const W: usize> Default for PcieWriteTlp<W> {
    fn default() -> Self {
        #[allow(clippy::let_unit_value)]
        let () = Self::WIDTH_OK;
        Self {
            clock: Default::default(),
            reset: Default::default(),
            requester_id: Default::default(),
            wr: Default::default(),
            tx: Default::default(),
            idle: Default::default(),
            beats: Default::default(),
            heads: Default::default(),
            complete: Default::default(),
            state: Default::default(),
            beat256: Constant::new(W > 128),
            lane_mask: Constant::new(((W / 32 - 1) as u64).into()),
            empty_max: Constant::new(((W / 64 - 1) as u64).into()),
            from_slot3: Constant::new(Bits::<W>::mask() << 96),
            from_slot4: Constant::new(if W > 128 {
                Bits::<W>::mask() << 128
            } else {
                Bits::<W>::default()
            }),
            from_slot5: Constant::new(if W > 128 {
                Bits::<W>::mask() << 160
            } else {
                Bits::<W>::default()
            }),
            hdr: Default::default(),
            shift: Default::default(),
            out_left: Default::default(),
            in_left: Default::default(),
            in_none: Default::default(),
            hdr_alone: Default::default(),
            last_empty: Default::default(),
            carry: Default::default(),
            decoded: Default::default(),
            next_hdr: Default::default(),
            next_shift: Default::default(),
            next_out_beats: Default::default(),
            next_in_beats: Default::default(),
            next_last_empty: Default::default(),
            next_hdr_alone: Default::default(),
            next_preload: Default::default(),
            head_addr: Default::default(),
            head_len_m1: Default::default(),
            wr_len_m1: Default::default(),
            in_data: Default::default(),
            accept: Default::default(),
            started: Default::default(),
            addr_lo: Default::default(),
            addr_hi: Default::default(),
            long_hdr: Default::default(),
            start_byte: Default::default(),
            end_byte: Default::default(),
            end_lane: Default::default(),
            end_dw: Default::default(),
            len_dw: Default::default(),
            first_be: Default::default(),
            last_be: Default::default(),
            dw_lane: Default::default(),
            first_slot: Default::default(),
            offset_dw: Default::default(),
            out_last: Default::default(),
            in_last: Default::default(),
            out_beats: Default::default(),
            in_beats: Default::default(),
            dw0: Default::default(),
            dw1: Default::default(),
            hdr_mask: Default::default(),
            in_eff: Default::default(),
            carry_view: Default::default(),
            joined: Default::default(),
            shifted: Default::default(),
            need_input: Default::default(),
            avail: Default::default(),
            take: Default::default(),
            preload_take: Default::default(),
            send: Default::default(),
            last_sent: Default::default(),
            can_start: Default::default(),
        }
    }
}

impl<const W: usize> Logic for PcieWriteTlp<W> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            complete,
            state,
            hdr,
            shift,
            out_left,
            in_left,
            in_none,
            hdr_alone,
            last_empty,
            carry,
            decoded,
            next_hdr,
            next_shift,
            next_out_beats,
            next_in_beats,
            next_last_empty,
            next_hdr_alone,
            next_preload
        );
        self.beats.clock.next = self.clock.val();
        self.beats.reset.next = self.reset.val();
        self.heads.clock.next = self.clock.val();
        self.heads.reset.next = self.reset.val();

        // (The FIFOs' counts, not their outputs: a beat written in the last cycle is counted
        // before it shows at the output.)
        self.idle.next = (self.beats.used.val() == 0)
            & (self.heads.used.val() == 0)
            & (self.state.q.val() == WriterState::Idle);

        // ---- collecting requests ----------------------------------------------------------
        self.wr.ready.next = self.beats.in_ready.val() & self.heads.in_ready.val();
        self.accept.next =
            self.wr.valid.val() & self.beats.in_ready.val() & self.heads.in_ready.val();
        self.beats.in_valid.next = self.accept.val();
        self.beats.in_data.next = self.wr.data.val();
        self.heads.in_valid.next = self.accept.val() & self.wr.sop.val();
        // `len - 1` (1..=256 bytes), so the decode below is a chain shorter.
        self.wr_len_m1.next = self.wr.len.val() - 1;
        // The header's width is judged on the way in (for timing: a 32-bit compare fewer after
        // the FIFO).
        self.heads.in_data.next =
            (bit_cast::<74, 1>((self.wr.addr.val().get_bits::<32>(32) != 0).into()) << 73)
                | (bit_cast::<74, 64>(self.wr.addr.val()) << 9)
                | bit_cast::<74, 9>(self.wr_len_m1.val());
        self.head_addr.next = self.heads.out_data.val().get_bits::<64>(9);
        self.head_len_m1.next = self.heads.out_data.val().get_bits::<9>(0);
        self.in_data.next = self.beats.out_data.val();
        self.heads.out_ready.next = false;
        self.started.next = false;

        // ---- the request on offer, decoded into the `next_*` registers ---------------------
        self.addr_lo.next = self.head_addr.val().get_bits::<32>(0);
        self.addr_hi.next = self.head_addr.val().get_bits::<32>(32);
        self.long_hdr.next = self.heads.out_data.val().get_bit(73);
        self.start_byte.next = self.addr_lo.val().get_bits::<2>(0);
        self.end_byte.next =
            bit_cast::<12, 2>(self.start_byte.val()) + bit_cast::<12, 9>(self.head_len_m1.val());
        self.end_lane.next = self.end_byte.val().get_bits::<2>(0);
        self.end_dw.next = self.end_byte.val().get_bits::<10>(2);
        self.len_dw.next = self.end_dw.val() + 1;
        self.first_be.next = 0xF.into();
        match self.start_byte.val().index() {
            1 => self.first_be.next = 0xE.into(),
            2 => self.first_be.next = 0xC.into(),
            3 => self.first_be.next = 0x8.into(),
            _ => {}
        }
        self.last_be.next = 0xF.into();
        match self.end_lane.val().index() {
            0 => self.last_be.next = 0x1.into(),
            1 => self.last_be.next = 0x3.into(),
            2 => self.last_be.next = 0x7.into(),
            _ => {}
        }
        if self.end_dw.val() == 0 {
            // One dword: from the first byte to the last, and no last byte enables.
            self.first_be.next = self.first_be.val() & self.last_be.val();
            self.last_be.next = 0.into();
        }
        self.dw_lane.next = self.addr_lo.val().get_bits::<3>(2) & self.lane_mask.val();
        // After a 3-dword header the payload starts at slot 3 (odd dword) or 4; after 4, at 4 or 5.
        self.first_slot.next = 4.into();
        if self.long_hdr.val() & self.addr_lo.val().get_bit(2) {
            self.first_slot.next = 5.into();
        }
        if !self.long_hdr.val() & self.addr_lo.val().get_bit(2) {
            self.first_slot.next = 3.into();
        }
        self.offset_dw.next = self.first_slot.val() - bit_cast::<4, 3>(self.dw_lane.val());
        self.out_last.next =
            bit_cast::<12, 4>(self.first_slot.val()) + bit_cast::<12, 10>(self.end_dw.val());
        self.in_last.next =
            bit_cast::<12, 3>(self.dw_lane.val()) + bit_cast::<12, 10>(self.end_dw.val());
        self.out_beats.next = self.out_last.val().get_bits::<10>(2) + 1;
        self.in_beats.next = self.in_last.val().get_bits::<10>(2) + 1;
        if self.beat256.val() {
            self.out_beats.next = bit_cast::<10, 9>(self.out_last.val().get_bits::<9>(3)) + 1;
            self.in_beats.next = bit_cast::<10, 9>(self.in_last.val().get_bits::<9>(3)) + 1;
        }
        self.dw0.next = 0x4000_0000u64 | bit_cast::<32, 10>(self.len_dw.val());
        if self.long_hdr.val() {
            self.dw0.next = 0x6000_0000u64 | bit_cast::<32, 10>(self.len_dw.val());
        }
        self.dw1.next = (bit_cast::<32, 16>(self.requester_id.val()) << 16)
            | (bit_cast::<32, 4>(self.last_be.val()) << 4)
            | bit_cast::<32, 4>(self.first_be.val());
        self.next_hdr.d.next = (bit_cast::<128, 32>(self.addr_lo.val() & 0xFFFF_FFFCu64) << 64)
            | (bit_cast::<128, 32>(self.dw1.val()) << 32)
            | bit_cast::<128, 32>(self.dw0.val());
        if self.long_hdr.val() {
            self.next_hdr.d.next = (bit_cast::<128, 32>(self.addr_lo.val() & 0xFFFF_FFFCu64) << 96)
                | (bit_cast::<128, 32>(self.addr_hi.val()) << 64)
                | (bit_cast::<128, 32>(self.dw1.val()) << 32)
                | bit_cast::<128, 32>(self.dw0.val());
        }
        // The move in qwords, modulo the beat's (two's complement: -2 and -1 qwords are 2 and 3 at
        // 256 bits); a whole beat forward (128 bits only) sends the header alone, a move
        // backwards (256 bits only) preloads the carry.
        self.next_shift.d.next = self.offset_dw.val().get_bits::<2>(1) & self.empty_max.val();
        self.next_hdr_alone.d.next = (self.offset_dw.val() == 4) & !self.beat256.val();
        self.next_preload.d.next = self.offset_dw.val().get_bit(3) & self.beat256.val();
        self.next_out_beats.d.next = self.out_beats.val().get_bits::<5>(0);
        self.next_in_beats.d.next = self.in_beats.val().get_bits::<5>(0);
        // The last output beat's unused qwords: those above its last dword's.
        self.next_last_empty.d.next = self.empty_max.val() & !self.out_last.val().get_bits::<2>(1);

        // ---- the output beat of this cycle ------------------------------------------------
        self.in_eff.next = self.in_data.val();
        if self.in_none.q.val() {
            self.in_eff.next = 0.into();
        }
        self.carry_view.next = bit_cast::<256, W>(self.carry.q.val());
        if !self.beat256.val() {
            self.carry_view.next = bit_cast::<256, W>(self.carry.q.val()) << 128;
        }
        self.joined.next = (bit_cast::<512, W>(self.in_eff.val()) << 256)
            | bit_cast::<512, 256>(self.carry_view.val());
        match self.shift.q.val().index() {
            0 => self.shifted.next = self.joined.val().get_bits::<W>(256),
            1 => self.shifted.next = self.joined.val().get_bits::<W>(192),
            2 => self.shifted.next = self.joined.val().get_bits::<W>(128),
            _ => self.shifted.next = self.joined.val().get_bits::<W>(64),
        }
        // (Address bit 2 is header bit 66 of a 3-dword header, 98 of a 4-dword one.)
        self.hdr_mask.next = self.from_slot4.val();
        if !self.hdr.q.val().get_bit(29) & self.hdr.q.val().get_bit(66) {
            self.hdr_mask.next = self.from_slot3.val();
        }
        if self.hdr.q.val().get_bit(29) & self.hdr.q.val().get_bit(98) {
            self.hdr_mask.next = self.from_slot5.val();
        }
        self.tx.sop.next = false;
        self.tx.eop.next = false;
        self.tx.empty.next = 0.into();
        self.tx.data.next = self.shifted.val();
        self.need_input.next = false;
        self.avail.next = false;
        self.preload_take.next = false;

        match self.state.q.val() {
            WriterState::Idle => {}
            WriterState::Preload => {
                // (Its beats are all in: the first is there.)
                self.preload_take.next = self.beats.out_valid.val();
                if self.beats.out_valid.val() {
                    self.state.d.next = WriterState::Header;
                }
            }
            WriterState::Header => {
                // The header beat with the payload slots after the header, or the header alone.
                self.tx.sop.next = true;
                self.tx.data.next = bit_cast::<W, 128>(self.hdr.q.val())
                    | (self.shifted.val() & self.hdr_mask.val());
                if self.hdr_alone.q.val() {
                    self.tx.data.next = bit_cast::<W, 128>(self.hdr.q.val());
                    self.avail.next = true;
                } else if self.in_none.q.val() {
                    // A preloaded carry holds the whole payload.
                    self.avail.next = true;
                } else {
                    self.need_input.next = true;
                    self.avail.next = self.beats.out_valid.val();
                }
            }
            WriterState::Body => {
                // The last beats may need no input beat: the carry's upper qwords.
                if self.in_none.q.val() {
                    self.avail.next = true;
                } else {
                    self.need_input.next = true;
                    self.avail.next = self.beats.out_valid.val();
                }
            }
        }
        self.tx.valid.next = self.avail.val();
        self.send.next = self.avail.val() & self.tx.ready.val();
        self.take.next = (self.need_input.val() & self.send.val()) | self.preload_take.val();
        self.beats.out_ready.next = self.take.val();
        if self.take.val() {
            self.carry.d.next = self.in_data.val();
            self.in_left.d.next = self.in_left.q.val() - 1;
            self.in_none.d.next = self.in_left.q.val() == 1;
        }
        self.last_sent.next = false;
        if self.send.val() {
            self.state.d.next = WriterState::Body;
            self.out_left.d.next = self.out_left.q.val() - 1;
            if self.out_left.q.val() == 1 {
                self.tx.eop.next = true;
                self.tx.empty.next = self.last_empty.q.val();
                self.state.d.next = WriterState::Idle;
                self.last_sent.next = true;
            }
        }
        // A request starts once all its beats are in and its head is decoded: from idle, or in
        // the cycle the last beat of the one before goes out, so TLPs leave back to back (its
        // registers are loaded here, over the updates above).
        self.can_start.next =
            self.heads.out_valid.val() & self.decoded.q.val() & (self.complete.q.val() != 0);
        if self.can_start.val() & ((self.state.q.val() == WriterState::Idle) | self.last_sent.val())
        {
            self.heads.out_ready.next = true;
            self.started.next = true;
            self.hdr.d.next = self.next_hdr.q.val();
            self.shift.d.next = self.next_shift.q.val();
            self.hdr_alone.d.next = self.next_hdr_alone.q.val();
            self.out_left.d.next = self.next_out_beats.q.val();
            self.in_left.d.next = self.next_in_beats.q.val();
            self.in_none.d.next = self.next_in_beats.q.val() == 0;
            self.last_empty.d.next = self.next_last_empty.q.val();
            self.state.d.next = WriterState::Header;
            if self.next_preload.q.val() {
                self.state.d.next = WriterState::Preload;
            }
        }
        // Complete requests: one more at an accepted last beat, one less at a start.
        if (self.accept.val() & self.wr.eop.val()) & !self.started.val() {
            self.complete.d.next = self.complete.q.val() + 1;
        }
        if self.started.val() & !(self.accept.val() & self.wr.eop.val()) {
            self.complete.d.next = self.complete.q.val() - 1;
        }
        self.decoded.d.next = self.heads.out_valid.val() & !self.started.val();
        if self.reset.val() {
            self.decoded.d.next = false;
            self.complete.d.next = 0.into();
            self.state.d.next = WriterState::Idle;
        }
    }
}

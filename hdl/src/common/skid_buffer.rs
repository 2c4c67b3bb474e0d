//! A register slice for any valid/ready stream of `W`-bit words: everything it drives comes
//! straight from flip-flops (`in_ready`, `out_valid`, `out_data`), so neither the data and valid
//! going forward nor the ready coming back pass through it as logic. Full throughput: one word per
//! cycle in and out, one cycle of latency; a second register (the skid) takes the word that was
//! already offered when `out_ready` fell, which is why `in_ready` can be a register.
//!
//! Put one where a handshake would otherwise chain through several blocks in one cycle (the card's
//! edges, the PCIe transmit path): the levels on each side then end at the slice. A source that
//! offers the beats of a packet without gaps keeps doing so through the slice.
//!
//! `in_cancel` drops the word offered in the cycle it is taken: the source sees it taken, nothing
//! comes out. It feeds the slice's registers only, so it may be decided later in the cycle than
//! the handshake (the write mux drops the DMA writer's void beats so). Sources that do not use
//! it tie it low.

use rust_hdl::prelude::*;

#[derive(LogicBlock, Default)]
pub struct SkidBuffer<const W: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub in_data: Signal<In, Bits<W>>,
    pub in_valid: Signal<In, Bit>,
    pub in_ready: Signal<Out, Bit>,
    pub out_data: Signal<Out, Bits<W>>,
    pub out_valid: Signal<Out, Bit>,
    pub out_ready: Signal<In, Bit>,
    /// The word offered now is dropped as it is taken (see the module doc).
    pub in_cancel: Signal<In, Bit>,

    /// The word on offer downstream.
    main: DFF<Bits<W>>,
    main_valid: DFF<Bit>,
    /// A word taken while the main register was stalled; `in_ready` is low while it is held.
    skid: DFF<Bits<W>>,
    skid_valid: DFF<Bit>,
}

impl<const W: usize> Logic for SkidBuffer<W> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, main, main_valid, skid, skid_valid);
        self.in_ready.next = !self.skid_valid.q.val();
        self.out_data.next = self.main.q.val();
        self.out_valid.next = self.main_valid.q.val();
        if !self.main_valid.q.val() | self.out_ready.val() {
            // The main register is free next cycle: refill it from the skid first.
            if self.skid_valid.q.val() {
                self.main.d.next = self.skid.q.val();
                self.main_valid.d.next = true;
                self.skid_valid.d.next = false;
            } else {
                self.main.d.next = self.in_data.val();
                self.main_valid.d.next = self.in_valid.val() & !self.in_cancel.val();
            }
        } else if self.in_valid.val() & !self.skid_valid.q.val() {
            self.skid.d.next = self.in_data.val();
            self.skid_valid.d.next = !self.in_cancel.val();
        }
        if self.reset.val() {
            self.main_valid.d.next = false;
            self.skid_valid.d.next = false;
        }
    }
}

/// A [`SkidBuffer`] for a word and a side word of another width (tags, flags), under one
/// handshake: two slices driven alike, so no width is computed from `W` (the generated Verilog
/// has no width arithmetic). They take and give in the same cycles; the side slice's `in_ready`
/// and `out_valid` stand for both.
#[derive(LogicBlock, Default)]
pub struct SidedSkidBuffer<const W: usize, const S: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub in_data: Signal<In, Bits<W>>,
    pub in_side: Signal<In, Bits<S>>,
    pub in_valid: Signal<In, Bit>,
    pub in_ready: Signal<Out, Bit>,
    pub out_data: Signal<Out, Bits<W>>,
    pub out_side: Signal<Out, Bits<S>>,
    pub out_valid: Signal<Out, Bit>,
    pub out_ready: Signal<In, Bit>,
    data: SkidBuffer<W>,
    side: SkidBuffer<S>,
}

impl<const W: usize, const S: usize> Logic for SidedSkidBuffer<W, S> {
    #[hdl_gen]
    fn update(&mut self) {
        self.data.clock.next = self.clock.val();
        self.data.reset.next = self.reset.val();
        self.side.clock.next = self.clock.val();
        self.side.reset.next = self.reset.val();
        self.data.in_cancel.next = false;
        self.side.in_cancel.next = false;
        self.data.in_data.next = self.in_data.val();
        self.side.in_data.next = self.in_side.val();
        self.data.in_valid.next = self.in_valid.val();
        self.side.in_valid.next = self.in_valid.val();
        self.in_ready.next = self.side.in_ready.val();
        self.out_data.next = self.data.out_data.val();
        self.out_side.next = self.side.out_data.val();
        self.out_valid.next = self.side.out_valid.val();
        self.data.out_ready.next = self.out_ready.val();
        self.side.out_ready.next = self.out_ready.val();
    }
}

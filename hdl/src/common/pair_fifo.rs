//! A register slice whose input reaches its data registers without logic: a two-entry FIFO of
//! `W`-bit words. The same handshake as `SkidBuffer` (common/skid_buffer.rs), cycle for cycle:
//! up to two words held, `in_ready` and `out_valid` from flip-flops, one cycle of latency, one word
//! per cycle in and out, `in_cancel` drops the word offered as it is taken.
//!
//! The difference is where the multiplexer sits. `SkidBuffer` loads its output register from the
//! input or from its skid register (a LUT level in front of the register, on the path of the input
//! data) and drives its output straight from that register. Here each entry register loads the
//! input with an enable only (the entry at the write pointer, whenever the FIFO is not full,
//! whether or not a word is offered: a free entry may hold anything), and the output is chosen
//! between the two entries by the read pointer, a flip-flop: one LUT level after the registers.
//! Use it where the data path into the slice is the deep side (the DMA writer's realignment) and
//! the one out of it is short.

use rust_hdl::prelude::*;

#[derive(LogicBlock, Default)]
pub struct PairFifo<const W: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub in_data: Signal<In, Bits<W>>,
    pub in_valid: Signal<In, Bit>,
    pub in_ready: Signal<Out, Bit>,
    pub out_data: Signal<Out, Bits<W>>,
    pub out_valid: Signal<Out, Bit>,
    pub out_ready: Signal<In, Bit>,
    /// The word offered now is dropped as it is taken.
    pub in_cancel: Signal<In, Bit>,
    /// The entry the next word goes into, and the entry on offer (0 or 1).
    pub wr_entry: Signal<Out, Bit>,
    pub rd_entry: Signal<Out, Bit>,

    entry0: DFF<Bits<W>>,
    entry1: DFF<Bits<W>>,
    wp: DFF<Bit>,
    rp: DFF<Bit>,
    /// At least one word held; two words held.
    nonempty: DFF<Bit>,
    full: DFF<Bit>,
    push: Signal<Local, Bit>,
    pop: Signal<Local, Bit>,
}

impl<const W: usize> Logic for PairFifo<W> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, entry0, entry1, wp, rp, nonempty, full);
        self.in_ready.next = !self.full.q.val();
        self.out_valid.next = self.nonempty.q.val();
        self.out_data.next = self.entry0.q.val();
        if self.rp.q.val() {
            self.out_data.next = self.entry1.q.val();
        }
        self.wr_entry.next = self.wp.q.val();
        self.rd_entry.next = self.rp.q.val();
        // The free entry at the write pointer follows the input (an enable from registers only).
        if !self.full.q.val() & !self.wp.q.val() {
            self.entry0.d.next = self.in_data.val();
        }
        if !self.full.q.val() & self.wp.q.val() {
            self.entry1.d.next = self.in_data.val();
        }
        self.push.next = self.in_valid.val() & !self.full.q.val() & !self.in_cancel.val();
        self.pop.next = self.nonempty.q.val() & self.out_ready.val();
        if self.push.val() {
            self.wp.d.next = !self.wp.q.val();
        }
        if self.pop.val() {
            self.rp.d.next = !self.rp.q.val();
        }
        if self.push.val() & !self.pop.val() {
            self.nonempty.d.next = true;
            self.full.d.next = self.nonempty.q.val();
        }
        if self.pop.val() & !self.push.val() {
            self.full.d.next = false;
            self.nonempty.d.next = self.full.q.val();
        }
        if self.reset.val() {
            self.wp.d.next = false;
            self.rp.d.next = false;
            self.nonempty.d.next = false;
            self.full.d.next = false;
        }
    }
}

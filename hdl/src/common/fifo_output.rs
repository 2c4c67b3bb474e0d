//! The output stage of a FIFO built on a synchronous-read RAM: three registers in a queue, so
//! that neither the reader's `out_ready` reaches the RAM nor the RAM's output reaches the reader.
//!
//! The FIFO's RAM reads the entry at its read pointer (a register) every cycle; the FIFO fetches
//! (`fetch`: the read counts, its pointer moves on) when an entry is waiting and `room` is high,
//! and the entry arrives from the RAM (`ram_data`) a cycle later, into the first free register.
//! `room` says a fetched entry will find a register whatever the reader does: fewer than three
//! entries held or on their way. It comes from flip-flops through one level and never looks at
//! `out_ready`, so a fetch is decided from registers; three registers (not two) are what lets a
//! steady reader still take an entry every cycle without that look. `out_ready` only enables
//! the registers, and `out_data`/`out_valid` are flip-flops.
//!
//! An entry fetched in cycle `t` is on the output from `t + 2`.

use rust_hdl::prelude::*;

#[derive(LogicBlock, Default)]
pub struct FifoOutput<const W: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// The RAM's read data: the entry fetched in the previous cycle, if one was.
    pub ram_data: Signal<In, Bits<W>>,
    /// The FIFO fetches an entry now (only while `room`).
    pub fetch: Signal<In, Bit>,
    /// An entry fetched now will find a register (from flip-flops: never `out_ready`).
    pub room: Signal<Out, Bit>,
    pub out_data: Signal<Out, Bits<W>>,
    pub out_valid: Signal<Out, Bit>,
    pub out_ready: Signal<In, Bit>,
    /// An entry leaves (`out_valid && out_ready`).
    pub take: Signal<Out, Bit>,

    /// The RAM's output holds an entry fetched in the last cycle.
    arriving: DFF<Bit>,
    /// The queue, oldest first: `e0` is the output. Held entries are contiguous from `e0`.
    e0: DFF<Bits<W>>,
    e1: DFF<Bits<W>>,
    e2: DFF<Bits<W>>,
    v0: DFF<Bit>,
    v1: DFF<Bit>,
    v2: DFF<Bit>,
}

impl<const W: usize> Logic for FifoOutput<W> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, arriving, e0, e1, e2, v0, v1, v2);
        // Three held, or two with one arriving: a fetch now could find no register.
        self.room.next = !(self.v2.q.val() | (self.v1.q.val() & self.arriving.q.val()));
        self.out_data.next = self.e0.q.val();
        self.out_valid.next = self.v0.q.val();
        self.take.next = self.v0.q.val() & self.out_ready.val();
        self.arriving.d.next = self.fetch.val();
        if self.take.val() {
            // Everything moves down one; the arriving entry goes behind the last one held.
            self.v0.d.next = self.v1.q.val() | self.arriving.q.val();
            self.v1.d.next = self.v2.q.val() | (self.v1.q.val() & self.arriving.q.val());
            self.v2.d.next = self.v2.q.val() & self.arriving.q.val();
            self.e0.d.next = self.ram_data.val();
            if self.v1.q.val() {
                self.e0.d.next = self.e1.q.val();
            }
            self.e1.d.next = self.ram_data.val();
            if self.v2.q.val() {
                self.e1.d.next = self.e2.q.val();
            }
            self.e2.d.next = self.ram_data.val();
        } else if self.arriving.q.val() {
            // Into the first free register (there is one: a fetch is made only with `room`).
            if !self.v0.q.val() {
                self.e0.d.next = self.ram_data.val();
                self.v0.d.next = true;
            } else if !self.v1.q.val() {
                self.e1.d.next = self.ram_data.val();
                self.v1.d.next = true;
            } else {
                self.e2.d.next = self.ram_data.val();
                self.v2.d.next = true;
            }
        }
        if self.reset.val() {
            self.arriving.d.next = false;
            self.v0.d.next = false;
            self.v1.d.next = false;
            self.v2.d.next = false;
        }
    }
}

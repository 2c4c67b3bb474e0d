//! Event queue: writes event records into the host's ring and raises the interrupt.
//!
//! The ring is `2^size_log2` records of 32 bytes at bus address `base` (the layout is
//! `nanet_contract::events`). The card's producer index `tail` counts records written (16 bits,
//! wrapping); the host's consumer index `head` says how many it has consumed. A record goes to slot
//! `tail % 2^n` with phase bit `!tail[n]` (1 on the first lap), so the host can poll memory alone.
//! The queue never overwrites a record the host has not consumed: while the ring is full it holds
//! the event (and the engine behind it waits); the free-slot check is a register (for timing),
//! updated with the record that fills the ring and one cycle behind a new `head`. While `enable`
//! is low, `tail` stays 0 and events are discarded (`dropped` pulses).
//!
//! A record is two write-request beats (`wr`, see `write_request`): bytes 0..15 from `ev_lo`, bytes
//! 16..31 from `ev_hi` (little-endian lanes), the phase bit ORed into bit 7.
//!
//! Interrupt: `irq` pulses when armed (`irq_arm` pulse) and records are pending, at least
//! `irq_min_interval` cycles after the previous interrupt, once `irq_count` records are pending or
//! the oldest pending one has waited `irq_min_interval` cycles. Firing disarms; the host re-arms
//! after it has drained the ring.

use rust_hdl::prelude::*;

use crate::pcie::write_request::WriteRequestSource;

#[derive(LogicBlock, Default)]
pub struct EventQueue {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,

    pub enable: Signal<In, Bit>,
    pub base: Signal<In, Bits<64>>,
    pub size_log2: Signal<In, Bits<4>>,
    pub head: Signal<In, Bits<16>>,
    pub tail: Signal<Out, Bits<16>>,

    pub irq_arm: Signal<In, Bit>,
    pub irq_min_interval: Signal<In, Bits<32>>,
    pub irq_count: Signal<In, Bits<16>>,
    pub irq: Signal<Out, Bit>,
    pub armed: Signal<Out, Bit>,

    pub ev_valid: Signal<In, Bit>,
    pub ev_ready: Signal<Out, Bit>,
    pub ev_lo: Signal<In, Bits<128>>,
    pub ev_hi: Signal<In, Bits<128>>,

    pub wr: WriteRequestSource,

    /// One pulse per record written, and per event discarded while disabled.
    pub written: Signal<Out, Bit>,
    pub dropped: Signal<Out, Bit>,

    tail_r: DFF<Bits<16>>,
    second: DFF<Bit>,
    armed_r: DFF<Bit>,
    pending: DFF<Bits<16>>,
    age: DFF<Bits<32>>,
    since_irq: DFF<Bits<32>>,
    /// The ring has a free slot, as of the cycle before (for timing): computed from the count
    /// after that cycle's record, so a record that fills the ring stops the next one.
    space_q: DFF<Bit>,

    slots: Signal<Local, Bits<17>>,
    used: Signal<Local, Bits<16>>,
    space: Signal<Local, Bit>,
    space_after: Signal<Local, Bit>,
    slot: Signal<Local, Bits<16>>,
    lap: Signal<Local, Bits<16>>,
    phase: Signal<Local, Bit>,
    irq_now: Signal<Local, Bit>,
    fire: Signal<Local, Bit>,
    done: Signal<Local, Bit>,
    count_met: Signal<Local, Bit>,
}

impl Logic for EventQueue {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, tail_r, second, armed_r, pending, age, since_irq, space_q);

        // ---- ring space, slot and phase of the next record ---------------------------------
        self.slots.next = 1.into();
        self.slots.next = self.slots.val() << self.size_log2.val();
        self.used.next = self.tail_r.q.val() - self.head.val();
        // While enabled, `head` only grows (the host consumes), so a one-cycle-old count is on
        // the safe side; the host moves it back (to 0) or shrinks the ring only while disabled.
        self.space.next = self.space_q.q.val();
        self.space_after.next = (bit_cast::<17, 16>(self.used.val()) + 1) < self.slots.val();
        self.space_q.d.next = bit_cast::<17, 16>(self.used.val()) < self.slots.val();
        self.slot.next = self.tail_r.q.val() & (self.slots.val().get_bits::<16>(0) - 1);
        self.lap.next = self.tail_r.q.val() >> self.size_log2.val();
        self.phase.next = !self.lap.val().get_bit(0);
        self.tail.next = self.tail_r.q.val();

        // ---- the two beats of a record --------------------------------------------------------
        self.wr.valid.next = self.ev_valid.val() & self.enable.val() & self.space.val();
        self.wr.sop.next = !self.second.q.val();
        self.wr.eop.next = self.second.q.val();
        self.wr.len.next = 32.into();
        self.wr.be.next = 0xFFFF.into();
        self.wr.addr.next = self.base.val() + (bit_cast::<64, 16>(self.slot.val()) << 5);
        self.wr.data.next = self.ev_lo.val() | (bit_cast::<128, 1>(self.phase.val().into()) << 7);
        if self.second.q.val() {
            self.wr.addr.next = self.base.val() + (bit_cast::<64, 16>(self.slot.val()) << 5) + 16;
            self.wr.data.next = self.ev_hi.val();
        }
        self.fire.next =
            self.ev_valid.val() & self.enable.val() & self.space.val() & self.wr.ready.val();
        self.done.next = self.fire.val() & self.second.q.val();
        if self.fire.val() {
            self.second.d.next = !self.second.q.val();
        }
        if self.done.val() {
            self.tail_r.d.next = self.tail_r.q.val() + 1;
            self.space_q.d.next = self.space_after.val();
        }
        self.ev_ready.next = self.done.val() | !self.enable.val();
        self.written.next = self.done.val();
        self.dropped.next = self.ev_valid.val() & !self.enable.val();
        if !self.enable.val() {
            self.tail_r.d.next = 0.into();
            self.second.d.next = false;
        }

        // ---- interrupt moderation ---------------------------------------------------------------
        if self.since_irq.q.val() != 0xFFFF_FFFFu64 {
            self.since_irq.d.next = self.since_irq.q.val() + 1;
        }
        if (self.pending.q.val() != 0) & (self.age.q.val() != 0xFFFF_FFFFu64) {
            self.age.d.next = self.age.q.val() + 1;
        }
        if self.done.val() {
            self.pending.d.next = self.pending.q.val() + 1;
        }
        if self.irq_arm.val() {
            self.armed_r.d.next = true;
        }
        self.count_met.next = self.pending.q.val() >= self.irq_count.val();
        self.irq_now.next = self.armed_r.q.val()
            & (self.pending.q.val() != 0)
            & (self.since_irq.q.val() >= self.irq_min_interval.val())
            & (self.count_met.val() | (self.age.q.val() >= self.irq_min_interval.val()));
        self.irq.next = self.irq_now.val();
        if self.irq_now.val() {
            self.armed_r.d.next = false;
            self.pending.d.next = bit_cast::<16, 1>(self.done.val().into());
            self.age.d.next = 0.into();
            self.since_irq.d.next = 0.into();
        }
        self.armed.next = self.armed_r.q.val();

        if self.reset.val() {
            self.tail_r.d.next = 0.into();
            self.second.d.next = false;
            self.armed_r.d.next = false;
            self.pending.d.next = 0.into();
            self.age.d.next = 0.into();
            self.since_irq.d.next = 0xFFFF_FFFFu64.into();
        }
    }
}

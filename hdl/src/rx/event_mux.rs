//! Two event-record sources onto the event queue's one input (`ev_valid`/`ev_ready`, a record in
//! `ev_lo`/`ev_hi`): the CLOP engine's (`a`) and the transmit engine's (`b`). The queue writes a
//! record in two beats at 128 bits from the record on its input, so the source is chosen when a
//! record starts and held until the queue takes it; `a` first when both wait, then `b` gets the
//! next turn.

use rust_hdl::prelude::*;

#[derive(LogicBlock, Default)]
pub struct EventMux {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub a_valid: Signal<In, Bit>,
    pub a_lo: Signal<In, Bits<128>>,
    pub a_hi: Signal<In, Bits<128>>,
    pub a_ready: Signal<Out, Bit>,
    pub b_valid: Signal<In, Bit>,
    pub b_lo: Signal<In, Bits<128>>,
    pub b_hi: Signal<In, Bits<128>>,
    pub b_ready: Signal<Out, Bit>,
    pub ev_valid: Signal<Out, Bit>,
    pub ev_lo: Signal<Out, Bits<128>>,
    pub ev_hi: Signal<Out, Bits<128>>,
    pub ev_ready: Signal<In, Bit>,

    /// A record of `b` is on offer (held until taken).
    hold_b: DFF<Bit>,
    /// A record of `a` is on offer.
    hold_a: DFF<Bit>,
    /// `b` goes first at the next choice (after an `a` record).
    b_turn: DFF<Bit>,
    pick_b: Signal<Local, Bit>,
}

impl Logic for EventMux {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, hold_b, hold_a, b_turn);
        // Keep the source whose record is on offer; otherwise choose.
        self.pick_b.next = self.b_valid.val() & (self.b_turn.q.val() | !self.a_valid.val());
        if self.hold_a.q.val() {
            self.pick_b.next = false;
        }
        if self.hold_b.q.val() {
            self.pick_b.next = true;
        }
        self.ev_valid.next = self.a_valid.val();
        self.ev_lo.next = self.a_lo.val();
        self.ev_hi.next = self.a_hi.val();
        if self.pick_b.val() {
            self.ev_valid.next = self.b_valid.val();
            self.ev_lo.next = self.b_lo.val();
            self.ev_hi.next = self.b_hi.val();
        }
        self.a_ready.next = self.ev_ready.val() & !self.pick_b.val();
        self.b_ready.next = self.ev_ready.val() & self.pick_b.val();
        self.hold_a.d.next = self.ev_valid.val() & !self.pick_b.val() & !self.ev_ready.val();
        self.hold_b.d.next = self.ev_valid.val() & self.pick_b.val() & !self.ev_ready.val();
        if self.ev_valid.val() & self.ev_ready.val() {
            self.b_turn.d.next = !self.pick_b.val();
        }
        if self.reset.val() {
            self.hold_a.d.next = false;
            self.hold_b.d.next = false;
            self.b_turn.d.next = false;
        }
    }
}

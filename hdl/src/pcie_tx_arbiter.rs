//! The card's TLP transmitters onto the Stratix V Hard IP's one 128-bit Avalon-ST transmit port:
//! completions of the BAR0 target and the DMA's memory writes.
//!
//! A TLP source here is a plain stream of 128-bit beats in the Hard IP's layout: a beat moves when
//! `valid && ready`, and inside a TLP there is no gap (once its first beat is offered, every later
//! beat is offered until the last moved). The Hard IP's `tx_ready` has a ready latency of 2 (a beat
//! may go in cycle `n` only if `tx_ready` was high in `n - 2`) and tolerates gaps inside a TLP only
//! where its ready made them; both hold when the sources see `tx_ready` delayed by two cycles as
//! their `ready` and their beat goes out in the same cycle.
//!
//! The port changes hands only between TLPs; there completions go first (short, and one per
//! register read, so they cannot starve the writes), then memory writes.

use rust_hdl::prelude::*;

#[derive(LogicBlock, Default)]
pub struct PcieTxArbiter {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,

    pub cpl_data: Signal<In, Bits<128>>,
    pub cpl_sop: Signal<In, Bit>,
    pub cpl_eop: Signal<In, Bit>,
    pub cpl_empty: Signal<In, Bit>,
    pub cpl_valid: Signal<In, Bit>,
    pub cpl_ready: Signal<Out, Bit>,

    pub wr_data: Signal<In, Bits<128>>,
    pub wr_sop: Signal<In, Bit>,
    pub wr_eop: Signal<In, Bit>,
    pub wr_empty: Signal<In, Bit>,
    pub wr_valid: Signal<In, Bit>,
    pub wr_ready: Signal<Out, Bit>,

    pub tx_data: Signal<Out, Bits<128>>,
    pub tx_sop: Signal<Out, Bit>,
    pub tx_eop: Signal<Out, Bit>,
    pub tx_empty: Signal<Out, Bit>,
    pub tx_valid: Signal<Out, Bit>,
    pub tx_ready: Signal<In, Bit>,

    /// `tx_ready` one and two cycles ago.
    ready_1: DFF<Bit>,
    ready_2: DFF<Bit>,
    /// The source of the TLP in progress (1: writes), and whether one is.
    owner: DFF<Bit>,
    in_tlp: DFF<Bit>,
    /// This cycle's source; whether a beat goes, and whether it is a TLP's last.
    writes: Signal<Local, Bit>,
    go: Signal<Local, Bit>,
    last: Signal<Local, Bit>,
}

impl Logic for PcieTxArbiter {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, ready_1, ready_2, owner, in_tlp);
        self.ready_1.d.next = self.tx_ready.val();
        self.ready_2.d.next = self.ready_1.q.val();

        self.writes.next = !self.cpl_valid.val();
        if self.in_tlp.q.val() {
            self.writes.next = self.owner.q.val();
        }
        self.owner.d.next = self.writes.val();

        self.cpl_ready.next = self.ready_2.q.val() & !self.writes.val();
        self.wr_ready.next = self.ready_2.q.val() & self.writes.val();
        self.tx_data.next = self.cpl_data.val();
        self.tx_sop.next = self.cpl_sop.val();
        self.tx_empty.next = self.cpl_empty.val();
        self.go.next = self.cpl_valid.val() & self.ready_2.q.val();
        self.last.next = self.cpl_eop.val();
        if self.writes.val() {
            self.tx_data.next = self.wr_data.val();
            self.tx_sop.next = self.wr_sop.val();
            self.tx_empty.next = self.wr_empty.val();
            self.go.next = self.wr_valid.val() & self.ready_2.q.val();
            self.last.next = self.wr_eop.val();
        }
        self.tx_valid.next = self.go.val();
        self.tx_eop.next = self.last.val();
        // A TLP is in progress from a first beat that is not also its last, to its last beat.
        if self.go.val() {
            self.in_tlp.d.next = !self.last.val();
        }

        if self.reset.val() {
            self.ready_1.d.next = false;
            self.ready_2.d.next = false;
            self.in_tlp.d.next = false;
        }
    }
}

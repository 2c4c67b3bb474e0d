//! The card's TLP transmitters onto the Stratix V Hard IP's one 128-bit Avalon-ST transmit port:
//! completions of the BAR0 target and the DMA's memory writes.
//!
//! A TLP source here is a plain stream of 128-bit beats in the Hard IP's layout: a beat moves when
//! `valid && ready`, and inside a TLP there is no gap (once its first beat is offered, every later
//! beat is offered until the last moved). The Hard IP's `tx_ready` has a ready latency of 2 (a beat
//! may go in cycle `n` only if `tx_ready` was high in `n - 2`) and tolerates gaps inside a TLP only
//! where its ready made them. The arbiter takes a beat from a source in cycle `n - 1` when
//! `tx_ready` was high in `n - 2` and drives it onto the port from its output register in cycle
//! `n`: both rules hold, and every output comes straight from a flip-flop (one cycle of latency).
//!
//! The port changes hands only between TLPs; there completions go first (short, and one per
//! register read, so they cannot starve the writes), then memory writes.

use rust_hdl::prelude::*;

use crate::pcie::tlp_stream::{TlpSink, TlpSource};

#[derive(LogicBlock, Default)]
pub struct PcieTxArbiter {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,

    /// Completions of the BAR0 target; memory writes of the DMA.
    pub cpl: TlpSink,
    pub wr: TlpSink,
    /// The Hard IP's transmit port (`ready` with a latency of 2).
    pub tx: TlpSource,

    /// `tx_ready` one cycle ago.
    ready_1: DFF<Bit>,
    /// The beat on the port: taken from a source in the previous cycle.
    out_data: DFF<Bits<128>>,
    out_sop: DFF<Bit>,
    out_eop: DFF<Bit>,
    out_empty: DFF<Bit>,
    out_valid: DFF<Bit>,
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
        dff_setup!(
            self, clock, ready_1, out_data, out_sop, out_eop, out_empty, out_valid, owner, in_tlp
        );
        self.ready_1.d.next = self.tx.ready.val();

        self.writes.next = !self.cpl.valid.val();
        if self.in_tlp.q.val() {
            self.writes.next = self.owner.q.val();
        }
        self.owner.d.next = self.writes.val();

        self.cpl.ready.next = self.ready_1.q.val() & !self.writes.val();
        self.wr.ready.next = self.ready_1.q.val() & self.writes.val();
        self.out_data.d.next = self.cpl.data.val();
        self.out_sop.d.next = self.cpl.sop.val();
        self.out_empty.d.next = self.cpl.empty.val();
        self.go.next = self.cpl.valid.val() & self.ready_1.q.val();
        self.last.next = self.cpl.eop.val();
        if self.writes.val() {
            self.out_data.d.next = self.wr.data.val();
            self.out_sop.d.next = self.wr.sop.val();
            self.out_empty.d.next = self.wr.empty.val();
            self.go.next = self.wr.valid.val() & self.ready_1.q.val();
            self.last.next = self.wr.eop.val();
        }
        self.out_valid.d.next = self.go.val();
        self.out_eop.d.next = self.last.val();
        self.tx.data.next = self.out_data.q.val();
        self.tx.sop.next = self.out_sop.q.val();
        self.tx.eop.next = self.out_eop.q.val();
        self.tx.empty.next = self.out_empty.q.val();
        self.tx.valid.next = self.out_valid.q.val();
        // A TLP is in progress from a first beat that is not also its last, to its last beat.
        if self.go.val() {
            self.in_tlp.d.next = !self.last.val();
        }

        if self.reset.val() {
            self.ready_1.d.next = false;
            self.out_valid.d.next = false;
            self.in_tlp.d.next = false;
        }
    }
}

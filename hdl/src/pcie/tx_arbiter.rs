//! The card's TLP transmitters onto the Stratix V Hard IP's one Avalon-ST transmit port (`W` bits:
//! 128 at Gen2 x8, 256 at Gen3 x8; the logic reads only header dword 0, in bits 31:0 at both):
//! completions of the BAR0 target on one input, the DMA's memory writes and reads on the other.
//!
//! A TLP source here is a plain stream of beats in the Hard IP's layout: a beat moves when
//! `valid && ready`, and inside a TLP there is no gap (once its first beat is offered, every later
//! beat is offered until the last moved). The Hard IP's `tx_ready` has a ready latency of 2 (a beat
//! may go in cycle `n` only if `tx_ready` was high in `n - 2`) and tolerates gaps inside a TLP only
//! where its ready made them. The arbiter takes a beat from a source in cycle `n - 1` when
//! `tx_ready` was high in `n - 2` and drives it onto the port from its output register in cycle
//! `n`: both rules hold, and every output comes straight from a flip-flop (one cycle of latency).
//!
//! The port changes hands only between TLPs; there completions go first (short, and one per
//! register read, so they cannot starve the writes), then memory writes and reads.
//!
//! PCIe ordering (2.0, 2.4.1): a completion must not pass a posted request issued before it. A
//! host that reads a register saying "done" (a CLOP disabled, a transmit descriptor sent) relies on
//! every memory write the card issued before that read being in host memory when the completion
//! arrives. Such writes may still sit in the TLP writer and the posted credit gate upstream, so the
//! arbiter counts the posted TLPs `ahead` of it (`posted_issued` pulses when one enters the TLP
//! layer; one leaves when its first beat goes to the port, recognised by the data bit of its
//! header: the card's only TLPs with data on `wr` are its memory writes, beside its reads). A
//! completion offered while none is ahead goes at the next TLP boundary. One offered and not taken
//! at once keeps the count of that cycle (`owed`: the writes issued before it) and goes at the
//! first boundary after that many have gone; writes issued after it was offered never hold it up,
//! so completions are never starved.

use rust_hdl::prelude::*;

use crate::pcie::tlp_stream::{TlpSink, TlpSource};

#[derive(LogicBlock, Default)]
pub struct PcieTxArbiter<const W: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,

    /// Completions of the BAR0 target; memory writes of the DMA.
    pub cpl: TlpSink<W>,
    pub wr: TlpSink<W>,
    /// The Hard IP's transmit port (`ready` with a latency of 2).
    pub tx: TlpSource<W>,
    /// A posted TLP (memory write) entered the TLP layer upstream of `wr` this cycle.
    pub posted_issued: Signal<In, Bit>,

    /// `tx_ready` one cycle ago.
    ready_1: DFF<Bit>,
    /// The beat on the port: taken from a source in the previous cycle.
    out_data: DFF<Bits<W>>,
    out_sop: DFF<Bit>,
    out_eop: DFF<Bit>,
    out_empty: DFF<Bits<2>>,
    out_valid: DFF<Bit>,
    /// The source of the TLP in progress (1: writes), and whether one is.
    owner: DFF<Bit>,
    in_tlp: DFF<Bit>,
    /// Posted TLPs issued upstream whose first beat has not reached the port (at most the TLP
    /// writer's queued requests plus the posted gate's slices, a handful: 8 bits is plenty);
    /// whether that is 0.
    ahead: DFF<Bits<8>>,
    none_ahead: DFF<Bit>,
    /// The completion on offer was offered before and not taken; `owed` of the posted TLPs issued
    /// before it have yet to go; whether that is 0.
    armed: DFF<Bit>,
    owed: DFF<Bits<8>>,
    owed_done: DFF<Bit>,
    /// This cycle's source; whether a beat goes, and whether it is a TLP's last.
    writes: Signal<Local, Bit>,
    go: Signal<Local, Bit>,
    last: Signal<Local, Bit>,
    /// The completion on offer may go; a posted TLP's first beat goes this cycle.
    cpl_may_go: Signal<Local, Bit>,
    posted_goes: Signal<Local, Bit>,
    ahead_next: Signal<Local, Bits<8>>,
    owed_next: Signal<Local, Bits<8>>,
    ahead_is1: Signal<Local, Bit>,
    owed_is1: Signal<Local, Bit>,
}

impl<const W: usize> Logic for PcieTxArbiter<W> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, ready_1, out_data, out_sop, out_eop, out_empty, out_valid, owner, in_tlp,
            ahead, none_ahead, armed, owed, owed_done
        );
        self.ready_1.d.next = self.tx.ready.val();

        self.cpl_may_go.next = self.none_ahead.q.val();
        if self.armed.q.val() {
            self.cpl_may_go.next = self.owed_done.q.val();
        }
        self.writes.next = !(self.cpl.valid.val() & self.cpl_may_go.val());
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

        // Posted TLPs ahead of the completions (see the module doc).
        self.posted_goes.next =
            self.writes.val() & self.go.val() & self.wr.sop.val() & self.wr.data.val().get_bit(30);
        self.ahead_next.next = self.ahead.q.val();
        if self.posted_issued.val() & !self.posted_goes.val() {
            self.ahead_next.next = self.ahead.q.val() + 1;
        }
        // Never below 0, whatever the sources do.
        if !self.posted_issued.val() & self.posted_goes.val() & !self.none_ahead.q.val() {
            self.ahead_next.next = self.ahead.q.val() - 1;
        }
        self.ahead.d.next = self.ahead_next.val();
        // Zero tests from the registers, not behind the add (timing): the next count is 0 when it
        // is 0 and does not grow, or 1 and shrinks (`none_ahead` and `owed_done` are always the
        // zero tests of `ahead` and `owed`).
        self.ahead_is1.next = self.ahead.q.val() == 1;
        self.owed_is1.next = self.owed.q.val() == 1;
        self.none_ahead.d.next = (self.none_ahead.q.val()
            & !(self.posted_issued.val() & !self.posted_goes.val()))
            | (self.ahead_is1.val() & self.posted_goes.val() & !self.posted_issued.val());
        self.owed_next.next = self.owed.q.val();
        if self.posted_goes.val() & !self.owed_done.q.val() {
            self.owed_next.next = self.owed.q.val() - 1;
        }
        self.owed_done.d.next =
            self.owed_done.q.val() | (self.owed_is1.val() & self.posted_goes.val());
        if !self.armed.q.val() {
            // Those ahead now, less one going this cycle (`ahead` counts only issued ones).
            self.owed_next.next = self.ahead.q.val();
            if self.posted_goes.val() & !self.none_ahead.q.val() {
                self.owed_next.next = self.ahead.q.val() - 1;
            }
            self.owed_done.d.next =
                self.none_ahead.q.val() | (self.ahead_is1.val() & self.posted_goes.val());
        }
        self.owed.d.next = self.owed_next.val();
        // (A completion with data below a qword boundary takes two beats: arm on the first only.)
        if self.cpl.valid.val() & self.cpl.sop.val() & !self.cpl.ready.val() {
            self.armed.d.next = true;
        }
        if self.cpl.valid.val() & self.cpl.ready.val() & self.cpl.sop.val() {
            self.armed.d.next = false;
        }

        if self.reset.val() {
            self.ready_1.d.next = false;
            self.out_valid.d.next = false;
            self.in_tlp.d.next = false;
            self.ahead.d.next = 0.into();
            self.none_ahead.d.next = true;
            self.armed.d.next = false;
        }
    }
}

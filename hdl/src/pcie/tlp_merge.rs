//! Two TLP sources of `W`-bit beats onto one (`pcie/tlp_stream.rs` semantics on every side: a beat moves on valid and
//! ready, no gap inside a TLP), handed over only between TLPs, `a` first when both wait: the
//! DMA read engine's one-beat memory reads (`a`) beside the memory writes (`b`), ahead of the
//! transmit arbiter. Reads are at most 32 outstanding (the read engine's tags), so they cannot starve the
//! writes.

use rust_hdl::prelude::*;

use crate::pcie::tlp_stream::{TlpSink, TlpSource};

#[derive(LogicBlock, Default)]
pub struct TlpMerge<const W: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub a: TlpSink<W>,
    pub b: TlpSink<W>,
    pub out: TlpSource<W>,

    /// A TLP of `b` is in progress (its first beat moved, its last not yet).
    b_open: DFF<Bit>,
    take_b: Signal<Local, Bit>,
}

impl<const W: usize> Logic for TlpMerge<W> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, b_open);
        self.take_b.next = self.b_open.q.val() | !self.a.valid.val();
        self.out.data.next = self.a.data.val();
        self.out.sop.next = self.a.sop.val();
        self.out.eop.next = self.a.eop.val();
        self.out.empty.next = self.a.empty.val();
        self.out.valid.next = self.a.valid.val();
        if self.take_b.val() {
            self.out.data.next = self.b.data.val();
            self.out.sop.next = self.b.sop.val();
            self.out.eop.next = self.b.eop.val();
            self.out.empty.next = self.b.empty.val();
            self.out.valid.next = self.b.valid.val();
        }
        // What reads `out.ready` restates the choice instead of reading `take_b`: a local shared
        // with the output multiplexer would tie `out.ready` to `out.data` in Verilator's ordering,
        // a loop with the transmit arbiter, which reads its data and drives its ready in one
        // block (UNOPTFLAT).
        self.a.ready.next = self.out.ready.val() & !self.b_open.q.val() & self.a.valid.val();
        self.b.ready.next = self.out.ready.val() & (self.b_open.q.val() | !self.a.valid.val());
        if (self.b_open.q.val() | !self.a.valid.val()) & self.b.valid.val() & self.out.ready.val() {
            self.b_open.d.next = !self.b.eop.val();
        }
        if self.reset.val() {
            self.b_open.d.next = false;
        }
    }
}

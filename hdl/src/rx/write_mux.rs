//! Two write-request sources onto one write port (`write_request`), a whole request at a
//! time. Source B (event records) wins at a request boundary when it was waiting in the cycle
//! before (the choice is made from registers, so neither source's handshake passes through the
//! other's `valid`: B starts a cycle after it offers); requests are never interleaved, so each
//! source's order is kept. The port is driven through a register slice, one cycle of latency.

use rust_hdl::prelude::*;

use crate::pcie::write_request::{WriteRequestSink, WriteRequestSkid, WriteRequestSource};

#[derive(LogicBlock, Default)]
pub struct WriteMux<const W: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub a: WriteRequestSink<W>,
    /// A's beat on offer is void (a DMA write whose translation missed): taken and dropped, and
    /// it never starts a request.
    pub a_void: Signal<In, Bit>,
    pub b: WriteRequestSink<W>,

    pub out: WriteRequestSource<W>,
    /// A beat waits in the output slice; a beat leaves it in this cycle.
    pub holds: Signal<Out, Bit>,
    pub moved: Signal<Out, Bit>,

    /// Inside a request: `locked`, from source B if `from_b`.
    locked: DFF<Bit>,
    from_b: DFF<Bit>,
    /// B offered a request in the last cycle (and did not end one).
    b_waiting: DFF<Bit>,
    pick_b: Signal<Local, Bit>,
    slice: WriteRequestSkid<W>,
}

impl<const W: usize> Logic for WriteMux<W> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, locked, from_b, b_waiting);
        self.slice.clock.next = self.clock.val();
        self.slice.reset.next = self.reset.val();
        self.slice.void_late.next = false;
        WriteRequestSource::<W>::link(&mut self.out, &mut self.slice.out);
        self.holds.next = self.slice.holds.val();
        self.moved.next = self.out.valid.val() & self.out.ready.val();
        // The choice is made from registers (for timing: neither source's handshake passes
        // through the other's valid): at a request boundary B goes first if it was waiting in the
        // last cycle.
        self.pick_b.next = self.from_b.q.val();
        if !self.locked.q.val() {
            self.pick_b.next = self.b_waiting.q.val();
        }
        self.slice.cancel.next = self.a_void.val() & !self.pick_b.val();
        self.slice.inp.valid.next = self.a.valid.val();
        self.slice.inp.sop.next = self.a.sop.val();
        self.slice.inp.eop.next = self.a.eop.val();
        self.slice.inp.addr.next = self.a.addr.val();
        self.slice.inp.len.next = self.a.len.val();
        self.slice.inp.data.next = self.a.data.val();
        self.a.ready.next = self.slice.inp.ready.val() & !self.pick_b.val();
        // B's ready restates the choice from the registers, and nothing reads it back: a local
        // or an output written here and read beside B's valid would tie B's ready to its valid
        // in Verilator's ordering, a loop with the event queue, which reads its ready and drives
        // its valid in one block (UNOPTFLAT).
        self.b.ready.next = self.slice.inp.ready.val()
            & ((self.locked.q.val() & self.from_b.q.val())
                | (!self.locked.q.val() & self.b_waiting.q.val()));
        self.b_waiting.d.next = self.b.valid.val()
            & !(self.b.eop.val()
                & self.slice.inp.ready.val()
                & ((self.locked.q.val() & self.from_b.q.val())
                    | (!self.locked.q.val() & self.b_waiting.q.val())));
        if self.pick_b.val() {
            self.slice.inp.valid.next = self.b.valid.val();
            self.slice.inp.sop.next = self.b.sop.val();
            self.slice.inp.eop.next = self.b.eop.val();
            self.slice.inp.addr.next = self.b.addr.val();
            self.slice.inp.len.next = self.b.len.val();
            self.slice.inp.data.next = self.b.data.val();
        }
        if self.slice.inp.ready.val()
            & ((self.pick_b.val() & self.b.valid.val()) | (!self.pick_b.val() & self.a.valid.val()))
        {
            self.locked.d.next = true;
            self.from_b.d.next = self.pick_b.val();
            if (self.pick_b.val() & self.b.eop.val())
                | (!self.pick_b.val() & (self.a.eop.val() | self.a_void.val()))
            {
                self.locked.d.next = false;
            }
        }
        if self.reset.val() {
            self.locked.d.next = false;
            self.from_b.d.next = false;
            self.b_waiting.d.next = false;
        }
    }
}

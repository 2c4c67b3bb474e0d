//! Two write-request sources onto one write port (`write_request`), a whole request at a
//! time. Source B (event records) wins at a request boundary when both wait; requests are never
//! interleaved, so each source's order is kept.

use rust_hdl::prelude::*;

use crate::pcie::write_request::{WriteRequestSink, WriteRequestSource};

#[derive(LogicBlock, Default)]
pub struct WriteMux {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub a: WriteRequestSink,
    pub b: WriteRequestSink,

    pub out: WriteRequestSource,

    /// Inside a request: `locked`, from source B if `from_b`.
    locked: DFF<Bit>,
    from_b: DFF<Bit>,
    pick_b: Signal<Local, Bit>,
}

impl Logic for WriteMux {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, locked, from_b);
        self.pick_b.next = self.from_b.q.val();
        if !self.locked.q.val() {
            self.pick_b.next = self.b.valid.val();
        }
        self.out.valid.next = self.a.valid.val();
        self.out.sop.next = self.a.sop.val();
        self.out.eop.next = self.a.eop.val();
        self.out.addr.next = self.a.addr.val();
        self.out.len.next = self.a.len.val();
        self.out.data.next = self.a.data.val();
        self.out.be.next = self.a.be.val();
        self.a.ready.next = self.out.ready.val() & !self.pick_b.val();
        self.b.ready.next = self.out.ready.val() & self.pick_b.val();
        if self.pick_b.val() {
            self.out.valid.next = self.b.valid.val();
            self.out.sop.next = self.b.sop.val();
            self.out.eop.next = self.b.eop.val();
            self.out.addr.next = self.b.addr.val();
            self.out.len.next = self.b.len.val();
            self.out.data.next = self.b.data.val();
            self.out.be.next = self.b.be.val();
        }
        if self.out.ready.val()
            & ((self.pick_b.val() & self.b.valid.val()) | (!self.pick_b.val() & self.a.valid.val()))
        {
            self.locked.d.next = true;
            self.from_b.d.next = self.pick_b.val();
            if (self.pick_b.val() & self.b.eop.val()) | (!self.pick_b.val() & self.a.eop.val()) {
                self.locked.d.next = false;
            }
        }
        if self.reset.val() {
            self.locked.d.next = false;
            self.from_b.d.next = false;
        }
    }
}

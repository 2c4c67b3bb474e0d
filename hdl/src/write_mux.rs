//! Two write-request sources onto one write port (`dma_write`'s interface), a whole request at a
//! time. Source B (event records) wins at a request boundary when both wait; requests are never
//! interleaved, so each source's order is kept.

use rust_hdl::prelude::*;

/// One write-request interface, as a bundle of ports.
#[derive(LogicInterface, Default)]
pub struct WriteRequestSink {
    pub valid: Signal<In, Bit>,
    pub ready: Signal<Out, Bit>,
    pub sop: Signal<In, Bit>,
    pub eop: Signal<In, Bit>,
    pub addr: Signal<In, Bits<64>>,
    pub len: Signal<In, Bits<9>>,
    pub data: Signal<In, Bits<128>>,
    pub be: Signal<In, Bits<16>>,
}

#[derive(LogicBlock, Default)]
pub struct WriteMux {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub a: WriteRequestSink,
    pub b: WriteRequestSink,

    pub wr_valid: Signal<Out, Bit>,
    pub wr_ready: Signal<In, Bit>,
    pub wr_sop: Signal<Out, Bit>,
    pub wr_eop: Signal<Out, Bit>,
    pub wr_addr: Signal<Out, Bits<64>>,
    pub wr_len: Signal<Out, Bits<9>>,
    pub wr_data: Signal<Out, Bits<128>>,
    pub wr_be: Signal<Out, Bits<16>>,

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
        self.wr_valid.next = self.a.valid.val();
        self.wr_sop.next = self.a.sop.val();
        self.wr_eop.next = self.a.eop.val();
        self.wr_addr.next = self.a.addr.val();
        self.wr_len.next = self.a.len.val();
        self.wr_data.next = self.a.data.val();
        self.wr_be.next = self.a.be.val();
        self.a.ready.next = self.wr_ready.val() & !self.pick_b.val();
        self.b.ready.next = self.wr_ready.val() & self.pick_b.val();
        if self.pick_b.val() {
            self.wr_valid.next = self.b.valid.val();
            self.wr_sop.next = self.b.sop.val();
            self.wr_eop.next = self.b.eop.val();
            self.wr_addr.next = self.b.addr.val();
            self.wr_len.next = self.b.len.val();
            self.wr_data.next = self.b.data.val();
            self.wr_be.next = self.b.be.val();
        }
        if self.wr_ready.val()
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

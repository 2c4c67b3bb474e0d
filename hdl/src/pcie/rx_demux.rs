//! The Hard IP's receive TLPs (128-bit Avalon-ST, `rx.ready` with a ready latency of 2) split by
//! kind: completions (Cpl, CplD, CplLk) to the DMA read engine, every other TLP (the host's
//! requests) with its BAR hit to the BAR0 target. A TLP goes whole to one side, decided at its
//! first beat. Eight beats of room, asked for while at most five are held, as the ready latency
//! needs (eight, not four: a beat spends three cycles in the FIFO, so four would halve the
//! rate). The read engine takes completions at once; the target's own receive side is fed only
//! while its `rx.ready` is high (it takes every beat then).

use rust_hdl::prelude::*;

use crate::common::sync_fifo::SyncFifo;
use crate::pcie::tlp_stream::{TlpRxSink, TlpRxSource, TlpSource};

#[derive(LogicBlock, Default)]
pub struct PcieRxDemux {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,

    /// From the Hard IP.
    pub rx: TlpRxSink,
    /// Requests to the BAR0 target (its receive port: `req.ready` is its `rx.ready`).
    pub req: TlpRxSource,
    /// Completions to the read engine.
    pub cpl: TlpSource,

    /// Beats: data, sop, eop, empty, BAR hit (8 bits).
    fifo: SyncFifo<139, 3, 4>,
    /// The TLP in progress goes to the read engine.
    to_cpl: DFF<Bit>,
    beat: Signal<Local, Bits<139>>,
    is_cpl: Signal<Local, Bit>,
    dest_cpl: Signal<Local, Bit>,
    moved: Signal<Local, Bit>,
}

impl Logic for PcieRxDemux {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, to_cpl);
        self.fifo.clock.next = self.clock.val();
        self.fifo.reset.next = self.reset.val();
        self.fifo.in_data.next = (bit_cast::<139, 128>(self.rx.data.val()) << 11)
            | (bit_cast::<139, 1>(self.rx.sop.val().into()) << 10)
            | (bit_cast::<139, 1>(self.rx.eop.val().into()) << 9)
            | (bit_cast::<139, 1>(self.rx.empty.val().into()) << 8)
            | bit_cast::<139, 8>(self.rx.bar.val());
        self.fifo.in_valid.next = self.rx.valid.val();
        self.rx.ready.next = self.fifo.used.val() <= 5;

        self.beat.next = self.fifo.out_data.val();
        // Completion: type 01010 in bits 28:24 of header dword 0.
        self.is_cpl.next = self.beat.val().get_bits::<5>(35) == 0x0A;
        self.dest_cpl.next = self.to_cpl.q.val();
        if self.beat.val().get_bit(10) {
            self.dest_cpl.next = self.is_cpl.val();
        }
        self.req.data.next = self.beat.val().get_bits::<128>(11);
        self.req.sop.next = self.beat.val().get_bit(10);
        self.req.eop.next = self.beat.val().get_bit(9);
        self.req.empty.next = self.beat.val().get_bit(8);
        self.req.bar.next = self.beat.val().get_bits::<8>(0);
        self.cpl.data.next = self.beat.val().get_bits::<128>(11);
        self.cpl.sop.next = self.beat.val().get_bit(10);
        self.cpl.eop.next = self.beat.val().get_bit(9);
        self.cpl.empty.next = self.beat.val().get_bit(8);
        self.req.valid.next =
            self.fifo.out_valid.val() & !self.dest_cpl.val() & self.req.ready.val();
        self.cpl.valid.next = self.fifo.out_valid.val() & self.dest_cpl.val();
        self.moved.next = self.req.valid.val() | (self.cpl.valid.val() & self.cpl.ready.val());
        self.fifo.out_ready.next = self.moved.val();
        if self.moved.val() & self.beat.val().get_bit(10) {
            self.to_cpl.d.next = self.is_cpl.val();
        }
        if self.reset.val() {
            self.to_cpl.d.next = false;
        }
    }
}

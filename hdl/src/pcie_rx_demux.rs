//! The Hard IP's receive TLPs (128-bit Avalon-ST, `rx_ready` with a ready latency of 2) split by
//! kind: completions (Cpl, CplD, CplLk) to the DMA read engine, every other TLP (the host's
//! requests) with its BAR hit to the BAR0 target. A TLP goes whole to one side, decided at its
//! first beat. Four beats of room, asked for while at most one is held, as the ready latency
//! needs. The read engine takes completions at once; the target's own receive side is fed only
//! while its `rx_ready` is high (it takes every beat then).

use rust_hdl::prelude::*;

use crate::sync_fifo::SyncFifo;

#[derive(LogicBlock, Default)]
pub struct PcieRxDemux {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,

    /// From the Hard IP.
    pub rx_data: Signal<In, Bits<128>>,
    pub rx_sop: Signal<In, Bit>,
    pub rx_eop: Signal<In, Bit>,
    pub rx_empty: Signal<In, Bit>,
    pub rx_valid: Signal<In, Bit>,
    pub rx_bar: Signal<In, Bits<8>>,
    pub rx_ready: Signal<Out, Bit>,

    /// Requests to the BAR0 target (its receive port; `req_ready` is its `rx_ready`).
    pub req_data: Signal<Out, Bits<128>>,
    pub req_sop: Signal<Out, Bit>,
    pub req_eop: Signal<Out, Bit>,
    pub req_empty: Signal<Out, Bit>,
    pub req_valid: Signal<Out, Bit>,
    pub req_bar: Signal<Out, Bits<8>>,
    pub req_ready: Signal<In, Bit>,

    /// Completions to the read engine.
    pub cpl_data: Signal<Out, Bits<128>>,
    pub cpl_sop: Signal<Out, Bit>,
    pub cpl_eop: Signal<Out, Bit>,
    pub cpl_empty: Signal<Out, Bit>,
    pub cpl_valid: Signal<Out, Bit>,
    pub cpl_ready: Signal<In, Bit>,

    /// Beats: data, sop, eop, empty, BAR hit (8 bits).
    fifo: SyncFifo<139, 2, 3>,
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
        self.fifo.in_data.next = (bit_cast::<139, 128>(self.rx_data.val()) << 11)
            | (bit_cast::<139, 1>(self.rx_sop.val().into()) << 10)
            | (bit_cast::<139, 1>(self.rx_eop.val().into()) << 9)
            | (bit_cast::<139, 1>(self.rx_empty.val().into()) << 8)
            | bit_cast::<139, 8>(self.rx_bar.val());
        self.fifo.in_valid.next = self.rx_valid.val();
        self.rx_ready.next = self.fifo.used.val() <= 1;

        self.beat.next = self.fifo.out_data.val();
        // Completion: type 01010 in bits 28:24 of header dword 0.
        self.is_cpl.next = self.beat.val().get_bits::<5>(35) == 0x0A;
        self.dest_cpl.next = self.to_cpl.q.val();
        if self.beat.val().get_bit(10) {
            self.dest_cpl.next = self.is_cpl.val();
        }
        self.req_data.next = self.beat.val().get_bits::<128>(11);
        self.req_sop.next = self.beat.val().get_bit(10);
        self.req_eop.next = self.beat.val().get_bit(9);
        self.req_empty.next = self.beat.val().get_bit(8);
        self.req_bar.next = self.beat.val().get_bits::<8>(0);
        self.cpl_data.next = self.beat.val().get_bits::<128>(11);
        self.cpl_sop.next = self.beat.val().get_bit(10);
        self.cpl_eop.next = self.beat.val().get_bit(9);
        self.cpl_empty.next = self.beat.val().get_bit(8);
        self.req_valid.next =
            self.fifo.out_valid.val() & !self.dest_cpl.val() & self.req_ready.val();
        self.cpl_valid.next = self.fifo.out_valid.val() & self.dest_cpl.val();
        self.moved.next = self.req_valid.val() | (self.cpl_valid.val() & self.cpl_ready.val());
        self.fifo.out_ready.next = self.moved.val();
        if self.moved.val() & self.beat.val().get_bit(10) {
            self.to_cpl.d.next = self.is_cpl.val();
        }
        if self.reset.val() {
            self.to_cpl.d.next = false;
        }
    }
}

//! The Hard IP's receive TLPs (Avalon-ST beats of `W` bits, the PCIe variant's) split by kind: completions (Cpl, CplD, CplLk) to
//! the DMA read engine, every other TLP (the host's requests) with its BAR hit to the BAR0 target.
//! A TLP goes whole to one side, decided at its first beat. The read engine takes completions at
//! once; the target's own receive side is fed only while its `rx.ready` is high (it takes every
//! beat then).
//!
//! Ready latency: after `rx.ready` falls, the Hard IP may still send the beats of the next
//! `RX_READY_LATENCY` cycles. Intel's `_hw.tcl` declares 3 for `rx_st` and its user guide 2; the
//! FIFO (two side by side under one handshake: the beats' data, and the rest) is sized for 3,
//! which is safe under either: `2^4` beats of room, asked for while at most
//! `2^4 - 3 - 1` are held, so the beat arriving in the cycle `rx.ready` falls and the three after
//! it always fit. (The room is more than the latency needs: a beat spends three cycles in the
//! FIFO, and a smaller FIFO would stall the Hard IP at full rate.) A beat that still finds the
//! FIFO full is lost: `overflow` pulses (the Hard IP broke its ready latency).

use rust_hdl::prelude::*;

use crate::common::sync_fifo::SyncFifo;
use crate::pcie::tlp_stream::{TlpRxSink, TlpRxSource, TlpSource};

#[derive(LogicBlock)]
pub struct PcieRxDemux<const W: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,

    /// From the Hard IP.
    pub rx: TlpRxSink<W>,
    /// Requests to the BAR0 target (its receive port: `req.ready` is its `rx.ready`).
    pub req: TlpRxSource<W>,
    /// Completions to the read engine.
    pub cpl: TlpSource<W>,

    /// A beat arrived with the FIFO full (never, while the Hard IP keeps its ready latency).
    pub overflow: Signal<Out, Bit>,

    /// The beats' data.
    data_fifo: SyncFifo<W, 4, 5>,
    /// The rest of each beat, written and read with its data: sop, eop, empty, BAR hit (8 bits).
    fifo: SyncFifo<12, 4, 5>,
    /// The most beats held with `rx.ready` high: the depth less the ready latency and the beat of
    /// the cycle itself.
    ready_below: Constant<Bits<5>>,
    /// The TLP in progress goes to the read engine.
    to_cpl: DFF<Bit>,
    beat: Signal<Local, Bits<12>>,
    is_cpl: Signal<Local, Bit>,
    dest_cpl: Signal<Local, Bit>,
    moved: Signal<Local, Bit>,
}

/// The most cycles after `rx.ready` falls in which the Hard IP may still send a beat.
pub const RX_READY_LATENCY: u64 = 3;
const FIFO_DEPTH: u64 = 16;

impl<const W: usize> Default for PcieRxDemux<W> {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            reset: Default::default(),
            rx: Default::default(),
            req: Default::default(),
            cpl: Default::default(),
            overflow: Default::default(),
            data_fifo: Default::default(),
            fifo: Default::default(),
            ready_below: Constant::new((FIFO_DEPTH - RX_READY_LATENCY - 1).into()),
            to_cpl: Default::default(),
            beat: Default::default(),
            is_cpl: Default::default(),
            dest_cpl: Default::default(),
            moved: Default::default(),
        }
    }
}

impl<const W: usize> Logic for PcieRxDemux<W> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, to_cpl);
        self.data_fifo.clock.next = self.clock.val();
        self.data_fifo.reset.next = self.reset.val();
        self.fifo.clock.next = self.clock.val();
        self.fifo.reset.next = self.reset.val();
        self.data_fifo.in_data.next = self.rx.data.val();
        self.fifo.in_data.next = (bit_cast::<12, 1>(self.rx.sop.val().into()) << 11)
            | (bit_cast::<12, 1>(self.rx.eop.val().into()) << 10)
            | (bit_cast::<12, 2>(self.rx.empty.val()) << 8)
            | bit_cast::<12, 8>(self.rx.bar.val());
        self.data_fifo.in_valid.next = self.rx.valid.val();
        self.fifo.in_valid.next = self.rx.valid.val();
        self.rx.ready.next = self.fifo.used.val() <= self.ready_below.val();
        self.overflow.next = self.fifo.overflow.val();

        self.beat.next = self.fifo.out_data.val();
        // Completion: type 01010 in bits 28:24 of header dword 0.
        self.is_cpl.next = self.data_fifo.out_data.val().get_bits::<5>(24) == 0x0A;
        self.dest_cpl.next = self.to_cpl.q.val();
        if self.beat.val().get_bit(11) {
            self.dest_cpl.next = self.is_cpl.val();
        }
        self.req.data.next = self.data_fifo.out_data.val();
        self.req.sop.next = self.beat.val().get_bit(11);
        self.req.eop.next = self.beat.val().get_bit(10);
        self.req.empty.next = self.beat.val().get_bits::<2>(8);
        self.req.bar.next = self.beat.val().get_bits::<8>(0);
        self.cpl.data.next = self.data_fifo.out_data.val();
        self.cpl.sop.next = self.beat.val().get_bit(11);
        self.cpl.eop.next = self.beat.val().get_bit(10);
        self.cpl.empty.next = self.beat.val().get_bits::<2>(8);
        self.req.valid.next =
            self.fifo.out_valid.val() & !self.dest_cpl.val() & self.req.ready.val();
        self.cpl.valid.next = self.fifo.out_valid.val() & self.dest_cpl.val();
        self.moved.next = self.req.valid.val() | (self.cpl.valid.val() & self.cpl.ready.val());
        self.data_fifo.out_ready.next = self.moved.val();
        self.fifo.out_ready.next = self.moved.val();
        if self.moved.val() & self.beat.val().get_bit(11) {
            self.to_cpl.d.next = self.is_cpl.val();
        }
        if self.reset.val() {
            self.to_cpl.d.next = false;
        }
    }
}

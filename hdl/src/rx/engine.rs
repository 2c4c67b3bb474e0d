//! The receive engine of the core domain (250 MHz): from the port arbiter's packets to host memory.
//!
//! ```text
//! packets (meta beat + payload) -> ClopEngine -> DmaWriter (TLB, realign, split) -+-> WriteMux -> slice -> wr
//!                                      |                                             |
//!                                    slice                                           |
//!   transmit engine's records -> slice -> EventMux -> EventQueue (records, interrupt) +
//! register bus -> RxRegs (staging registers, commands, counters); releases -> SyncFifo
//! ```
//!
//! The register map is `nanet_contract::rx`; read data comes three clocks after the address.
//! `now` is the core cycle counter that all timestamps use (the ports receive a synchronised
//! copy).
//!
//! Each event source reaches the multiplexer through a register slice (for timing): without them
//! the queue's `ready`, which waits on the write port, ran back through the multiplexer's choice
//! into the transmit engine's descriptor fetch and the CLOP engine's state in the same cycle. A
//! record reaches the queue a cycle later.
//!
//! This kernel is wiring only (the registers are the child `RxRegs`): Verilator orders a module's
//! combinational block by its independent statements, so a parent block with `if`/`match` logic
//! that reads children's outputs and drives their inputs shows up as a combinational loop
//! (UNOPTFLAT). The lint waives none (see `hdl/lint.vlt`): the DMA writer's requests pass a
//! register slice, and the write mux's port b, the event queue and the event mux compute each
//! ready from registers and inputs only.

use rust_hdl::prelude::*;

use nanet_contract::rx::RELEASE_QUEUE_LOG2;

use crate::common::skid_buffer::SkidBuffer;
use crate::common::sync_fifo::SyncFifo;
use crate::pcie::write_request::WriteRequestSource;
use crate::rx::clop::engine::{ClopCommandSource, ClopEngine};
use crate::rx::dma_writer::{DmaWriteRequester, DmaWriter};
use crate::rx::event_mux::EventMux;
use crate::rx::event_queue::EventQueue;
use crate::rx::regs::RxRegs;
use crate::rx::words::RxWordsSink;
use crate::rx::write_mux::WriteMux;

/// `W`: the core datapath's width (128 or 256 bits), of the words in and the write beats out.
#[derive(LogicBlock, Default)]
pub struct RxEngine<const W: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub now: Signal<Out, Bits<32>>,

    pub inp: RxWordsSink<W>,

    pub reg_addr: Signal<In, Bits<8>>,
    pub reg_wdata: Signal<In, Bits<32>>,
    pub reg_write: Signal<In, Bit>,
    pub reg_rdata: Signal<Out, Bits<32>>,

    pub wr: WriteRequestSource<W>,
    /// A write beat waits in the output slice (an interrupt waits for it, see `card/nic.rs`).
    pub wr_holds: Signal<Out, Bit>,
    pub irq: Signal<Out, Bit>,
    /// The card's MSI request started in the last cycle (`EventQueue::msi_covers`).
    pub msi_covers: Signal<In, Bit>,
    /// Event records of the transmit engine, into the same ring.
    pub tx_ev_valid: Signal<In, Bit>,
    pub tx_ev_lo: Signal<In, Bits<128>>,
    pub tx_ev_hi: Signal<In, Bits<128>>,
    pub tx_ev_ready: Signal<Out, Bit>,

    regs: RxRegs,
    clop: ClopEngine<W>,
    dma: DmaWriter<W>,
    events: EventQueue<W>,
    /// The CLOP engine's and the transmit engine's records (`hi` above `lo`) on their way to the
    /// multiplexer.
    clop_events: SkidBuffer<256>,
    tx_events: SkidBuffer<256>,
    event_mux: EventMux,
    releases: SyncFifo<14, RELEASE_QUEUE_LOG2, { RELEASE_QUEUE_LOG2 + 1 }>,
    mux: WriteMux<W>,
}

impl<const W: usize> Logic for RxEngine<W> {
    #[hdl_gen]
    fn update(&mut self) {
        self.regs.clock.next = self.clock.val();
        self.regs.reset.next = self.reset.val();
        self.clop.clock.next = self.clock.val();
        self.clop.reset.next = self.reset.val();
        self.dma.clock.next = self.clock.val();
        self.dma.reset.next = self.reset.val();
        self.events.clock.next = self.clock.val();
        self.events.reset.next = self.reset.val();
        self.releases.clock.next = self.clock.val();
        self.releases.reset.next = self.reset.val();
        self.mux.clock.next = self.clock.val();
        self.mux.reset.next = self.reset.val();

        // ---- registers ----------------------------------------------------------------------------
        self.regs.reg_addr.next = self.reg_addr.val();
        self.regs.reg_wdata.next = self.reg_wdata.val();
        self.regs.reg_write.next = self.reg_write.val();
        self.reg_rdata.next = self.regs.reg_rdata.val();
        self.now.next = self.regs.now.val();
        self.regs.clop_busy.next = self.clop.busy.val();
        self.regs.eq_tail.next = self.events.tail.val();
        self.regs.irq_armed.next = self.events.armed.val();
        self.regs.committed_bytes.next = self.clop.committed_bytes.val();
        self.regs.release_taken.next = self.releases.out_valid.val() & self.clop.rel_ready.val();
        self.regs.count.next = bit_cast::<13, 1>(self.clop.committed.val().into())
            | (bit_cast::<13, 1>(self.clop.committed.val().into()) << 1)
            | (bit_cast::<13, 1>(self.clop.drop_disabled.val().into()) << 2)
            | (bit_cast::<13, 1>(self.clop.drop_too_big.val().into()) << 3)
            | (bit_cast::<13, 1>(self.clop.drop_no_buffer.val().into()) << 4)
            | (bit_cast::<13, 1>(self.clop.drop_tlb_miss.val().into()) << 5)
            | (bit_cast::<13, 1>(self.clop.drop_bad.val().into()) << 6)
            | (bit_cast::<13, 1>(self.clop.bad_release.val().into()) << 7)
            | (bit_cast::<13, 1>(self.releases.overflow.val().into()) << 8)
            | (bit_cast::<13, 1>(self.events.written.val().into()) << 9)
            | (bit_cast::<13, 1>(self.events.dropped.val().into()) << 10)
            | (bit_cast::<13, 1>(self.events.irq.val().into()) << 11)
            | (bit_cast::<13, 1>(self.clop.cfg_refused.val().into()) << 12);

        // ---- packets into the CLOP engine -----------------------------------------------------
        self.clop.now.next = self.regs.now.val();
        RxWordsSink::<W>::link(&mut self.inp, &mut self.clop.inp);

        // ---- configuration commands and releases (word 8 of the register map) ----------------
        ClopCommandSource::join(&mut self.regs.cfg, &mut self.clop.cfg);
        self.releases.in_valid.next = self.reg_write.val() & (self.reg_addr.val() == 8);
        self.releases.in_data.next = (bit_cast::<14, 6>(self.reg_wdata.val().get_bits::<6>(0))
            << 8)
            | bit_cast::<14, 8>(self.reg_wdata.val().get_bits::<8>(8));
        self.clop.rel_valid.next = self.releases.out_valid.val();
        self.clop.rel_clop.next = self.releases.out_data.val().get_bits::<6>(8);
        self.clop.rel_buf.next = self.releases.out_data.val().get_bits::<8>(0);
        self.releases.out_ready.next = self.clop.rel_ready.val();

        // ---- CLOP engine <-> DMA writer -----------------------------------------------------------
        self.dma.mps_256.next = self.regs.mps_256.val();
        DmaWriteRequester::<W>::join(&mut self.clop.dma, &mut self.dma.req);
        // A write still in the output slice is still to leave: the CLOP engine waits for it too
        // (a disable is acknowledged only once no write of the CLOP can follow).
        self.dma.wr_behind.next = self.mux.holds.val();
        self.dma.tlb_wr.next = self.regs.tlb_wr.val();
        self.dma.tlb_wr_slot.next = self.regs.tlb_wr_slot.val();
        self.dma.tlb_wr_size.next = self.regs.tlb_wr_size.val();
        self.dma.tlb_wr_valid.next = self.regs.tlb_wr_valid.val();
        self.dma.tlb_wr_vpn.next = self.regs.tlb_wr_vpn.val();
        self.dma.tlb_wr_ppn.next = self.regs.tlb_wr_ppn.val();

        // ---- events ----------------------------------------------------------------------------
        self.events.enable.next = self.regs.eq_enable.val();
        self.events.base.next = self.regs.eq_base.val();
        self.events.size_log2.next = self.regs.eq_size_log2.val();
        self.events.head.next = self.regs.eq_head.val();
        self.events.irq_arm.next = self.regs.irq_arm.val();
        self.events.irq_min_interval.next = self.regs.irq_min_interval.val();
        self.events.irq_count.next = self.regs.irq_count.val();
        self.event_mux.clock.next = self.clock.val();
        self.event_mux.reset.next = self.reset.val();
        self.clop_events.clock.next = self.clock.val();
        self.clop_events.reset.next = self.reset.val();
        self.clop_events.in_cancel.next = false;
        self.clop_events.in_valid.next = self.clop.ev_valid.val();
        self.clop_events.in_data.next = (bit_cast::<256, 128>(self.clop.ev_hi.val()) << 128)
            | bit_cast::<256, 128>(self.clop.ev_lo.val());
        self.clop.ev_ready.next = self.clop_events.in_ready.val();
        self.event_mux.a_valid.next = self.clop_events.out_valid.val();
        self.event_mux.a_lo.next = self.clop_events.out_data.val().get_bits::<128>(0);
        self.event_mux.a_hi.next = self.clop_events.out_data.val().get_bits::<128>(128);
        self.clop_events.out_ready.next = self.event_mux.a_ready.val();
        self.tx_events.clock.next = self.clock.val();
        self.tx_events.reset.next = self.reset.val();
        self.tx_events.in_cancel.next = false;
        self.tx_events.in_valid.next = self.tx_ev_valid.val();
        self.tx_events.in_data.next = (bit_cast::<256, 128>(self.tx_ev_hi.val()) << 128)
            | bit_cast::<256, 128>(self.tx_ev_lo.val());
        self.tx_ev_ready.next = self.tx_events.in_ready.val();
        self.event_mux.b_valid.next = self.tx_events.out_valid.val();
        self.event_mux.b_lo.next = self.tx_events.out_data.val().get_bits::<128>(0);
        self.event_mux.b_hi.next = self.tx_events.out_data.val().get_bits::<128>(128);
        self.tx_events.out_ready.next = self.event_mux.b_ready.val();
        self.events.ev_valid.next = self.event_mux.ev_valid.val();
        self.events.ev_lo.next = self.event_mux.ev_lo.val();
        self.events.ev_hi.next = self.event_mux.ev_hi.val();
        self.event_mux.ev_ready.next = self.events.ev_ready.val();
        self.irq.next = self.events.irq.val();
        self.events.msi_covers.next = self.msi_covers.val();
        self.wr_holds.next = self.mux.holds.val();

        // ---- write port: payloads (a) and event records (b) -------------------------------------
        WriteRequestSource::<W>::join(&mut self.dma.wr, &mut self.mux.a);
        self.mux.a_void.next = self.dma.wr_void.val();
        WriteRequestSource::<W>::join(&mut self.events.wr, &mut self.mux.b);
        WriteRequestSource::<W>::link(&mut self.wr, &mut self.mux.out);
    }
}

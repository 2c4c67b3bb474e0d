//! The receive engine of the core domain (250 MHz): from the ports' packets to host memory, with a
//! CLOP engine and a DMA writer per port (`P`, 1 to 4), so the ports' datagrams are written as
//! they arrive, interleaved by write request (at most a TLP each), none waiting for another's
//! whole datagram.
//!
//! ```text
//! port p's packets -> ClopEngine p -> DmaWriter p (TLB, realign, split) -> WriteArbiter -+-> WriteMux -> slice -> wr
//!   (meta + payload)     |    ^                                         (round robin)    |
//!                      slice  ClopRoute, ClopGather (commands and releases by CLOP; counts)          |
//!                        v                                                                |
//!                  EventArbiter -> slice -+-> EventMux -> EventQueue (records, interrupt) --+
//!          transmit engine's records -> slice -+
//! register bus -> RxRegs (staging registers, commands, counters); releases -> SyncFifo -> ClopFanout
//! ```
//!
//! A port's CLOPs (ids `{port, entry}`) live in its engine's store; every engine's TLB holds the
//! same entries (each TLB write goes to all). An engine's event record follows its payload: it
//! waits until its DMA writer's beats have left for the write arbiter and the write mux's slice
//! (`WriteArbiter::behind`), after which nothing of that port can pass it.
//!
//! The register map is `nanet_contract::rx`; read data comes three clocks after the address.
//! `now` is the core cycle counter that all timestamps use (the ports receive a synchronised
//! copy).
//!
//! The CLOP engines' records (after their arbiter) and the transmit engine's reach the
//! multiplexer through a register slice each (for timing): without them the queue's `ready`,
//! which waits on the write port, ran back through the multiplexer's choice into the transmit
//! engine's descriptor fetch and the CLOP engines' state in the same cycle, and the arbiter's
//! choice ran on into the queue. A record reaches the queue a cycle later.
//!
//! This kernel is wiring only (the registers are the child `RxRegs`, the routing `ClopRoute` and `ClopGather`):
//! Verilator orders a module's combinational block by its independent statements, so a parent
//! block with `if`/`match` logic that reads children's outputs and drives their inputs shows up as
//! a combinational loop (UNOPTFLAT). The lint waives none (see `hdl/lint.vlt`): the DMA writers'
//! requests pass a register slice, and the write mux's port b, the event queue and the event mux
//! compute each ready from registers and inputs only.

use array_init::array_init;
use rust_hdl::prelude::*;

use nanet_contract::rx::RELEASE_QUEUE_LOG2;

use crate::common::skid_buffer::SkidBuffer;
use crate::common::sync_fifo::SyncFifo;
use crate::pcie::write_request::WriteRequestSource;
use crate::rx::clop::engine::{ClopEngine, ClopFieldsSource};
use crate::rx::clop::gather::{ClopCountsSource, ClopGather};
use crate::rx::clop::route::ClopRoute;
use crate::rx::dma_writer::{DmaWriteRequester, DmaWriter};
use crate::rx::event_arbiter::EventArbiter;
use crate::rx::event_mux::EventMux;
use crate::rx::event_queue::EventQueue;
use crate::rx::regs::RxRegs;
use crate::rx::words::RxWordsSink;
use crate::rx::write_arbiter::WriteArbiter;
use crate::rx::write_mux::WriteMux;

/// `P`: the ports, each with its CLOP engine and DMA writer; `W`: the core datapath's width (128
/// or 256 bits), of the words in and the write beats out.
#[derive(LogicBlock)]
pub struct RxEngine<const P: usize, const W: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub now: Signal<Out, Bits<32>>,

    /// Each port's packets.
    pub inp: [RxWordsSink<W>; P],

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
    route: ClopRoute<P>,
    gather: ClopGather<P>,
    clop: [ClopEngine<W>; P],
    dma: [DmaWriter<W>; P],
    events: EventQueue<W>,
    /// The CLOP engines' records, one at a time, and on their way to the multiplexer; the
    /// transmit engine's (`hi` above `lo`).
    clop_records: EventArbiter<P>,
    clop_events: SkidBuffer<256>,
    tx_events: SkidBuffer<256>,
    event_mux: EventMux,
    releases: SyncFifo<14, RELEASE_QUEUE_LOG2, { RELEASE_QUEUE_LOG2 + 1 }>,
    payloads: WriteArbiter<P, W>,
    mux: WriteMux<W>,
}

impl<const P: usize, const W: usize> Default for RxEngine<P, W> {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            reset: Default::default(),
            now: Default::default(),
            inp: array_init(|_| Default::default()),
            reg_addr: Default::default(),
            reg_wdata: Default::default(),
            reg_write: Default::default(),
            reg_rdata: Default::default(),
            wr: Default::default(),
            wr_holds: Default::default(),
            irq: Default::default(),
            msi_covers: Default::default(),
            tx_ev_valid: Default::default(),
            tx_ev_lo: Default::default(),
            tx_ev_hi: Default::default(),
            tx_ev_ready: Default::default(),
            regs: Default::default(),
            route: Default::default(),
            gather: Default::default(),
            clop: array_init(|_| Default::default()),
            dma: array_init(|_| Default::default()),
            events: Default::default(),
            clop_records: Default::default(),
            clop_events: Default::default(),
            tx_events: Default::default(),
            event_mux: Default::default(),
            releases: Default::default(),
            payloads: Default::default(),
            mux: Default::default(),
        }
    }
}

impl<const P: usize, const W: usize> Logic for RxEngine<P, W> {
    #[hdl_gen]
    fn update(&mut self) {
        self.regs.clock.next = self.clock.val();
        self.regs.reset.next = self.reset.val();
        self.gather.clock.next = self.clock.val();
        self.gather.reset.next = self.reset.val();
        self.events.clock.next = self.clock.val();
        self.events.reset.next = self.reset.val();
        self.releases.clock.next = self.clock.val();
        self.releases.reset.next = self.reset.val();
        self.payloads.clock.next = self.clock.val();
        self.payloads.reset.next = self.reset.val();
        self.mux.clock.next = self.clock.val();
        self.mux.reset.next = self.reset.val();

        // ---- registers ----------------------------------------------------------------------------
        self.regs.reg_addr.next = self.reg_addr.val();
        self.regs.reg_wdata.next = self.reg_wdata.val();
        self.regs.reg_write.next = self.reg_write.val();
        self.reg_rdata.next = self.regs.reg_rdata.val();
        self.now.next = self.regs.now.val();
        self.regs.clop_busy.next = self.gather.busy.val();
        self.regs.eq_tail.next = self.events.tail.val();
        self.regs.irq_armed.next = self.events.armed.val();
        self.regs.release_taken.next = self.gather.rel_taken.val();
        ClopCountsSource::join(&mut self.gather.counts, &mut self.regs.clop);
        self.regs.clop_refused_now.next = self.gather.refused_now.val();
        self.regs.queue_count.next = bit_cast::<4, 1>(self.releases.overflow.val().into())
            | (bit_cast::<4, 1>(self.events.written.val().into()) << 1)
            | (bit_cast::<4, 1>(self.events.dropped.val().into()) << 2)
            | (bit_cast::<4, 1>(self.events.irq.val().into()) << 3);

        // ---- configuration commands and releases (word 8 of the register map) ----------------
        self.route.cfg_valid.next = self.regs.cfg.valid.val();
        ClopFieldsSource::join(&mut self.regs.cfg.cmd, &mut self.route.cfg);
        self.gather.cfg_clop.next = self.regs.cfg.cmd.clop.val();
        self.regs.cfg.ready.next = self.gather.cfg_ready.val();
        self.releases.in_valid.next = self.reg_write.val() & (self.reg_addr.val() == 8);
        self.releases.in_data.next = (bit_cast::<14, 6>(self.reg_wdata.val().get_bits::<6>(0))
            << 8)
            | bit_cast::<14, 8>(self.reg_wdata.val().get_bits::<8>(8));
        self.route.rel_valid.next = self.releases.out_valid.val();
        self.route.rel_data.next = self.releases.out_data.val();
        self.gather.rel_valid.next = self.releases.out_valid.val();
        self.gather.rel_data.next = self.releases.out_data.val();
        self.releases.out_ready.next = self.gather.rel_ready.val();

        // ---- per port: packets -> CLOP engine -> DMA writer -> write arbiter; records ----------
        for i in 0..P {
            self.clop[i].clock.next = self.clock.val();
            self.clop[i].reset.next = self.reset.val();
            self.dma[i].clock.next = self.clock.val();
            self.dma[i].reset.next = self.reset.val();
            self.clop[i].now.next = self.regs.now.val();

            RxWordsSink::<W>::link(&mut self.inp[i], &mut self.clop[i].inp);

            self.clop[i].cfg.valid.next = self.route.to_engine_valid[i].val();
            ClopFieldsSource::join(&mut self.route.to_engine[i], &mut self.clop[i].cfg.cmd);
            self.gather.engine_cfg_ready[i].next = self.clop[i].cfg.ready.val();
            self.clop[i].rel_valid.next = self.route.release[i].valid.val();
            self.clop[i].rel_clop.next = self.route.release[i].clop.val();
            self.clop[i].rel_buf.next = self.route.release[i].buf.val();
            self.gather.engine_rel_ready[i].next = self.clop[i].rel_ready.val();
            self.gather.engine_busy[i].next = self.clop[i].busy.val();
            self.gather.pulses[i].committed.next = self.clop[i].committed.val();
            self.gather.pulses[i].committed_bytes.next = self.clop[i].committed_bytes.val();
            self.gather.pulses[i].drop_disabled.next = self.clop[i].drop_disabled.val();
            self.gather.pulses[i].drop_too_big.next = self.clop[i].drop_too_big.val();
            self.gather.pulses[i].drop_no_buffer.next = self.clop[i].drop_no_buffer.val();
            self.gather.pulses[i].drop_tlb_miss.next = self.clop[i].drop_tlb_miss.val();
            self.gather.pulses[i].drop_bad.next = self.clop[i].drop_bad.val();
            self.gather.pulses[i].bad_release.next = self.clop[i].bad_release.val();
            self.gather.pulses[i].cfg_refused.next = self.clop[i].cfg_refused.val();

            // CLOP engine <-> DMA writer. A write still in the write mux's slice is still to
            // leave: the CLOP engine waits for it too (a disable is acknowledged only once no
            // write of the CLOP can follow).
            self.dma[i].mps_256.next = self.regs.mps_256.val();
            DmaWriteRequester::<W>::join(&mut self.clop[i].dma, &mut self.dma[i].req);
            self.dma[i].wr_behind.next = self.payloads.behind[i].val();
            self.dma[i].tlb_wr.next = self.regs.tlb_wr.val();
            self.dma[i].tlb_wr_slot.next = self.regs.tlb_wr_slot.val();
            self.dma[i].tlb_wr_size.next = self.regs.tlb_wr_size.val();
            self.dma[i].tlb_wr_valid.next = self.regs.tlb_wr_valid.val();
            self.dma[i].tlb_wr_vpn.next = self.regs.tlb_wr_vpn.val();
            self.dma[i].tlb_wr_ppn.next = self.regs.tlb_wr_ppn.val();
            WriteRequestSource::<W>::join(&mut self.dma[i].wr, &mut self.payloads.inp[i]);
            self.payloads.inp_void[i].next = self.dma[i].wr_void.val();

            self.clop_records.inp[i].valid.next = self.clop[i].ev_valid.val();
            self.clop_records.inp[i].lo.next = self.clop[i].ev_lo.val();
            self.clop_records.inp[i].hi.next = self.clop[i].ev_hi.val();
            self.clop[i].ev_ready.next = self.clop_records.inp[i].ready.val();
        }

        // ---- events ----------------------------------------------------------------------------
        self.events.enable.next = self.regs.eq_enable.val();
        self.events.base.next = self.regs.eq_base.val();
        self.events.size_log2.next = self.regs.eq_size_log2.val();
        self.events.head.next = self.regs.eq_head.val();
        self.events.irq_arm.next = self.regs.irq_arm.val();
        self.events.irq_min_interval.next = self.regs.irq_min_interval.val();
        self.events.irq_count.next = self.regs.irq_count.val();
        self.clop_records.clock.next = self.clock.val();
        self.clop_records.reset.next = self.reset.val();
        self.event_mux.clock.next = self.clock.val();
        self.event_mux.reset.next = self.reset.val();
        self.clop_events.clock.next = self.clock.val();
        self.clop_events.reset.next = self.reset.val();
        self.clop_events.in_cancel.next = false;
        self.clop_events.in_valid.next = self.clop_records.out.valid.val();
        self.clop_events.in_data.next = (bit_cast::<256, 128>(self.clop_records.out.hi.val())
            << 128)
            | bit_cast::<256, 128>(self.clop_records.out.lo.val());
        self.clop_records.out.ready.next = self.clop_events.in_ready.val();
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
        WriteRequestSource::<W>::join(&mut self.payloads.out, &mut self.mux.a);
        self.mux.a_void.next = self.payloads.out_void.val();
        self.payloads.down_moved.next = self.mux.moved.val();
        self.payloads.down_holds.next = self.mux.holds.val();
        WriteRequestSource::<W>::join(&mut self.events.wr, &mut self.mux.b);
        WriteRequestSource::<W>::link(&mut self.wr, &mut self.mux.out);
    }
}

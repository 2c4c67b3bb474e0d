//! The NIC top: `P` 10GbE MAC clients (1 to 4, a generator parameter: `Nic<4, 128>` is the
//! DE5-net's Gen2 card) on one side, the Stratix V Hard IP for PCIe's Avalon-ST TLP interface and
//! its MSI request on the other. `W` is the core datapath's width, the Hard IP's interface width
//! of the PCIe variant (`nanet_contract::pcie`): 128 bits for Gen2 x8, 256 for Gen3 x8, both at
//! 250 MHz; every block of the core domain runs at it.
//!
//! ```text
//! MAC RX/TX x4 <-> RxPath (ports, Multi-Stream, FIFOs, arbiter, CLOPs, TLB, events) --wr--> PcieWriteTlp -----+
//!                    ^ port bus   ^ engine bus     ^ tx words, events                                         |
//!                    RegBridge <- Bar0Regs <------ TxRings  <-- reads --> PcieRead --MRd--> TlpMerge <--------+
//!                                   ^ reg bus                             ^ completions        |
//! rx TLPs --> PcieRxDemux --requests--> PcieTarget --completions--> PcieTxArbiter <------------+--> tx TLPs
//! irq (event queue) --> MSI request, once every write before it has gone to the Hard IP
//! ```
//!
//! Each TLP class passes a flow-control credit gate (`pcie/credit_gate.rs`) on its way to the
//! merge and the arbiter: completions (target), non-posted (memory reads), posted (memory
//! writes), so a class short of the link partner's credits waits without holding up the others.
//!
//! A completion never passes a memory write issued before it (`pcie/tx_arbiter.rs`), so a register
//! read that says "done" arrives after the writes it vouches for.
//!
//! The host reaches every register only through BAR0 TLPs (`card/bar0_regs.rs`, map in
//! `nanet_contract::bar0`). An interrupt is requested only when the TLP writer is idle, so the
//! MSI (which the Hard IP sends) follows the event record's memory write on the link. The kernel is
//! wiring only.

use rust_hdl::prelude::*;

use crate::card::bar0_regs::Bar0Regs;
use crate::card::reg_bridge::RegBridge;
use crate::card::rx_path::RxPath;
use crate::common::stream::{AvalonStSink, AvalonStSource};
use crate::pcie::config_sampler::PcieConfigSampler;
use crate::pcie::credit_gate::PcieCreditGate;
use crate::pcie::read::PcieRead;
use crate::pcie::rx_demux::PcieRxDemux;
use crate::pcie::target::PcieTarget;
use crate::pcie::tlp_merge::TlpMerge;
use crate::pcie::tlp_stream::{TlpRxSink, TlpRxSource, TlpSkid, TlpSource};
use crate::pcie::tx_arbiter::PcieTxArbiter;
use crate::pcie::write_tlp::PcieWriteTlp;
use crate::tx::rings::{TxEntrySource, TxRings};

#[derive(LogicBlock)]
pub struct Nic<const P: usize, const W: usize> {
    pub net_clock: Signal<In, Clock>,
    pub net_reset: Signal<In, Bit>,
    pub core_clock: Signal<In, Clock>,
    pub core_reset: Signal<In, Bit>,
    pub mac_rx: [AvalonStSink; P],
    pub mac_tx: [AvalonStSource; P],

    /// The Hard IP's configuration bus (`tl_cfg_add`, `tl_cfg_ctl`): the card's bus/device
    /// number comes from it (`pcie/config_sampler.rs`).
    pub pcie_cfg_add: Signal<In, Bits<4>>,
    pub pcie_cfg_ctl: Signal<In, Bits<32>>,
    /// The Hard IP's receive TLPs (ready latency 3) with their BAR hit.
    pub pcie_rx: TlpRxSink<W>,
    /// The Hard IP's transmit TLPs (`ready` with a latency of 2).
    pub pcie_tx: TlpSource<W>,
    /// The Hard IP's transmit credit interface (`tx_cons_cred_sel` low): the link partner's
    /// header (8-bit) and data (12-bit, 16-byte units) credit limits for posted, non-posted and
    /// completion TLPs (`tx_cred_hdrfcp`, `tx_cred_datafcp`, `..fcnp`, `..fccp`), the classes
    /// with infinite credits (`tx_cred_fcinfinite`) and the credits the Hard IP consumed itself
    /// (`tx_cred_fchipcons`), both with bit 5 posted headers .. bit 0 completion data.
    pub pcie_cred_p_hdr: Signal<In, Bits<8>>,
    pub pcie_cred_p_data: Signal<In, Bits<12>>,
    pub pcie_cred_np_hdr: Signal<In, Bits<8>>,
    pub pcie_cred_np_data: Signal<In, Bits<12>>,
    pub pcie_cred_cpl_hdr: Signal<In, Bits<8>>,
    pub pcie_cred_cpl_data: Signal<In, Bits<12>>,
    pub pcie_cred_infinite: Signal<In, Bits<6>>,
    pub pcie_cred_hip_cons: Signal<In, Bits<6>>,
    /// MSI request, held until the Hard IP acknowledges it.
    pub msi_req: Signal<Out, Bit>,
    pub msi_ack: Signal<In, Bit>,
    /// The core domain's cycle counter (the event records' timestamps).
    pub now: Signal<Out, Bits<32>>,

    rx: RxPath<P, W>,
    id_sampler: PcieConfigSampler,
    demux: PcieRxDemux<W>,
    target: PcieTarget<W>,
    reader: PcieRead<W>,
    tx_rings: TxRings<P, W>,
    merge: TlpMerge<W>,
    /// Credit gates of completions, non-posted and posted TLPs.
    gate_cpl: PcieCreditGate<W>,
    gate_np: PcieCreditGate<W>,
    gate_p: PcieCreditGate<W>,
    regs: Bar0Regs<P, W>,
    bridge: RegBridge,
    writer: PcieWriteTlp<W>,
    /// A register between the writer's TLP output and the posted gate: the gate computes its
    /// credit need from the beat it is offered, which would otherwise chain onto the writer's
    /// output logic in one cycle.
    writer_slice: TlpSkid<W>,
    arbiter: PcieTxArbiter<W>,
    /// An interrupt waits for the writer to be idle, then for the Hard IP's acknowledge.
    msi_pending: DFF<Bit>,
    msi_out: DFF<Bit>,
    /// The MSI request started in the last cycle (the receive engine's records before it are
    /// announced by it).
    msi_start: DFF<Bit>,
    /// The MSI was acknowledged one and two cycles ago: the posted gate still holds new writes
    /// until the Hard IP's consumption pulse for it (the cycle after the acknowledge) is counted.
    msi_acked_1: DFF<Bit>,
    msi_acked_2: DFF<Bit>,
}

impl<const P: usize, const W: usize> Default for Nic<P, W> {
    fn default() -> Self {
        Self {
            net_clock: Default::default(),
            net_reset: Default::default(),
            core_clock: Default::default(),
            core_reset: Default::default(),
            mac_rx: array_init::array_init(|_| Default::default()),
            mac_tx: array_init::array_init(|_| Default::default()),
            pcie_cfg_add: Default::default(),
            pcie_cfg_ctl: Default::default(),
            pcie_rx: Default::default(),
            pcie_tx: Default::default(),
            pcie_cred_p_hdr: Default::default(),
            pcie_cred_p_data: Default::default(),
            pcie_cred_np_hdr: Default::default(),
            pcie_cred_np_data: Default::default(),
            pcie_cred_cpl_hdr: Default::default(),
            pcie_cred_cpl_data: Default::default(),
            pcie_cred_infinite: Default::default(),
            pcie_cred_hip_cons: Default::default(),
            msi_req: Default::default(),
            msi_ack: Default::default(),
            now: Default::default(),
            rx: Default::default(),
            id_sampler: Default::default(),
            demux: Default::default(),
            target: Default::default(),
            reader: Default::default(),
            tx_rings: Default::default(),
            merge: Default::default(),
            gate_cpl: Default::default(),
            gate_np: Default::default(),
            gate_p: Default::default(),
            regs: Default::default(),
            bridge: Default::default(),
            writer: Default::default(),
            writer_slice: Default::default(),
            arbiter: Default::default(),
            msi_pending: Default::default(),
            msi_start: Default::default(),
            msi_out: Default::default(),
            msi_acked_1: Default::default(),
            msi_acked_2: Default::default(),
        }
    }
}

impl<const P: usize, const W: usize> Logic for Nic<P, W> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            core_clock,
            msi_pending,
            msi_start,
            msi_out,
            msi_acked_1,
            msi_acked_2
        );
        self.rx.net_clock.next = self.net_clock.val();
        self.rx.net_reset.next = self.net_reset.val();
        self.rx.core_clock.next = self.core_clock.val();
        self.rx.core_reset.next = self.core_reset.val();
        for i in 0..P {
            AvalonStSink::link(&mut self.mac_rx[i], &mut self.rx.mac_rx[i]);
            AvalonStSource::link(&mut self.mac_tx[i], &mut self.rx.mac_tx[i]);
        }
        self.now.next = self.rx.now.val();

        // ---- the card's ID, from the configuration bus -----------------------------------------
        self.id_sampler.clock.next = self.core_clock.val();
        self.id_sampler.reset.next = self.core_reset.val();
        self.id_sampler.cfg_add.next = self.pcie_cfg_add.val();
        self.id_sampler.cfg_ctl.next = self.pcie_cfg_ctl.val();

        // ---- BAR0: target -> register file -> engine bus / bridge -> port bus ---------------
        self.target.clock.next = self.core_clock.val();
        self.target.reset.next = self.core_reset.val();
        self.target.completer_id.next = self.id_sampler.pcie_id.val();
        self.demux.clock.next = self.core_clock.val();
        self.demux.reset.next = self.core_reset.val();
        TlpRxSink::<W>::link(&mut self.pcie_rx, &mut self.demux.rx);
        TlpRxSource::<W>::join(&mut self.demux.req, &mut self.target.rx);

        self.regs.clock.next = self.core_clock.val();
        self.regs.reset.next = self.core_reset.val();
        self.regs.addr.next = self.target.reg_addr.val();
        self.regs.wdata.next = self.target.reg_wdata.val();
        self.regs.write.next = self.target.reg_write.val();
        self.regs.read.next = self.target.reg_read.val();
        self.target.reg_rdata.next = self.regs.rdata.val();
        self.target.reg_rvalid.next = self.regs.rvalid.val();
        self.target.reg_busy.next = self.regs.busy.val();
        self.regs.pcie_unsupported.next = self.target.unsupported.val();
        self.regs.pcie_dropped.next = self.target.dropped.val();
        self.regs.rx_overflow.next = self.demux.overflow.val();
        self.regs.msi_sent.next = self.msi_out.q.val() & self.msi_ack.val();

        self.rx.reg_addr.next = self.regs.rx_addr.val();
        self.rx.reg_wdata.next = self.regs.rx_wdata.val();
        self.rx.reg_write.next = self.regs.rx_write.val();
        self.regs.rx_rdata.next = self.rx.reg_rdata.val();

        self.bridge.clock.next = self.core_clock.val();
        self.bridge.reset.next = self.core_reset.val();
        self.bridge.net_clock.next = self.net_clock.val();
        self.bridge.net_reset.next = self.net_reset.val();
        self.bridge.start.next = self.regs.port_start.val();
        self.bridge.write.next = self.regs.port_write.val();
        self.bridge.port.next = self.regs.port_sel.val();
        self.bridge.word.next = self.regs.port_word.val();
        self.bridge.wdata.next = self.regs.port_wdata.val();
        self.regs.port_busy.next = self.bridge.busy.val();
        self.regs.port_done.next = self.bridge.done.val();
        self.regs.port_rdata.next = self.bridge.rdata.val();
        self.rx.port_reg_port.next = self.bridge.bus_port.val();
        self.rx.port_reg_addr.next = self.bridge.bus_addr.val();
        self.rx.port_reg_wdata.next = self.bridge.bus_wdata.val();
        self.rx.port_reg_write.next = self.bridge.bus_write.val();
        self.bridge.bus_rdata.next = self.rx.port_reg_rdata.val();

        // ---- transmit rings: descriptors and payloads by DMA reads -----------------------------
        self.tx_rings.clock.next = self.core_clock.val();
        self.tx_rings.reset.next = self.core_reset.val();
        self.tx_rings.now.next = self.rx.now.val();
        self.tx_rings.reg_addr.next = self.regs.tx_addr.val();
        self.tx_rings.reg_wdata.next = self.regs.tx_wdata.val();
        self.tx_rings.reg_write.next = self.regs.tx_write.val();
        self.regs.tx_rdata.next = self.tx_rings.reg_rdata.val();
        self.reader.clock.next = self.core_clock.val();
        self.reader.reset.next = self.core_reset.val();
        self.reader.requester_id.next = self.id_sampler.pcie_id.val();
        self.reader.req_valid.next = self.tx_rings.rq_valid.val();
        self.tx_rings.rq_ready.next = self.reader.req_ready.val();
        self.reader.req_addr.next = self.tx_rings.rq_addr.val();
        self.reader.req_len.next = self.tx_rings.rq_len.val();
        self.tx_rings.rd_data.next = self.reader.rd_data.val();
        self.tx_rings.rd_last.next = self.reader.rd_last.val();
        self.tx_rings.rd_error.next = self.reader.rd_error.val();
        self.tx_rings.rd_valid.next = self.reader.rd_valid.val();
        self.reader.rd_ready.next = self.tx_rings.rd_ready.val();
        TlpSource::<W>::join(&mut self.demux.cpl, &mut self.reader.cpl);
        for p in 0..P {
            TxEntrySource::<W>::join(&mut self.tx_rings.fifo[p], &mut self.rx.tx[p]);
        }
        self.rx.tx_ev_valid.next = self.tx_rings.ev_valid.val();
        self.rx.tx_ev_lo.next = self.tx_rings.ev_lo.val();
        self.rx.tx_ev_hi.next = self.tx_rings.ev_hi.val();
        self.tx_rings.ev_ready.next = self.rx.tx_ev_ready.val();

        // ---- DMA writes and completions onto the Hard IP's transmit port --------------------
        self.writer.clock.next = self.core_clock.val();
        self.writer.reset.next = self.core_reset.val();
        self.writer.requester_id.next = self.id_sampler.pcie_id.val();
        crate::pcie::write_request::WriteRequestSource::<W>::join(
            &mut self.rx.wr,
            &mut self.writer.wr,
        );
        self.arbiter.clock.next = self.core_clock.val();
        self.arbiter.reset.next = self.core_reset.val();
        // A memory write enters the TLP layer: completions after it wait for it (PCIe ordering).
        self.arbiter.posted_issued.next =
            self.rx.wr.valid.val() & self.writer.wr.ready.val() & self.rx.wr.sop.val();
        self.gate_cpl.clock.next = self.core_clock.val();
        self.gate_cpl.reset.next = self.core_reset.val();
        self.gate_cpl.hdr_limit.next = self.pcie_cred_cpl_hdr.val();
        self.gate_cpl.data_limit.next = self.pcie_cred_cpl_data.val();
        self.gate_cpl.hdr_infinite.next = self.pcie_cred_infinite.val().get_bit(1);
        self.gate_cpl.data_infinite.next = self.pcie_cred_infinite.val().get_bit(0);
        self.gate_cpl.hip_hdr.next = self.pcie_cred_hip_cons.val().get_bit(1);
        self.gate_cpl.hip_data.next = self.pcie_cred_hip_cons.val().get_bit(0);
        self.gate_np.clock.next = self.core_clock.val();
        self.gate_np.reset.next = self.core_reset.val();
        self.gate_np.hdr_limit.next = self.pcie_cred_np_hdr.val();
        self.gate_np.data_limit.next = self.pcie_cred_np_data.val();
        self.gate_np.hdr_infinite.next = self.pcie_cred_infinite.val().get_bit(3);
        self.gate_np.data_infinite.next = self.pcie_cred_infinite.val().get_bit(2);
        self.gate_np.hip_hdr.next = self.pcie_cred_hip_cons.val().get_bit(3);
        self.gate_np.hip_data.next = self.pcie_cred_hip_cons.val().get_bit(2);
        self.gate_p.clock.next = self.core_clock.val();
        self.gate_p.reset.next = self.core_reset.val();
        self.gate_p.hdr_limit.next = self.pcie_cred_p_hdr.val();
        self.gate_p.data_limit.next = self.pcie_cred_p_data.val();
        self.gate_p.hdr_infinite.next = self.pcie_cred_infinite.val().get_bit(5);
        self.gate_p.data_infinite.next = self.pcie_cred_infinite.val().get_bit(4);
        self.gate_p.hip_hdr.next = self.pcie_cred_hip_cons.val().get_bit(5);
        self.gate_p.hip_data.next = self.pcie_cred_hip_cons.val().get_bit(4);
        // From the MSI request until its credits are counted no posted TLP starts, so the Hard
        // IP finds the credits the MSI needs and the writes after it find the MSI counted.
        self.gate_p.hold.next =
            self.msi_out.q.val() | self.msi_acked_1.q.val() | self.msi_acked_2.q.val();
        self.gate_np.hold.next = false;
        self.gate_cpl.hold.next = false;
        self.regs.credit_wait.next =
            self.gate_cpl.blocked.val() | self.gate_np.blocked.val() | self.gate_p.blocked.val();
        self.regs.cpl_unexpected.next = self.reader.unexpected.val();
        self.regs.cpl_timed_out.next = self.reader.timed_out.val();
        self.regs.read_tags_full.next = self.reader.tags_full.val();
        TlpSource::<W>::join(&mut self.target.tx, &mut self.gate_cpl.inp);
        TlpSource::<W>::join(&mut self.gate_cpl.out, &mut self.arbiter.cpl);
        // Memory reads and memory writes share the arbiter's second input.
        self.merge.clock.next = self.core_clock.val();
        self.merge.reset.next = self.core_reset.val();
        TlpSource::<W>::join(&mut self.reader.tx, &mut self.gate_np.inp);
        TlpSource::<W>::join(&mut self.gate_np.out, &mut self.merge.a);
        self.writer_slice.clock.next = self.core_clock.val();
        self.writer_slice.reset.next = self.core_reset.val();
        self.writer_slice.side_in.next = 0.into();
        TlpSource::<W>::join(&mut self.writer.tx, &mut self.writer_slice.inp);
        TlpSource::<W>::join(&mut self.writer_slice.out, &mut self.gate_p.inp);
        TlpSource::<W>::join(&mut self.gate_p.out, &mut self.merge.b);
        TlpSource::<W>::join(&mut self.merge.out, &mut self.arbiter.wr);
        TlpSource::<W>::link(&mut self.pcie_tx, &mut self.arbiter.tx);

        // ---- interrupt ----------------------------------------------------------------------
        self.msi_start.d.next = false;
        if self.rx.irq.val() {
            self.msi_pending.d.next = true;
        }
        // Every write before the interrupt has reached the Hard IP: none waits in the receive
        // engine's output slice, the writer is idle, and no beat of it waits in the slice behind
        // it (empty when it offers nothing), the posted gate's registers or the arbiter's output
        // register.
        if self.msi_pending.q.val()
            & !self.msi_out.q.val()
            & !self.rx.wr_holds.val()
            & self.writer.idle.val()
            & !self.writer_slice.out.valid.val()
            & !self.gate_p.occupied.val()
            & !self.pcie_tx.valid.val()
        {
            // An interrupt of this very cycle is merged into this MSI: it announces records done
            // before this cycle, which leave ahead of it (see `EventQueue::msi_covers`).
            self.msi_out.d.next = true;
            self.msi_start.d.next = true;
            self.msi_pending.d.next = false;
        }
        self.rx.msi_covers.next = self.msi_start.q.val();
        self.msi_acked_1.d.next = self.msi_out.q.val() & self.msi_ack.val();
        self.msi_acked_2.d.next = self.msi_acked_1.q.val();
        if self.msi_out.q.val() & self.msi_ack.val() {
            self.msi_out.d.next = false;
        }
        self.msi_req.next = self.msi_out.q.val();
        if self.core_reset.val() {
            self.msi_pending.d.next = false;
            self.msi_out.d.next = false;
            self.msi_start.d.next = false;
            self.msi_acked_1.d.next = false;
            self.msi_acked_2.d.next = false;
        }
    }
}

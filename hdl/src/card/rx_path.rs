//! The card's receive path, `P` 10GbE ports (1 to 4) into host memory:
//!
//! ```text
//! network domain (156.25 MHz), per port:            core domain (250 MHz):
//! MAC RX -> RxPort (offload core, Multi-Stream,  -> AsyncFifo -> slice -> RxEngine -> wr (DMA)
//!           packer; MAC TX for ARP/ICMP replies)    (512 words)           (a CLOP engine  -> irq
//! core cycle counter -> TimeSync -> every port's timestamps               per port, TLB,
//!                                                                         events, registers)
//! MAC TX <- RxPort (UDP TX: generator or host) <- AsyncFifo (256 x W) <- tx (the transmit engine)
//! ```
//!
//! `W`: the core datapath's width, 128 or 256 bits (the receive FIFOs' words, the engine, the
//! write requests, the transmit FIFOs' entries).
//!
//! All ports share one network clock (the DE5-net's 10G MACs run from one 156.25 MHz clock).
//! Two register buses: the network-domain one reaches port `port_reg_port`'s registers
//! (`nanet_contract::rx::port`), the core-domain one the receive engine's (`nanet_contract::rx`).
//! The kernel is wiring only (see `rx_engine`).

use array_init::array_init;
use rust_hdl::prelude::*;

use crate::common::async_fifo::AsyncFifo;
use crate::common::stream::{AvalonStSink, AvalonStSource};
use crate::common::time_sync::TimeSync;
use crate::pcie::write_request::WriteRequestSource;
use crate::port::rx_port::RxPort;
use crate::rx::engine::RxEngine;
use crate::rx::words::{RxWordsSkid, RxWordsSource};
use crate::tx::rings::TxEntrySink;

#[derive(LogicBlock)]
pub struct RxPath<const P: usize, const W: usize> {
    pub net_clock: Signal<In, Clock>,
    pub net_reset: Signal<In, Bit>,
    pub core_clock: Signal<In, Clock>,
    pub core_reset: Signal<In, Bit>,
    pub mac_rx: [AvalonStSink; P],
    pub mac_tx: [AvalonStSource; P],

    pub port_reg_port: Signal<In, Bits<2>>,
    pub port_reg_addr: Signal<In, Bits<7>>,
    pub port_reg_wdata: Signal<In, Bits<32>>,
    pub port_reg_write: Signal<In, Bit>,
    pub port_reg_rdata: Signal<Out, Bits<32>>,

    pub reg_addr: Signal<In, Bits<8>>,
    pub reg_wdata: Signal<In, Bits<32>>,
    pub reg_write: Signal<In, Bit>,
    pub reg_rdata: Signal<Out, Bits<32>>,

    pub wr: WriteRequestSource<W>,
    /// A write beat waits in the receive engine's output slice.
    pub wr_holds: Signal<Out, Bit>,
    pub irq: Signal<Out, Bit>,
    /// The card's MSI request started in the last cycle (`EventQueue::msi_covers`).
    pub msi_covers: Signal<In, Bit>,
    pub now: Signal<Out, Bits<32>>,

    /// Host datagrams from transmit ring `p` (core domain) into port `p`'s FIFO.
    pub tx: [TxEntrySink<W>; P],
    /// The transmit rings' event records, into the event queue.
    pub tx_ev_valid: Signal<In, Bit>,
    pub tx_ev_lo: Signal<In, Bits<128>>,
    pub tx_ev_hi: Signal<In, Bits<128>>,
    pub tx_ev_ready: Signal<Out, Bit>,

    ports: [RxPort<W>; P],
    /// Each port's datagram words into the core domain: 512 words and their flags.
    fifos: [AsyncFifo<W, 3, 9, 10>; P],
    /// Host datagrams into each port (core to network domain): 256 entries of `W` bits (the tag
    /// rides as the FIFO's side data), more than two datagrams.
    tx_fifos: [AsyncFifo<W, 8, 8, 9>; P],
    /// Datagrams whose last entry went into each port's transmit FIFO, and the count as the
    /// port's domain sees it: the port starts a datagram only once it is whole in the FIFO, so
    /// its frame never waits for a payload read in the middle (a MAC would end it there).
    tx_whole: [DFF<Bits<32>>; P],
    tx_whole_sync: [TimeSync; P],
    timebase: TimeSync,
    /// A register slice between each port's FIFO and its CLOP engine's decisions (the FIFO's
    /// flags `{meta, last, error}` and the port's number become the words' fields).
    words_skid: [RxWordsSkid<W>; P],
    engine: RxEngine<P, W>,
    /// Each port's number, for the words of its engine.
    port_ids: [Constant<Bits<2>>; P],
}

impl<const P: usize, const W: usize> Default for RxPath<P, W> {
    fn default() -> Self {
        Self {
            net_clock: Default::default(),
            net_reset: Default::default(),
            core_clock: Default::default(),
            core_reset: Default::default(),
            mac_rx: array_init(|_| Default::default()),
            mac_tx: array_init(|_| Default::default()),
            port_reg_port: Default::default(),
            port_reg_addr: Default::default(),
            port_reg_wdata: Default::default(),
            port_reg_write: Default::default(),
            port_reg_rdata: Default::default(),
            reg_addr: Default::default(),
            reg_wdata: Default::default(),
            reg_write: Default::default(),
            reg_rdata: Default::default(),
            wr: Default::default(),
            wr_holds: Default::default(),
            irq: Default::default(),
            msi_covers: Default::default(),
            now: Default::default(),
            tx: array_init(|_| Default::default()),
            tx_ev_valid: Default::default(),
            tx_ev_lo: Default::default(),
            tx_ev_hi: Default::default(),
            tx_ev_ready: Default::default(),
            ports: array_init(|_| Default::default()),
            fifos: array_init(|_| Default::default()),
            tx_fifos: array_init(|_| Default::default()),
            tx_whole: array_init(|_| Default::default()),
            tx_whole_sync: array_init(|_| Default::default()),
            timebase: Default::default(),
            words_skid: array_init(|_| Default::default()),
            engine: Default::default(),
            port_ids: array_init(|i| Constant::new((i as u64).into())),
        }
    }
}

impl<const P: usize, const W: usize> Logic for RxPath<P, W> {
    #[hdl_gen]
    fn update(&mut self) {
        self.timebase.src_clock.next = self.core_clock.val();
        self.timebase.dst_clock.next = self.net_clock.val();
        self.timebase.src_now.next = self.engine.now.val();
        self.now.next = self.engine.now.val();
        self.engine.clock.next = self.core_clock.val();
        self.engine.reset.next = self.core_reset.val();

        for i in 0..P {
            self.ports[i].clock.next = self.net_clock.val();
            self.ports[i].reset.next = self.net_reset.val();
            self.ports[i].now.next = self.timebase.dst_now.val();
            self.ports[i].mac_rx.data.next = self.mac_rx[i].data.val();
            self.ports[i].mac_rx.valid.next = self.mac_rx[i].valid.val();
            self.ports[i].mac_rx.startofpacket.next = self.mac_rx[i].startofpacket.val();
            self.ports[i].mac_rx.endofpacket.next = self.mac_rx[i].endofpacket.val();
            self.ports[i].mac_rx.empty.next = self.mac_rx[i].empty.val();
            self.ports[i].mac_rx.error.next = self.mac_rx[i].error.val();
            self.mac_rx[i].ready.next = self.ports[i].mac_rx.ready.val();
            self.mac_tx[i].data.next = self.ports[i].mac_tx.data.val();
            self.mac_tx[i].valid.next = self.ports[i].mac_tx.valid.val();
            self.mac_tx[i].startofpacket.next = self.ports[i].mac_tx.startofpacket.val();
            self.mac_tx[i].endofpacket.next = self.ports[i].mac_tx.endofpacket.val();
            self.mac_tx[i].empty.next = self.ports[i].mac_tx.empty.val();
            self.mac_tx[i].error.next = self.ports[i].mac_tx.error.val();
            self.ports[i].mac_tx.ready.next = self.mac_tx[i].ready.val();

            self.ports[i].reg_addr.next = self.port_reg_addr.val();
            self.ports[i].reg_wdata.next = self.port_reg_wdata.val();
            self.ports[i].reg_write.next = self.port_reg_write.val();
            self.ports[i].reg_sel.next = self.port_reg_port.val().index() == i;

            self.fifos[i].write_clock.next = self.net_clock.val();
            self.fifos[i].write_reset.next = self.net_reset.val();
            self.fifos[i].read_clock.next = self.core_clock.val();
            self.fifos[i].read_reset.next = self.core_reset.val();
            self.fifos[i].in_data.next = self.ports[i].fifo_data.val();
            self.fifos[i].in_meta.next = self.ports[i].fifo_flags.val();
            self.fifos[i].in_valid.next = self.ports[i].fifo_valid.val();
            self.ports[i].fifo_used.next = self.fifos[i].in_used.val();
            self.tx_fifos[i].write_clock.next = self.core_clock.val();
            self.tx_fifos[i].write_reset.next = self.core_reset.val();
            self.tx_fifos[i].read_clock.next = self.net_clock.val();
            self.tx_fifos[i].read_reset.next = self.net_reset.val();
            self.tx_fifos[i].in_data.next = self.tx[i].data.val();
            self.tx_fifos[i].in_meta.next = self.tx[i].tag.val();
            self.tx_fifos[i].in_valid.next = self.tx[i].valid.val();
            self.tx[i].used.next = self.tx_fifos[i].in_used.val();
            self.tx_whole[i].clock.next = self.core_clock.val();
            self.tx_whole[i].d.next = self.tx_whole[i].q.val();
            if self.tx[i].valid.val() & (self.tx[i].tag.val().get_bits::<2>(0) == 3) {
                self.tx_whole[i].d.next = self.tx_whole[i].q.val() + 1;
            }
            if self.core_reset.val() {
                self.tx_whole[i].d.next = 0.into();
            }
            self.tx_whole_sync[i].src_clock.next = self.core_clock.val();
            self.tx_whole_sync[i].dst_clock.next = self.net_clock.val();
            self.tx_whole_sync[i].src_now.next = self.tx_whole[i].q.val();
            self.ports[i].txq_whole.next = self.tx_whole_sync[i].dst_now.val();
            self.ports[i].txq_data.next = self.tx_fifos[i].out_data.val();
            self.ports[i].txq_tag.next = self.tx_fifos[i].out_meta.val();
            self.ports[i].txq_valid.next = self.tx_fifos[i].out_valid.val();
            self.tx_fifos[i].out_ready.next = self.ports[i].txq_ready.val();
            self.words_skid[i].clock.next = self.core_clock.val();
            self.words_skid[i].reset.next = self.core_reset.val();
            self.words_skid[i].inp.data.next = self.fifos[i].out_data.val();
            self.words_skid[i].inp.meta.next = self.fifos[i].out_meta.val().get_bit(2);
            self.words_skid[i].inp.last.next = self.fifos[i].out_meta.val().get_bit(1);
            self.words_skid[i].inp.error.next = self.fifos[i].out_meta.val().get_bit(0);
            self.words_skid[i].inp.port.next = self.port_ids[i].val();
            self.words_skid[i].inp.valid.next = self.fifos[i].out_valid.val();
            self.fifos[i].out_ready.next = self.words_skid[i].inp.ready.val();
            RxWordsSource::<W>::join(&mut self.words_skid[i].out, &mut self.engine.inp[i]);
        }
        // The ports' read data form a chain ending at the last port (a one-pass loop names it:
        // the generated Verilog has no parameters).
        self.ports[0].rdata_in.next = 0.into();
        for i in 1..P {
            self.ports[i].rdata_in.next = self.ports[i - 1].reg_rdata.val();
        }
        for i in (P - 1)..P {
            self.port_reg_rdata.next = self.ports[i].reg_rdata.val();
        }

        self.engine.reg_addr.next = self.reg_addr.val();
        self.engine.reg_wdata.next = self.reg_wdata.val();
        self.engine.reg_write.next = self.reg_write.val();
        self.reg_rdata.next = self.engine.reg_rdata.val();
        WriteRequestSource::<W>::link(&mut self.wr, &mut self.engine.wr);
        self.irq.next = self.engine.irq.val();
        self.engine.msi_covers.next = self.msi_covers.val();
        self.wr_holds.next = self.engine.wr_holds.val();
        self.engine.tx_ev_valid.next = self.tx_ev_valid.val();
        self.engine.tx_ev_lo.next = self.tx_ev_lo.val();
        self.engine.tx_ev_hi.next = self.tx_ev_hi.val();
        self.tx_ev_ready.next = self.engine.tx_ev_ready.val();
    }
}

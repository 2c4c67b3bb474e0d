//! One port in the network domain (156.25 MHz): the offload core, the Multi-Stream table, the
//! packer into the clock-crossing FIFO, and on the offload core's transmit request the host's
//! datagrams (from the transmit engine's FIFO) and the packet generator's, with the port's
//! registers (`nanet_contract::rx::port`) and counters. MAC TX carries ARP and ICMP replies and
//! the UDP datagrams.

use nanet_contract::rx::port;
use rust_hdl::prelude::*;

use crate::common::skid_buffer::SidedSkidBuffer;
use crate::common::stream::{AvalonStSink, AvalonStSource, StreamSkid, StreamSource};
use crate::offload::core::OffloadCore;
use crate::offload::udp_datagram::UdpTxSource;
use crate::port::multi_stream::MultiStream;
use crate::port::packet_gen::PacketGen;
use crate::port::rx_packer::RxPacker;
use crate::port::tx_feeder::TxFeeder;

/// `W`: the width of the words into the clock-crossing FIFO (the core datapath's, 128 or 256).
#[derive(LogicBlock, Default)]
pub struct RxPort<const W: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// Core time, synchronised into this domain.
    pub now: Signal<In, Bits<32>>,
    pub mac_rx: AvalonStSink,
    pub mac_tx: AvalonStSource,

    pub reg_addr: Signal<In, Bits<7>>,
    pub reg_wdata: Signal<In, Bits<32>>,
    pub reg_write: Signal<In, Bit>,
    /// Read data: this port's word when `reg_sel` was set at the address, `rdata_in` otherwise
    /// (the ports form a chain, so the top needs no multiplexer).
    pub reg_sel: Signal<In, Bit>,
    pub rdata_in: Signal<In, Bits<32>>,
    pub reg_rdata: Signal<Out, Bits<32>>,

    /// Words into the receive FIFO, and their flags (`{meta, last, error}`; see `RxPacker`).
    pub fifo_data: Signal<Out, Bits<W>>,
    pub fifo_flags: Signal<Out, Bits<3>>,
    pub fifo_valid: Signal<Out, Bit>,
    pub fifo_used: Signal<In, Bits<10>>,

    /// Host datagrams from the transmit engine, through this port's clock-crossing FIFO: an
    /// entry (`W` bits) and its tag (`nanet_contract::packed::tx_entry`).
    pub txq_data: Signal<In, Bits<W>>,
    pub txq_tag: Signal<In, Bits<8>>,
    pub txq_valid: Signal<In, Bit>,
    pub txq_ready: Signal<Out, Bit>,
    /// Datagrams whose last entry has gone into the FIFO (a count from the core domain).
    pub txq_whole: Signal<In, Bits<32>>,

    core: OffloadCore,
    streams: MultiStream,
    packer: RxPacker<W>,
    generator: PacketGen,
    feeder: TxFeeder<W>,
    /// Between the transmit FIFO and the feeder (timing: the feeder's turn no longer reaches the
    /// FIFO's fetch).
    txq_slice: SidedSkidBuffer<W, 8>,
    /// The feeder's payload beats into the core's transmitter (timing: the feeder's last-beat
    /// logic ends here, the core's checksum buffer starts here). The request goes straight, so
    /// the generator still stamps its datagram when the core takes it.
    tx_payload_slice: StreamSkid,
    sop_time: DFF<Bits<32>>,
    drop_no_stream: DFF<Bits<32>>,
    drop_fifo_full: DFF<Bits<32>>,
    forwarded: DFF<Bits<32>>,
    /// Read data of this block's words, and whether the last address was the core's.
    rdata_q: DFF<Bits<32>>,
    core_read: DFF<Bit>,
    gen_read: DFF<Bit>,
    selected: DFF<Bit>,
}

// The decoder below compares literal word addresses (a kernel cannot name a constant): they must
// be the contract's.
const _: () = assert!(
    port::STREAM_TABLE == 0x40
        && port::STREAM_ENTRY == 0x50
        && port::DROP_NO_STREAM == 0x60
        && port::DROP_FIFO_FULL == 0x61
        && port::FORWARDED == 0x62
        && port::GEN_CONTROL == 0x68
        && port::GEN_SENT == 0x6E
);

impl<const W: usize> Logic for RxPort<W> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            sop_time,
            drop_no_stream,
            drop_fifo_full,
            forwarded,
            rdata_q,
            core_read,
            gen_read,
            selected
        );
        self.core.clock.next = self.clock.val();
        self.core.reset.next = self.reset.val();
        self.streams.clock.next = self.clock.val();
        self.streams.reset.next = self.reset.val();
        self.packer.clock.next = self.clock.val();
        self.packer.reset.next = self.reset.val();

        // ---- MAC, offload core, Multi-Stream, packer ------------------------------------------
        AvalonStSink::link(&mut self.mac_rx, &mut self.core.mac_rx);
        AvalonStSource::link(&mut self.mac_tx, &mut self.core.mac_tx);
        // Read by the packer at the datagram's first payload beat, 10 cycles after the SOP. Known
        // limit (found in review; untested): a next frame whose SOP comes 9 cycles after a
        // minimum frame's (a receive gap under 8 bytes, which 802.3 allows down to 5) overwrites
        // it first. The fix is to carry the stamp with the frame.
        if self.mac_rx.valid.val() & self.mac_rx.startofpacket.val() {
            self.sop_time.d.next = self.now.val();
        }
        self.generator.clock.next = self.clock.val();
        self.generator.reset.next = self.reset.val();
        self.generator.now.next = self.now.val();
        // Generator and host datagrams share the core's transmitter (`port/tx_feeder.rs`).
        self.feeder.clock.next = self.clock.val();
        self.feeder.reset.next = self.reset.val();
        // The FIFO's words reach the feeder through a register slice: `{meta, lo}` as one word.
        self.txq_slice.clock.next = self.clock.val();
        self.txq_slice.reset.next = self.reset.val();
        self.txq_slice.in_data.next = self.txq_data.val();
        self.txq_slice.in_side.next = self.txq_tag.val();
        self.txq_slice.in_valid.next = self.txq_valid.val();
        self.txq_ready.next = self.txq_slice.in_ready.val();
        self.feeder.q_data.next = self.txq_slice.out_data.val();
        self.feeder.q_tag.next = self.txq_slice.out_side.val();
        self.feeder.q_valid.next = self.txq_slice.out_valid.val();
        self.feeder.q_whole.next = self.txq_whole.val();
        self.txq_slice.out_ready.next = self.feeder.q_ready.val();
        UdpTxSource::join(&mut self.generator.tx, &mut self.feeder.generator);
        self.feeder.generator_busy.next = self.generator.busy.val();
        self.core.tx.req_valid.next = self.feeder.out.req_valid.val();
        self.feeder.out.req_ready.next = self.core.tx.req_ready.val();
        self.core.tx.dst_ip.next = self.feeder.out.dst_ip.val();
        self.core.tx.src_port.next = self.feeder.out.src_port.val();
        self.core.tx.dst_port.next = self.feeder.out.dst_port.val();
        self.core.tx.len.next = self.feeder.out.len.val();
        self.tx_payload_slice.clock.next = self.clock.val();
        self.tx_payload_slice.reset.next = self.reset.val();
        StreamSource::join(&mut self.feeder.out.payload, &mut self.tx_payload_slice.inp);
        StreamSource::join(&mut self.tx_payload_slice.out, &mut self.core.tx.payload);
        StreamSource::join(&mut self.core.rx, &mut self.streams.inp);
        self.streams.in_dst_port.next = self.core.rx_dst_port.val();
        StreamSource::join(&mut self.streams.out, &mut self.packer.inp);
        self.packer.in_stream.next = self.streams.out_stream.val();
        self.packer.in_len.next = self.core.rx_len.val();
        self.packer.in_src_ip.next = self.core.rx_src_ip.val();
        self.packer.in_src_port.next = self.core.rx_src_port.val();
        self.packer.sop_time.next = self.sop_time.q.val();
        self.packer.now.next = self.now.val();
        self.fifo_data.next = self.packer.fifo_data.val();
        self.fifo_flags.next = self.packer.fifo_flags.val();
        self.fifo_valid.next = self.packer.fifo_valid.val();
        self.packer.fifo_used.next = self.fifo_used.val();

        // ---- counters ----------------------------------------------------------------------------
        if self.streams.drop_unknown_port.val() {
            self.drop_no_stream.d.next = self.drop_no_stream.q.val() + 1;
        }
        if self.packer.drop_full.val() {
            self.drop_fifo_full.d.next = self.drop_fifo_full.q.val() + 1;
        }
        if self.packer.forwarded.val() {
            self.forwarded.d.next = self.forwarded.q.val() + 1;
        }

        // ---- registers: words below 0x40 are the offload core's -----------------------------
        self.core.reg_addr.next = self.reg_addr.val().get_bits::<6>(0);
        self.core.reg_wdata.next = self.reg_wdata.val();
        self.core.reg_write.next =
            self.reg_write.val() & self.reg_sel.val() & !self.reg_addr.val().get_bit(6);
        self.streams.tbl_write.next =
            self.reg_write.val() & self.reg_sel.val() & (self.reg_addr.val() == 0x40);
        self.generator.reg_addr.next = self.reg_addr.val().get_bits::<3>(0);
        self.generator.reg_wdata.next = self.reg_wdata.val();
        self.generator.reg_write.next = self.reg_write.val()
            & self.reg_sel.val()
            & (self.reg_addr.val().get_bits::<4>(3) == 0xD);
        self.gen_read.d.next = self.reg_addr.val().get_bits::<4>(3) == 0xD;
        self.selected.d.next = self.reg_sel.val();
        self.streams.tbl_port.next = self.reg_wdata.val().get_bits::<16>(0);
        self.streams.tbl_valid.next = self.reg_wdata.val().get_bit(31);
        self.streams.tbl_index.next = self.reg_addr.val().get_bits::<4>(0);
        if self.reg_write.val() {
            self.streams.tbl_index.next = self.reg_wdata.val().get_bits::<4>(16);
        }
        self.core_read.d.next = !self.reg_addr.val().get_bit(6);
        self.rdata_q.d.next = 0.into();
        if self.reg_addr.val().get_bits::<3>(4) == 5 {
            self.rdata_q.d.next = (bit_cast::<32, 1>(self.streams.tbl_read_valid.val().into())
                << 31)
                | bit_cast::<32, 16>(self.streams.tbl_read_port.val());
        }
        if self.reg_addr.val() == 0x60 {
            self.rdata_q.d.next = self.drop_no_stream.q.val();
        }
        if self.reg_addr.val() == 0x61 {
            self.rdata_q.d.next = self.drop_fifo_full.q.val();
        }
        if self.reg_addr.val() == 0x62 {
            self.rdata_q.d.next = self.forwarded.q.val();
        }
        self.reg_rdata.next = self.rdata_in.val();
        if self.selected.q.val() {
            self.reg_rdata.next = self.rdata_q.q.val();
            if self.core_read.q.val() {
                self.reg_rdata.next = self.core.reg_rdata.val();
            }
            if self.gen_read.q.val() {
                self.reg_rdata.next = self.generator.reg_rdata.val();
            }
        }

        if self.reset.val() {
            self.drop_no_stream.d.next = 0.into();
            self.drop_fifo_full.d.next = 0.into();
            self.forwarded.d.next = 0.into();
        }
    }
}

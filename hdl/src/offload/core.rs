//! The per-port UDP/IPv4/ARP offload core (156.25 MHz, one 64-bit beat per cycle).
//!
//! ```text
//! MAC RX (Avalon-ST) -> AvalonToStream -> RxParser -+-> rx (UDP payload + sideband)
//!                                                   +-> IcmpEcho (echo data) ---------------+
//!                                                   +-> ArpCache learn, ArpTx reply         |
//! tx request + payload -> UdpTxChecksum (when enabled: store, sum)                            |
//!                      -> ArpResolver (next hop, cache lookup, ARP request, hold/drop)        |
//!                      -> UdpTx -> TxArbiter (round robin: ARP, ICMP, UDP) <------------------+
//!                               -> StreamToAvalon -> MAC TX (Avalon-ST)
//! (both adapters are register slices: the MAC's pins end in and start from flip-flops)
//! register bus -> OffloadRegs (configuration, ARP commands, counters)
//! ```
//!
//! RX output: a datagram's payload with its source IP, source port, destination port and payload
//! length beside it (valid with every beat). A packet whose last beat has `error` set must be
//! discarded (see `rx_parser`). TX input: a datagram to send (`offload/udp_datagram.rs`: a request with
//! destination IP, ports and payload length, and its payload stream); the request is held until
//! the next hop is resolved or given up on (`ArpResolver`).

use rust_hdl::prelude::*;

use crate::common::stream::{
    AvalonStSink, AvalonStSource, AvalonToStream, StreamSink, StreamSource, StreamToAvalon,
};
use crate::offload::arp_cache::ArpCache;
use crate::offload::arp_resolver::ArpResolver;
use crate::offload::arp_tx::ArpTx;
use crate::offload::icmp_echo::IcmpEcho;
use crate::offload::regs::OffloadRegs;
use crate::offload::rx_parser::{RxDrop, RxParser};
use crate::offload::tx_arbiter::TxArbiter;
use crate::offload::udp_datagram::UdpTxSink;
use crate::offload::udp_tx::UdpTx;
use crate::offload::udp_tx_checksum::UdpTxChecksum;

#[derive(LogicBlock, Default)]
pub struct OffloadCore {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub mac_rx: AvalonStSink,
    pub mac_tx: AvalonStSource,

    pub rx: StreamSource,
    pub rx_src_ip: Signal<Out, Bits<32>>,
    pub rx_src_port: Signal<Out, Bits<16>>,
    pub rx_dst_port: Signal<Out, Bits<16>>,
    pub rx_len: Signal<Out, Bits<16>>,

    pub tx: UdpTxSink,

    pub reg_addr: Signal<In, Bits<6>>,
    pub reg_wdata: Signal<In, Bits<32>>,
    pub reg_write: Signal<In, Bit>,
    pub reg_rdata: Signal<Out, Bits<32>>,

    rx_adapter: AvalonToStream,
    parser: RxParser,
    icmp: IcmpEcho,
    arp_cache: ArpCache,
    arp_tx: ArpTx,
    tx_checksum: UdpTxChecksum,
    resolver: ArpResolver,
    udp_tx: UdpTx,
    arbiter: TxArbiter,
    tx_adapter: StreamToAvalon,
    regs: OffloadRegs,
    drop_events: Signal<Local, Bits<32>>,
    tx_sent: Signal<Local, Bit>,
}

impl Logic for OffloadCore {
    #[hdl_gen]
    fn update(&mut self) {
        // ---- clocks and resets ----------------------------------------------------------------
        self.rx_adapter.clock.next = self.clock.val();
        self.rx_adapter.reset.next = self.reset.val();
        self.parser.clock.next = self.clock.val();
        self.parser.reset.next = self.reset.val();
        self.icmp.clock.next = self.clock.val();
        self.icmp.reset.next = self.reset.val();
        self.arp_cache.clock.next = self.clock.val();
        self.arp_cache.reset.next = self.reset.val();
        self.arp_tx.clock.next = self.clock.val();
        self.arp_tx.reset.next = self.reset.val();
        self.tx_checksum.clock.next = self.clock.val();
        self.tx_checksum.reset.next = self.reset.val();
        self.resolver.clock.next = self.clock.val();
        self.resolver.reset.next = self.reset.val();
        self.udp_tx.clock.next = self.clock.val();
        self.udp_tx.reset.next = self.reset.val();
        self.arbiter.clock.next = self.clock.val();
        self.arbiter.reset.next = self.reset.val();
        self.tx_adapter.clock.next = self.clock.val();
        self.tx_adapter.reset.next = self.reset.val();
        self.regs.clock.next = self.clock.val();
        self.regs.reset.next = self.reset.val();

        // ---- configuration --------------------------------------------------------------------
        self.regs.addr.next = self.reg_addr.val();
        self.regs.wdata.next = self.reg_wdata.val();
        self.regs.write.next = self.reg_write.val();
        self.reg_rdata.next = self.regs.rdata.val();
        self.parser.our_mac.next = self.regs.our_mac.val();
        self.parser.our_ip.next = self.regs.our_ip.val();
        self.parser.our_netmask.next = self.regs.netmask.val();
        self.icmp.ttl.next = self.regs.ttl.val();
        self.udp_tx.ttl.next = self.regs.ttl.val();
        self.icmp.our_mac.next = self.regs.our_mac.val();
        self.icmp.our_ip.next = self.regs.our_ip.val();
        self.arp_tx.our_mac.next = self.regs.our_mac.val();
        self.arp_tx.our_ip.next = self.regs.our_ip.val();
        self.udp_tx.our_mac.next = self.regs.our_mac.val();
        self.udp_tx.our_ip.next = self.regs.our_ip.val();
        self.resolver.our_ip.next = self.regs.our_ip.val();
        self.resolver.netmask.next = self.regs.netmask.val();
        self.resolver.gateway.next = self.regs.gateway.val();
        self.resolver.retry_interval.next = self.regs.arp_retry_interval.val();
        self.resolver.retries.next = self.regs.arp_retries.val();

        // ---- receive --------------------------------------------------------------------------
        AvalonStSink::link(&mut self.mac_rx, &mut self.rx_adapter.mac);
        StreamSource::join(&mut self.rx_adapter.out, &mut self.parser.inp);
        // The parser's output carries UDP payloads to the user and echo data to the responder.
        self.rx.data.next = self.parser.out.data.val();
        self.rx.keep.next = self.parser.out.keep.val();
        self.rx.last.next = self.parser.out.last.val();
        self.rx.error.next = self.parser.out.error.val();
        self.rx.valid.next = self.parser.out.valid.val() & !self.parser.out_icmp.val();
        self.icmp.data.data.next = self.parser.out.data.val();
        self.icmp.data.keep.next = self.parser.out.keep.val();
        self.icmp.data.last.next = self.parser.out.last.val();
        self.icmp.data.error.next = self.parser.out.error.val();
        self.icmp.data.valid.next = self.parser.out.valid.val() & self.parser.out_icmp.val();
        self.parser.out.ready.next = self.rx.ready.val();
        if self.parser.out_icmp.val() {
            self.parser.out.ready.next = self.icmp.data.ready.val();
        }
        self.rx_src_ip.next = self.parser.out_src_ip.val();
        self.rx_src_port.next = self.parser.out_src_port.val();
        self.rx_dst_port.next = self.parser.out_dst_port.val();
        self.rx_len.next = self.parser.out_len.val();

        self.icmp.header.next = self.parser.icmp_header.val();
        self.icmp.hdr_w0.next = self.parser.hdr_w0.val();
        self.icmp.hdr_w1.next = self.parser.hdr_w1.val();
        self.icmp.hdr_w2.next = self.parser.hdr_w2.val();
        self.icmp.hdr_w3.next = self.parser.hdr_w3.val();
        self.icmp.hdr_w4.next = self.parser.hdr_w4.val();
        self.icmp.hdr_w5.next = self.parser.hdr_w5.val();

        // ARP: learn the sender of every ARP packet for us, answer requests.
        self.arp_cache.learn.next = self.parser.arp.val();
        self.arp_cache.learn_ip.next = self.parser.arp_sender_ip.val();
        self.arp_cache.learn_mac.next = self.parser.arp_sender_mac.val();
        self.arp_cache.add_static.next = self.regs.arp_add_static.val();
        self.arp_cache.static_ip.next = self.regs.arp_static_ip.val();
        self.arp_cache.static_mac.next = self.regs.arp_static_mac.val();
        self.arp_cache.flush.next = self.regs.arp_flush.val();
        self.regs.arp_flushing.next = self.arp_cache.flushing.val();
        self.arp_cache.read_start.next = self.regs.arp_read_start.val();
        self.arp_cache.read_index.next = self.regs.arp_read_index.val();
        self.arp_cache.port_busy.next = self.resolver.reading.val();
        self.regs.arp_read_done.next = self.arp_cache.read_done.val();
        self.regs.arp_read_valid.next = self.arp_cache.read_valid.val();
        self.regs.arp_read_ip.next = self.arp_cache.read_ip.val();
        self.regs.arp_read_mac.next = self.arp_cache.read_mac.val();
        self.arp_tx.reply.next = self.parser.arp.val() & self.parser.arp_is_request.val();
        self.arp_tx.reply_mac.next = self.parser.arp_sender_mac.val();
        self.arp_tx.reply_ip.next = self.parser.arp_sender_ip.val();

        // ---- transmit -------------------------------------------------------------------------
        self.tx_checksum.enable.next = self.regs.udp_tx_checksum.val();
        self.tx_checksum.our_ip.next = self.regs.our_ip.val();
        self.tx_checksum.req_valid.next = self.tx.req_valid.val();
        self.tx.req_ready.next = self.tx_checksum.req_ready.val();
        self.tx_checksum.req_dst_ip.next = self.tx.dst_ip.val();
        self.tx_checksum.req_src_port.next = self.tx.src_port.val();
        self.tx_checksum.req_dst_port.next = self.tx.dst_port.val();
        self.tx_checksum.req_len.next = self.tx.len.val();
        StreamSink::link(&mut self.tx.payload, &mut self.tx_checksum.payload_in);
        StreamSource::join(
            &mut self.tx_checksum.payload_out,
            &mut self.resolver.payload_in,
        );
        self.resolver.req_valid.next = self.tx_checksum.out_valid.val();
        self.tx_checksum.out_ready.next = self.resolver.req_ready.val();
        // The request's fields as the checksum stage shows them (it keeps a stored request's).
        self.resolver.req_dst_ip.next = self.tx_checksum.f_dst_ip.val();
        self.resolver.req_len.next = self.tx_checksum.f_len.val();
        self.resolver.early_valid.next = self.tx_checksum.f_early.val();
        StreamSource::join(&mut self.resolver.payload_out, &mut self.udp_tx.payload);
        self.resolver.cache_hit.next = self.arp_cache.hit.val();
        self.resolver.cache_mac.next = self.arp_cache.mac.val();
        self.resolver.learned.next = self.parser.arp.val() | self.regs.arp_add_static.val();
        self.arp_cache.lookup_ip.next = self.resolver.lookup_ip.val();
        self.arp_tx.request.next = self.resolver.arp_request.val();
        self.arp_tx.request_ip.next = self.resolver.arp_request_ip.val();
        self.udp_tx.start.next = self.resolver.send.val();
        self.resolver.send_ready.next = self.udp_tx.start_ready.val();
        self.udp_tx.dst_mac.next = self.resolver.dst_mac.val();
        self.udp_tx.dst_ip.next = self.tx_checksum.f_dst_ip.val();
        self.udp_tx.src_port.next = self.tx_checksum.f_src_port.val();
        self.udp_tx.dst_port.next = self.tx_checksum.f_dst_port.val();
        self.udp_tx.payload_len.next = self.tx_checksum.f_len.val();
        self.udp_tx.udp_checksum.next = self.tx_checksum.out_checksum.val();

        StreamSource::join(&mut self.arp_tx.out, &mut self.arbiter.arp);
        StreamSource::join(&mut self.icmp.out, &mut self.arbiter.icmp);
        StreamSource::join(&mut self.udp_tx.out, &mut self.arbiter.udp);
        StreamSource::join(&mut self.arbiter.out, &mut self.tx_adapter.inp);
        AvalonStSource::link(&mut self.mac_tx, &mut self.tx_adapter.mac);

        // ---- counters (bit i = nanet_contract::Counter index i) -------------------------------
        self.drop_events.next = 0.into();
        if self.parser.dropped.val() {
            match self.parser.drop_reason.val() {
                RxDrop::MacError => self.drop_events.next = (1 << 9).into(),
                RxDrop::Runt => self.drop_events.next = (1 << 10).into(),
                RxDrop::Oversize => self.drop_events.next = (1 << 11).into(),
                RxDrop::NotForUs => self.drop_events.next = (1 << 12).into(),
                RxDrop::IpVersionIhl => self.drop_events.next = (1 << 13).into(),
                RxDrop::IpChecksum => self.drop_events.next = (1 << 14).into(),
                RxDrop::IpLength => self.drop_events.next = (1 << 15).into(),
                RxDrop::Fragment => self.drop_events.next = (1 << 16).into(),
                RxDrop::UdpLength => self.drop_events.next = (1 << 17).into(),
                RxDrop::UdpChecksum => self.drop_events.next = (1 << 18).into(),
                RxDrop::UnknownProtocol => self.drop_events.next = (1 << 19).into(),
                RxDrop::IcmpInvalid => self.drop_events.next = (1 << 20).into(),
                RxDrop::BadSource => self.drop_events.next = (1 << 25).into(),
                _ => self.drop_events.next = (1 << 21).into(),
            }
        }
        self.tx_sent.next = self.resolver.send.val() & self.udp_tx.start_ready.val();
        self.regs.events.next = self.drop_events.val()
            | bit_cast::<32, 1>(self.parser.delivered.val().into())
            | (bit_cast::<32, 1>(self.parser.delivered.val().into()) << 1)
            | (bit_cast::<32, 1>(self.tx_sent.val().into()) << 2)
            | (bit_cast::<32, 1>(self.tx_sent.val().into()) << 3)
            | (bit_cast::<32, 1>(
                (self.parser.arp.val() & self.parser.arp_is_request.val()).into(),
            ) << 4)
            | (bit_cast::<32, 1>(
                (self.parser.arp.val() & !self.parser.arp_is_request.val()).into(),
            ) << 5)
            | (bit_cast::<32, 1>(self.arp_tx.sent_reply.val().into()) << 6)
            | (bit_cast::<32, 1>(self.arp_tx.sent_request.val().into()) << 7)
            | (bit_cast::<32, 1>(self.icmp.sent.val().into()) << 8)
            | (bit_cast::<32, 1>(self.icmp.busy_drop.val().into()) << 21)
            | (bit_cast::<32, 1>(self.resolver.timeout_drop.val().into()) << 22)
            | (bit_cast::<32, 1>(self.resolver.length_drop.val().into()) << 23)
            | (bit_cast::<32, 1>(self.arp_tx.reply_dropped.val().into()) << 24);
        self.regs.rx_bytes.next = self.parser.out_len.val();
        self.regs.tx_bytes.next = self.tx_checksum.f_len.val();
    }
}

//! Testbench of the whole receive path (`nanet_hdl::card::rx_path`) on any engine: four 10G links at
//! line rate drive the MAC RX ports with real Ethernet/IPv4/UDP frames (156.25 MHz), the core domain
//! (250 MHz) writes into the host-memory model, and the host model (`rx_host`) programs the CLOPs
//! and checks every buffer. What the ports transmit (ARP and ICMP replies) is collected at line
//! rate, so a real IP stack can sit on a link.

use std::collections::VecDeque;

use nanet_contract::offload::{mac_to_regs, Reg};
use nanet_contract::rx::{gen_payload, port, PortReg, MAX_PORTS};
use nanet_hdl::card::rx_path::RxPath;

use crate::check::rx_host::{RxCard, RxHost, RxPacket};
use crate::design_ports;
use crate::engine::clocks::{CORE_CLOCK_PS, NET_CLOCK_PS};
use crate::engine::pins::{AvalonStIn, AvalonStOut};
use crate::engine::{ClockId, Design, DesignSim, EngineError, EngineKind};
use crate::traffic::packets::{udp_frame, Endpoint};
use crate::world::dma_port::WriteBeat;
use crate::world::host_mem::{MemoryPort, MemoryPreset};
use crate::world::link::{LinkRx, LinkTx};
use crate::world::tlp::BeatData;

#[derive(Clone, Debug, Default)]
pub struct RxPathIn {
    pub net_reset: bool,
    pub core_reset: bool,
    pub mac_rx: [AvalonStIn; MAX_PORTS],
    pub mac_tx_ready: [bool; MAX_PORTS],
    pub port_reg_port: u8,
    pub port_reg_addr: u8,
    pub port_reg_wdata: u32,
    pub port_reg_write: bool,
    pub reg_addr: u8,
    pub reg_wdata: u32,
    pub reg_write: bool,
    pub wr_ready: bool,
}

/// The inputs a four-port bench drives through reset: both resets, and the MACs' TX ready.
pub trait FourPortResetPins {
    fn set_resets(&mut self, asserted: bool);
    fn mac_tx_ready(&mut self) -> &mut [bool; MAX_PORTS];
}

impl FourPortResetPins for RxPathIn {
    fn set_resets(&mut self, asserted: bool) {
        (self.net_reset, self.core_reset) = (asserted, asserted);
    }
    fn mac_tx_ready(&mut self) -> &mut [bool; MAX_PORTS] {
        &mut self.mac_tx_ready
    }
}

/// Design `D` with its network and core clocks (clock inputs 0 and 1) after reset: both resets
/// held for four network cycles, every MAC ready to transmit.
pub fn start_four_port_design<D: Design>(
    kind: EngineKind,
) -> Result<(DesignSim<D>, ClockId, ClockId), EngineError>
where
    D::In: FourPortResetPins,
{
    let mut d = DesignSim::<D>::new(kind)?;
    let net = d.add_clock("net", 0, NET_CLOCK_PS);
    let core = d.add_clock("core", 1, CORE_CLOCK_PS);
    d.inputs.set_resets(true);
    *d.inputs.mac_tx_ready() = [true; MAX_PORTS];
    for _ in 0..4 {
        d.tick(net);
    }
    d.inputs.set_resets(false);
    Ok((d, net, core))
}

#[derive(Clone, Debug, Default)]
pub struct RxPathOut<T = u128> {
    pub mac_rx_ready: [bool; MAX_PORTS],
    pub mac_tx: [AvalonStOut; MAX_PORTS],
    pub port_reg_rdata: u32,
    pub reg_rdata: u32,
    pub wr_valid: bool,
    /// The write-request beat on offer (with `wr_valid`).
    pub wr: WriteBeat<T>,
    pub irq: bool,
    pub now: u32,
}

macro_rules! rx_path_ports {
    ($design:ident, $bits:literal, $data:ty, $top:literal, $($p:literal),*) => {
        design_ports! {
            pub $design for RxPath<4, $bits>, top $top, inputs RxPathIn,
            outputs RxPathOut<$data>,
            clocks { net_clock, core_clock }
            inputs {
                net_reset => net_reset, core_reset => core_reset,
                $(
                    mac_rx[$p].data => mac_rx[$p].data,
                    mac_rx[$p].valid => mac_rx[$p].valid,
                    mac_rx[$p].startofpacket => mac_rx[$p].startofpacket,
                    mac_rx[$p].endofpacket => mac_rx[$p].endofpacket,
                    mac_rx[$p].empty => mac_rx[$p].empty,
                    mac_rx[$p].error => mac_rx[$p].error,
                    mac_tx_ready[$p] => mac_tx[$p].ready,
                )*
                port_reg_port => port_reg_port, port_reg_addr => port_reg_addr,
                port_reg_wdata => port_reg_wdata, port_reg_write => port_reg_write,
                reg_addr => reg_addr, reg_wdata => reg_wdata, reg_write => reg_write,
                wr_ready => wr.ready,
            }
            outputs {
                $(
                    mac_rx_ready[$p] => mac_rx[$p].ready,
                    mac_tx[$p].data => mac_tx[$p].data,
                    mac_tx[$p].valid => mac_tx[$p].valid,
                    mac_tx[$p].startofpacket => mac_tx[$p].startofpacket,
                    mac_tx[$p].endofpacket => mac_tx[$p].endofpacket,
                    mac_tx[$p].empty => mac_tx[$p].empty,
                    mac_tx[$p].error => mac_tx[$p].error,
                )*
                port_reg_rdata => port_reg_rdata, reg_rdata => reg_rdata, wr_valid => wr.valid,
                wr.sop => wr.sop, wr.eop => wr.eop, wr.addr => wr.addr, wr.len => wr.len,
                wr.data => wr.data, irq => irq, now => now,
            }
        }
    };
}
rx_path_ports!(RxPathDesign, 128, u128, "nanet_rx_path", 0, 1, 2, 3);
rx_path_ports!(
    RxPath256Design,
    256,
    [u64; 4],
    "nanet_rx_path_256",
    0,
    1,
    2,
    3
);

crate::width_designs! {
    pub trait RxPathWidth: In = RxPathIn, Out = RxPathOut<Self::Beat>;
    RxPathDesign => u128, RxPath256Design => [u64; 4]
}

/// The peer every port receives from, and each port's own address.
pub const PEER: Endpoint = Endpoint::new([0x02, 0, 0, 0, 0, 0x99], [10, 0, 0, 99]);

pub fn port_endpoint(p: usize) -> Endpoint {
    Endpoint::new([0x02, 0, 0, 0, 1, p as u8], [10, 0, 0, 10 + p as u8])
}

/// UDP destination port of Multi-Stream entry `entry`.
pub fn stream_udp_port(entry: u8) -> u16 {
    5000 + entry as u16
}

/// What the card's host side is: who queues the receive engine's register writes, owns the
/// host memory the card writes and sees the interrupts. [`RxHost`] is the test host with its
/// scoreboard; the host library's simulated card has its own.
pub trait CardHost {
    /// The next receive-engine register write (word, value) the host model queued, if any (a
    /// host that writes registers itself, as the host library does, queues none).
    fn take_core_write(&mut self) -> Option<(u8, u32)> {
        None
    }
    /// The host memory behind the card's DMA.
    fn memory(&mut self) -> &mut MemoryPort;
    /// Ends a core cycle (`now`: the card's cycle counter); ticks the memory model.
    fn end_cycle(&mut self, now: u32);
    /// An interrupt reached the host.
    fn interrupt(&mut self);
    /// Where the event ring starts in host memory, if this host knows (for checks of the MSIs).
    fn event_ring(&self) -> Option<u64> {
        None
    }
}

/// A host on the receive path's internal write-request port (no PCIe in between).
pub trait WriteRequestHost: CardHost {
    /// Receive-engine register writes (word, value) waiting for the bus, in order.
    fn core_writes(&mut self) -> &mut VecDeque<(u8, u32)>;
    /// Whether the write port takes a beat in this cycle.
    fn write_ready(&mut self) -> bool;
    /// A beat the write port transferred in this cycle.
    fn write_beat<T: BeatData>(&mut self, beat: &WriteBeat<T>);
}

impl CardHost for RxHost {
    fn take_core_write(&mut self) -> Option<(u8, u32)> {
        self.regs.pop_front()
    }
    fn memory(&mut self) -> &mut MemoryPort {
        &mut self.port
    }
    fn end_cycle(&mut self, now: u32) {
        RxHost::end_cycle(self, now, false)
    }
    fn interrupt(&mut self) {
        self.totals.irqs += 1;
    }
    fn event_ring(&self) -> Option<u64> {
        self.event_ring_start()
    }
}

impl WriteRequestHost for RxHost {
    fn core_writes(&mut self) -> &mut VecDeque<(u8, u32)> {
        &mut self.regs
    }
    fn write_ready(&mut self) -> bool {
        self.port.ready()
    }
    fn write_beat<T: BeatData>(&mut self, beat: &WriteBeat<T>) {
        RxHost::write_beat(self, beat)
    }
}

/// Samples the links on a network edge: whether each port took the beat on offer, and what each
/// port transmits.
pub(crate) fn sample_links(
    links: &mut [LinkRx; MAX_PORTS],
    link_tx: &mut [LinkTx; MAX_PORTS],
    mac_rx_ready: &[bool; MAX_PORTS],
    mac_tx: &[AvalonStOut; MAX_PORTS],
    net_cycle: u64,
    edge_ps: u64,
) {
    for (p, l) in links.iter_mut().enumerate() {
        l.sample(mac_rx_ready[p], net_cycle, edge_ps);
    }
    for (p, l) in link_tx.iter_mut().enumerate() {
        l.sample(&mac_tx[p], net_cycle, edge_ps);
    }
}

/// The transmit faults of the links so far (taken), each with its port.
pub(crate) fn take_link_faults(link_tx: &mut [LinkTx; MAX_PORTS]) -> Vec<String> {
    let mut out = vec![];
    for (p, l) in link_tx.iter_mut().enumerate() {
        out.extend(l.faults.drain(..).map(|f| format!("port {p}: {f}")));
    }
    out
}

/// Drives the links' next beats (and transmit ready) after a network edge.
pub(crate) fn drive_links(
    links: &mut [LinkRx; MAX_PORTS],
    link_tx: &mut [LinkTx; MAX_PORTS],
    mac_rx: &mut [AvalonStIn; MAX_PORTS],
    mac_tx_ready: &mut [bool; MAX_PORTS],
) {
    for (p, l) in links.iter_mut().enumerate() {
        l.drive(&mut mac_rx[p]);
    }
    for (p, l) in link_tx.iter_mut().enumerate() {
        l.drive(&mut mac_tx_ready[p]);
    }
}

/// What the system tests do to a four-port card with the test host, whichever bench carries it
/// (the receive path on its internal buses, or the whole card behind PCIe).
pub trait FourPortBench: RxCard {
    fn links(&mut self) -> &mut [LinkRx; MAX_PORTS];
    /// What each port transmitted.
    fn transmitted(&mut self) -> &mut [LinkTx; MAX_PORTS];
    /// Queues a write to a port's register.
    fn port_write(&mut self, port: u8, word: u32, value: u32);
    /// Reads a port's register (after the queued writes).
    fn port_read(&mut self, port: u8, word: u32) -> u32;
    /// The testbench time (ps) of the last clock edge.
    fn time_ps(&self) -> u64;
    /// The width of the card's core datapath, bits (128 for Gen2 x8, 256 for Gen3 x8).
    fn datapath_bits(&self) -> usize;

    /// Gives every port its address ([`port_endpoint`]).
    fn set_addresses(&mut self) {
        for p in 0..MAX_PORTS {
            let us = port_endpoint(p);
            let (hi, lo) = mac_to_regs(us.mac);
            self.port_write(p as u8, Reg::MacHi.word(), hi);
            self.port_write(p as u8, Reg::MacLo.word(), lo);
            self.port_write(p as u8, Reg::Ip.word(), us.ip_u32());
            self.port_write(p as u8, Reg::Netmask.word(), 0xFFFF_FF00);
        }
    }

    /// Points Multi-Stream entry `entry` of `port` at UDP port [`stream_udp_port`]`(entry)`.
    fn map_stream(&mut self, port: u8, entry: u8) {
        let v = port::STREAM_VALID | (entry as u32) << 16 | stream_udp_port(entry) as u32;
        self.port_write(port, port::STREAM_TABLE, v);
    }

    /// Queues a UDP datagram from [`PEER`] to `port`'s UDP port `dport`; `bad` corrupts its UDP
    /// checksum (the card must drop it at the end, after its payload started moving). A good one
    /// for a mapped entry is expected in its CLOP.
    fn send(&mut self, port: u8, dport: u16, payload: &[u8], bad: bool) {
        self.send_with_gap(port, dport, payload, bad, 0);
    }

    /// As [`FourPortBench::send`], with `gap` idle bytes on the wire after the frame.
    fn send_with_gap(&mut self, port: u8, dport: u16, payload: &[u8], bad: bool, gap: u64) {
        let mut frame = udp_frame(&PEER, &port_endpoint(port as usize), 4242, dport, payload);
        if bad {
            // The UDP checksum (bytes 40..41 of the frame), made wrong and non-zero.
            frame[40] ^= 0x5A;
        }
        self.links()[port as usize].push_with_gap(frame, false, gap);
        let entry = dport.wrapping_sub(5000);
        if !bad && entry < 16 {
            self.host().expect(&RxPacket {
                port,
                stream: entry as u8,
                payload: payload.to_vec(),
                src_ip: PEER.ip,
                src_port: 4242,
                bad: false,
                unchecked: 0..0,
            });
        }
    }

    /// Starts port `port`'s packet generator: `count` datagrams of `len` payload bytes from UDP
    /// port `src_port` to `dst` (an IPv4 address, UDP port), `gap` idle network cycles apart.
    fn start_generator(
        &mut self,
        port: u8,
        dst: ([u8; 4], u16),
        src_port: u16,
        len: u32,
        count: u32,
        gap: u32,
    ) {
        self.port_write(port, PortReg::GenDstIp.word(), u32::from_be_bytes(dst.0));
        let ports = (src_port as u32) << 16 | dst.1 as u32;
        self.port_write(port, PortReg::GenPorts.word(), ports);
        self.port_write(port, PortReg::GenLen.word(), len);
        self.port_write(port, PortReg::GenCount.word(), count);
        self.port_write(port, PortReg::GenGap.word(), gap);
        self.port_write(port, PortReg::GenControl.word(), port::GEN_START);
    }

    /// Expects the datagrams of [`FourPortBench::start_generator`] (port `from`, `count` of
    /// `len` bytes from `src_port`) in Multi-Stream entry `stream` of port `to`; their transmit
    /// times are logged, not compared (see [`RxHost::times_of_flight`]).
    fn expect_generated(
        &mut self,
        from: u8,
        to: u8,
        stream: u8,
        src_port: u16,
        len: u32,
        count: u32,
    ) {
        let len = len.clamp(port::GEN_MIN_PAYLOAD, port::GEN_MAX_PAYLOAD) as usize;
        for seq in 0..count as u64 {
            self.host().expect(&RxPacket {
                port: to,
                stream,
                payload: gen_payload(seq, 0, len),
                src_ip: port_endpoint(from as usize).ip,
                src_port,
                bad: false,
                unchecked: 8..12,
            });
        }
    }

    /// Queues a raw frame on a port (hostile traffic); nothing is expected from it.
    fn send_frame(&mut self, port: u8, frame: Vec<u8>, mac_error: bool) {
        self.links()[port as usize].push(frame, mac_error);
    }
}

/// The receive path at 128 bits (Gen2 x8), and at 256 (Gen3 x8).
pub type RxPathBench<H = RxHost> = RxPathBenchAt<RxPathDesign, H>;
pub type RxPathBench256<H = RxHost> = RxPathBenchAt<RxPath256Design, H>;

pub struct RxPathBenchAt<D: RxPathWidth, H: WriteRequestHost = RxHost> {
    pub d: DesignSim<D>,
    net: ClockId,
    core: ClockId,
    pub host: H,
    pub links: [LinkRx; MAX_PORTS],
    /// What each port transmits (ARP and ICMP replies), at line rate.
    pub link_tx: [LinkTx; MAX_PORTS],
    /// Port register writes (port, word, value), one per network cycle.
    port_regs: VecDeque<(u8, u8, u32)>,
    pub net_cycles: u64,
}

impl<D: RxPathWidth> RxPathBenchAt<D> {
    /// The card with the test host, the ports' addresses set ([`port_endpoint`]) and the memory's
    /// max payload size.
    pub fn new(
        kind: EngineKind,
        preset: MemoryPreset,
        mem_stall: f64,
        seed: u64,
    ) -> Result<Self, EngineError> {
        let port = MemoryPort::new(preset, mem_stall, seed).for_variant(D::Beat::VARIANT);
        let host = RxHost::new(port);
        let mut b = Self::with_host(kind, host)?;
        b.start();
        b.set_addresses();
        Ok(b)
    }
}

impl<D: RxPathWidth, H: WriteRequestHost> RxPathBenchAt<D, H> {
    /// The card after reset, attached to `host`, nothing configured.
    pub fn with_host(kind: EngineKind, host: H) -> Result<Self, EngineError> {
        let (d, net, core) = start_four_port_design::<D>(kind)?;
        Ok(Self {
            d,
            net,
            core,
            host,
            links: Default::default(),
            link_tx: Default::default(),
            port_regs: VecDeque::new(),
            net_cycles: 0,
        })
    }

    /// Whether every queued port register write is done.
    pub fn port_writes_done(&self) -> bool {
        self.port_regs.is_empty()
    }

    /// Queues a write to a port's register.
    pub fn port_write(&mut self, port: u8, word: u32, value: u32) {
        self.port_regs.push_back((port, word as u8, value));
    }

    /// Reads a port's register (after the queued writes).
    pub fn port_read(&mut self, port: u8, word: u32) -> u32 {
        while !self.port_regs.is_empty() {
            self.step_core();
        }
        self.d.inputs.port_reg_port = port;
        self.d.inputs.port_reg_addr = word as u8;
        for _ in 0..3 {
            self.step_core();
        }
        self.d.settle().port_reg_rdata
    }

    /// One network-clock or core-clock edge.
    fn edge(&mut self) {
        let o = self.d.settle().clone();
        let rising = self.d.next_rising();
        let net = rising & (1 << self.net.0) != 0;
        let core = rising & (1 << self.core.0) != 0;
        if net {
            sample_links(
                &mut self.links,
                &mut self.link_tx,
                &o.mac_rx_ready,
                &o.mac_tx,
                self.net_cycles,
                self.d.next_edge_ps(),
            );
            if self.d.inputs.port_reg_write {
                self.port_regs.pop_front();
            }
        }
        if core {
            if self.d.inputs.reg_write {
                self.host.core_writes().pop_front();
            }
            if o.wr_valid && self.d.inputs.wr_ready {
                self.host.write_beat(&o.wr);
            }
        }
        self.d.try_step().unwrap_or_else(|m| panic!("{m}"));
        if net {
            self.net_cycles += 1;
            drive_links(
                &mut self.links,
                &mut self.link_tx,
                &mut self.d.inputs.mac_rx,
                &mut self.d.inputs.mac_tx_ready,
            );
            let i = &mut self.d.inputs;
            i.port_reg_write = false;
            if let Some((port, word, value)) = self.port_regs.front() {
                i.port_reg_write = true;
                i.port_reg_port = *port;
                i.port_reg_addr = *word;
                i.port_reg_wdata = *value;
            }
        }
        if core {
            self.host.end_cycle(o.now);
            if o.irq {
                self.host.interrupt();
            }
            self.d.inputs.wr_ready = self.host.write_ready();
            let next = self.host.core_writes().front().copied();
            let i = &mut self.d.inputs;
            i.reg_write = false;
            if let Some((addr, value)) = next {
                i.reg_write = true;
                i.reg_addr = addr;
                i.reg_wdata = value;
            }
        }
    }

    /// One core cycle (and the network edges within it).
    pub fn step_core(&mut self) {
        loop {
            let core = self.d.next_rising() & (1 << self.core.0) != 0;
            self.edge();
            if core {
                return;
            }
        }
    }

    /// Reads a core register word after the queued writes.
    pub fn read_core(&mut self, word: u8) -> u32 {
        while !self.host.core_writes().is_empty() {
            self.step_core();
        }
        // The receive engine's register file answers three cycles after the address.
        self.d.inputs.reg_addr = word;
        self.step_core();
        self.step_core();
        self.step_core();
        self.d.settle().reg_rdata
    }
}

impl<D: RxPathWidth> FourPortBench for RxPathBenchAt<D> {
    fn links(&mut self) -> &mut [LinkRx; MAX_PORTS] {
        &mut self.links
    }
    fn transmitted(&mut self) -> &mut [LinkTx; MAX_PORTS] {
        &mut self.link_tx
    }
    fn port_write(&mut self, port: u8, word: u32, value: u32) {
        RxPathBenchAt::port_write(self, port, word, value)
    }
    fn port_read(&mut self, port: u8, word: u32) -> u32 {
        RxPathBenchAt::port_read(self, port, word)
    }
    fn time_ps(&self) -> u64 {
        self.d.time_ps()
    }
    fn datapath_bits(&self) -> usize {
        D::Beat::VARIANT.beat_bytes() * 8
    }
}

/// The DMA writer stamps a packet's last beat in the cycle it goes into the writer's output slice;
/// the receive engine's output slice (behind the write multiplexer) hands it over a cycle later.
impl<D: RxPathWidth> crate::benchmark::rx::BeatToMemory for RxPathBenchAt<D> {
    const BEAT_TO_MEMORY: u64 = 1;
}

impl<D: RxPathWidth> RxCard for RxPathBenchAt<D> {
    fn host(&mut self) -> &mut RxHost {
        &mut self.host
    }

    fn input_empty(&self) -> bool {
        self.links.iter().all(|l| l.is_idle())
    }

    fn step(&mut self) {
        self.step_core();
        let faults = take_link_faults(&mut self.link_tx);
        assert!(faults.is_empty(), "MAC transmit interface: {faults:?}");
    }

    fn read_word(&mut self, word: u8) -> u32 {
        self.read_core(word)
    }
}

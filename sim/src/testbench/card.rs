//! Testbench of the whole card (`nanet_hdl::card::nic::Nic`) on any engine: four 10G links on the MAC
//! clients, and the root complex model (`world/root_complex.rs`) on the PCIe Hard IP's TLP interface.
//! The host reaches the card only through BAR0 TLPs: the register writes the host model queues
//! become memory-write TLPs, reads become memory reads answered by completions; the card's DMA
//! arrives as memory-write TLPs in host memory; its MSI requests are acknowledged and reach the
//! host behind the writes before them.

use nanet_contract::bar0;
use nanet_contract::rx::MAX_PORTS;
use nanet_contract::rx::{PageSize, RxReg};
use nanet_contract::tx::{TxDescriptor, TxReg, TX_DESC_BYTES, TX_RING_ENABLE};
use nanet_hdl::card::nic::Nic;

use crate::check::rx_host::{ClopSpec, RxCard, RxHost};
use crate::design_ports;
use crate::engine::pins::{AvalonStIn, AvalonStOut};
use crate::engine::{ClockId, DesignSim, EngineError, EngineKind};
use crate::testbench::rx_path::{
    drive_links, port_endpoint, sample_links, start_four_port_design, stream_udp_port, CardHost,
    FourPortBench, FourPortResetPins,
};
use crate::traffic::packets::Endpoint;
use crate::world::config_bus::ConfigBus;
use crate::world::flow_control::FlowControl;
use crate::world::host_mem::{MemoryPort, MemoryPreset, RegionWrites};
use crate::world::link::{LinkRx, LinkTx};
use crate::world::root_complex::{ReadResult, RootComplex};
use crate::world::tlp::{Beat, BeatData, Pins};

/// The card's input pins; `T` is the data pins of the Hard IP's beat (`u128` for Gen2 x8,
/// `[u64; 4]` for Gen3 x8).
#[derive(Clone, Debug, Default)]
pub struct NicIn<T = u128> {
    pub net_reset: bool,
    pub core_reset: bool,
    pub mac_rx: [AvalonStIn; MAX_PORTS],
    pub mac_tx_ready: [bool; MAX_PORTS],
    /// The Hard IP's configuration bus (`tl_cfg_add`, `tl_cfg_ctl`).
    pub cfg_add: u8,
    pub cfg_ctl: u32,
    /// The Hard IP's receive beat.
    pub rx: Pins<T>,
    pub rx_valid: bool,
    pub rx_bar: u8,
    pub tx_ready: bool,
    /// The Hard IP's credit interface: header and data limits (posted, non-posted,
    /// completion), infinite classes and the Hard IP's own consumption (bit 5 posted headers ..
    /// bit 0 completion data).
    pub cred_hdr: [u8; 3],
    pub cred_data: [u16; 3],
    pub cred_infinite: u8,
    pub cred_hip_cons: u8,
    pub msi_ack: bool,
}

#[derive(Clone, Debug, Default)]
pub struct NicOut<T = u128> {
    pub mac_rx_ready: [bool; MAX_PORTS],
    pub mac_tx: [AvalonStOut; MAX_PORTS],
    pub rx_ready: bool,
    /// The card's transmit beat.
    pub tx: Pins<T>,
    pub tx_valid: bool,
    pub msi_req: bool,
    pub now: u32,
}

impl<T> FourPortResetPins for NicIn<T> {
    fn set_resets(&mut self, asserted: bool) {
        (self.net_reset, self.core_reset) = (asserted, asserted);
    }
    fn mac_tx_ready(&mut self) -> &mut [bool; MAX_PORTS] {
        &mut self.mac_tx_ready
    }
}

/// The card's pins for a card of `$ports` ports numbered `$p` with a `$width`-bit datapath
/// (beats of `$beat`): the bench's arrays have room for the most ports, and a smaller card leaves
/// the rest unconnected.
macro_rules! nic_ports {
    ($design:ident, $ports:literal, $width:literal, $beat:ty, $top:literal: $($p:literal),*) => {
        design_ports! {
            pub $design for Nic<$ports, $width>, top $top, inputs NicIn<$beat>, outputs NicOut<$beat>,
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
                cfg_add => pcie_cfg_add, cfg_ctl => pcie_cfg_ctl, rx.data => pcie_rx.data, rx.sop => pcie_rx.sop,
                rx.eop => pcie_rx.eop, rx.empty => pcie_rx.empty, rx_valid => pcie_rx.valid,
                rx_bar => pcie_rx.bar, tx_ready => pcie_tx.ready, msi_ack => msi_ack,
                cred_hdr[0] => pcie_cred_p_hdr, cred_data[0] => pcie_cred_p_data,
                cred_hdr[1] => pcie_cred_np_hdr, cred_data[1] => pcie_cred_np_data,
                cred_hdr[2] => pcie_cred_cpl_hdr, cred_data[2] => pcie_cred_cpl_data,
                cred_infinite => pcie_cred_infinite, cred_hip_cons => pcie_cred_hip_cons,
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
                rx_ready => pcie_rx.ready, tx.data => pcie_tx.data, tx.sop => pcie_tx.sop,
                tx.eop => pcie_tx.eop, tx.empty => pcie_tx.empty, tx_valid => pcie_tx.valid,
                msi_req => msi_req, now => now,
            }
        }
    };
}
nic_ports!(NicDesign, 4, 128, u128, "nanet_nic": 0, 1, 2, 3);
nic_ports!(Nic3Design, 3, 128, u128, "nanet_nic_3p": 0, 1, 2);
nic_ports!(Nic2Design, 2, 128, u128, "nanet_nic_2p": 0, 1);
nic_ports!(Nic1Design, 1, 128, u128, "nanet_nic_1p": 0);
nic_ports!(Nic256Design, 4, 256, [u64; 4], "nanet_nic_256": 0, 1, 2, 3);
nic_ports!(Nic1p256Design, 1, 256, [u64; 4], "nanet_nic_1p_256": 0);
/// The port counts of the Gen3 x8 (256-bit) designs above, for those choosing one by count.
pub const GEN3_DESIGN_PORTS: [u8; 2] = [1, 4];

// The card's designs the bench drives: the NIC top with any port count, at either width (Gen2 x8:
// 128 bits; Gen3 x8: 256).
crate::width_designs! {
    pub trait CardDesign: In = NicIn<Self::Beat>, Out = NicOut<Self::Beat>;
    NicDesign => u128, Nic3Design => u128, Nic2Design => u128, Nic1Design => u128,
    Nic256Design => [u64; 4], Nic1p256Design => [u64; 4],
}

/// The card's bus/device/function number in the benches, as the root complex enumerated it: bus
/// 0x65, device 1 (neither 0, so a card that takes the wrong bits shows).
pub const CARD_ID: u16 = 0x6508;
/// Core cycles between the Hard IP's configuration bus registers in the benches (4 or 8).
pub const CONFIG_BUS_PERIOD: u64 = 8;
/// Where the root complex put BAR0.
pub const BAR0_BASE: u64 = 0xF7A0_0000;

pub struct CardBench<H: CardHost = RxHost, D: CardDesign = NicDesign> {
    pub d: DesignSim<D>,
    net: ClockId,
    core: ClockId,
    pub host: H,
    pub rc: RootComplex,
    /// The Hard IP's configuration bus, showing the ID the root complex enumerated.
    pub config: ConfigBus,
    pub links: [LinkRx; MAX_PORTS],
    /// What each port transmits, at line rate.
    pub link_tx: [LinkTx; MAX_PORTS],
    /// Port `p`'s MAC TX is wired to port `loopback[p]`'s MAC RX (one flip-flop of delay, like
    /// a cable between two cages without MAC and PHY), instead of that port's link.
    pub loopback: [Option<usize>; MAX_PORTS],
    pub net_cycles: u64,
    /// The host re-arms the interrupt as each MSI arrives (the write goes ahead of register
    /// writes the host model has queued but not yet sent).
    pub rearm_irq: bool,
    /// The event ring (start) and the writes landed in it when the last MSI reached the host.
    ring_writes_at_msi: (u64, u64),
}

impl<D: CardDesign> CardBench<RxHost, D> {
    /// The card with the test host, the ports' addresses set and the memory's max payload size
    /// (as [`crate::testbench::rx_path::RxPathBench::new`]).
    pub fn new(
        kind: EngineKind,
        preset: MemoryPreset,
        mem_stall: f64,
        seed: u64,
    ) -> Result<Self, EngineError> {
        Self::with_link_partner(kind, preset, mem_stall, seed, FlowControl::root_port())
    }

    /// As [`Self::new`], behind a root port with the receive buffers `credits`, advertised from
    /// the card's first cycle after reset on (as when a link comes up; the credit inputs are 0
    /// until then).
    pub fn with_link_partner(
        kind: EngineKind,
        preset: MemoryPreset,
        mem_stall: f64,
        seed: u64,
        credits: FlowControl,
    ) -> Result<Self, EngineError> {
        let host = RxHost::new(MemoryPort::new(preset, mem_stall, seed));
        let mut b = Self::with_host_behind(kind, host, credits)?;
        b.start();
        b.set_addresses();
        Ok(b)
    }
}

impl<H: CardHost, D: CardDesign> CardBench<H, D> {
    /// The card after reset, attached to `host`, nothing configured.
    pub fn with_host(kind: EngineKind, host: H) -> Result<Self, EngineError> {
        Self::with_host_behind(kind, host, FlowControl::root_port())
    }

    /// As [`Self::with_host`], behind a root port with the receive buffers `credits` (fixed from
    /// the link's start, before the card is enumerated).
    pub fn with_host_behind(
        kind: EngineKind,
        host: H,
        credits: FlowControl,
    ) -> Result<Self, EngineError> {
        let (d, net, core) = start_four_port_design::<D>(kind)?;
        let variant = D::Beat::VARIANT;
        let mut host = host;
        host.memory().set_variant(variant);
        let mut rc = RootComplex::new(variant, BAR0_BASE, CARD_ID);
        rc.credits = credits;
        let mut b = Self {
            d,
            net,
            core,
            host,
            rc,
            config: ConfigBus::new(CARD_ID, CONFIG_BUS_PERIOD),
            links: Default::default(),
            link_tx: Default::default(),
            loopback: [None; MAX_PORTS],
            net_cycles: 0,
            rearm_irq: false,
            ring_writes_at_msi: (0, 0),
        };
        // The host finds the card only once it is enumerated; by then the configuration bus has
        // shown the card its ID.
        for _ in 0..17 * CONFIG_BUS_PERIOD {
            b.step_core();
        }
        Ok(b)
    }

    /// Every MSI announces the event records written since the previous one (the card fires only
    /// with records pending), and reaches the host behind them: so at each MSI, a write must have
    /// landed in the event ring since the last (one sent ahead of its record would find none).
    fn check_msi_behind_its_record(&mut self) {
        let Some((ring, landed, before)) = self.ring_writes() else {
            return;
        };
        assert!(
            landed.count > before,
            "an MSI reached the host at core cycle {} with no event record landed in the ring \
             since the previous one ({} ring writes in all)",
            self.host.memory().cycle,
            landed.count
        );
        self.ring_writes_at_msi = (ring, landed.count);
    }

    /// The event ring's start, the writes landed in it so far, and how many of them had landed
    /// at the last MSI (None while no ring is set up).
    fn ring_writes(&mut self) -> Option<(u64, RegionWrites, u64)> {
        let ring = self.host.event_ring()?;
        let landed = self
            .host
            .memory()
            .memory
            .writes_landed(ring)
            .unwrap_or_default();
        let (last_ring, at_msi) = self.ring_writes_at_msi;
        Some((ring, landed, if last_ring == ring { at_msi } else { 0 }))
    }

    /// With interrupts re-armed at every MSI (`rearm_irq`), every record is announced by an MSI
    /// that reaches the host behind it: once the card is quiet, no ring write may have landed
    /// after the last MSI. (An MSI that left ahead of the last of the records it covers would
    /// leave that record unannounced: the host would sleep with it in the ring.) A bench that
    /// sets `rearm_irq` fires at every record (`IrqCount` 1) or lets the card be quiet for longer
    /// than its `IrqMinInterval`, so that the last record's MSI has come.
    pub fn assert_every_record_announced(&mut self) {
        if !self.rearm_irq {
            return;
        }
        let Some((_, landed, at_msi)) = self.ring_writes() else {
            return;
        };
        assert_eq!(
            landed.count,
            at_msi,
            "{} event-ring writes landed after the last MSI (the last at core cycle {}): records \
             no MSI announced",
            landed.count - at_msi,
            landed.last_cycle
        );
    }

    /// Cables ports `a` and `b` together (both directions).
    pub fn wire(&mut self, a: usize, b: usize) {
        self.loopback[a] = Some(b);
        self.loopback[b] = Some(a);
    }

    /// Queues a host write of the register at BAR0 offset `offset`.
    pub fn bar0_write(&mut self, offset: u64, value: u32) {
        self.queue_host_writes();
        self.rc.bar0_write(offset, value);
    }

    /// A host read of the register at BAR0 offset `offset` (after the writes queued before it),
    /// running the cycles until its completion reaches the host.
    pub fn bar0_try_read(&mut self, offset: u64) -> ReadResult {
        self.queue_host_writes();
        let tag = self.rc.bar0_read(offset);
        for _ in 0..100_000 {
            if let Some(r) = self.rc.take_completion(tag) {
                return r;
            }
            self.step_core();
        }
        panic!("no completion for the read of BAR0 offset {offset:#x}");
    }

    /// As [`CardBench::bar0_try_read`], for a read that must succeed.
    pub fn bar0_read(&mut self, offset: u64) -> u32 {
        self.bar0_try_read(offset)
            .unwrap_or_else(|s| panic!("read of BAR0 offset {offset:#x} completed with {s:?}"))
    }

    /// A static ARP cache entry for `host` on `port`.
    pub fn static_arp(&mut self, port: u8, host: &Endpoint) {
        use nanet_contract::offload::{mac_to_regs, Reg, ARP_COMMAND_ADD_STATIC};
        let (hi, lo) = mac_to_regs(host.mac);
        self.bar0_write(bar0::port(port, Reg::ArpStaticIp.word()), host.ip_u32());
        self.bar0_write(bar0::port(port, Reg::ArpStaticMacHi.word()), hi);
        self.bar0_write(bar0::port(port, Reg::ArpStaticMacLo.word()), lo);
        self.bar0_write(
            bar0::port(port, Reg::ArpCommand.word()),
            ARP_COMMAND_ADD_STATIC,
        );
    }

    /// Faults of the card on its MAC transmit interfaces since the last call (a gap inside a
    /// frame).
    pub fn take_link_faults(&mut self) -> Vec<String> {
        crate::testbench::rx_path::take_link_faults(&mut self.link_tx)
    }

    /// Whether every host request has been handed to the card.
    pub fn host_requests_sent(&self) -> bool {
        self.rc.rx_backlog() == 0
    }

    /// Register writes the host model queued on the receive engine's words become BAR0 writes.
    fn queue_host_writes(&mut self) {
        while let Some((word, value)) = self.host.take_core_write() {
            self.rc.bar0_write(bar0::rx_engine(word as u32), value);
        }
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
        }
        // What each port puts on its cable in this cycle.
        let sent: [Option<AvalonStOut>; MAX_PORTS] = std::array::from_fn(|p| {
            (net && o.mac_tx[p].valid && self.d.inputs.mac_tx_ready[p]).then(|| o.mac_tx[p])
        });
        let mut msi = false;
        if core {
            let beat = o.tx_valid.then(|| Beat::from(o.tx));
            self.rc.take_tx(beat, self.host.memory());
            msi = o.msi_req && self.d.inputs.msi_ack;
            if msi {
                self.rc.msi(self.host.memory());
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
            for (from, to) in self.loopback.iter().enumerate() {
                if let Some(to) = to {
                    self.d.inputs.mac_rx[*to] = sent[from].unwrap_or_default();
                }
            }
        }
        if core {
            let before = self.rc.interrupts;
            self.host.end_cycle(o.now);
            self.rc.end_cycle(self.host.memory());
            if self.rc.interrupts != before {
                self.check_msi_behind_its_record();
                self.host.interrupt();
                if self.rearm_irq {
                    // Behind the host's register writes already queued.
                    self.queue_host_writes();
                    self.rc.bar0_write(bar0::rx_engine(RxReg::IrqArm.word()), 1);
                }
                self.rc.interrupts = before;
            }
            self.queue_host_writes();
            let i = &mut self.d.inputs;
            (i.cfg_add, i.cfg_ctl) = self.config.drive();
            // The Hard IP acknowledges an MSI request one cycle after it sees it, once the link
            // partner has posted credits for it; the credits it takes show on `hip_cons` then.
            i.msi_ack = o.msi_req && !msi && self.rc.msi_credit();
            i.cred_hip_cons = if msi { 0b11_0000 } else { 0 };
            let limits = self.rc.advertise_credits();
            i.cred_hdr = limits.hdr;
            i.cred_data = limits.data;
            i.cred_infinite = limits.infinite;
            i.tx_ready = self.rc.tx_ready(self.host.memory());
            i.rx_valid = false;
            // The card's rx_ready of the coming cycle (it depends on its state only).
            let rx_ready = self.d.settle().rx_ready;
            let i = &mut self.d.inputs;
            if let Some((b, bar)) = self.rc.drive_rx(rx_ready) {
                i.rx_valid = true;
                i.rx = Pins::from(b);
                i.rx_bar = bar;
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
}

/// The host's side of a transmit ring, in the test host's memory.
pub struct TxRing {
    /// The ring's number: the port it sends from.
    pub ring: u8,
    pub base: u64,
    pub log2: u32,
    /// Payload buffers, one 2 KiB slot per ring entry.
    pub buffers: u64,
    /// Descriptors posted (the producer index).
    pub tail: u16,
}

impl<D: CardDesign> CardBench<RxHost, D> {
    /// Sets up transmit ring `ring` (port `ring`'s) of `2^log2` descriptors with a payload slot
    /// each, and enables it.
    pub fn tx_ring(&mut self, ring: u8, log2: u32) -> TxRing {
        let n = 1u64 << log2;
        let base = self.host.alloc(n * TX_DESC_BYTES as u64);
        let buffers = self.host.alloc(n * 2048);
        let mem = &mut self.host.port.memory;
        mem.register(base, (n * TX_DESC_BYTES as u64).max(4096), "tx ring")
            .expect("a fresh region");
        mem.register(buffers, n * 2048, "tx buffers")
            .expect("a fresh region");
        let w = |r: TxReg| bar0::tx_ring(ring, r.word());
        self.bar0_write(w(TxReg::RingBaseLo), base as u32);
        self.bar0_write(w(TxReg::RingBaseHi), (base >> 32) as u32);
        self.bar0_write(w(TxReg::RingSize), TX_RING_ENABLE | log2);
        TxRing {
            ring,
            base,
            log2,
            buffers,
            tail: 0,
        }
    }

    /// Writes a datagram's payload and descriptor into the next ring slot (the caller makes
    /// sure the card is done with it) and rings the doorbell.
    pub fn tx_send(&mut self, ring: &mut TxRing, desc: TxDescriptor, payload: &[u8]) {
        self.tx_post(ring, desc, payload);
        self.tx_doorbell(ring);
    }

    /// As [`Self::tx_send`], the payload at `buffer` (16-byte aligned, inside the ring's
    /// buffers; the caller makes sure no datagram in flight uses those bytes).
    pub fn tx_send_from(
        &mut self,
        ring: &mut TxRing,
        desc: TxDescriptor,
        payload: &[u8],
        buffer: u64,
    ) {
        self.tx_post_from(ring, desc, payload, buffer);
        self.tx_doorbell(ring);
    }

    /// As [`Self::tx_send`] without the doorbell: a batch of datagrams posted this way goes
    /// with one [`Self::tx_doorbell`], as the host library's `send_batch` does.
    pub fn tx_post(&mut self, ring: &mut TxRing, desc: TxDescriptor, payload: &[u8]) {
        let slot = ring.tail as u64 % (1 << ring.log2);
        self.tx_post_from(ring, desc, payload, ring.buffers + slot * 2048);
    }

    /// As [`Self::tx_send_from`] without the doorbell.
    pub fn tx_post_from(
        &mut self,
        ring: &mut TxRing,
        mut desc: TxDescriptor,
        payload: &[u8],
        buffer: u64,
    ) {
        debug_assert_eq!(buffer % 16, 0, "payload buffers are 16-byte aligned");
        let slot = ring.tail as u64 % (1 << ring.log2);
        desc.buffer = buffer;
        desc.len = payload.len() as u16;
        let mem = &mut self.host.port.memory;
        mem.write(desc.buffer, payload, &vec![true; payload.len()])
            .expect("the buffer slot");
        let d = desc.encode();
        mem.write(
            ring.base + slot * TX_DESC_BYTES as u64,
            &d,
            &[true; TX_DESC_BYTES],
        )
        .expect("the ring slot");
        ring.tail = ring.tail.wrapping_add(1);
    }

    /// The doorbell: the ring's tail (every datagram posted so far) to the card.
    pub fn tx_doorbell(&mut self, ring: &TxRing) {
        self.bar0_write(
            bar0::tx_ring(ring.ring, TxReg::Tail.word()),
            ring.tail as u32,
        );
    }

    /// The paper's loopback: ports 0 and 1 cabled, port 0's generator sends `count` datagrams of
    /// `len` bytes, `gap` idle network cycles apart, into a CLOP (header layout) on port 1; runs
    /// until every one is delivered (or `limit` core cycles pass). Returns their times of flight
    /// (`RxHost::times_of_flight`), the first one's including the wait for ARP.
    pub fn generator_loopback(
        &mut self,
        len: u32,
        count: u32,
        gap: u32,
        limit: u64,
    ) -> Result<Vec<u32>, String> {
        self.wire(0, 1);
        self.event_ring(8);
        self.map_stream(1, 0);
        self.register(
            ClopSpec {
                port: 1,
                stream: 0,
                buf_size: 8192,
                buf_count: 16,
                page: PageSize::Page4K,
                header: true,
                skip_held: false,
                timeout: 500,
            },
            &[],
        );
        self.expect_generated(0, 1, 0, 4000, len, count);
        let dst = (port_endpoint(1).ip, stream_udp_port(0));
        self.start_generator(0, dst, 4000, len, count, gap);
        for _ in 0..limit {
            if self.host.totals.delivered == count as u64 {
                return Ok(self.host.times_of_flight());
            }
            self.step();
        }
        Err(format!(
            "loopback: {} of {count} datagrams arrived in {limit} cycles",
            self.host.totals.delivered
        ))
    }

    /// A register of transmit ring `ring` (its counters among them).
    pub fn tx_reg(&mut self, ring: u8, r: TxReg) -> u32 {
        self.bar0_read(bar0::tx_ring(ring, r.word()))
    }

    /// The card's consumer index of ring `ring`.
    pub fn tx_head(&mut self, ring: u8) -> u16 {
        self.tx_reg(ring, TxReg::Head) as u16
    }
}

impl<D: CardDesign> FourPortBench for CardBench<RxHost, D> {
    fn links(&mut self) -> &mut [LinkRx; MAX_PORTS] {
        &mut self.links
    }
    fn transmitted(&mut self) -> &mut [LinkTx; MAX_PORTS] {
        &mut self.link_tx
    }
    fn port_write(&mut self, port: u8, word: u32, value: u32) {
        self.bar0_write(bar0::port(port, word), value);
    }
    fn port_read(&mut self, port: u8, word: u32) -> u32 {
        self.bar0_read(bar0::port(port, word))
    }
    fn time_ps(&self) -> u64 {
        self.d.time_ps()
    }
    fn datapath_bits(&self) -> usize {
        D::Beat::VARIANT.beat_bits()
    }
}

/// Behind the DMA writer's stamp, the receive engine's output slice adds a cycle, the TLP layer
/// stores a write whole before sending it (a 256-byte payload is 16 beats at 128 bits, sent
/// behind its header beat: 17 cycles; at 256 bits the header beat carries its first 16 bytes and
/// 8 beats follow: 9 cycles), the slice between the writer and the posted credit gate adds a
/// cycle, the registered transmit path 3 and the root complex takes the write in the cycle after
/// its last beat. (The benchmark's latency rows run on the 128-bit card only, so far.)
impl<D: CardDesign> crate::benchmark::rx::BeatToMemory for CardBench<RxHost, D> {
    const BEAT_TO_MEMORY: u64 = 6 + (16 + 256usize).div_ceil(D::Beat::VARIANT.beat_bytes()) as u64;
}

impl<D: CardDesign> RxCard for CardBench<RxHost, D> {
    fn host(&mut self) -> &mut RxHost {
        &mut self.host
    }

    fn input_empty(&self) -> bool {
        self.links.iter().all(|l| l.is_idle()) && self.rc.rx_backlog() == 0
    }

    fn step(&mut self) {
        self.step_core();
        assert!(
            self.rc.violations.is_empty(),
            "PCIe protocol: {:?}",
            self.rc.violations
        );
        let faults = self.take_link_faults();
        assert!(faults.is_empty(), "MAC transmit interface: {faults:?}");
    }

    fn read_word(&mut self, word: u8) -> u32 {
        self.bar0_read(bar0::rx_engine(word as u32))
    }

    fn check_quiet(&mut self) {
        self.assert_every_record_announced();
    }

    /// Runs until every queued register write has been handed to the card.
    fn flush_writes(&mut self) {
        self.queue_host_writes();
        while self.rc.rx_backlog() > 0 {
            self.step();
        }
    }
}

//! A card: opened through a backend, its event ring set up, its ports configured, its CLOPs
//! registered (see [`crate::clop`]) and its events dispatched.

use std::collections::VecDeque;
use std::os::fd::RawFd;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use nanet_contract::bar0;
use nanet_contract::card::{self, CardReg};
use nanet_contract::events::{EventKind, EVENT_BYTES};
use nanet_contract::offload::{
    self, mac_from_regs, mac_to_regs, ArpRead, ARP_CACHE_ENTRIES, ARP_READ_DONE, ARP_READ_VALID,
};
use nanet_contract::pcie::PcieVariant;
use nanet_contract::rx::program;
use nanet_contract::rx::{
    port as port_regs, PortReg, RxCounter, RxReg, CLOPS, CLOP_COMMAND_BUSY, CLOP_COMMAND_REFUSED,
    DMA_MPS_256, EVENT_QUEUE_ENABLE, MAX_PORTS, STREAMS_PER_PORT, TLB_ENTRIES,
};
use nanet_contract::{Counter, Reg};

use crate::backend::{Backend, DmaMap};
use crate::dma::{DmaMemory, IovaAllocator};
use crate::error::{Error, Result};
use crate::events::{Event, EventRing};
use crate::ownership::{ClopState, Owner};
use crate::pending::Pending;
use crate::release_credits::ReleaseCredits;
use crate::tx_ring::{stop_ring, TxQueue};

/// Records in the event ring (log2).
const EVENT_RING_LOG2: u32 = 10;
/// The host's read position goes to the card at least this often (in records).
const HEAD_UPDATE_EVERY: u16 = 64;
/// Wall time without the card's clock advancing after which a wait gives up.
const CLOCK_STOPPED: Duration = Duration::from_secs(1);
/// [`poll_card`] reads the card's clock once in this many looks.
const CLOCK_EVERY: u64 = 4;
/// How long a CLOP command may take, in the card's own time, before the card is declared stuck.
const COMMAND_TIMEOUT_US: u64 = 2_000_000;

/// A port's addresses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortConfig {
    pub mac: [u8; 6],
    pub ip: [u8; 4],
    pub netmask: [u8; 4],
    pub gateway: [u8; 4],
}

/// An entry of a port's ARP cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArpEntry {
    pub ip: [u8; 4],
    pub mac: [u8; 6],
}

/// The library's view of the card's shared resources.
pub(crate) struct State {
    pub ring: EventRing,
    /// Events read from the ring and not yet taken by the application, per CLOP, bounded.
    pub pending: Pending,
    pub clops: [Option<ClopState>; CLOPS],
    pub tlb_used: [bool; TLB_ENTRIES],
    /// Per port, the UDP port of each Multi-Stream entry in use.
    pub streams: [[Option<u16>; STREAMS_PER_PORT]; MAX_PORTS],
    /// Per port, the order in which free entries are handed out (least recently freed first, so a
    /// just-freed entry, whose datagrams may still be in the card's FIFOs, is reused last).
    pub free_entries: [VecDeque<u8>; MAX_PORTS],
    /// Records for CLOPs that were deregistered before they were read (dropped).
    pub stale_events: u64,
    /// The last read position written to the card.
    pub head_written: u16,
    /// Transmit event records seen, of any ring (transmit errors: see `Device::tx_counters`).
    pub tx_events: u64,
    /// Whether the card should still be armed for an interrupt by our last arm write: the card
    /// disarms when it fires, which needs a record (read here later) or wakes our sleep. Spares a
    /// posted write per turn of a wait loop; a simulated card far slower than the host would queue
    /// thousands of them ahead of the next read.
    pub irq_armed: bool,
    /// Releases waiting for room in the card's queue (CLOP, buffer), in order: written by the next
    /// release or poll that finds room (the count of room is `Inner::releases`).
    pub release_backlog: VecDeque<(u8, u16)>,
}

pub(crate) struct Inner {
    pub backend: Arc<dyn Backend>,
    pub iovas: Arc<IovaAllocator>,
    /// DMA memory in 2 MiB hugepages (`NANET_HUGEPAGES=1`).
    pub hugepages: bool,
    /// The library's view of the card. Held only for bookkeeping and reads of the event ring:
    /// never across pinning, IOMMU mapping or a wait on the card.
    state: Mutex<State>,
    /// Serialises every sequence of writes through the card's shared staging registers and the
    /// command that commits them (TLB entries, CLOP configure and disable, ARP, the generator),
    /// and the wait for that command: two threads' sequences interleaved would commit one's
    /// values under the other's command. Taken before the state lock, never while holding it.
    command: Mutex<()>,
    /// Room in the card's release queue by the library's count (a release takes it without the
    /// state lock).
    releases: ReleaseCredits,
    /// The transmit rings, one per port (ring `p` sends from port `p`), each locked apart so
    /// that ports send in parallel.
    pub tx: Vec<Mutex<TxQueue>>,
    /// The card's ports (its card block says; 1 to `MAX_PORTS`).
    ports: usize,
    #[cfg(feature = "sim")]
    sim: Option<Arc<crate::backend::sim::SimBackend>>,
}

/// An open card.
#[derive(Clone)]
pub struct Device {
    pub(crate) inner: Arc<Inner>,
}

impl State {
    /// Forgets the releases of `clop` not yet written (it is being deregistered).
    pub(crate) fn forget_releases(&mut self, clop: u8) {
        self.release_backlog.retain(|&(c, _)| c != clop);
    }
}

/// The provider of a CLOP's memory, told before one of its buffers is handed out.
type ProviderRef = Arc<dyn crate::MemoryProvider>;

/// The card's `releases_taken` counter: releases its CLOP engine took from the release queue.
fn read_releases_taken(backend: &dyn Backend) -> Result<u32> {
    backend.read32(bar0::rx_engine(RxCounter::ReleasesTaken.word()))
}

impl Device {
    /// Opens a card: `"sim"` (or `"sim:engine=verilator,memory=gen2x8,..."`, see
    /// [`crate::backend::sim::SimOptions`]) for the simulated card, or a PCI address such as
    /// `"0000:03:00.0"` for a card bound to vfio-pci.
    pub fn open(name: &str) -> Result<Device> {
        if name == "sim" || name.starts_with("sim:") {
            return Self::open_sim(name.strip_prefix("sim").unwrap().trim_start_matches(':'));
        }
        if crate::backend::vfio::is_pci_address(name) {
            let backend = crate::backend::vfio::VfioBackend::open(name)?;
            return Self::with_backend(Arc::new(backend));
        }
        Err(Error::UnknownDevice(name.to_string()))
    }

    #[cfg(feature = "sim")]
    fn open_sim(options: &str) -> Result<Device> {
        let options = crate::backend::sim::SimOptions::parse(options)?;
        let sim = Arc::new(crate::backend::sim::SimBackend::start(options)?);
        let mut d = Self::with_backend(sim.clone())?;
        Arc::get_mut(&mut d.inner).expect("not shared yet").sim = Some(sim);
        Ok(d)
    }

    #[cfg(not(feature = "sim"))]
    fn open_sim(_: &str) -> Result<Device> {
        Err(Error::NoSim)
    }

    /// Takes over a card through `backend`: checks it is a nanet card, clears whatever an earlier
    /// user left (CLOPs, TLB, Multi-Stream tables), sets up the event ring, the interrupt and a
    /// transmit ring per port.
    pub fn with_backend(backend: Arc<dyn Backend>) -> Result<Device> {
        let ports = check_card(&*backend)?;
        let id = backend.read32(bar0::port(0, Reg::Id.word()))?;
        if id != offload::ID_VALUE {
            return Err(Error::Card(format!(
                "{} is not a nanet card: its ID register reads {id:#010x}, not {:#010x}",
                backend.describe(),
                offload::ID_VALUE
            )));
        }
        let rx = |r: RxReg| bar0::rx_engine(r.word());
        quiesce(&*backend, ports)?;
        // Only a card that writes nothing it was told by an earlier program may reach memory.
        backend.enable_bus_master()?;
        let mps = if backend.max_payload() >= 256 {
            DMA_MPS_256
        } else {
            0
        };
        backend.write32(rx(RxReg::DmaControl), mps)?;
        let iovas = Arc::new(IovaAllocator::new(&backend.iova_ranges()));
        let hugepages = std::env::var("NANET_HUGEPAGES").is_ok_and(|v| v == "1");
        let ring_memory = DmaMemory::new(
            backend.clone(),
            &iovas,
            EVENT_BYTES << EVENT_RING_LOG2,
            hugepages,
            DmaMap::CARD_WRITES,
        )?;
        let mut ring = EventRing::new(ring_memory, EVENT_RING_LOG2);
        backend.write32(rx(RxReg::EventQueueBaseLo), ring.iova() as u32)?;
        backend.write32(rx(RxReg::EventQueueBaseHi), (ring.iova() >> 32) as u32)?;
        backend.write32(rx(RxReg::EventQueueHead), 0)?;
        // From the event queue's enable on, a failure stops it before its ring is freed.
        let start = || -> Result<(u32, Vec<Mutex<TxQueue>>)> {
            backend.write32(
                rx(RxReg::EventQueueSize),
                EVENT_QUEUE_ENABLE | EVENT_RING_LOG2,
            )?;
            // An interrupt for every record, as soon as the host has armed it.
            backend.write32(rx(RxReg::IrqMinInterval), 0)?;
            backend.write32(rx(RxReg::IrqCount), 1)?;
            // Every command above is done once a read returns.
            wait_command_idle(&*backend, 0)?;
            let releases_taken = read_releases_taken(&*backend)?;
            let tx = (0..ports as u8)
                .map(|r| Ok(Mutex::new(TxQueue::new(&backend, &iovas, hugepages, r)?)))
                .collect::<Result<_>>()?;
            Ok((releases_taken, tx))
        };
        let (releases_taken, tx) = match start() {
            Ok(v) => v,
            Err(e) => {
                // (The transmit rings set up already were stopped as they were dropped.)
                if stop_event_queue(&*backend).is_err() {
                    ring.abandon();
                }
                return Err(e);
            }
        };
        let state = State {
            ring,
            pending: Pending::new(),
            clops: std::array::from_fn(|_| None),
            tlb_used: [false; TLB_ENTRIES],
            streams: [[None; STREAMS_PER_PORT]; MAX_PORTS],
            free_entries: std::array::from_fn(|_| (0..STREAMS_PER_PORT as u8).collect()),
            stale_events: 0,
            head_written: 0,
            tx_events: 0,
            irq_armed: false,
            release_backlog: VecDeque::new(),
        };
        Ok(Device {
            inner: Arc::new(Inner {
                backend,
                iovas,
                hugepages,
                state: Mutex::new(state),
                command: Mutex::new(()),
                releases: ReleaseCredits::new(releases_taken),
                tx,
                ports,
                #[cfg(feature = "sim")]
                sim: None,
            }),
        })
    }

    /// The simulated card's far end (links, statistics), when this is the simulated card.
    #[cfg(feature = "sim")]
    pub fn sim(&self) -> Option<Arc<crate::backend::sim::SimBackend>> {
        self.inner.sim.clone()
    }

    pub fn describe(&self) -> String {
        self.inner.backend.describe()
    }

    /// The card's port count, from its card block.
    pub fn ports(&self) -> usize {
        self.inner.ports
    }

    pub(crate) fn state(&self) -> MutexGuard<'_, State> {
        self.inner.state.lock().unwrap()
    }

    /// The command lock (see `Inner::command`): held through a staging sequence, its command
    /// and the wait for it.
    pub(crate) fn command(&self) -> MutexGuard<'_, ()> {
        self.inner.command.lock().unwrap()
    }

    /// Reads any BAR0 register by byte offset (diagnostics; the typed calls are the API).
    pub fn read_register(&self, offset: u64) -> Result<u32> {
        self.inner.backend.read32(offset)
    }

    /// The PCIe variant the card was generated for (its card block's `pcie` word); `None` for a
    /// card of contract 3.0, which does not say, or a variant this library does not know.
    pub fn pcie(&self) -> Result<Option<PcieVariant>> {
        Ok(PcieVariant::from_word(
            self.read_register(4 * CardReg::Pcie.word() as u64)?,
        ))
    }

    #[inline]
    pub(crate) fn write_rx(&self, r: RxReg, value: u32) -> Result<()> {
        self.inner.backend.write32(bar0::rx_engine(r.word()), value)
    }

    pub(crate) fn read_rx(&self, r: RxReg) -> Result<u32> {
        self.inner.backend.read32(bar0::rx_engine(r.word()))
    }

    pub(crate) fn check_port(&self, port: u8) -> Result<()> {
        if (port as usize) < self.ports() {
            Ok(())
        } else {
            Err(Error::NoSuchPort {
                port,
                ports: self.ports(),
            })
        }
    }

    pub(crate) fn write_port(&self, port: u8, word: u32, value: u32) -> Result<()> {
        self.check_port(port)?;
        self.inner.backend.write32(bar0::port(port, word), value)
    }

    /// Writes a port register and returns once the card has it: register writes are posted, a
    /// read on the same path returns only after them.
    pub(crate) fn write_port_flushed(&self, port: u8, word: u32, value: u32) -> Result<()> {
        self.write_port(port, word, value)?;
        self.read_port(port, word).map(drop)
    }

    pub(crate) fn read_port(&self, port: u8, word: u32) -> Result<u32> {
        self.check_port(port)?;
        self.inner.backend.read32(bar0::port(port, word))
    }

    /// Sets a port's MAC and IPv4 addresses (in effect when this returns).
    pub fn configure_port(&self, port: u8, c: &PortConfig) -> Result<()> {
        let (hi, lo) = mac_to_regs(c.mac);
        // The MAC's two halves take effect together only if no other thread writes between.
        let _command = self.command();
        self.write_port(port, Reg::MacHi.word(), hi)?;
        self.write_port(port, Reg::MacLo.word(), lo)?;
        self.write_port(port, Reg::Ip.word(), u32::from_be_bytes(c.ip))?;
        self.write_port(port, Reg::Netmask.word(), u32::from_be_bytes(c.netmask))?;
        self.write_port_flushed(port, Reg::Gateway.word(), u32::from_be_bytes(c.gateway))
    }

    /// A port's addresses as the card has them.
    pub fn port_config(&self, port: u8) -> Result<PortConfig> {
        let r = |reg: Reg| self.read_port(port, reg.word());
        Ok(PortConfig {
            mac: mac_from_regs(r(Reg::MacHi)?, r(Reg::MacLo)?),
            ip: r(Reg::Ip)?.to_be_bytes(),
            netmask: r(Reg::Netmask)?.to_be_bytes(),
            gateway: r(Reg::Gateway)?.to_be_bytes(),
        })
    }

    /// A port's counters: the offload core's (every drop reason) and its receive side's.
    pub fn port_counters(&self, port: u8) -> Result<Vec<(&'static str, u32)>> {
        let mut out = vec![];
        for c in Counter::ALL {
            out.push((c.name(), self.read_port(port, c.word())?));
        }
        for r in [
            PortReg::DropNoStream,
            PortReg::DropFifoFull,
            PortReg::Forwarded,
        ] {
            out.push((r.name(), self.read_port(port, r.word())?));
        }
        Ok(out)
    }

    /// The card's Multi-Stream table of a port: (CLOP id, UDP port) of every valid entry, whoever
    /// registered it.
    pub fn streams(&self, port: u8) -> Result<Vec<(u8, u16)>> {
        let mut out = vec![];
        for e in 0..STREAMS_PER_PORT as u32 {
            let v = self.read_port(port, port_regs::STREAM_ENTRY + e)?;
            if v & port_regs::STREAM_VALID != 0 {
                out.push(((port as u32 * STREAMS_PER_PORT as u32 + e) as u8, v as u16));
            }
        }
        Ok(out)
    }

    /// The port's ARP cache: every valid entry (learned from ARP packets for us, or static).
    pub fn arp_table(&self, port: u8) -> Result<Vec<ArpEntry>> {
        let mut out = vec![];
        // The readout registers are shared: one readout at a time.
        let _command = self.command();
        for index in 0..ARP_CACHE_ENTRIES as u32 {
            self.write_port(port, ArpRead::Command.word(), index)?;
            let mut status = 0;
            // A readout takes the cache a few network cycles.
            let what = format!("port {port}: the ARP cache readout of entry {index}");
            self.wait_card_until(&what, 1_000, || {
                status = self.read_port(port, ArpRead::Command.word())?;
                Ok(status & ARP_READ_DONE != 0 && status & 0xFF == index)
            })?;
            if status & ARP_READ_VALID != 0 {
                out.push(ArpEntry {
                    ip: self.read_port(port, ArpRead::Ip.word())?.to_be_bytes(),
                    mac: mac_from_regs(
                        self.read_port(port, ArpRead::MacHi.word())?,
                        self.read_port(port, ArpRead::MacLo.word())?,
                    ),
                });
            }
        }
        Ok(out)
    }

    /// Adds a static entry to a port's ARP cache (it replaces the entry for the same low byte).
    pub fn add_arp_entry(&self, port: u8, entry: ArpEntry) -> Result<()> {
        let (hi, lo) = mac_to_regs(entry.mac);
        let _command = self.command();
        self.write_port(port, Reg::ArpStaticIp.word(), u32::from_be_bytes(entry.ip))?;
        self.write_port(port, Reg::ArpStaticMacHi.word(), hi)?;
        self.write_port(port, Reg::ArpStaticMacLo.word(), lo)?;
        self.write_port_flushed(
            port,
            Reg::ArpCommand.word(),
            offload::ARP_COMMAND_ADD_STATIC,
        )
    }

    /// Empties a port's ARP cache and waits until the flush is done.
    pub fn flush_arp(&self, port: u8) -> Result<()> {
        let _command = self.command();
        self.write_port(port, Reg::ArpCommand.word(), offload::ARP_COMMAND_FLUSH)?;
        // A flush visits the cache's entries once: microseconds.
        self.wait_card_until(&format!("the ARP flush of port {port}"), 1_000, || {
            Ok(self.read_port(port, Reg::Status.word())? & offload::STATUS_ARP_FLUSHING == 0)
        })
    }

    /// Polls `done` until it holds, or fails with [`Error::CardStuck`] once `limit_us` of the
    /// card's own time have passed (card time, not wall time: the simulated card runs slower
    /// than real time, and a wall-clock bound would fire on it), or with [`Error::ClockStopped`].
    pub(crate) fn wait_card_until(
        &self,
        what: &str,
        limit_us: u64,
        done: impl FnMut() -> Result<bool>,
    ) -> Result<()> {
        match poll_card(&*self.inner.backend, what, limit_us, done)? {
            None => Ok(()),
            Some(waited_us) => Err(Error::CardStuck {
                what: what.to_string(),
                waited_us,
            }),
        }
    }

    /// Returns once every register write made so far has reached the card. Writes are posted
    /// (the call returns before the card has them), buffer releases above all, for speed; a
    /// program that needs the card to have a released buffer before traffic it causes itself
    /// (a request/response exchange, a test) calls this in between. A read on the same path
    /// returns only after the writes before it; the card takes a release before the next packet.
    /// Releases the library still keeps (the card's release queue had no room) are written first,
    /// as the card takes the ones before: an error if they are not all written within 2 s of the
    /// card's time.
    pub fn flush_writes(&self) -> Result<()> {
        if !self.state().release_backlog.is_empty() {
            // Releases still waiting for room in the card's queue: written as the card takes
            // the ones before (the ring read on meanwhile, in case the engine waits for room
            // there). The state lock is taken per look, not across the wait.
            let mut left = 0;
            let waited = poll_card(
                &*self.inner.backend,
                "room in the release queue",
                COMMAND_TIMEOUT_US,
                || {
                    let mut st = self.state();
                    self.drain_ring(&mut st)?;
                    self.send_releases(&mut st)?;
                    left = st.release_backlog.len();
                    Ok(left == 0)
                },
            )?;
            if let Some(waited_us) = waited {
                return Err(Error::CardStuck {
                    what: format!("room in the release queue ({left} releases not written)"),
                    waited_us,
                });
            }
        }
        self.read_rx(RxReg::Now).map(drop)
    }

    /// Gives `buffer` of CLOP `clop` back to the card: written at once while the card's release
    /// queue has room by the library's count (without the state lock), else kept in order and
    /// written by a later release or poll (the buffer is the card's either way: the application
    /// no longer holds it).
    #[inline]
    pub(crate) fn release(&self, clop: u8, buffer: u16) -> Result<()> {
        let credits = &self.inner.releases;
        if !credits.backlogged() && credits.take() {
            let (r, v) = program::release(clop, buffer);
            crate::barrier::loads_before_handing_back();
            let Err(e) = self.write_rx(r, v) else {
                return Ok(());
            };
            // Not written: kept for a later try, its credit given back.
            credits.give_back();
            let mut st = self.state();
            st.release_backlog.push_back((clop, buffer));
            credits.set_backlogged(true);
            return Err(e);
        }
        let mut st = self.state();
        st.release_backlog.push_back((clop, buffer));
        credits.set_backlogged(true);
        self.send_releases(&mut st)
    }

    /// Releases the library keeps because the card's release queue had no room when they were
    /// made (written by the next release, poll or [`Device::flush_writes`] that finds room).
    pub fn releases_waiting(&self) -> usize {
        self.state().release_backlog.len()
    }

    /// Writes waiting releases while the card's release queue has room: when the library's count
    /// says it is full, one read of `releases_taken` (what the card took since) tells.
    fn send_releases(&self, st: &mut State) -> Result<()> {
        let credits = &self.inner.releases;
        while let Some(&(clop, buffer)) = st.release_backlog.front() {
            if !credits.take() {
                if credits.card_took(read_releases_taken(&*self.inner.backend)?) {
                    continue;
                }
                break;
            }
            let (r, v) = program::release(clop, buffer);
            crate::barrier::loads_before_handing_back();
            if let Err(e) = self.write_rx(r, v) {
                // Still kept (the backlog stays marked), its credit given back.
                credits.give_back();
                return Err(e);
            }
            st.release_backlog.pop_front();
        }
        credits.set_backlogged(!st.release_backlog.is_empty());
        Ok(())
    }

    /// The receive engine's counters.
    pub fn rx_counters(&self) -> Result<Vec<(&'static str, u32)>> {
        RxCounter::ALL
            .iter()
            .map(|c| {
                let v = self.inner.backend.read32(bar0::rx_engine(c.word()))?;
                Ok((c.name(), v))
            })
            .collect()
    }

    /// The card's core cycle counter (the clock of every event timestamp).
    pub fn now_cycles(&self) -> Result<u32> {
        self.read_rx(RxReg::Now)
    }

    /// The interrupt as a file descriptor for epoll/poll/tokio: readable when the card raised an
    /// interrupt since the last [`Device::wait`]. Arm it with [`Device::arm_interrupt`] before
    /// sleeping on it, then call [`Device::poll`].
    pub fn event_fd(&self) -> RawFd {
        self.inner.backend.irq_fd()
    }

    /// Asks the card for an interrupt at the next event record.
    pub fn arm_interrupt(&self) -> Result<()> {
        self.state().irq_armed = true;
        self.write_rx(RxReg::IrqArm, 1)
    }

    /// Takes the interrupts the event fd counted since the last call (0 if none; never blocks),
    /// for a program that sleeps on [`Device::event_fd`] itself: then poll, and arm again.
    pub fn clear_interrupt(&self) -> Result<u64> {
        let n = read_eventfd(self.event_fd())?;
        if n > 0 {
            self.interrupt_taken()?;
        }
        Ok(n)
    }

    /// After an interrupt was read from the event fd: the card disarmed when it fired, and a
    /// level interrupt the kernel masked is unmasked for the next one.
    fn interrupt_taken(&self) -> Result<()> {
        self.state().irq_armed = false;
        self.inner.backend.interrupt_taken()
    }

    /// As [`Device::arm_interrupt`], unless our last arm has not fired yet.
    fn arm_interrupt_unless_armed(&self) -> Result<()> {
        if self.state().irq_armed {
            return Ok(());
        }
        self.arm_interrupt()
    }

    /// Records dropped because their CLOP was deregistered before they were read.
    pub fn stale_events(&self) -> u64 {
        self.state().stale_events
    }

    /// Looks at the event ring that found the next record's first word written and the rest not
    /// yet (the record was taken on a later look, once all of it had landed).
    pub fn incomplete_record_looks(&self) -> u64 {
        self.state().ring.incomplete_looks()
    }

    /// The next record from the ring for a registered CLOP (buffer ownership updated); records of
    /// CLOPs deregistered meanwhile are dropped.
    #[inline]
    fn next_record(&self, st: &mut State) -> Result<Option<Event>> {
        while let Some(e) = st.ring.next()? {
            st.irq_armed = false;
            let index = st.ring.head().wrapping_sub(1);
            if matches!(e.kind, EventKind::TxDone | EventKind::TxError) {
                // The library asks for no transmit events; an error is counted by the card too.
                st.tx_events += 1;
                continue;
            }
            match st.clops[e.clop as usize].as_mut() {
                Some(c) => {
                    c.on_event(&e)
                        .map_err(|why| Error::BadEvent { index, why })?;
                    return Ok(Some(e));
                }
                None => st.stale_events += 1,
            }
        }
        Ok(None)
    }

    /// Keeps a record read for another reader, or, when its CLOP already has as many waiting as
    /// it may, drops it: counted for the CLOP, and the buffer it reported given back to the card
    /// (unless the application released it blindly meanwhile).
    fn park(&self, st: &mut State, e: Event) {
        let Err(e) = st.pending.push(e) else {
            return;
        };
        let Some(c) = st.clops[e.clop as usize].as_mut() else {
            return;
        };
        c.dropped += 1;
        if e.is_buffer() && c.owners.swap(e.buffer, Owner::Held, Owner::Card) {
            st.release_backlog.push_back((e.clop, e.buffer));
            self.inner.releases.set_backlogged(true);
        }
    }

    /// Tells the card how far the host has read: every [`HEAD_UPDATE_EVERY`] records, and
    /// whenever the ring is empty (so the card is never held back by records already read).
    #[inline]
    fn update_head(&self, st: &mut State, force: bool) -> Result<()> {
        let head = st.ring.head();
        if head != st.head_written
            && (force
                || head.wrapping_sub(st.head_written) >= HEAD_UPDATE_EVERY
                || !st.ring.ready())
        {
            crate::barrier::loads_before_handing_back();
            self.write_rx(RxReg::EventQueueHead, head as u32)?;
            st.head_written = head;
        }
        Ok(())
    }

    /// Reads every new record from the ring into the pending queues.
    pub(crate) fn drain_ring(&self, st: &mut State) -> Result<()> {
        while let Some(e) = self.next_record(st)? {
            self.park(st, e);
        }
        self.update_head(st, true)
    }

    /// The next event, of any CLOP, if one is there (never blocks).
    #[inline]
    pub fn poll(&self) -> Result<Option<Event>> {
        self.poll_for(None)
    }

    /// The next event of CLOP `clop` (or of any CLOP), if one is there. A buffer in provided
    /// memory (a GPU's) is handed out only once its provider made the card's writes visible.
    #[inline]
    pub(crate) fn poll_for(&self, clop: Option<u8>) -> Result<Option<Event>> {
        let (event, provider) = self.take_event(clop)?;
        if let (Some(e), Some(p)) = (&event, provider) {
            // Outside the state lock: a GPU driver call.
            if let Err(err) = p.card_writes_landed() {
                // Kept for the next poll, which tries again.
                let mut st = self.state();
                self.park(&mut st, *e);
                return Err(err);
            }
        }
        Ok(event)
    }

    /// [`Device::poll_for`] under the state lock, with the provider of the event's buffer.
    #[inline]
    fn take_event(&self, clop: Option<u8>) -> Result<(Option<Event>, Option<ProviderRef>)> {
        let mut st = self.state();
        let provider_of = |st: &State, e: &Event| {
            if !e.is_buffer() {
                return None;
            }
            st.clops[e.clop as usize].as_ref()?.provider.clone()
        };
        if !st.release_backlog.is_empty() {
            self.send_releases(&mut st)?;
        }
        if !st.pending.is_empty() {
            let parked = match clop {
                Some(c) => st.pending.pop(c),
                None => st.pending.pop_oldest(),
            };
            if let Some(e) = parked {
                return Ok((Some(e), provider_of(&st, &e)));
            }
        }
        // Straight from the ring; records for others wait in their queues.
        while let Some(e) = self.next_record(&mut st)? {
            if clop.is_none_or(|c| c == e.clop) {
                self.update_head(&mut st, false)?;
                return Ok((Some(e), provider_of(&st, &e)));
            }
            self.park(&mut st, e);
        }
        self.update_head(&mut st, true)?;
        Ok((None, None))
    }

    /// The next event of any CLOP, waiting up to `timeout` for one (sleeping on the interrupt).
    pub fn wait(&self, timeout: Duration) -> Result<Option<Event>> {
        self.wait_for(timeout, None)
    }

    /// The next event of CLOP `clop` (or of any CLOP), waiting up to `timeout`.
    pub(crate) fn wait_for(&self, timeout: Duration, clop: Option<u8>) -> Result<Option<Event>> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(e) = self.poll_for(clop)? {
                return Ok(Some(e));
            }
            self.arm_interrupt_unless_armed()?;
            // An event may have landed before the arm took effect.
            if let Some(e) = self.poll_for(clop)? {
                return Ok(Some(e));
            }
            let now = Instant::now();
            if now >= deadline {
                return Ok(None);
            }
            // Short sleeps: another thread may have taken the interrupt meant for this one.
            // Another thread may also have taken the interrupt (and left our flag set): the next
            // turn's poll still finds the record within 5 ms, and clears the flag.
            if sleep_on_fd(
                self.event_fd(),
                (deadline - now).min(Duration::from_millis(5)),
            )? {
                self.interrupt_taken()?;
            }
        }
    }
}

/// Stops whatever an earlier program left running on the card, before bus mastering lets it reach
/// memory: every CLOP (one at a time: the card refuses a command while another waits), the TLB,
/// the Multi-Stream tables, the event queue, every transmit ring (each drained: see
/// [`stop_ring`]) and the packet generators.
fn quiesce(backend: &dyn Backend, ports: usize) -> Result<()> {
    let rx = |r: RxReg| bar0::rx_engine(r.word());
    for c in 0..CLOPS as u8 {
        let (r, v) = program::clop_disable(c);
        backend.write32(rx(r), v)?;
        wait_command_idle(backend, c)?;
    }
    for slot in 0..TLB_ENTRIES as u32 {
        let (r, v) = program::tlb_invalidate(slot);
        backend.write32(rx(r), v)?;
    }
    for p in 0..ports as u8 {
        for e in 0..STREAMS_PER_PORT as u32 {
            backend.write32(bar0::port(p, port_regs::STREAM_TABLE), e << 16)?;
        }
        backend.write32(
            bar0::port(p, PortReg::GenControl.word()),
            port_regs::GEN_STOP,
        )?;
    }
    backend.write32(rx(RxReg::EventQueueSize), 0)?;
    for r in 0..ports as u8 {
        stop_ring(backend, r)?;
    }
    // Every write above has reached the card once a read returns.
    wait_command_idle(backend, 0)
}

/// Stops the card's event queue: once this returns the card writes no more records.
fn stop_event_queue(backend: &dyn Backend) -> Result<()> {
    backend.write32(bar0::rx_engine(RxReg::EventQueueSize.word()), 0)?;
    // A read returns only after the write before it reached the card, and after every record
    // the card wrote before it landed.
    wait_command_idle(backend, 0)
}

impl Drop for Inner {
    /// The card lets go of the rings before they are unmapped: the transmit rings first (their
    /// drain may still post a record), then the event queue; each stop read back. A ring the card
    /// may still reach is left mapped (and its memory leaked), never freed.
    fn drop(&mut self) {
        let backend = &*self.backend;
        let stopped = (0..self.tx.len() as u8)
            .try_for_each(|r| stop_ring(backend, r))
            .and_then(|()| stop_event_queue(backend));
        if let Err(e) = stopped {
            eprintln!(
                "nanet: stopping {}'s rings failed ({e}); their memory stays mapped and is leaked",
                self.backend.describe()
            );
            self.state
                .get_mut()
                .unwrap_or_else(|p| p.into_inner())
                .ring
                .abandon();
            for q in &mut self.tx {
                q.get_mut().unwrap_or_else(|p| p.into_inner()).abandon();
            }
        }
    }
}

/// Checks the card block: the magic, a contract major version this library speaks, a port count
/// this library knows, and a block table with every block where this library's contract puts it
/// (a transmit ring per port among them). Returns the port count.
fn check_card(backend: &dyn Backend) -> Result<usize> {
    let word = |r: CardReg| backend.read32(4 * r.word() as u64);
    let magic = word(CardReg::Magic)?;
    if magic != card::CARD_MAGIC {
        return Err(Error::Card(format!(
            "{} is not a nanet card: BAR0 offset 0 reads {magic:#010x}, not {:#010x} (\"NaNt\")",
            backend.describe(),
            card::CARD_MAGIC
        )));
    }
    let version = word(CardReg::Version)?;
    if version >> 16 != card::CONTRACT_MAJOR as u32 {
        return Err(Error::Card(format!(
            "{} speaks contract version {}.{}, this library {}.{}: update the gateware or the library",
            backend.describe(),
            version >> 16,
            version & 0xFFFF,
            card::CONTRACT_MAJOR,
            card::CONTRACT_MINOR
        )));
    }
    let ports = word(CardReg::Ports)? as usize;
    if !(1..=MAX_PORTS).contains(&ports) {
        return Err(Error::Card(format!(
            "{} says it has {ports} ports; this library knows cards of 1 to {MAX_PORTS}",
            backend.describe()
        )));
    }
    let blocks = word(CardReg::Blocks)?;
    let mut found = Vec::new();
    for i in 0..blocks.min(64) {
        let w = backend.read32(4 * (card::BLOCK_TABLE + i) as u64)?;
        found.extend(card::BlockEntry::decode(w));
    }
    for want in card::block_table(ports) {
        if !found.contains(&want) {
            return Err(Error::Card(format!(
                "{}: its block table has no {:?} {} at BAR0 {:#x} (it lists {found:?})",
                backend.describe(),
                want.kind,
                want.instance,
                want.offset
            )));
        }
    }
    Ok(ports)
}

/// Polls `done` until it holds (`None`), or until `limit_us` of the card's own time have passed
/// (`Some`: the card time waited, in µs). Card time, not wall time: a simulated card runs
/// thousands of times slower than a real one, slower still in lockstep on a busy machine, and a
/// wall-clock bound would fire on it. A clock that stands still for [`CLOCK_STOPPED`] of wall
/// time is [`Error::ClockStopped`]; one that reads all ones twice in a row (a failed read: the
/// counter is at all ones for one cycle in 17 s) is a card that is gone.
pub(crate) fn poll_card(
    backend: &dyn Backend,
    what: &str,
    limit_us: u64,
    mut done: impl FnMut() -> Result<bool>,
) -> Result<Option<u64>> {
    let per_us = nanet_contract::events::CORE_HZ / 1_000_000;
    let now = || -> Result<u32> {
        let read = || backend.read32(bar0::rx_engine(RxReg::Now.word()));
        match read()? {
            u32::MAX if read()? == u32::MAX => Err(Error::Card(format!(
                "{}: the card's clock reads all ones while the library waits for {what} (the \
                 read failed, or the card is gone)",
                backend.describe()
            ))),
            t => Ok(t),
        }
    };
    // The clock is read once in `CLOCK_EVERY` looks, first after as many (most waits end
    // sooner), so that looks through the card's registers follow each other closely; the few
    // looks before the first reading are not counted against the limit.
    let mut clock: Option<(u32, u32, Instant)> = None; // start, last reading, when it changed
    let mut looks = 0u64;
    loop {
        if done()? {
            return Ok(None);
        }
        looks += 1;
        if !looks.is_multiple_of(CLOCK_EVERY) {
            continue;
        }
        let t = now()?;
        let (start, last, last_change) = clock.get_or_insert((t, t, Instant::now()));
        let waited = t.wrapping_sub(*start) as u64;
        if t != *last {
            (*last, *last_change) = (t, Instant::now());
        }
        if last_change.elapsed() > CLOCK_STOPPED {
            return Err(Error::ClockStopped {
                what: what.to_string(),
            });
        }
        if waited > limit_us * per_us {
            return Ok(Some(waited / per_us));
        }
    }
}

/// Waits until the CLOP command register reads idle (a read also orders every earlier write);
/// an error if the card refused the command, or did not finish it within 2 s of its own time.
pub(crate) fn wait_command_idle(backend: &dyn Backend, clop: u8) -> Result<()> {
    let what = format!("the command on CLOP {clop}");
    let waited = poll_card(backend, &what, COMMAND_TIMEOUT_US, || {
        let v = backend.read32(bar0::rx_engine(RxReg::ClopCommand.word()))?;
        if v == u32::MAX {
            return Err(Error::Card(format!(
                "{}: the CLOP command register reads all ones (the read failed, or the card is \
                 gone)",
                backend.describe()
            )));
        }
        if v & CLOP_COMMAND_REFUSED != 0 {
            return Err(Error::CommandRefused { clop });
        }
        Ok(v & CLOP_COMMAND_BUSY == 0)
    })?;
    match waited {
        None => Ok(()),
        Some(us) => Err(Error::CommandTimeout {
            clop,
            waited: Duration::from_micros(us),
        }),
    }
}

/// Sleeps until `fd` is readable or `timeout`; returns whether it read an interrupt.
fn sleep_on_fd(fd: RawFd, timeout: Duration) -> Result<bool> {
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    let ms = timeout.as_millis().clamp(1, i32::MAX as u128) as i32;
    // SAFETY: one valid pollfd.
    let r = unsafe { libc::poll(&mut p, 1, ms) };
    if r < 0 {
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e.into());
        }
    }
    Ok(r > 0 && read_eventfd(fd)? > 0)
}

/// Takes the count of the non-blocking eventfd `fd` (0 when nothing arrived; never blocks).
fn read_eventfd(fd: RawFd) -> Result<u64> {
    let mut buf = [0u8; 8];
    // SAFETY: reading 8 bytes from the non-blocking eventfd into a buffer of 8.
    let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), 8) };
    if n == 8 {
        return Ok(u64::from_ne_bytes(buf));
    }
    let e = std::io::Error::last_os_error();
    if n < 0 && e.kind() == std::io::ErrorKind::WouldBlock {
        return Ok(0);
    }
    Err(Error::Io(e))
}

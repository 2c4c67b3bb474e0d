//! CLOPs from the application's side: registration (memory, TLB entries, Multi-Stream entry, the
//! card's CLOP command), filled buffers lent to the application and given back, deregistration
//! that quiesces the card before the memory is unmapped and freed.
//!
//! Ownership of each buffer is tracked here, so the application is never handed a buffer the card
//! may still write: a buffer is lent only after the card reported it closed, and the card gets it
//! back only when the application is done with it ([`FilledBuffer`] releases it when dropped).

use std::sync::Arc;
use std::time::Duration;

use nanet_contract::rx::program::{self, ClopProgram};
use nanet_contract::rx::{
    port as port_regs, PacketHeader, PageSize, MAX_BUFFERS, MAX_BUFFER_BYTES, MAX_PORTS,
    PACKET_HEADER_BYTES, STREAMS_PER_PORT, TLB_ENTRIES,
};

use crate::backend::DmaMap;
use crate::device::{wait_command_idle, Device};
use crate::dma::DmaMemory;
use crate::error::{Error, Result};
use crate::events::{Event, CORE_HZ};
use crate::memory::{CardDma, MemoryProvider};
use crate::ownership::{ClopState, Owner, Owners};

/// How packets are laid out in a buffer.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Layout {
    /// Payloads back to back (for GPU kernels that know the datagram size).
    Raw,
    /// Each payload after a 16-byte [`PacketHeader`], padded to 16 bytes.
    Header,
}

/// What the card does when the CLOP's next buffer is still held by the application.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FullPolicy {
    /// Drop the datagram (counted, and one "no free buffer" event per starvation).
    Drop,
    /// Skip held buffers to the next free one.
    SkipHeld,
}

/// A CLOP to register: which datagrams, and the buffers they go to.
#[derive(Clone, Debug)]
pub struct ClopConfig {
    pub port: u8,
    pub udp_port: u16,
    pub buffers: u32,
    pub buffer_bytes: u32,
    pub layout: Layout,
    /// A buffer with packets is closed this long after its first packet (None: only when full).
    pub flush_timeout: Option<Duration>,
    pub when_full: FullPolicy,
    /// TLB page size (None: the smallest that keeps the CLOP within 16 TLB entries).
    pub page: Option<PageSize>,
    /// Records of this CLOP the library keeps while no thread reads them (None: the buffer
    /// count plus [`PARKED_BEYOND_BUFFERS`]); further ones are dropped and counted
    /// ([`Clop::events_dropped`]), their buffers given back to the card.
    pub parked_events: Option<u32>,
}

/// Records a CLOP may have waiting besides one per buffer (the card's other reports: no free
/// buffer, TLB miss, error), by default.
pub const PARKED_BEYOND_BUFFERS: u32 = 64;

impl ClopConfig {
    /// Datagrams to UDP port `udp_port` on port `port`: 8 buffers of 64 KiB with per-packet
    /// headers, flushed 100 us after their first packet, dropping when no buffer is free.
    pub fn new(port: u8, udp_port: u16) -> Self {
        Self {
            port,
            udp_port,
            buffers: 8,
            buffer_bytes: 64 << 10,
            layout: Layout::Header,
            flush_timeout: Some(Duration::from_micros(100)),
            when_full: FullPolicy::Drop,
            page: None,
            parked_events: None,
        }
    }

    pub fn buffers(mut self, count: u32, bytes: u32) -> Self {
        self.buffers = count;
        self.buffer_bytes = bytes;
        self
    }

    pub fn layout(mut self, layout: Layout) -> Self {
        self.layout = layout;
        self
    }

    pub fn flush_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.flush_timeout = timeout;
        self
    }

    pub fn when_full(mut self, policy: FullPolicy) -> Self {
        self.when_full = policy;
        self
    }

    pub fn page(mut self, page: PageSize) -> Self {
        self.page = Some(page);
        self
    }

    pub fn parked_events(mut self, records: u32) -> Self {
        self.parked_events = Some(records);
        self
    }

    fn parked_limit(&self) -> usize {
        self.parked_events
            .unwrap_or(self.buffers + PARKED_BEYOND_BUFFERS) as usize
    }

    fn region_bytes(&self) -> u64 {
        self.buffers as u64 * self.buffer_bytes as u64
    }

    fn page_size(&self) -> PageSize {
        self.page.unwrap_or_else(|| {
            let len = self.region_bytes();
            [PageSize::Page4K, PageSize::Page64K, PageSize::Page2M]
                .into_iter()
                .find(|p| len.div_ceil(p.bytes()) <= 16)
                .unwrap_or(PageSize::Page2M)
        })
    }

    fn timeout_cycles(&self) -> Result<u32> {
        let Some(t) = self.flush_timeout else {
            return Ok(0);
        };
        let cycles = t.as_nanos() * CORE_HZ as u128 / 1_000_000_000;
        if cycles == 0 || cycles > u32::MAX as u128 {
            return Err(Error::InvalidClop(format!(
                "flush timeout {t:?} is outside 4 ns ..= 17 s (the card counts 250 MHz cycles in 32 bits)"
            )));
        }
        Ok(cycles as u32)
    }

    /// Everything that can be checked without the card.
    fn validate(&self) -> Result<()> {
        if self.port as usize >= MAX_PORTS {
            return Err(Error::NoSuchPort {
                port: self.port,
                ports: MAX_PORTS,
            });
        }
        let bad = |m: String| Err(Error::InvalidClop(m));
        if self.udp_port == 0 {
            return bad("UDP port 0 is reserved".into());
        }
        if self.buffers == 0 || self.buffers as usize > MAX_BUFFERS {
            return bad(format!(
                "{} buffers: a CLOP has 1 to {MAX_BUFFERS}",
                self.buffers
            ));
        }
        if self.buffer_bytes == 0 || self.buffer_bytes as usize > MAX_BUFFER_BYTES {
            return bad(format!(
                "buffers of {} bytes: 1 to {MAX_BUFFER_BYTES}",
                self.buffer_bytes
            ));
        }
        if self.layout == Layout::Header {
            if !self.buffer_bytes.is_multiple_of(16) {
                return bad(format!(
                    "buffers of {} bytes: the header layout needs a multiple of 16",
                    self.buffer_bytes
                ));
            }
            if (self.buffer_bytes as usize) < PACKET_HEADER_BYTES + 16 {
                return bad(format!(
                    "buffers of {} bytes cannot hold one header and payload (32 bytes at least)",
                    self.buffer_bytes
                ));
            }
        }
        self.timeout_cycles()?;
        let pages = self.region_bytes().div_ceil(self.page_size().bytes()) as usize;
        if pages > TLB_ENTRIES {
            return Err(Error::TlbFull {
                needed: pages,
                free: TLB_ENTRIES,
            });
        }
        Ok(())
    }
}

/// A registered CLOP. Dropping it deregisters it (see [`Clop::deregister`]).
pub struct Clop {
    device: Device,
    owners: Arc<Owners>,
    /// Its id, stream entry and TLB slots, given back once the card holds none of them.
    reserved: Reservation,
    config: ClopConfig,
    /// `None` once deregistered.
    memory: Option<ClopMemory>,
}

/// Where a CLOP's buffers are.
enum ClopMemory {
    /// Host memory the library allocated and mapped; the card reaches it at its IOVA.
    Host(DmaMemory),
    /// Memory a [`MemoryProvider`] pinned (GPU memory): the CLOP's base is `va`, each page is
    /// at its own bus address.
    Provided {
        provider: Arc<dyn MemoryProvider>,
        card: CardDma,
        va: u64,
        len: u64,
        bus_pages: Vec<u64>,
    },
}

impl ClopMemory {
    /// The CLOP's base address as the card's TLB sees it.
    fn card_base(&self) -> u64 {
        match self {
            ClopMemory::Host(m) => m.iova(),
            ClopMemory::Provided { va, .. } => *va,
        }
    }

    /// Bus address of page `i`.
    fn bus_page(&self, i: usize, page: PageSize) -> u64 {
        match self {
            ClopMemory::Host(m) => m.iova() + i as u64 * page.bytes(),
            ClopMemory::Provided { bus_pages, .. } => bus_pages[i],
        }
    }
}

impl Drop for ClopMemory {
    fn drop(&mut self) {
        if let ClopMemory::Provided {
            provider,
            card,
            va,
            len,
            ..
        } = self
        {
            if let Err(e) = provider.unpin(*va, *len, card) {
                eprintln!("nanet: unpinning {len} bytes at {va:#x}: {e}");
            }
        }
    }
}

/// What [`Device::register`] gets the memory from.
enum Source {
    Host,
    Provided(Arc<dyn MemoryProvider>, u64),
}

impl Device {
    /// Registers a CLOP: on success the card writes the datagrams of `config.udp_port` on
    /// `config.port` into its buffers. Nothing changes on failure.
    pub fn register(&self, config: &ClopConfig) -> Result<Clop> {
        self.register_from(config, Source::Host)
    }

    /// Registers a CLOP whose buffers are `config.buffers * config.buffer_bytes` bytes of memory at
    /// `va` that `provider` pins (GPU memory; see [`MemoryProvider`]). `va` must be aligned to the
    /// provider's page size and overlap no other CLOP's. The library cannot read such buffers:
    /// events say which buffer holds what, [`Clop::device_address`] where it is, and
    /// [`Clop::release`] gives it back.
    pub fn register_provided(
        &self,
        config: &ClopConfig,
        provider: Arc<dyn MemoryProvider>,
        va: u64,
    ) -> Result<Clop> {
        let config = ClopConfig {
            page: Some(provider.page_size()),
            ..config.clone()
        };
        self.register_from(&config, Source::Provided(provider, va))
    }

    fn register_from(&self, config: &ClopConfig, source: Source) -> Result<Clop> {
        config.validate()?;
        self.check_port(config.port)?;
        let page = config.page_size();
        let pages = config.region_bytes().div_ceil(page.bytes()) as usize;
        let len = pages as u64 * page.bytes();
        let timeout = config.timeout_cycles()?;
        let provided = match &source {
            Source::Host => None,
            Source::Provided(_, va) => {
                if va % page.bytes() != 0 {
                    return Err(Error::InvalidClop(format!(
                        "memory at {va:#x} is not aligned to the provider's {} KiB pages",
                        page.bytes() >> 10
                    )));
                }
                Some((*va, len))
            }
        };
        // The CLOP's id, stream entry and TLB slots are taken under the state lock, the memory is
        // found without it (pinning and IOMMU mapping are slow), and the card is programmed under
        // the command lock.
        let provider = match &source {
            Source::Host => None,
            Source::Provided(p, _) => Some(p.clone()),
        };
        let (reserved, owners) = self.reserve(config, pages, provided, provider)?;
        let memory = match self.clop_memory(source, len, pages, page) {
            Ok(m) => m,
            Err(e) => {
                self.state().free_reservation(&reserved);
                return Err(e);
            }
        };
        let clop = Clop {
            device: self.clone(),
            owners,
            reserved,
            config: config.clone(),
            memory: Some(memory),
        };
        // On failure, dropping `clop` undoes what was done.
        clop.program(page, timeout)?;
        #[cfg(feature = "sim")]
        if let Some(sim) = self.sim() {
            // The simulated far end starts sending once the application can receive (unless
            // the application holds it until every stream is registered).
            sim.clop_registered(self)?;
        }
        Ok(clop)
    }

    /// Takes a Multi-Stream entry (its CLOP id), `pages` TLB slots and the UDP port for `config`,
    /// and the range of provided memory: nothing of the card's is written yet.
    fn reserve(
        &self,
        config: &ClopConfig,
        pages: usize,
        provided: Option<(u64, u64)>,
        provider: Option<Arc<dyn MemoryProvider>>,
    ) -> Result<(Reservation, Arc<Owners>)> {
        let port = config.port as usize;
        let mut st = self.state();
        if let Some(e) = st.streams[port]
            .iter()
            .position(|u| *u == Some(config.udp_port))
        {
            return Err(Error::UdpPortTaken {
                port: config.port,
                udp_port: config.udp_port,
                clop: (port * STREAMS_PER_PORT + e) as u8,
            });
        }
        let Some(&entry) = st.free_entries[port].front() else {
            return Err(Error::NoStreamEntry(config.port));
        };
        let first_slot = free_run(&st.tlb_used, pages).ok_or(Error::TlbFull {
            needed: pages,
            free: longest_free_run(&st.tlb_used),
        })?;
        if let Some((va, len)) = provided {
            if let Some(other) = st
                .clops
                .iter()
                .flatten()
                .find(|c| c.provided.is_some_and(|(v, l)| va < v + l && v < va + len))
            {
                return Err(Error::InvalidClop(format!(
                    "memory {va:#x}+{len:#x} overlaps CLOP {}'s buffers",
                    other.id
                )));
            }
        }
        st.free_entries[port].pop_front();
        st.streams[port][entry as usize] = Some(config.udp_port);
        st.tlb_used[first_slot..first_slot + pages].fill(true);
        let id = (port * STREAMS_PER_PORT) as u8 + entry;
        let owners = Arc::new(Owners::new(config.buffers as usize));
        st.clops[id as usize] = Some(ClopState {
            id,
            owners: owners.clone(),
            provided,
            provider,
            dropped: 0,
        });
        st.pending.open(id, config.parked_limit());
        let reserved = Reservation {
            id,
            port: config.port,
            entry,
            first_slot: first_slot as u8,
            pages,
        };
        Ok((reserved, owners))
    }

    /// The CLOP's memory: host memory allocated and mapped, or provided memory pinned (no lock
    /// held: both can take long).
    fn clop_memory(
        &self,
        source: Source,
        len: u64,
        pages: usize,
        page: PageSize,
    ) -> Result<ClopMemory> {
        match source {
            Source::Host => Ok(ClopMemory::Host(DmaMemory::new(
                self.inner.backend.clone(),
                &self.inner.iovas,
                len as usize,
                self.inner.hugepages,
                DmaMap::CARD_WRITES,
            )?)),
            Source::Provided(provider, va) => {
                let card = CardDma::new(self.inner.backend.clone(), self.inner.iovas.clone());
                let bus_pages = provider.pin(va, len, &card)?;
                let bad =
                    bus_pages.len() != pages || bus_pages.iter().any(|b| b % page.bytes() != 0);
                // Unpinned when dropped, on the error below too.
                let memory = ClopMemory::Provided {
                    provider,
                    card,
                    va,
                    len,
                    bus_pages,
                };
                if bad {
                    return Err(Error::Memory(format!(
                        "the memory provider gave a page table that is not {pages} aligned {} KiB pages",
                        page.bytes() >> 10
                    )));
                }
                Ok(memory)
            }
        }
    }
}

/// What [`Device::reserve`] took for a CLOP.
struct Reservation {
    id: u8,
    port: u8,
    entry: u8,
    first_slot: u8,
    pages: usize,
}

impl crate::device::State {
    /// Gives back what a CLOP held (its card side is clear, or was never written).
    fn free_reservation(&mut self, r: &Reservation) {
        let port = r.port as usize;
        self.clops[r.id as usize] = None;
        self.pending.clear(r.id);
        self.streams[port][r.entry as usize] = None;
        self.free_entries[port].push_back(r.entry);
        let first = r.first_slot as usize;
        self.tlb_used[first..first + r.pages].fill(false);
    }
}

/// The first run of `n` free slots.
fn free_run(used: &[bool], n: usize) -> Option<usize> {
    (0..=used.len().checked_sub(n)?).find(|&f| used[f..f + n].iter().all(|u| !u))
}

fn longest_free_run(used: &[bool]) -> usize {
    used.split(|u| *u).map(|r| r.len()).max().unwrap_or(0)
}

impl Clop {
    /// The card's id of this CLOP (the `clop` of its events).
    pub fn id(&self) -> u8 {
        self.reserved.id
    }

    pub fn config(&self) -> &ClopConfig {
        &self.config
    }

    /// Host memory of the buffers (`None` for provided memory).
    #[inline]
    fn host_memory(&self) -> Option<&DmaMemory> {
        match self.memory.as_ref().expect("registered") {
            ClopMemory::Host(m) => Some(m),
            ClopMemory::Provided { .. } => None,
        }
    }

    /// Where buffer `buffer` starts in provided memory (the address a GPU kernel reads it at);
    /// `None` for host memory (use [`Clop::take`]) or a buffer that does not exist.
    pub fn device_address(&self, buffer: u16) -> Option<u64> {
        match self.memory.as_ref()? {
            ClopMemory::Provided { va, .. } if (buffer as u32) < self.config.buffers => {
                Some(va + buffer as u64 * self.config.buffer_bytes as u64)
            }
            _ => None,
        }
    }

    /// TLB entries, CLOP configuration, then the Multi-Stream entry that lets datagrams in.
    fn program(&self, page: PageSize, timeout: u32) -> Result<()> {
        let d = &self.device;
        let _command = d.command();
        let memory = self.memory.as_ref().expect("registered");
        let base = memory.card_base();
        for i in 0..self.reserved.pages {
            // Page i of the CLOP, as the card names it, and where it is on the bus.
            let vaddr = base + i as u64 * page.bytes();
            let slot = self.reserved.first_slot as u32 + i as u32;
            for (r, v) in program::tlb_entry(slot, page, vaddr, memory.bus_page(i, page)) {
                d.write_rx(r, v)?;
            }
        }
        let c = &self.config;
        let clop = ClopProgram {
            id: self.id(),
            base,
            buffer_bytes: c.buffer_bytes,
            buffers: c.buffers,
            first_slot: self.reserved.first_slot,
            page,
            header: c.layout == Layout::Header,
            skip_held: c.when_full == FullPolicy::SkipHeld,
            timeout,
        };
        for (r, v) in clop.configure() {
            d.write_rx(r, v)?;
        }
        wait_command_idle(&*d.inner.backend, self.id())?;
        let table =
            port_regs::STREAM_VALID | (self.reserved.entry as u32) << 16 | c.udp_port as u32;
        // The CLOP receives once this returns: the entry's write is flushed.
        d.write_port_flushed(c.port, port_regs::STREAM_TABLE, table)
    }

    /// The next event of this CLOP, waiting up to `timeout`.
    pub fn wait(&self, timeout: Duration) -> Result<Option<Event>> {
        self.device.wait_for(timeout, Some(self.id()))
    }

    /// The next event of this CLOP if there is one.
    pub fn poll(&self) -> Result<Option<Event>> {
        self.device.poll_for(Some(self.id()))
    }

    /// Lends the buffer an event reported; the card gets it back when the [`FilledBuffer`] is
    /// dropped (or [`FilledBuffer::release`]d).
    #[inline]
    pub fn take(&self, event: &Event) -> Result<FilledBuffer<'_>> {
        if event.clop != self.id() {
            return Err(Error::WrongClop {
                clop: self.id(),
                event: event.clop,
            });
        }
        if !event.is_buffer() || event.bytes > self.config.buffer_bytes {
            return Err(Error::NotHeld {
                clop: self.id(),
                buffer: event.buffer,
            });
        }
        if self.host_memory().is_none() {
            return Err(Error::NotHostMemory(self.id()));
        }
        self.set_owner(event.buffer, Owner::Held, Owner::Lent)?;
        Ok(FilledBuffer {
            clop: self,
            buffer: event.buffer,
            bytes: event.bytes as usize,
            packets: event.packets,
            released: false,
        })
    }

    /// For foreign callers that cannot hold a [`FilledBuffer`] (the C API): lends the event's
    /// buffer like [`Clop::take`] and returns its bytes' address and length; the buffer stays lent
    /// until [`Clop::release`].
    ///
    /// # Safety
    /// The bytes may be read only until the buffer is released and while the CLOP is registered.
    #[doc(hidden)]
    pub unsafe fn take_raw(&self, event: &Event) -> Result<(*const u8, usize)> {
        let b = self.take(event)?;
        let d = b.data();
        let r = (d.as_ptr(), d.len());
        std::mem::forget(b);
        self.set_owner(event.buffer, Owner::Lent, Owner::LentRaw)?;
        Ok(r)
    }

    /// Gives back a buffer the card reported and the application did not [`Clop::take`] (or
    /// took with [`Clop::take_raw`]).
    pub fn release(&self, buffer: u16) -> Result<()> {
        self.set_owner(buffer, Owner::Held, Owner::Card)
            .or_else(|_| self.set_owner(buffer, Owner::LentRaw, Owner::Card))?;
        self.give_back(buffer)
    }

    /// Buffers the application holds (reported and not released).
    pub fn held(&self) -> usize {
        self.owners.not_card()
    }

    /// Buffers lent by [`Clop::take_raw`] and not released: raw pointers into the CLOP's memory
    /// are out (the C API refuses to deregister meanwhile).
    pub fn lent_raw(&self) -> usize {
        self.owners.count(Owner::LentRaw)
    }

    #[inline]
    fn set_owner(&self, buffer: u16, from: Owner, to: Owner) -> Result<()> {
        if self.owners.swap(buffer, from, to) {
            Ok(())
        } else {
            Err(Error::NotHeld {
                clop: self.id(),
                buffer,
            })
        }
    }

    /// The end of a [`FilledBuffer`]: only its holder can make this move.
    #[inline]
    fn give_back_lent(&self, buffer: u16) -> Result<()> {
        if !self.owners.hand_over(buffer, Owner::Lent, Owner::Card) {
            return Err(Error::NotHeld {
                clop: self.id(),
                buffer,
            });
        }
        self.give_back(buffer)
    }

    #[inline]
    fn give_back(&self, buffer: u16) -> Result<()> {
        self.device.release(self.id(), buffer)
    }

    /// Stops the CLOP: no datagram enters it any more; the card confirms it will not write its
    /// buffers again (and every write it made is visible), and the memory is unmapped and freed
    /// at once; then its events still in the ring are discarded and its TLB entries invalidated.
    /// An error before the confirmation leaves the memory allocated (the card may still write
    /// it); one after it leaves the CLOP's TLB entries and stream entry taken, never reused.
    pub fn deregister(mut self) -> Result<()> {
        self.quiesce()
    }

    fn quiesce(&mut self) -> Result<()> {
        let Some(memory) = self.memory.take() else {
            return Ok(());
        };
        let d = self.device.clone();
        let c = &self.config;
        // Releases not yet written are moot (and must not reach the CLOP's next owner).
        d.state().forget_releases(self.id());
        let stopped = (|| {
            let _command = d.command();
            d.write_port(
                c.port,
                port_regs::STREAM_TABLE,
                (self.reserved.entry as u32) << 16,
            )?;
            let (r, v) = program::clop_disable(self.id());
            d.write_rx(r, v)?;
            wait_command_idle(&*d.inner.backend, self.id())
        })();
        if let Err(e) = stopped {
            // The card may still write the memory: never free it.
            std::mem::forget(memory);
            return Err(e);
        }
        // The card acknowledged the disable: it writes no more into the buffers, and its last
        // writes reached memory before the acknowledgement did (a read completion never passes
        // the card's earlier writes). Unmapped at once, before anything else touches the card.
        drop(memory);
        let r = (|| {
            {
                let mut st = d.state();
                // Whatever the card reported before it stopped is in the ring now.
                d.drain_ring(&mut st)?;
                st.pending.clear(self.id());
            }
            let _command = d.command();
            for i in 0..self.reserved.pages as u32 {
                let (r, v) = program::tlb_invalidate(self.reserved.first_slot as u32 + i);
                d.write_rx(r, v)?;
            }
            // Orders the invalidations before anything registered later.
            wait_command_idle(&*d.inner.backend, self.id())
        })();
        // On an error the TLB slots and the stream entry stay taken: never handed out again while
        // the card may hold them. The memory is no longer the CLOP's (it may be registered again).
        if let Err(e) = r {
            if let Some(c) = d.state().clops[self.id() as usize].as_mut() {
                c.provided = None;
            }
            return Err(e);
        }
        d.state().free_reservation(&self.reserved);
        Ok(())
    }

    /// Records of this CLOP read from the ring and waiting for this CLOP's next poll (read by
    /// another thread's poll of its own CLOP).
    pub fn events_waiting(&self) -> usize {
        self.device.state().pending.len(self.id())
    }

    /// Records of this CLOP the library dropped because it already kept its limit of unread
    /// ones ([`ClopConfig::parked_events`]); the buffers they reported went back to the card.
    pub fn events_dropped(&self) -> u64 {
        self.device.state().clops[self.id() as usize]
            .as_ref()
            .map_or(0, |c| c.dropped)
    }
}

impl Drop for Clop {
    fn drop(&mut self) {
        if let Err(e) = self.quiesce() {
            eprintln!("nanet: deregistering CLOP {} failed: {e}", self.id());
        }
    }
}

/// A buffer the card filled and closed, lent to the application. Dropping it gives it back.
pub struct FilledBuffer<'a> {
    clop: &'a Clop,
    buffer: u16,
    bytes: usize,
    packets: u16,
    released: bool,
}

impl<'a> FilledBuffer<'a> {
    pub fn index(&self) -> u16 {
        self.buffer
    }

    pub fn packet_count(&self) -> u16 {
        self.packets
    }

    /// The bytes the card wrote (payloads, and headers in the header layout).
    #[inline]
    pub fn data(&self) -> &[u8] {
        let start = self.buffer as usize * self.clop.config.buffer_bytes as usize;
        let memory = self
            .clop
            .host_memory()
            .expect("take() lends host memory only");
        memory.settled(start..start + self.bytes)
    }

    /// The packets of a header-layout buffer (raw buffers have no packet boundaries: use
    /// [`FilledBuffer::data`]).
    #[inline]
    pub fn packets(&self) -> Result<Packets<'_>> {
        if self.clop.config.layout != Layout::Header {
            return Err(Error::InvalidClop(
                "a raw-layout buffer has no per-packet headers".into(),
            ));
        }
        Ok(Packets {
            data: self.data(),
            left: self.packets,
        })
    }

    /// Gives the buffer back to the card.
    pub fn release(mut self) -> Result<()> {
        self.released = true;
        self.clop.set_owner(self.buffer, Owner::Lent, Owner::Card)?;
        self.clop.give_back(self.buffer)
    }
}

impl Drop for FilledBuffer<'_> {
    #[inline]
    fn drop(&mut self) {
        if !self.released {
            if let Err(e) = self.clop.give_back_lent(self.buffer) {
                eprintln!("nanet: releasing buffer {}: {e}", self.buffer);
            }
        }
    }
}

/// One datagram in a header-layout buffer.
#[derive(Copy, Clone, Debug)]
pub struct Packet<'a> {
    pub header: PacketHeader,
    pub payload: &'a [u8],
}

/// The datagrams of a buffer, in arrival order.
pub struct Packets<'a> {
    data: &'a [u8],
    left: u16,
}

impl<'a> Packets<'a> {
    /// The first `packets` datagrams of header-layout buffer contents copied out of device
    /// memory (`event.bytes` bytes from [`Clop::device_address`], `event.packets` of them).
    pub fn in_copy(data: &'a [u8], packets: u16) -> Self {
        Self {
            data,
            left: packets,
        }
    }
}

impl<'a> Iterator for Packets<'a> {
    type Item = Packet<'a>;

    #[inline]
    fn next(&mut self) -> Option<Packet<'a>> {
        if self.left == 0 || self.data.len() < PACKET_HEADER_BYTES {
            return None;
        }
        let header = PacketHeader::decode(self.data[..PACKET_HEADER_BYTES].try_into().unwrap());
        let record = PacketHeader::record_bytes(header.len as usize);
        let end = PACKET_HEADER_BYTES + header.len as usize;
        if end > self.data.len() {
            // The card never writes this; stop rather than read past the buffer.
            self.left = 0;
            return None;
        }
        let payload = &self.data[PACKET_HEADER_BYTES..end];
        self.data = &self.data[record.min(self.data.len())..];
        self.left -= 1;
        Some(Packet { header, payload })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parked_records_are_bounded_by_the_buffers_unless_told() {
        let c = ClopConfig::new(0, 6000).buffers(32, 4096);
        assert_eq!(c.parked_limit(), 32 + PARKED_BEYOND_BUFFERS as usize);
        assert_eq!(c.parked_events(5).parked_limit(), 5);
    }
}

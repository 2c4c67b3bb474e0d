//! The host side of the receive path, as a model: it lays out CLOP buffers and the event ring in
//! the host-memory model, programs the card through its receive-engine registers (queued writes,
//! one per cycle), polls the event ring, checks every reported buffer against a scoreboard and
//! releases buffers. Any testbench whose design has the receive engine's register bus and write
//! port drives it through [`RxCard`].
//!
//! The scoreboard is the semantics of the issue, written down: every good payload lands exactly
//! once, in order per CLOP, byte-exact at the offset its layout says; no packet that ended badly is
//! ever reported; event counts and sequence numbers add up; a buffer the host holds is never
//! written.

use std::collections::{BTreeMap, HashMap, VecDeque};

use nanet_contract::events::{EventDecodeError, EventKind, EventRecord, EVENT_BYTES};
use nanet_contract::rx::program::{self, ClopProgram};
use nanet_contract::rx::{
    PacketHeader, PageSize, RxCounter, RxReg, CLOP_COMMAND_BUSY, CLOP_COMMAND_REFUSED, DMA_MPS_256,
    EVENT_QUEUE_ENABLE, PACKET_HEADER_BYTES,
};
use rand::Rng;

use crate::world::dma_port::{WriteBeat, WriteRequestSink};
use crate::world::host_mem::MemoryPort;
use crate::world::tlp::BeatData;

/// A CLOP as the host registers it.
#[derive(Clone, Debug)]
pub struct ClopSpec {
    pub port: u8,
    pub stream: u8,
    pub buf_size: u32,
    pub buf_count: u32,
    pub page: PageSize,
    pub header: bool,
    pub skip_held: bool,
    /// Flush timeout in core cycles (0: none).
    pub timeout: u32,
}

impl ClopSpec {
    pub fn id(&self) -> u8 {
        self.port * 16 + self.stream
    }
    fn region_bytes(&self) -> u64 {
        let len = self.buf_size as u64 * self.buf_count as u64;
        len.div_ceil(self.page.bytes()) * self.page.bytes()
    }
}

/// A datagram as the port side hands it to the engine.
#[derive(Clone, Debug)]
pub struct RxPacket {
    pub port: u8,
    pub stream: u8,
    pub payload: Vec<u8>,
    pub src_ip: [u8; 4],
    pub src_port: u16,
    /// Ends with `error` set (bad checksum, MAC error): must never be reported.
    pub bad: bool,
    /// Payload bytes the sender fills in as it sends (the generator's transmit time): not
    /// compared, and logged with the packet's SOP time in [`RxTotals::sender_fields`].
    pub unchecked: std::ops::Range<usize>,
}

/// What the host does with a buffer the card reported.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReleasePolicy {
    /// Give it back `delay` cycles after seeing the event.
    After(u64),
    /// Keep every buffer.
    Never,
}

/// A buffer the host holds.
struct Held {
    clop: u8,
    buffer: u16,
    snapshot: Vec<u8>,
    release_at: Option<u64>,
}

/// The host's view of a registered CLOP.
struct HostClop {
    spec: ClopSpec,
    first_slot: u8,
    /// Bus address of each page of the region (`None`: left out of the TLB on purpose).
    pages: Vec<Option<u64>>,
    /// Good packets sent and not yet seen in a buffer, in order.
    expected: VecDeque<RxPacket>,
    next_seq: u16,
    /// Packets found in its buffers.
    delivered: u64,
}

/// Per-run totals the tests assert on.
#[derive(Clone, Debug, Default)]
pub struct RxTotals {
    pub delivered: u64,
    pub delivered_bytes: u64,
    /// Good packets that never landed (dropped by the card for a reason it reported).
    pub skipped: u64,
    pub events: BTreeMap<&'static str, u64>,
    pub irqs: u64,
    /// Per reported buffer, when its last packet passed each point (while the memory model
    /// tracks visibility).
    pub latencies: Vec<BufferLatency>,
    /// Of delivered packets with unchecked bytes (header layout): those bytes, and the SOP time
    /// of the packet at the receiving MAC.
    pub sender_fields: Vec<(Vec<u8>, u32)>,
}

/// When a buffer's last packet passed each point, in memory-model cycles (the memory port's
/// `cycle`: time `origin + cycle * CORE_CLOCK_PS` in the testbench): the card's own stamps beside
/// what the memory model saw.
#[derive(Clone, Copy, Debug)]
pub struct BufferLatency {
    /// The CLOP the buffer belongs to.
    pub clop: u8,
    pub packets: u16,
    pub bytes: u32,
    /// The card's stamp of the packet's SOP at the MAC, converted to memory-model cycles (the
    /// edge at which the stamp register took the card's time).
    pub stamp_sop: u64,
    /// The card's stamp of the packet's last DMA beat, converted the same way.
    pub stamp_last_beat: u64,
    /// The cycle the packet's last payload byte became visible in host memory.
    pub last_byte_visible: u64,
    /// The cycle the buffer's event record (its last byte) became visible.
    pub event_visible: u64,
}

impl BufferLatency {
    /// The card's own measure: SOP at the MAC to the last DMA beat, in core cycles.
    pub fn stamped(&self) -> u64 {
        self.stamp_last_beat - self.stamp_sop
    }
}

/// The host model.
pub struct RxHost {
    pub port: MemoryPort,
    sink: WriteRequestSink,
    /// Register writes waiting for the bus, in order.
    pub regs: VecDeque<(u8, u32)>,
    clops: HashMap<u8, HostClop>,
    /// TLB slots in use.
    slots: [bool; 128],
    next_bus: u64,
    ring_bus: u64,
    ring_log2: u32,
    head: u16,
    pub release: ReleasePolicy,
    held: Vec<Held>,
    /// Exact mode: no good packet may be missing (every one lands, in order).
    pub exact: bool,
    /// While set the host neither reads the event ring nor releases buffers (a stalled host).
    pub paused: bool,
    pub totals: RxTotals,
    pub records: Vec<EventRecord>,
    /// Memory-model cycle minus the card's cycle counter (to time events with the card's clock).
    now_offset: u64,
}

impl RxHost {
    pub fn new(port: MemoryPort) -> Self {
        Self {
            port,
            sink: WriteRequestSink::default(),
            regs: VecDeque::new(),
            clops: HashMap::new(),
            slots: [false; 128],
            next_bus: 0x1_0000_0000,
            ring_bus: 0,
            ring_log2: 0,
            head: 0,
            release: ReleasePolicy::After(0),
            held: vec![],
            exact: true,
            paused: false,
            totals: RxTotals::default(),
            records: vec![],
            now_offset: 0,
        }
    }

    /// Queues a register write.
    pub fn write(&mut self, reg: RxReg, value: u32) {
        self.regs.push_back((reg.word() as u8, value));
    }

    /// A good packet the card should deliver into its CLOP (ignored if none is registered).
    pub fn expect(&mut self, p: &RxPacket) {
        if let Some(c) = self.clops.get_mut(&(p.port * 16 + p.stream)) {
            c.expected.push_back(p.clone());
        }
    }

    /// A beat the write port transferred in this cycle.
    pub fn write_beat<T: BeatData>(&mut self, beat: &WriteBeat<T>) {
        self.sink.beat(beat, &mut self.port);
    }

    /// Ends a cycle: memory model, protocol and placement checks, event polling. `card_now` is the
    /// card's cycle counter in this cycle.
    pub fn end_cycle(&mut self, card_now: u32, irq: bool) {
        self.totals.irqs += irq as u64;
        self.now_offset = self.port.cycle.wrapping_sub(card_now as u64);
        self.port.tick();
        self.sink.assert_clean();
        self.port.assert_clean();
        if self.port.cycle.is_multiple_of(8) {
            self.poll();
        }
    }

    /// The memory-model cycle that begins with the edge at which the card's cycle counter read
    /// `card` (a stamp register takes the counter at that edge).
    pub fn card_to_port(&self, card: u32) -> u64 {
        self.now_offset.wrapping_add(card as u64) + 1
    }

    /// Where the event ring starts in host memory (None before it is set up).
    pub fn event_ring_start(&self) -> Option<u64> {
        (self.ring_bus != 0).then_some(self.ring_bus)
    }

    /// Whether `addr` lies in the event ring (else it is a buffer's, or nobody's).
    pub fn in_event_ring(&self, addr: u64) -> bool {
        let bytes = (EVENT_BYTES as u64) << self.ring_log2;
        (self.ring_bus..self.ring_bus + bytes).contains(&addr)
    }

    /// Sets up the event ring: `2^log2` records at a fresh bus address.
    pub fn event_ring(&mut self, log2: u32) {
        let bytes = (EVENT_BYTES as u64) << log2;
        self.ring_bus = self.alloc(bytes.max(4096));
        self.port
            .memory
            .register(self.ring_bus, bytes, "event ring")
            .unwrap();
        self.ring_log2 = log2;
        self.head = 0;
        self.write(RxReg::EventQueueSize, 0);
        self.write(RxReg::EventQueueBaseLo, self.ring_bus as u32);
        self.write(RxReg::EventQueueBaseHi, (self.ring_bus >> 32) as u32);
        self.write(RxReg::EventQueueHead, 0);
        self.write(RxReg::EventQueueSize, EVENT_QUEUE_ENABLE | log2);
    }

    /// Lays out a CLOP's memory and queues its TLB entries (leaving out the pages in `holes`) and
    /// its configuration command.
    pub fn configure(&mut self, spec: ClopSpec, holes: &[usize]) {
        let id = spec.id();
        let page = spec.page.bytes();
        let npages = (spec.region_bytes() / page) as usize;
        let base = 0x0000_7a00_0000_0000 + id as u64 * (1 << 32);
        // The first run of free slots long enough.
        let first_slot = (0..=128 - npages)
            .find(|&f| self.slots[f..f + npages].iter().all(|u| !u))
            .expect("TLB slots exhausted") as u8;
        for u in &mut self.slots[first_slot as usize..first_slot as usize + npages] {
            *u = true;
        }
        let mut pages = vec![];
        for i in 0..npages {
            let bus = self.alloc(page);
            if holes.contains(&i) {
                pages.push(None);
                continue;
            }
            self.port
                .memory
                .register(bus, page, &format!("clop {id} page {i}"))
                .unwrap();
            pages.push(Some(bus));
            let slot = first_slot as u32 + i as u32;
            for (r, v) in program::tlb_entry(slot, spec.page, base + i as u64 * page, bus) {
                self.write(r, v);
            }
        }
        let clop = ClopProgram {
            id,
            base,
            buffer_bytes: spec.buf_size,
            buffers: spec.buf_count,
            first_slot,
            page: spec.page,
            header: spec.header,
            skip_held: spec.skip_held,
            timeout: spec.timeout,
        };
        for (r, v) in clop.configure() {
            self.write(r, v);
        }
        self.clops.insert(
            id,
            HostClop {
                spec,
                first_slot,
                pages,
                expected: VecDeque::new(),
                next_seq: 0,
                delivered: 0,
            },
        );
    }

    /// Forgets a disabled CLOP: unregisters its memory (any later write fails the run) and queues
    /// the invalidation of its TLB slots.
    /// The card acknowledged CLOP `id`'s deregistration: its memory is released at once (a write
    /// issued from now on into it fails the run; those issued before land), its TLB slots
    /// invalidated. Returns how many writes into it were still on their way.
    pub fn forget(&mut self, id: u8) -> usize {
        self.poll();
        let c = self.clops.remove(&id).expect("registered");
        let mut on_the_way = 0;
        for bus in c.pages.iter().flatten() {
            on_the_way += self
                .port
                .release(*bus)
                .expect("the CLOP's page is registered");
        }
        for i in 0..c.pages.len() {
            let slot = c.first_slot as u32 + i as u32;
            let (r, v) = program::tlb_invalidate(slot);
            self.write(r, v);
            self.slots[slot as usize] = false;
        }
        self.held.retain(|h| h.clop != id);
        on_the_way
    }

    /// Marks held buffers for release now (all of them, or one): released at once, also by a
    /// host that does not look at its ring (`paused`).
    pub fn release_now(&mut self, only: Option<(u8, u16)>) {
        let mut found = false;
        for h in &mut self.held {
            if only.is_none_or(|o| o == (h.clop, h.buffer)) {
                h.release_at = Some(0);
                found = true;
            }
        }
        assert!(found || only.is_none(), "the host does not hold {only:?}");
        self.poll();
        self.release_due();
    }

    pub fn alloc(&mut self, bytes: u64) -> u64 {
        // Bus addresses for host memory: scattered, a gap after every allocation, 2 MiB aligned.
        let a = self.next_bus;
        self.next_bus += (bytes.div_ceil(2 << 20) + 1) * (2 << 20);
        a
    }

    /// Reads the visible event ring, checks new records, releases buffers that are due.
    fn poll(&mut self) {
        if self.paused {
            return;
        }
        if self.ring_log2 > 0 || self.ring_bus != 0 {
            loop {
                let slot = self.head as u64 & ((1 << self.ring_log2) - 1);
                let phase = (self.head as u64 >> self.ring_log2) & 1 == 0;
                let bytes = self
                    .port
                    .memory
                    .read(self.ring_bus + slot * EVENT_BYTES as u64, EVENT_BYTES);
                let raw: [u8; EVENT_BYTES] = bytes.try_into().unwrap();
                // There once every word carries this lap's phase (the memory model may let
                // the parts of one write land apart).
                if (raw[0] & 0x80 != 0) != phase {
                    break;
                }
                let rec = match EventRecord::decode(&raw) {
                    Err(EventDecodeError::Torn) => break,
                    r => r.unwrap_or_else(|e| panic!("bad event record {raw:?}: {e:?}")),
                };
                self.head = self.head.wrapping_add(1);
                self.regs
                    .push_back((RxReg::EventQueueHead.word() as u8, self.head as u32));
                self.check_event(rec, slot);
            }
        }
        self.release_due();
    }

    /// Gives back the held buffers whose release time has come, checking each is as reported.
    fn release_due(&mut self) {
        let now = self.port.cycle;
        let mut due = vec![];
        self.held.retain(|h| {
            if h.release_at.is_some_and(|t| t <= now) {
                due.push((h.clop, h.buffer, h.snapshot.clone()));
                false
            } else {
                true
            }
        });
        for (clop, buffer, snapshot) in due {
            // Nothing was written into the buffer while the host held it.
            assert_eq!(
                self.buffer_bytes(clop, buffer),
                snapshot,
                "clop {clop} buffer {buffer} written while held by the host"
            );
            let (r, v) = program::release(clop, buffer);
            self.regs.push_back((r.word() as u8, v));
        }
    }

    /// The bytes of a buffer, through the host's page table.
    pub fn buffer_bytes(&self, clop: u8, buffer: u16) -> Vec<u8> {
        let c = &self.clops[&clop];
        let page = c.spec.page.bytes();
        let start = buffer as u64 * c.spec.buf_size as u64;
        (start..start + c.spec.buf_size as u64)
            .map(|off| match c.pages[(off / page) as usize] {
                Some(bus) => self.port.memory.read(bus + off % page, 1)[0],
                None => 0,
            })
            .collect()
    }

    fn check_event(&mut self, rec: EventRecord, ring_slot: u64) {
        *self.totals.events.entry(rec.kind.name()).or_default() += 1;
        self.records.push(rec);
        let t = rec.times;
        match rec.kind {
            EventKind::BufferFull | EventKind::TimeoutFlush => {}
            _ => return,
        }
        // In pipeline order (wrapping differences, each far below half the counter's range).
        assert!(
            [
                t.header_parsed.wrapping_sub(t.sop_at_mac),
                t.first_dma_beat.wrapping_sub(t.header_parsed),
                t.last_dma_beat.wrapping_sub(t.first_dma_beat),
            ]
            .iter()
            .all(|d| *d < 1 << 28),
            "stage timestamps out of order: {t:?}"
        );
        let data = self.buffer_bytes(rec.clop, rec.buffer);
        let exact = self.exact;
        let (stamp_sop, stamp_last_beat) = (
            self.card_to_port(t.sop_at_mac),
            self.card_to_port(t.last_dma_beat),
        );
        let c = self
            .clops
            .get_mut(&rec.clop)
            .expect("event for a registered CLOP");
        assert_eq!(rec.first_seq, c.next_seq, "clop {} sequence", rec.clop);
        assert!(rec.packets > 0, "closed buffer without packets: {rec:?}");
        assert!(rec.bytes <= c.spec.buf_size, "{rec:?}");
        let mut off = 0usize;
        // The buffer's last byte written (none: raw, and only empty packets so far).
        let mut last_payload_byte = None;
        for k in 0..rec.packets {
            let (len, payload_at) = if c.spec.header {
                let h =
                    PacketHeader::decode(data[off..off + PACKET_HEADER_BYTES].try_into().unwrap());
                assert_eq!(h.seq, c.next_seq.wrapping_add(k), "header sequence");
                (h.len as usize, off + PACKET_HEADER_BYTES)
            } else {
                (usize::MAX, off)
            };
            // The next expected packet that is there; in non-exact mode earlier ones may have been
            // dropped by the card.
            loop {
                let p = c.expected.pop_front().unwrap_or_else(|| {
                    panic!(
                        "clop {} buffer {}: packet {k} matches nothing sent",
                        rec.clop, rec.buffer
                    )
                });
                let n = p.payload.len();
                let u = &p.unchecked;
                let here = payload_at + n <= data.len()
                    && data[payload_at..payload_at + u.start] == p.payload[..u.start]
                    && data[payload_at + u.end..payload_at + n] == p.payload[u.end..];
                let fits = len == usize::MAX || len == n;
                if here && fits {
                    if payload_at + n > 0 {
                        last_payload_byte = Some(payload_at + n - 1);
                    }
                    if c.spec.header {
                        let h = PacketHeader::decode(data[off..off + 16].try_into().unwrap());
                        assert_eq!(h.src_ip, p.src_ip);
                        assert_eq!(h.src_port, p.src_port);
                        if !u.is_empty() {
                            let field = data[payload_at + u.start..payload_at + u.end].to_vec();
                            self.totals.sender_fields.push((field, h.sop_time));
                        }
                        off += PacketHeader::record_bytes(n);
                    } else {
                        off += n;
                    }
                    self.totals.delivered += 1;
                    c.delivered += 1;
                    self.totals.delivered_bytes += n as u64;
                    break;
                }
                assert!(
                    !exact,
                    "clop {} buffer {} packet {k}: expected {} bytes {:02x?}.., found {:02x?}..",
                    rec.clop,
                    rec.buffer,
                    n,
                    &p.payload[..n.min(8)],
                    &data[payload_at..(payload_at + 8).min(data.len())]
                );
                self.totals.skipped += 1;
            }
        }
        assert_eq!(off as u32, rec.bytes, "bytes of {rec:?}");
        // Where the last payload byte is in host memory, and the record's last byte (when the
        // memory model tracks when each byte became visible).
        if let (true, Some(last_payload_byte)) = (self.port.track_visible, last_payload_byte) {
            let page = c.spec.page.bytes();
            let last = rec.buffer as u64 * c.spec.buf_size as u64 + last_payload_byte as u64;
            let last_bus = c.pages[(last / page) as usize].expect("delivered into a mapped page")
                + last % page;
            let record_end = self.ring_bus + (ring_slot + 1) * EVENT_BYTES as u64 - 1;
            let visible = |addr: u64| self.port.visible_at[&addr];
            self.totals.latencies.push(BufferLatency {
                clop: rec.clop,
                packets: rec.packets,
                bytes: rec.bytes,
                stamp_sop,
                stamp_last_beat,
                last_byte_visible: visible(last_bus),
                event_visible: visible(record_end),
            });
        }
        assert_eq!(rec.last_seq, c.next_seq.wrapping_add(rec.packets - 1));
        c.next_seq = c.next_seq.wrapping_add(rec.packets);
        let release_at = match self.release {
            ReleasePolicy::After(d) => Some(self.port.cycle + d),
            ReleasePolicy::Never => None,
        };
        self.held.push(Held {
            clop: rec.clop,
            buffer: rec.buffer,
            snapshot: data,
            release_at,
        });
    }

    /// Times of flight of the generator's datagrams delivered so far (header layout): core
    /// cycles from the request taken by UDP TX (the payload's transmit time) to the SOP at the
    /// receiving MAC.
    pub fn times_of_flight(&self) -> Vec<u32> {
        self.totals
            .sender_fields
            .iter()
            .map(|(f, sop)| sop.wrapping_sub(u32::from_le_bytes(f[..4].try_into().unwrap())))
            .collect()
    }

    /// Checks that every held buffer is unchanged since it was reported.
    pub fn check_held(&self) {
        for h in &self.held {
            assert_eq!(
                self.buffer_bytes(h.clop, h.buffer),
                h.snapshot,
                "clop {} buffer {} written while held by the host",
                h.clop,
                h.buffer
            );
        }
    }

    /// Good packets sent to `clop` that have not landed yet.
    /// Packets found in the buffers of CLOP `clop` so far.
    pub fn delivered_of(&self, clop: u8) -> u64 {
        self.clops[&clop].delivered
    }

    pub fn outstanding(&self, clop: u8) -> usize {
        self.clops[&clop].expected.len()
    }
}

/// A design with the receive engine's register bus and write port, driven cycle by cycle, with
/// the host model attached.
pub trait RxCard {
    fn host(&mut self) -> &mut RxHost;
    /// One core cycle (register writes from the host's queue, packets, memory, host polling).
    fn step(&mut self);
    /// Reads a register word (after the queued writes), running the cycles it takes.
    fn read_word(&mut self, word: u8) -> u32;
    /// Whether every packet given to the card has entered it.
    fn input_empty(&self) -> bool;

    /// Checks of the bench's own that hold once the card is quiet (after [`RxCard::drain`]).
    fn check_quiet(&mut self) {}

    fn write(&mut self, reg: RxReg, value: u32) {
        self.host().write(reg, value);
    }
    /// After reset: lets the TLB and the CLOP engine sweep their tables, and sets the DMA max
    /// payload size to the memory preset's.
    fn start(&mut self) {
        self.run(140);
        if self.host().port.preset.max_payload >= 256 {
            self.write(RxReg::DmaControl, DMA_MPS_256);
        }
    }
    fn read(&mut self, reg: RxReg) -> u32 {
        self.read_word(reg.word() as u8)
    }
    fn counter(&mut self, c: RxCounter) -> u32 {
        self.read_word(c.word() as u8)
    }
    fn run(&mut self, cycles: u64) {
        for _ in 0..cycles {
            self.step();
        }
    }
    /// Runs until every queued register write is done.
    fn flush_writes(&mut self) {
        while !self.host().regs.is_empty() {
            self.step();
        }
    }
    fn event_ring(&mut self, log2: u32) {
        self.host().event_ring(log2);
    }
    /// Registers a CLOP and waits until the card has taken it.
    fn register(&mut self, spec: ClopSpec, holes: &[usize]) {
        self.host().configure(spec, holes);
        self.wait_idle();
    }
    /// Disables a CLOP and releases its memory in the cycle the card acknowledges it (the command
    /// done): a write the card issues from then on into that memory fails the run; those it issued
    /// before may still land. Returns how many of those were on their way at the acknowledgement.
    fn deregister(&mut self, id: u8) -> usize {
        let (r, v) = program::clop_disable(id);
        self.write(r, v);
        self.wait_idle();
        self.host().forget(id)
    }
    /// Waits until the CLOP command is done; panics if the card refused it.
    fn wait_idle(&mut self) {
        let mut n = 0;
        loop {
            let v = self.read(RxReg::ClopCommand);
            assert_eq!(
                v & CLOP_COMMAND_REFUSED,
                0,
                "the card refused a CLOP command"
            );
            if v & CLOP_COMMAND_BUSY == 0 {
                return;
            }
            n += 1;
            assert!(n < 10_000, "CLOP command never completed");
        }
    }
    /// Gives one held buffer back and waits until the write is on the bus.
    fn release_buffer(&mut self, clop: u8, buffer: u16) {
        self.host().release_now(Some((clop, buffer)));
        self.flush_writes();
    }
    /// Gives every held buffer back and waits until the card has them.
    fn release_all(&mut self) {
        self.host().release_now(None);
        self.flush_writes();
        self.run(20);
    }
    /// Runs until the input has entered the card and `idle_cycles` pass without a new event
    /// (panics after `limit` cycles).
    fn drain(&mut self, idle_cycles: u64, limit: u64) {
        let mut last = (self.host().records.len(), 0u64);
        for c in 0..limit {
            self.step();
            let busy = !self.input_empty() || !self.host().regs.is_empty();
            if self.host().records.len() != last.0 || busy {
                last = (self.host().records.len(), c);
            }
            if c - last.1 > idle_cycles {
                self.check_quiet();
                return;
            }
        }
        panic!("receive path still busy after {limit} cycles");
    }
}

/// A random payload.
pub fn payload(rng: &mut impl Rng, len: usize) -> Vec<u8> {
    (0..len).map(|_| rng.gen()).collect()
}

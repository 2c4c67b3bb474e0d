//! Testbench of the receive engine (`nanet_hdl::rx_engine`) on any engine: packets go in as the
//! port arbiter delivers them (meta beat + payload beats), writes land in the host-memory model,
//! and a host model programs the engine through its registers, polls the event ring, checks every
//! reported buffer against a scoreboard and releases buffers.
//!
//! The host model is the semantics of the issue, written down: every good payload lands exactly
//! once, in order per CLOP, byte-exact at the offset its layout says; no packet that ended badly is
//! ever reported; event counts and sequence numbers add up; a buffer the host holds is never
//! written.

use std::collections::{BTreeMap, HashMap, VecDeque};

use nanet_contract::events::{EventKind, EventRecord, EVENT_BYTES};
use nanet_contract::rx::{
    PacketHeader, PageSize, RxCounter, RxReg, CLOP_COMMAND_BUSY, CLOP_MODE_HEADER,
    CLOP_MODE_SKIP_HELD, CLOP_OP_CONFIGURE, CLOP_OP_DISABLE, DMA_MPS_256, EVENT_QUEUE_ENABLE,
    PACKET_HEADER_BYTES, TLB_COMMAND_VALID,
};
use nanet_hdl::rx_engine::RxEngine;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::design_ports;
use crate::dma_port::{WriteBeat, WriteRequestSink};
use crate::driver::CORE_CLOCK_PS;
use crate::engine::{ClockId, DesignSim, EngineError, EngineKind};
use crate::host_mem::{MemoryPort, MemoryPreset};

#[derive(Clone, Debug, Default)]
pub struct RxIn {
    pub reset: bool,
    pub in_data: u128,
    pub in_meta: bool,
    pub in_last: bool,
    pub in_error: bool,
    pub in_port: u8,
    pub in_valid: bool,
    pub reg_addr: u8,
    pub reg_wdata: u32,
    pub reg_write: bool,
    pub wr_ready: bool,
}

#[derive(Clone, Debug, Default)]
pub struct RxOut {
    pub now: u32,
    pub in_ready: bool,
    pub reg_rdata: u32,
    pub wr_valid: bool,
    pub wr_sop: bool,
    pub wr_eop: bool,
    pub wr_addr: u64,
    pub wr_len: u16,
    pub wr_data: u128,
    pub wr_be: u16,
    pub irq: bool,
}

design_ports! {
    pub RxEngineDesign for RxEngine, top "nanet_rx_engine", inputs RxIn, outputs RxOut,
    clocks { clock }
    inputs {
        reset => reset, in_data => in_data, in_meta => in_meta, in_last => in_last,
        in_error => in_error, in_port => in_port, in_valid => in_valid, reg_addr => reg_addr,
        reg_wdata => reg_wdata, reg_write => reg_write, wr_ready => wr_ready,
    }
    outputs {
        now => now, in_ready => in_ready, reg_rdata => reg_rdata, wr_valid => wr_valid,
        wr_sop => wr_sop, wr_eop => wr_eop, wr_addr => wr_addr, wr_len => wr_len,
        wr_data => wr_data, wr_be => wr_be, irq => irq,
    }
}

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
    delivered: u64,
    skipped: u64,
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
    /// Latency of buffers with one packet: (payload bytes, SOP to last DMA beat, SOP to the
    /// record visible in memory), in cycles.
    pub single_latency: Vec<(usize, u64, u64)>,
}

pub struct RxEngineBench {
    pub d: DesignSim<RxEngineDesign>,
    clk: ClockId,
    pub port: MemoryPort,
    sink: WriteRequestSink,
    rng: StdRng,
    pub cycle: u64,
    /// Probability that the packet source idles in a cycle.
    pub in_stall: f64,
    input: VecDeque<(u128, bool, bool, bool, u8)>,
    regs: VecDeque<(u8, u32)>,
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
    pub totals: RxTotals,
    pub records: Vec<EventRecord>,
    /// Cycle each good packet's meta beat was queued, per CLOP in order (for latency).
    sent_at: HashMap<u8, VecDeque<u64>>,
}

impl RxEngineBench {
    pub fn new(
        kind: EngineKind,
        preset: MemoryPreset,
        mem_stall: f64,
        seed: u64,
    ) -> Result<Self, EngineError> {
        let mut d = DesignSim::<RxEngineDesign>::new(kind)?;
        let clk = d.add_clock("core", 0, CORE_CLOCK_PS);
        d.inputs.reset = true;
        for _ in 0..2 {
            d.tick(clk);
        }
        d.inputs.reset = false;
        let mut b = Self {
            d,
            clk,
            port: MemoryPort::new(preset, mem_stall, seed),
            sink: WriteRequestSink::default(),
            rng: StdRng::seed_from_u64(seed ^ 0x5eed),
            cycle: 0,
            in_stall: 0.0,
            input: VecDeque::new(),
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
            totals: RxTotals::default(),
            records: vec![],
            sent_at: HashMap::new(),
        };
        // The TLB and the CLOP engine sweep their tables after reset.
        b.run(140);
        if preset.max_payload >= 256 {
            b.write(RxReg::DmaControl, DMA_MPS_256);
        }
        Ok(b)
    }

    /// Queues a register write (one per cycle, in order).
    pub fn write(&mut self, reg: RxReg, value: u32) {
        self.regs.push_back((reg.word() as u8, value));
    }

    /// Reads a register now (after the queued writes), running the cycles it takes.
    pub fn read_word(&mut self, word: u8) -> u32 {
        while !self.regs.is_empty() {
            self.step();
        }
        self.d.inputs.reg_addr = word;
        self.step();
        self.d.settle().reg_rdata
    }

    pub fn read(&mut self, reg: RxReg) -> u32 {
        self.read_word(reg.word() as u8)
    }

    pub fn counter(&mut self, c: RxCounter) -> u32 {
        self.read_word(c.address() as u8)
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

    fn alloc(&mut self, bytes: u64) -> u64 {
        // Scattered: a gap after every allocation, 2 MiB aligned.
        let a = self.next_bus;
        self.next_bus += (bytes.div_ceil(2 << 20) + 1) * (2 << 20);
        a
    }

    /// Registers a CLOP: memory, TLB entries (leaving out the pages in `holes`), configuration.
    pub fn register(&mut self, spec: ClopSpec, holes: &[usize]) {
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
            // Pages in a shuffled order on the bus.
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
            let vpn = (base + i as u64 * page) >> 12;
            let ppn = bus >> 12;
            self.write(RxReg::TlbVpnLo, vpn as u32);
            self.write(RxReg::TlbVpnHi, (vpn >> 32) as u32);
            self.write(RxReg::TlbPpnLo, ppn as u32);
            self.write(RxReg::TlbPpnHi, (ppn >> 32) as u32);
            self.write(
                RxReg::TlbCommand,
                TLB_COMMAND_VALID | (spec.page as u32) << 8 | (first_slot as u32 + i as u32),
            );
        }
        self.write(RxReg::ClopBaseLo, base as u32);
        self.write(RxReg::ClopBaseHi, (base >> 32) as u32);
        self.write(RxReg::ClopBufSize, spec.buf_size);
        self.write(RxReg::ClopBufCount, spec.buf_count);
        self.write(RxReg::ClopTlb, (spec.page as u32) << 8 | first_slot as u32);
        let mode = if spec.header { CLOP_MODE_HEADER } else { 0 }
            | if spec.skip_held {
                CLOP_MODE_SKIP_HELD
            } else {
                0
            };
        self.write(RxReg::ClopMode, mode);
        self.write(RxReg::ClopTimeout, spec.timeout);
        self.write(RxReg::ClopCommand, CLOP_OP_CONFIGURE << 8 | id as u32);
        self.wait_idle();
        self.clops.insert(
            id,
            HostClop {
                spec,
                first_slot,
                pages,
                expected: VecDeque::new(),
                next_seq: 0,
                delivered: 0,
                skipped: 0,
            },
        );
    }

    /// Disables a CLOP; when this returns (command done and the writes accepted before it visible,
    /// as PCIe ordering gives a register read), its memory is unregistered: any later write to it
    /// fails the run.
    pub fn deregister(&mut self, id: u8) {
        self.write(RxReg::ClopCommand, CLOP_OP_DISABLE << 8 | id as u32);
        self.wait_idle();
        while self.port.in_flight() > 0 {
            self.step();
        }
        self.poll();
        let c = self.clops.remove(&id).expect("registered");
        for bus in c.pages.iter().flatten() {
            self.port.memory.unregister(*bus);
        }
        // Invalidate and free its TLB slots.
        for i in 0..c.pages.len() {
            let slot = c.first_slot as u32 + i as u32;
            self.write(RxReg::TlbCommand, slot);
            self.slots[slot as usize] = false;
        }
        self.held.retain(|h| h.clop != id);
    }

    /// Gives one held buffer back now (after checking it was not written while held).
    pub fn release_buffer(&mut self, clop: u8, buffer: u16) {
        let i = self
            .held
            .iter()
            .position(|h| h.clop == clop && h.buffer == buffer)
            .expect("the host holds the buffer");
        self.held[i].release_at = Some(0);
        self.poll();
        while !self.regs.is_empty() {
            self.step();
        }
    }

    fn wait_idle(&mut self) {
        let mut n = 0;
        while self.read(RxReg::ClopCommand) & CLOP_COMMAND_BUSY != 0 {
            n += 1;
            assert!(n < 10_000, "CLOP command never completed");
        }
    }

    /// Queues a packet (meta beat + payload beats); good ones are expected in their CLOP.
    pub fn send(&mut self, p: RxPacket) {
        let len = p.payload.len() as u128;
        let ip = u32::from_be_bytes(p.src_ip) as u128;
        let t = self.cycle as u32 as u128;
        let meta = (p.stream as u128) << 124
            | len << 108
            | ip << 76
            | (p.src_port as u128) << 60
            | t << 28
            | 7 << 12;
        self.input.push_back((meta, true, false, false, p.port));
        let n = p.payload.chunks(16).count();
        for (i, c) in p.payload.chunks(16).enumerate() {
            let mut b = [0u8; 16];
            b[..c.len()].copy_from_slice(c);
            let last = i + 1 == n;
            self.input
                .push_back((u128::from_be_bytes(b), false, last, last && p.bad, p.port));
        }
        let id = p.port * 16 + p.stream;
        if !p.bad {
            if let Some(c) = self.clops.get_mut(&id) {
                c.expected.push_back(p);
                self.sent_at.entry(id).or_default().push_back(self.cycle);
            }
        }
    }

    pub fn input_empty(&self) -> bool {
        self.input.is_empty()
    }

    /// One core cycle: drive inputs, settle, take what moved, advance the models.
    pub fn step(&mut self) {
        let stall = self.in_stall > 0.0 && self.rng.gen_bool(self.in_stall);
        let i = &mut self.d.inputs;
        i.in_valid = !self.input.is_empty() && !stall;
        if let Some((data, meta, last, error, port)) = self.input.front() {
            i.in_data = *data;
            i.in_meta = *meta;
            i.in_last = *last;
            i.in_error = *error;
            i.in_port = *port;
        }
        i.reg_write = false;
        if let Some((addr, value)) = self.regs.front() {
            i.reg_write = true;
            i.reg_addr = *addr;
            i.reg_wdata = *value;
        }
        i.wr_ready = self.port.ready();
        let o = self.d.settle().clone();
        if self.d.inputs.in_valid && o.in_ready {
            self.input.pop_front();
        }
        if self.d.inputs.reg_write {
            self.regs.pop_front();
        }
        if o.wr_valid && self.d.inputs.wr_ready {
            let beat = WriteBeat {
                sop: o.wr_sop,
                eop: o.wr_eop,
                addr: o.wr_addr,
                len: o.wr_len,
                data: o.wr_data,
                be: o.wr_be,
            };
            self.sink.beat(&beat, &mut self.port);
        }
        self.totals.irqs += o.irq as u64;
        self.port.tick();
        self.d.tick(self.clk);
        self.cycle += 1;
        self.sink.assert_clean();
        self.port.assert_clean();
        if self.cycle % 8 == 0 {
            self.poll();
        }
    }

    pub fn run(&mut self, cycles: u64) {
        for _ in 0..cycles {
            self.step();
        }
    }

    /// Runs until the input is sent and `idle_cycles` pass without a new event (or `limit`).
    pub fn drain(&mut self, idle_cycles: u64, limit: u64) {
        let start = self.cycle;
        let mut last = (self.records.len(), self.cycle);
        while self.cycle - start < limit {
            self.step();
            if self.records.len() != last.0 || !self.input.is_empty() || !self.regs.is_empty() {
                last = (self.records.len(), self.cycle);
            }
            if self.cycle - last.1 > idle_cycles {
                return;
            }
        }
        panic!("receive engine still busy after {limit} cycles");
    }

    /// Reads the visible event ring, checks new records, releases buffers that are due.
    fn poll(&mut self) {
        if self.ring_log2 > 0 || self.ring_bus != 0 {
            loop {
                let slot = self.head as u64 & ((1 << self.ring_log2) - 1);
                let phase = (self.head as u64 >> self.ring_log2) & 1 == 0;
                let bytes = self
                    .port
                    .memory
                    .read(self.ring_bus + slot * EVENT_BYTES as u64, EVENT_BYTES);
                let raw: [u8; EVENT_BYTES] = bytes.try_into().unwrap();
                if (raw[0] & 0x80 != 0) != phase || raw[0] & 0x0F == 0 {
                    break;
                }
                let rec = EventRecord::decode(&raw)
                    .unwrap_or_else(|e| panic!("bad event record {raw:?}: {e:?}"));
                self.head = self.head.wrapping_add(1);
                self.regs
                    .push_back((RxReg::EventQueueHead.word() as u8, self.head as u32));
                self.check_event(rec);
            }
        }
        let now = self.cycle;
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
            self.regs.push_back((
                RxReg::Release.word() as u8,
                (buffer as u32) << 8 | clop as u32,
            ));
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

    fn check_event(&mut self, rec: EventRecord) {
        *self.totals.events.entry(kind_name(rec.kind)).or_default() += 1;
        self.records.push(rec);
        let t = rec.times;
        match rec.kind {
            EventKind::BufferFull | EventKind::TimeoutFlush => {}
            _ => return,
        }
        assert!(
            t.header_parsed.wrapping_sub(t.sop_at_mac) < 1000
                && t.first_dma_beat.wrapping_sub(t.header_parsed) < 1 << 20
                && t.last_dma_beat.wrapping_sub(t.first_dma_beat) < 1000,
            "stage timestamps out of order: {t:?}"
        );
        let data = self.buffer_bytes(rec.clop, rec.buffer);
        let exact = self.exact;
        let c = self
            .clops
            .get_mut(&rec.clop)
            .expect("event for a registered CLOP");
        assert_eq!(rec.first_seq, c.next_seq, "clop {} sequence", rec.clop);
        assert!(rec.packets > 0, "closed buffer without packets: {rec:?}");
        assert!(rec.bytes <= c.spec.buf_size, "{rec:?}");
        let mut off = 0usize;
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
                let here = payload_at + n <= data.len()
                    && data[payload_at..payload_at + n] == p.payload[..];
                let fits = len == usize::MAX || len == n;
                if here && fits {
                    if c.spec.header {
                        let h = PacketHeader::decode(data[off..off + 16].try_into().unwrap());
                        assert_eq!(h.src_ip, p.src_ip);
                        assert_eq!(h.src_port, p.src_port);
                        off += PacketHeader::record_bytes(n);
                    } else {
                        off += n;
                    }
                    c.delivered += 1;
                    self.totals.delivered += 1;
                    self.totals.delivered_bytes += n as u64;
                    let sent = self.sent_at.get_mut(&rec.clop).and_then(|q| q.pop_front());
                    if rec.packets == 1 {
                        if let Some(s) = sent {
                            let visible = self.cycle;
                            let _ = s;
                            self.totals.single_latency.push((
                                n,
                                t.last_dma_beat.wrapping_sub(t.sop_at_mac) as u64,
                                visible - t.sop_at_mac as u64,
                            ));
                        }
                    }
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
                c.skipped += 1;
                self.totals.skipped += 1;
                if let Some(q) = self.sent_at.get_mut(&rec.clop) {
                    q.pop_front();
                }
            }
        }
        assert_eq!(off as u32, rec.bytes, "bytes of {rec:?}");
        assert_eq!(rec.last_seq, c.next_seq.wrapping_add(rec.packets - 1));
        c.next_seq = c.next_seq.wrapping_add(rec.packets);
        let release_at = match self.release {
            ReleasePolicy::After(d) => Some(self.cycle + d),
            ReleasePolicy::Never => None,
        };
        self.held.push(Held {
            clop: rec.clop,
            buffer: rec.buffer,
            snapshot: data,
            release_at,
        });
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
    pub fn outstanding(&self, clop: u8) -> usize {
        self.clops[&clop].expected.len()
    }

    /// Releases every held buffer now (after checking it), and waits until the card has them.
    pub fn release_all(&mut self) {
        for h in &mut self.held {
            h.release_at = Some(0);
        }
        self.poll();
        while !self.regs.is_empty() {
            self.step();
        }
        self.run(20);
    }
}

/// Event kind names for the totals.
pub fn kind_name(k: EventKind) -> &'static str {
    match k {
        EventKind::BufferFull => "buffer_full",
        EventKind::TimeoutFlush => "timeout_flush",
        EventKind::NoFreeBuffer => "no_free_buffer",
        EventKind::TlbMiss => "tlb_miss",
        EventKind::Error => "error",
    }
}

/// A random payload.
pub fn payload(rng: &mut impl Rng, len: usize) -> Vec<u8> {
    (0..len).map(|_| rng.gen()).collect()
}

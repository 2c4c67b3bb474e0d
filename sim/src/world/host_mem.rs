//! Host memory behind the card's DMA writes: sparse, with the regions the host registered, a
//! bandwidth and latency model of the PCIe link (presets for Gen2 x8 and Gen3 x8), and random
//! backpressure. A write that touches a byte outside every registered region is a violation: the
//! card must never write there, so tests fail on the first one, with its address.
//!
//! Timing is in core cycles (250 MHz). A write is *accepted* when the port has bandwidth credit
//! (token bucket, one beat of the card's datapath at a time: 16 bytes at 128 bits, 32 at 256)
//! and is *visible* `latency` cycles later, which is
//! when a host polling memory would see it.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};

use nanet_contract::pcie::PcieVariant;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::engine::clocks::CORE_CLOCK_PS;

pub const PAGE: u64 = 4096;
/// Core clock of the DMA side, as the simulator runs it (every PCIe variant's core clock: a test
/// below keeps the two together).
pub const CORE_HZ: f64 = 1e12 / CORE_CLOCK_PS as f64;

/// A PCIe link as the memory model sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MemoryPreset {
    pub name: &'static str,
    /// Payload bytes per core cycle the link carries for memory writes of `max_payload` bytes.
    pub bytes_per_cycle: f64,
    /// Cycles from acceptance to visibility in host memory.
    pub latency_cycles: u64,
    /// Largest write payload (PCIe Max Payload Size).
    pub max_payload: u64,
    /// Bytes per core cycle the link carries in each direction after line encoding (TLPs with
    /// their headers and framing, and DLLPs): what paces the link toward the card.
    pub link_bytes_per_cycle: f64,
    /// Cycles a link partner may hold the Ack of a TLP it received (the PCIe base
    /// specification's AckNak latency limit, section 3.6.3.1): the root port and the card's
    /// Hard IP each send one Ack DLLP, and an UpdateFC per flow-control class with finite
    /// credits that received TLPs, per this many cycles in which TLPs arrived. `None`: no DLLPs
    /// (the ideal link).
    pub ack_period_cycles: Option<u64>,
}

impl MemoryPreset {
    /// Payload bandwidth of `variant`'s link ([`PcieVariant::link_bytes_per_s`]: lanes x
    /// transfers x encoding), less the per-TLP overhead of a memory write with a 64-bit address
    /// (4DW header 16 B and [`PcieVariant::tlp_framing_bytes`] 8 B) at `max_payload`.
    /// DLLPs are charged apart (see [`MemoryPreset::ack_period_cycles`]).
    fn link(name: &'static str, variant: PcieVariant, max_payload: u64, latency_ns: f64) -> Self {
        let overhead = 16 + variant.tlp_framing_bytes() as u64;
        let payload =
            variant.link_bytes_per_s() * max_payload as f64 / (max_payload + overhead) as f64;
        Self {
            name,
            bytes_per_cycle: payload / CORE_HZ,
            latency_cycles: (latency_ns * CORE_HZ / 1e9).round() as u64,
            max_payload,
            link_bytes_per_cycle: variant.link_bytes_per_s() / CORE_HZ,
            ack_period_cycles: Some(Self::ack_latency_cycles(variant, max_payload)),
        }
    }

    /// The AckNak latency limit in core cycles: `((max payload + 28) x AckFactor / lanes +
    /// internal delay)` symbol times, with the AckFactor of a x8 link at a max payload of 128 to
    /// 512 bytes (2.5) and the internal delay of 5.0 GT/s (70 symbol times) or 8.0 GT/s (115).
    /// A symbol time is 10 UI at 8b/10b, 8 UI at 128b/130b. Gen2 x8 at 256 bytes: 158.75 symbol
    /// times of 2 ns, 79 cycles; Gen3 x8: 203.75 of 1 ns, 50 cycles.
    fn ack_latency_cycles(variant: PcieVariant, max_payload: u64) -> u64 {
        const TLP_OVERHEAD: f64 = 28.0;
        const ACK_FACTOR_X8: f64 = 2.5;
        let internal_delay = match variant {
            PcieVariant::Gen2x8 => 70.0,
            PcieVariant::Gen3x8 => 115.0,
        };
        let symbols = (max_payload as f64 + TLP_OVERHEAD) * ACK_FACTOR_X8 / variant.lanes() as f64
            + internal_delay;
        let ui_per_symbol = match variant {
            PcieVariant::Gen2x8 => 10.0,
            PcieVariant::Gen3x8 => 8.0,
        };
        let symbol_s = ui_per_symbol / variant.transfers_per_s();
        (symbols * symbol_s * CORE_HZ).floor() as u64
    }

    /// PCIe Gen2 x8 (5 GT/s, 8b/10b), 256-byte payloads: 3.66 GB/s of payload.
    pub fn gen2_x8() -> Self {
        Self::link("gen2x8", PcieVariant::Gen2x8, 256, 400.0)
    }

    /// PCIe Gen3 x8 (8 GT/s, 128b/130b), 256-byte payloads: 7.2 GB/s of payload.
    pub fn gen3_x8() -> Self {
        Self::link("gen3x8", PcieVariant::Gen3x8, 256, 300.0)
    }

    /// The preset of a card's PCIe variant.
    pub fn of(variant: PcieVariant) -> Self {
        match variant {
            PcieVariant::Gen2x8 => Self::gen2_x8(),
            PcieVariant::Gen3x8 => Self::gen3_x8(),
        }
    }

    /// Unlimited bandwidth, no latency (for functional tests).
    pub fn ideal() -> Self {
        Self {
            name: "ideal",
            bytes_per_cycle: f64::INFINITY,
            latency_cycles: 0,
            max_payload: 4096,
            link_bytes_per_cycle: f64::INFINITY,
            ack_period_cycles: None,
        }
    }

    pub fn by_name(name: &str) -> Option<Self> {
        match name {
            "gen2x8" => Some(Self::gen2_x8()),
            "gen3x8" => Some(Self::gen3_x8()),
            "ideal" => Some(Self::ideal()),
            _ => None,
        }
    }

    /// Payload bandwidth in bytes per second.
    pub fn bytes_per_s(&self) -> f64 {
        self.bytes_per_cycle * CORE_HZ
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MemoryError {
    #[error(
        "DMA write of {len} bytes at {addr:#x} touches {bad:#x}, outside every registered region"
    )]
    OutsideRegions { addr: u64, len: usize, bad: u64 },
    #[error("DMA write of {len} bytes at {addr:#x} is larger than the max payload size {max}")]
    TooLong { addr: u64, len: usize, max: u64 },
    #[error("DMA write of {len} bytes at {addr:#x} crosses a 4 KiB boundary")]
    Crosses4K { addr: u64, len: usize },
    #[error(
        "DMA write of {len} bytes at {addr:#x} into {region}, issued after the card acknowledged \
         it would write there no more"
    )]
    AfterRelease {
        addr: u64,
        len: usize,
        region: String,
    },
    #[error(
        "DMA write of {len} bytes at {addr:#x} into {region}, which the IOMMU lets the card only \
         read"
    )]
    ReadOnly {
        addr: u64,
        len: usize,
        region: String,
    },
    #[error("region {start:#x}+{len:#x} overlaps region {other:#x} ({other_name})")]
    Overlap {
        start: u64,
        len: u64,
        other: u64,
        other_name: String,
    },
}

/// Memory outside the model that a region writes into: a process's own buffer, written with
/// atomic byte stores so that a host thread reading it concurrently (as it would read memory a real
/// card writes) sees the writes in order once it sees a later one.
#[derive(Clone, Copy, Debug)]
pub struct External(*mut u8);

// SAFETY: the pointer is only dereferenced while the region is registered, and whoever registers
// it promises (`HostMemory::register_external`) that the memory stays valid until then.
unsafe impl Send for External {}

#[derive(Debug)]
struct Region {
    len: u64,
    name: String,
    external: Option<External>,
    /// The card may only read it (its IOMMU mapping grants no write).
    read_only: bool,
    /// Released by the card ([`MemoryPort::release`]): no new write may target it; it stays
    /// only until the writes issued before the release have landed.
    released: bool,
    /// Writes landed in it through the [`MemoryPort`], and the port cycle of the last one.
    landed: RegionWrites,
}

/// Writes landed in a region, for tests that show the card was writing it when something happened.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RegionWrites {
    pub count: u64,
    pub last_cycle: u64,
}

/// Sparse host memory with registered regions (kept in the model, or external).
#[derive(Default)]
pub struct HostMemory {
    pages: HashMap<u64, Box<[u8; PAGE as usize]>>,
    regions: BTreeMap<u64, Region>,
    pub bytes_written: u64,
}

impl HostMemory {
    /// Registers `[start, start + len)` as writable by the card.
    pub fn register(&mut self, start: u64, len: u64, name: &str) -> Result<(), MemoryError> {
        self.insert(start, len, name, None, false)
    }

    /// Registers `[start, start + len)`, backed by the `len` bytes at `memory` instead of the
    /// model's pages, as writable by the card unless `read_only` (then a write is refused as an
    /// IOMMU would, and reported).
    ///
    /// # Safety
    /// `memory` must be valid for writes of `len` bytes until the region is unregistered, and
    /// nothing may access those bytes non-atomically while the card may write them.
    pub unsafe fn register_external(
        &mut self,
        start: u64,
        len: u64,
        name: &str,
        memory: *mut u8,
        read_only: bool,
    ) -> Result<(), MemoryError> {
        self.insert(start, len, name, Some(External(memory)), read_only)
    }

    fn insert(
        &mut self,
        start: u64,
        len: u64,
        name: &str,
        external: Option<External>,
        read_only: bool,
    ) -> Result<(), MemoryError> {
        if let Some((&other, r)) = self
            .regions
            .iter()
            .find(|(s, r)| start < **s + r.len && **s < start + len)
        {
            return Err(MemoryError::Overlap {
                start,
                len,
                other,
                other_name: r.name.clone(),
            });
        }
        let name = name.to_string();
        self.regions.insert(
            start,
            Region {
                len,
                name,
                external,
                read_only,
                released: false,
                landed: RegionWrites::default(),
            },
        );
        Ok(())
    }

    /// Removes the region starting at `start`; returns whether there was one.
    pub fn unregister(&mut self, start: u64) -> bool {
        self.regions.remove(&start).is_some()
    }

    /// The writes landed so far in every region, by the region's start.
    pub fn writes_landed_by_region(&self) -> Vec<(u64, u64)> {
        self.regions
            .iter()
            .map(|(s, r)| (*s, r.landed.count))
            .collect()
    }

    /// The writes landed so far in the region starting at `start`, if there is one.
    pub fn writes_landed(&self, start: u64) -> Option<RegionWrites> {
        self.regions.get(&start).map(|r| r.landed)
    }

    /// The name of the released region holding `addr`, if it is in one.
    fn released_region(&self, addr: u64) -> Option<&str> {
        self.region(addr)
            .filter(|(_, r)| r.released)
            .map(|(_, r)| r.name.as_str())
    }

    /// The region holding `addr`: its start and itself.
    fn region(&self, addr: u64) -> Option<(u64, &Region)> {
        self.regions
            .range(..=addr)
            .next_back()
            .filter(|(s, r)| addr < **s + r.len)
            .map(|(s, r)| (*s, r))
    }

    /// Writes the bytes of `data` whose strobe bit is set (bit i for `data[i]`); every written byte
    /// must be inside a registered region. External memory is written from the highest address
    /// down with release stores, so a reader that sees the first byte (an event record's phase
    /// bit) with an acquire load sees the whole write and everything written before it; an
    /// aligned 8-byte word written whole is one store, as a root complex writes memory in at
    /// least that unit (the phase bit in every word of an event record relies on it; `tear`
    /// splits a write only between words).
    pub fn write(&mut self, addr: u64, data: &[u8], strobes: &[bool]) -> Result<(), MemoryError> {
        assert_eq!(data.len(), strobes.len());
        let (Some(first), Some(last)) = (
            strobes.iter().position(|s| *s),
            strobes.iter().rposition(|s| *s),
        ) else {
            return Ok(());
        };
        // Regions are contiguous: the write is inside one if its first and last bytes are.
        let region = self
            .region(addr + first as u64)
            .filter(|(start, r)| addr + (last as u64) < start + r.len)
            .map(|(start, r)| (start, r.external, r.read_only.then(|| r.name.clone())));
        if let Some((_, _, Some(region))) = region {
            return Err(MemoryError::ReadOnly {
                addr,
                len: data.len(),
                region,
            });
        }
        let Some((start, external, _)) = region else {
            // Nothing is written; the first byte outside is reported.
            let bad = (first..=last)
                .map(|i| addr + i as u64)
                .find(|a| self.region(*a).is_none())
                .unwrap_or(addr + last as u64);
            return Err(MemoryError::OutsideRegions {
                addr,
                len: data.len(),
                bad,
            });
        };
        let mut skip_below = data.len();
        for (i, (&b, &s)) in data.iter().zip(strobes).enumerate().rev() {
            if !s || i >= skip_below {
                continue;
            }
            let a = addr + i as u64;
            if let Some(External(base)) = external {
                // A whole aligned word, met at its last byte: one 8-byte store.
                let first = (i + 1).checked_sub(8);
                if let Some(first) = first.filter(|f| {
                    (a + 1).is_multiple_of(8)
                        && strobes[*f..=i].iter().all(|s| *s)
                        && (base as usize + (a + 1 - 8 - start) as usize).is_multiple_of(8)
                }) {
                    let bytes: [u8; 8] = data[first..=i].try_into().unwrap();
                    // SAFETY: inside the registered length (checked above) and aligned (checked
                    // here); the registrant keeps the memory valid while registered.
                    unsafe {
                        AtomicU64::from_ptr(base.add((a + 1 - 8 - start) as usize) as *mut u64)
                    }
                    .store(u64::from_le_bytes(bytes), Ordering::Release);
                    skip_below = first;
                    self.bytes_written += 8;
                    continue;
                }
                // SAFETY: inside the registered length (checked above); the registrant keeps the
                // memory valid while registered.
                unsafe { AtomicU8::from_ptr(base.add((a - start) as usize)) }
                    .store(b, Ordering::Release);
            } else {
                let page = self
                    .pages
                    .entry(a / PAGE)
                    .or_insert_with(|| Box::new([0; PAGE as usize]));
                page[(a % PAGE) as usize] = b;
            }
            self.bytes_written += 1;
        }
        Ok(())
    }

    /// Whether `[addr, addr + len)` lies inside one registered region (the card may read it).
    pub fn readable(&self, addr: u64, len: u64) -> bool {
        len > 0
            && self
                .region(addr)
                .is_some_and(|(start, r)| addr + len <= start + r.len)
    }

    pub fn read(&self, addr: u64, len: usize) -> Vec<u8> {
        (0..len as u64)
            .map(|i| {
                let a = addr + i;
                if let Some((
                    start,
                    Region {
                        external: Some(External(base)),
                        ..
                    },
                )) = self.region(a)
                {
                    // SAFETY: as in `write`.
                    return unsafe { AtomicU8::from_ptr(base.add((a - start) as usize)) }
                        .load(Ordering::Relaxed);
                }
                self.pages
                    .get(&(a / PAGE))
                    .map_or(0, |p| p[(a % PAGE) as usize])
            })
            .collect()
    }
}

/// One write as the DMA engine issues it: up to the max payload size, not crossing 4 KiB.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DmaWrite {
    pub addr: u64,
    pub data: Vec<u8>,
    pub strobes: Vec<bool>,
}

/// The link in front of host memory: accepts writes at the preset's bandwidth, with random
/// backpressure, and makes them visible after the preset's latency.
pub struct MemoryPort {
    pub preset: MemoryPreset,
    pub memory: HostMemory,
    /// Probability that the port refuses a beat in a cycle where it has credit.
    pub stall: f64,
    /// Bytes of one beat of the card's write port (its datapath width: 16 at 128 bits, 32 at
    /// 256), each charged in full.
    pub beat_bytes: usize,
    rng: StdRng,
    credit: f64,
    in_flight: VecDeque<(u64, DmaWrite)>,
    /// Starts of released regions, unregistered once no write in flight targets them.
    released: Vec<u64>,
    pub cycle: u64,
    pub beats_accepted: u64,
    pub bytes_accepted: u64,
    /// Bytes the card sent on the link toward memory (TLPs with headers and framing, its Hard
    /// IP's DLLPs and MSIs), as charged.
    pub link_bytes_from_card: u64,
    /// When set, every write that became visible: (cycle, address, bytes written), for rates
    /// measured where a host sees the bytes.
    pub landed_log: Option<Vec<(u64, u64, u64)>>,
    pub violations: Vec<MemoryError>,
    /// Cycle each byte address last became visible (for latency measurements; grows with every
    /// address written, so a long-running card turns it off with `track_visible`).
    pub visible_at: HashMap<u64, u64>,
    pub track_visible: bool,
    /// The root complex splits every write into its 8-byte words and lets them land apart: the
    /// even words (the first among them) at the write's time, the odd ones, last first, this many
    /// cycles later. Writes still land in order (a later write waits behind the delayed words),
    /// as PCIe orders whole writes and promises nothing inside one.
    pub tear: Option<u64>,
}

impl MemoryPort {
    pub fn new(preset: MemoryPreset, stall: f64, seed: u64) -> Self {
        Self {
            preset,
            memory: HostMemory::default(),
            stall,
            beat_bytes: PcieVariant::Gen2x8.beat_bytes(),
            rng: StdRng::seed_from_u64(seed),
            credit: 0.0,
            in_flight: VecDeque::new(),
            released: vec![],
            cycle: 0,
            beats_accepted: 0,
            link_bytes_from_card: 0,
            bytes_accepted: 0,
            landed_log: None,
            violations: vec![],
            visible_at: HashMap::new(),
            track_visible: true,
            tear: None,
        }
    }

    /// The port in front of a card whose datapath is `variant`'s width.
    pub fn for_variant(mut self, variant: PcieVariant) -> Self {
        self.set_variant(variant);
        self
    }

    /// Charges beats at `variant`'s width from now on.
    pub fn set_variant(&mut self, variant: PcieVariant) {
        self.beat_bytes = variant.beat_bytes();
    }

    /// Whether a beat can be accepted in this cycle (a preset slower than a beat per cycle
    /// takes one when a cycle's worth of credit is there).
    pub fn ready(&mut self) -> bool {
        let beat = self.beat_bytes as f64;
        self.credit >= beat.min(self.preset.bytes_per_cycle) && !self.rng.gen_bool(self.stall)
    }

    /// Takes one beat of a write (call only when `ready()` said yes in this cycle).
    pub fn accept_beat(&mut self) {
        self.credit -= self.beat_bytes as f64;
        self.beats_accepted += 1;
    }

    /// Charges `bytes` of link traffic (TLP payload, header, framing) in the preset's
    /// payload-bandwidth units (which already carry a 4-dword header's overhead per `max_payload`
    /// bytes). The root complex charges each beat as it comes, instead of
    /// [`MemoryPort::accept_beat`].
    pub fn charge_link(&mut self, bytes: usize) {
        self.charge_link_bytes(bytes);
        self.beats_accepted += 1;
    }

    /// Charges link bytes that are no beat of the card's: the DLLPs and MSIs its Hard IP sends.
    pub fn charge_link_bytes(&mut self, bytes: usize) {
        self.link_bytes_from_card += bytes as u64;
        let mp = self.preset.max_payload as f64;
        self.credit -= bytes as f64 * mp / (mp + 24.0);
    }

    /// A whole write has been accepted: it becomes visible after the latency.
    pub fn accept_write(&mut self, w: DmaWrite) {
        if w.data.len() as u64 > self.preset.max_payload {
            self.violations.push(MemoryError::TooLong {
                addr: w.addr,
                len: w.data.len(),
                max: self.preset.max_payload,
            });
        }
        if !w.data.is_empty() && w.addr / PAGE != (w.addr + w.data.len() as u64 - 1) / PAGE {
            self.violations.push(MemoryError::Crosses4K {
                addr: w.addr,
                len: w.data.len(),
            });
        }
        self.bytes_accepted += w.strobes.iter().filter(|s| **s).count() as u64;
        if let Some(name) = self.memory.released_region(w.addr) {
            // Issued after the release: refused, as an IOMMU would once the mapping is gone.
            self.violations.push(MemoryError::AfterRelease {
                addr: w.addr,
                len: w.data.len(),
                region: name.to_string(),
            });
            return;
        }
        let due = self.cycle + self.preset.latency_cycles;
        match self.tear {
            Some(delay) if w.data.len() > 8 => {
                let word = |i: usize| {
                    let at = (i * 8)..((i + 1) * 8).min(w.data.len());
                    DmaWrite {
                        addr: w.addr + at.start as u64,
                        data: w.data[at.clone()].to_vec(),
                        strobes: w.strobes[at].to_vec(),
                    }
                };
                let words = w.data.len().div_ceil(8);
                for i in (0..words).step_by(2) {
                    self.in_flight.push_back((due, word(i)));
                }
                for i in (1..words).step_by(2).rev() {
                    self.in_flight.push_back((due + delay, word(i)));
                }
            }
            _ => self.in_flight.push_back((due, w)),
        }
    }

    /// The card acknowledged it will write no more into the region starting at `start` (a CLOP's
    /// deregistration): from this cycle on, a write issued into it is a violation; writes issued
    /// before, still on their way, land, and the region is unregistered once they have. Returns
    /// how many were on their way, or None if no region starts there.
    pub fn release(&mut self, start: u64) -> Option<usize> {
        let r = self.memory.regions.get_mut(&start)?;
        r.released = true;
        let end = start + r.len;
        self.released.push(start);
        let on_the_way = self.in_flight.iter();
        let n = on_the_way
            .filter(|(_, w)| (start..end).contains(&w.addr))
            .count();
        self.forget_landed_releases();
        Some(n)
    }

    /// Unregisters released regions no write in flight targets any more.
    fn forget_landed_releases(&mut self) {
        let (memory, in_flight) = (&mut self.memory, &self.in_flight);
        self.released.retain(|start| {
            let len = memory.regions.get(start).map_or(0, |r| r.len);
            let busy = in_flight
                .iter()
                .any(|(_, w)| (*start..start + len).contains(&w.addr));
            if !busy {
                memory.unregister(*start);
            }
            busy
        });
    }

    /// Ends a cycle: credit accrues (at most a few beats are banked), due writes become visible.
    pub fn tick(&mut self) {
        self.cycle += 1;
        let cap = 4.0 * (self.beat_bytes as f64).max(self.preset.bytes_per_cycle);
        self.credit = (self.credit + self.preset.bytes_per_cycle).min(cap);
        while self
            .in_flight
            .front()
            .is_some_and(|(due, _)| *due <= self.cycle)
        {
            let (_, w) = self.in_flight.pop_front().expect("checked");
            let landed = self.memory.write(w.addr, &w.data, &w.strobes);
            if landed.is_ok() {
                if let Some(log) = &mut self.landed_log {
                    let bytes = w.strobes.iter().filter(|s| **s).count() as u64;
                    log.push((self.cycle, w.addr, bytes));
                }
                let first = w.strobes.iter().position(|s| *s).unwrap_or(0) as u64;
                if let Some(r) = self.memory.regions.range_mut(..=w.addr + first).next_back() {
                    r.1.landed.count += 1;
                    r.1.landed.last_cycle = self.cycle;
                }
            }
            match landed {
                Ok(()) if !self.track_visible => {}
                Ok(()) => {
                    for (i, s) in w.strobes.iter().enumerate() {
                        if *s {
                            self.visible_at.insert(w.addr + i as u64, self.cycle);
                        }
                    }
                }
                Err(e) => self.violations.push(e),
            }
        }
        if !self.released.is_empty() {
            self.forget_landed_releases();
        }
    }

    /// Writes still on their way.
    pub fn in_flight(&self) -> usize {
        self.in_flight.len()
    }

    /// Panics with the first violation, if any (tests call this at the end, or every cycle).
    pub fn assert_clean(&self) {
        if let Some(v) = self.violations.first() {
            panic!(
                "host memory: {v} ({} violations in all)",
                self.violations.len()
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_simulated_core_clock_is_every_pcie_variants() {
        for v in PcieVariant::ALL {
            assert_eq!(v.core_hz() as f64, CORE_HZ, "{v}");
        }
    }

    fn write(addr: u64, data: &[u8]) -> DmaWrite {
        DmaWrite {
            addr,
            data: data.to_vec(),
            strobes: vec![true; data.len()],
        }
    }

    #[test]
    fn presets_follow_the_link_arithmetic() {
        let g2 = MemoryPreset::gen2_x8();
        assert!(
            (g2.bytes_per_s() - 4e9 * 256.0 / 280.0).abs() < 1e6,
            "{}",
            g2.bytes_per_s()
        );
        let g3 = MemoryPreset::gen3_x8();
        assert!(
            g3.bytes_per_s() > 7.1e9 && g3.bytes_per_s() < 7.3e9,
            "{}",
            g3.bytes_per_s()
        );
        assert_eq!(g2.latency_cycles, 100);
        // The links' raw bytes per cycle and the AckNak latency limits (158.75 symbol times of
        // 2 ns, 203.75 of 1 ns).
        assert_eq!(g2.link_bytes_per_cycle, 16.0);
        assert!((g3.link_bytes_per_cycle - 32.0 * 128.0 / 130.0).abs() < 1e-9);
        assert_eq!(
            (g2.ack_period_cycles, g3.ack_period_cycles),
            (Some(79), Some(50))
        );
        assert_eq!(MemoryPreset::by_name("gen3x8"), Some(g3));
        assert_eq!(MemoryPreset::by_name("gen9"), None);
        assert_eq!(MemoryPreset::of(PcieVariant::Gen3x8), g3);
        assert_eq!(MemoryPreset::of(PcieVariant::Gen2x8), g2);
    }

    /// A torn write: its even words land at its time, its odd ones `tear` cycles later, and the
    /// write after it only behind them.
    #[test]
    fn a_torn_write_lands_in_two_parts_and_the_next_waits_behind_it() {
        let mut p = MemoryPort::new(MemoryPreset::ideal(), 0.0, 1);
        p.tear = Some(10);
        p.memory.register(0x1000, 0x100, "ring").unwrap();
        let record: Vec<u8> = (1..=32).collect();
        p.accept_write(write(0x1000, &record));
        p.accept_write(write(0x1040, &[0xEE; 8]));
        let latency = p.preset.latency_cycles;
        for _ in 0..=latency {
            p.tick();
        }
        let seen = p.memory.read(0x1000, 32);
        let mut want = vec![0u8; 32];
        for w in [0, 2] {
            want[8 * w..8 * w + 8].copy_from_slice(&record[8 * w..8 * w + 8]);
        }
        assert_eq!(seen, want, "the even words only");
        assert_eq!(p.memory.read(0x1040, 8), [0; 8], "the next write waits");
        for _ in 0..10 {
            p.tick();
        }
        assert_eq!(p.memory.read(0x1000, 32), record);
        assert_eq!(p.memory.read(0x1040, 8), [0xEE; 8]);
        p.assert_clean();
    }

    #[test]
    fn writes_land_only_inside_registered_regions() {
        let mut m = HostMemory::default();
        m.register(0x1000, 0x2000, "clop0").unwrap();
        assert!(matches!(
            m.register(0x2000, 0x100, "overlap"),
            Err(MemoryError::Overlap { other: 0x1000, .. })
        ));
        m.write(0x1FFE, &[1, 2, 3, 4], &[true; 4]).unwrap(); // crosses a page, inside the region
        assert_eq!(m.read(0x1FFE, 4), vec![1, 2, 3, 4]);
        // Strobed-off bytes are not written and may lie outside.
        m.write(0xFFE, &[9, 9, 5], &[false, false, true]).unwrap();
        assert_eq!(m.read(0x1000, 1), vec![5]);
        let e = m.write(0x2FFF, &[1, 2], &[true, true]).unwrap_err();
        assert_eq!(
            e,
            MemoryError::OutsideRegions {
                addr: 0x2FFF,
                len: 2,
                bad: 0x3000
            }
        );
        assert!(m.unregister(0x1000));
        assert!(
            m.write(0x1000, &[1], &[true]).is_err(),
            "no writes after unregistering"
        );
    }

    #[test]
    fn a_released_region_takes_the_writes_issued_before_and_refuses_those_after() {
        let mut p = MemoryPort::new(MemoryPreset::gen2_x8(), 0.0, 1);
        p.memory.register(0x1000, 0x1000, "clop 3").unwrap();
        p.memory.register(0x4000, 0x1000, "other").unwrap();
        p.accept_write(write(0x1000, &[1; 8]));
        p.accept_write(write(0x1100, &[2; 8]));
        p.accept_write(write(0x4000, &[3; 8]));
        assert_eq!(
            p.release(0x1000),
            Some(2),
            "two writes into it on their way"
        );
        assert_eq!(p.release(0x9000), None);
        // One issued after the release is refused at once; the other region is unaffected.
        p.accept_write(write(0x1200, &[4; 8]));
        p.accept_write(write(0x4008, &[5; 8]));
        assert!(matches!(
            &p.violations[..],
            [MemoryError::AfterRelease { addr: 0x1200, region, .. }] if region == "clop 3"
        ));
        for _ in 0..p.preset.latency_cycles + 1 {
            p.tick();
        }
        assert_eq!(
            p.memory.read(0x1100, 2),
            vec![2, 2],
            "issued before: landed"
        );
        assert_eq!(
            p.memory.read(0x1200, 1),
            vec![0],
            "issued after: never written"
        );
        assert_eq!(p.memory.read(0x4008, 1), vec![5]);
        assert!(
            !p.memory.readable(0x1000, 1),
            "unregistered once the writes landed"
        );
        let other = p.memory.writes_landed(0x4000).unwrap();
        assert_eq!(other.count, 2);
        assert_eq!(
            other.last_cycle, p.preset.latency_cycles,
            "landed after the latency"
        );
        assert_eq!(p.violations.len(), 1);
    }

    #[test]
    fn the_port_accepts_at_the_preset_bandwidth_and_shows_writes_after_the_latency() {
        // Both presets, with the beats of both datapaths (a Gen3 link is slower than 32 bytes
        // per cycle: a 256-bit beat is charged in full).
        for preset in [MemoryPreset::gen2_x8(), MemoryPreset::gen3_x8()] {
            for variant in [PcieVariant::Gen2x8, PcieVariant::Gen3x8] {
                let mut p = MemoryPort::new(preset, 0.0, 1).for_variant(variant);
                let cycles = 10_000;
                for _ in 0..cycles {
                    if p.ready() {
                        p.accept_beat();
                    }
                    p.tick();
                }
                let rate = (p.beats_accepted as usize * variant.beat_bytes()) as f64;
                let rate = rate / cycles as f64;
                assert!(
                    (rate - p.preset.bytes_per_cycle.min(variant.beat_bytes() as f64)).abs() < 0.05,
                    "{variant:?} beats, {}: {rate} B/cycle vs {}",
                    preset.name,
                    p.preset.bytes_per_cycle
                );
            }
        }

        let mut p = MemoryPort::new(MemoryPreset::gen2_x8(), 0.0, 1);
        p.memory.register(0, 1 << 20, "all").unwrap();
        p.accept_write(write(0x100, &[7; 32]));
        for _ in 0..99 {
            p.tick();
        }
        assert_eq!(
            p.memory.read(0x100, 1),
            vec![0],
            "not visible before the latency"
        );
        p.tick();
        assert_eq!(p.memory.read(0x100, 32), vec![7; 32]);
        assert_eq!(p.visible_at[&0x11F], 100);
        p.assert_clean();
    }

    #[test]
    fn illegal_writes_are_reported_with_their_address() {
        let mut p = MemoryPort::new(MemoryPreset::gen2_x8(), 0.0, 1);
        p.memory.register(0, 0x2000, "r").unwrap();
        p.accept_write(write(0xFF0, &[1; 32])); // crosses 4 KiB
        p.accept_write(write(0x0, &[1; 300])); // over the max payload
        p.accept_write(write(0x2000, &[1; 16])); // past the end of the region
        for _ in 0..200 {
            p.tick();
        }
        assert!(matches!(
            p.violations[0],
            MemoryError::Crosses4K { addr: 0xFF0, .. }
        ));
        assert!(matches!(
            p.violations[1],
            MemoryError::TooLong { len: 300, .. }
        ));
        assert!(matches!(
            p.violations[2],
            MemoryError::OutsideRegions { bad: 0x2000, .. }
        ));
        let r = std::panic::catch_unwind(|| p.assert_clean());
        assert!(r.is_err());
    }

    /// A reader of external memory never sees an aligned word half written: the event record's
    /// phase bit in each word vouches for the whole word (written byte by byte, the phase byte at
    /// the top of a word could land before the rest).
    #[test]
    fn an_aligned_word_lands_whole() {
        use std::sync::atomic::AtomicBool;
        use std::sync::Arc;
        struct Shared(*mut u64);
        // SAFETY: the reader only loads atomically; the backing outlives both threads.
        unsafe impl Send for Shared {}
        let mut backing = vec![0u64; 8];
        let word = Shared(backing.as_mut_ptr().wrapping_add(1));
        let done = Arc::new(AtomicBool::new(false));
        let patterns = [0x8011_2233_4455_6677u64, 0x0099_aabb_ccdd_eeffu64];
        let reader = {
            let done = done.clone();
            std::thread::spawn(move || {
                let word = word;
                let mut looks = 0u64;
                while !done.load(Ordering::Relaxed) || looks == 0 {
                    // SAFETY: aligned, inside `backing`, which outlives this thread.
                    let v = unsafe { AtomicU64::from_ptr(word.0) }.load(Ordering::Acquire);
                    assert!(v == 0 || patterns.contains(&v), "a torn word: {v:#018x}");
                    looks += 1;
                }
                looks
            })
        };
        let mut m = HostMemory::default();
        // SAFETY: `backing` lives until after the reader is joined.
        unsafe { m.register_external(0x1000, 64, "ring", backing.as_mut_ptr().cast(), false) }
            .unwrap();
        for k in 0..200_000 {
            let bytes = patterns[k % 2].to_le_bytes();
            // Written as part of a longer write, as a record's word is.
            let mut data = [0u8; 24];
            data[8..16].copy_from_slice(&bytes);
            m.write(0x1000, &data, &[true; 24]).unwrap();
        }
        done.store(true, Ordering::Relaxed);
        assert!(reader.join().unwrap() > 0);
        assert_eq!(m.read(0x1008, 8), patterns[1].to_le_bytes());
    }

    #[test]
    fn external_regions_are_written_in_place_and_only_while_registered() {
        let mut backing = vec![0u8; 64];
        let mut m = HostMemory::default();
        unsafe { m.register_external(0x1000, 64, "app", backing.as_mut_ptr(), false) }.unwrap();
        m.write(0x1008, &[1, 2, 3, 4], &[true, true, false, true])
            .unwrap();
        assert_eq!(m.read(0x1008, 4), [1, 2, 0, 4]);
        // A write that runs past the region writes nothing and names the first byte outside.
        let e = m.write(0x103E, &[9; 4], &[true; 4]).unwrap_err();
        assert_eq!(
            e,
            MemoryError::OutsideRegions {
                addr: 0x103E,
                len: 4,
                bad: 0x1040
            }
        );
        assert!(m.unregister(0x1000));
        assert!(m.write(0x1008, &[7], &[true]).is_err());
        assert_eq!(&backing[8..12], &[1, 2, 0, 4]);
        // A region the card may only read takes no write, and the refusal names it.
        unsafe { m.register_external(0x2000, 64, "tx ring", backing.as_mut_ptr(), true) }.unwrap();
        assert_eq!(
            m.write(0x2000, &[7], &[true]),
            Err(MemoryError::ReadOnly {
                addr: 0x2000,
                len: 1,
                region: "tx ring".into()
            })
        );
        assert!(m.readable(0x2000, 64));
        assert_eq!(backing[0], 0);
        assert_eq!(&backing[62..], &[0, 0]);
    }

    #[test]
    fn backpressure_slows_acceptance() {
        let mut p = MemoryPort::new(MemoryPreset::ideal(), 0.5, 3);
        let mut n = 0;
        for _ in 0..10_000 {
            if p.ready() {
                p.accept_beat();
                n += 1;
            }
            p.tick();
        }
        assert!((4_000..6_000).contains(&n), "{n}");
    }
}

//! A card that is not there: BAR0 registers kept in memory (the ID answers, commands complete at
//! once), DMA mappings recorded so the owner can write into them as a card would, and a transmit
//! ring per port that takes descriptors when the owner says, checked as the card checks them. For
//! the host benchmark (the library's own cost per event, with no card or simulator behind it) and
//! tests.

use std::collections::BTreeMap;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU8, Ordering};
use std::sync::Mutex;

use nanet_contract::bar0::{self, BAR0_BYTES};
use nanet_contract::offload::ID_VALUE;
use nanet_contract::rx::{RxCounter, RxReg, MAX_PORTS, RELEASE_QUEUE_ENTRIES};
use nanet_contract::tx::{
    TxDescriptor, TxReg, TX_BUFFER_ALIGN, TX_DESC_BYTES, TX_MAX_PAYLOAD, TX_RING_ENABLE,
    TX_STATUS_IDLE,
};
use nanet_contract::Reg;

use crate::backend::{Backend, DmaMap};
use crate::error::{Error, Result};

/// A mapping the library made: where the memory is in this process.
#[derive(Copy, Clone, Debug)]
pub struct Mapping {
    pub iova: u64,
    pub memory: *mut u8,
    pub len: usize,
}

// SAFETY: only a record of what was mapped; writers go through `SyntheticCard::write_dma`.
unsafe impl Send for Mapping {}

pub struct SyntheticCard {
    /// BAR0, one word per register (a write is one store, as a posted MMIO write).
    registers: Box<[AtomicU32]>,
    mappings: Mutex<BTreeMap<u64, Mapping>>,
    irq: OwnedFd,
    /// The port count its card block reports.
    ports: usize,
    releases: Mutex<ReleaseQueue>,
    /// Copy of `ReleaseQueue::held` read without the lock: a card that takes every release at
    /// once counts it with one atomic add, as a real card's write costs the host one store.
    releases_held: AtomicBool,
    /// The transmit rings, one per port (ring `r` sends from port `r`).
    tx_rings: Mutex<Vec<TxRing>>,
}

/// One transmit ring as the card keeps it (`nanet_contract::tx`). Nothing is ever in flight (a
/// descriptor is read, checked and its payload read within [`SyntheticCard::take_tx`]), so the
/// ring always reads idle and a disabled one has nothing to drain; no event records are written.
#[derive(Default)]
struct TxRing {
    base: u64,
    size: u32,
    tail: u16,
    head: u16,
    /// The counter registers.
    counters: BTreeMap<TxReg, u32>,
    /// Writes of the tail (doorbells), refused ones included.
    doorbells: u64,
}

impl TxRing {
    fn enabled(&self) -> bool {
        self.size & TX_RING_ENABLE != 0
    }

    fn slots(&self) -> u16 {
        1 << (self.size & 0xF)
    }

    fn count(&mut self, counter: TxReg) {
        let c = self.counters.entry(counter).or_default();
        *c = c.wrapping_add(1);
    }

    fn read(&self, r: TxReg) -> u32 {
        match r {
            TxReg::RingBaseLo => self.base as u32,
            TxReg::RingBaseHi => (self.base >> 32) as u32,
            TxReg::RingSize => self.size,
            TxReg::Tail => self.tail as u32,
            TxReg::Head => self.head as u32,
            TxReg::Status => TX_STATUS_IDLE,
            counter => self.counters.get(&counter).copied().unwrap_or(0),
        }
    }

    fn write(&mut self, r: TxReg, value: u32) {
        match r {
            TxReg::RingBaseLo => self.base = self.base >> 32 << 32 | (value & !0xFFF) as u64,
            TxReg::RingBaseHi => self.base = self.base as u32 as u64 | (value as u64) << 32,
            TxReg::RingSize => {
                self.size = value;
                if !self.enabled() {
                    (self.head, self.tail) = (0, 0);
                }
            }
            TxReg::Tail => {
                self.doorbells += 1;
                if !self.enabled() {
                    return;
                }
                // Refused: slots the host has not written, or descriptors taken back.
                let ahead = (value as u16).wrapping_sub(self.head);
                if ahead > self.slots() || ahead < self.tail.wrapping_sub(self.head) {
                    self.count(TxReg::BadTail);
                } else {
                    self.tail = value as u16;
                }
            }
            // The rest reads what the card says.
            _ => {}
        }
    }
}

/// The card's release queue.
#[derive(Default)]
struct ReleaseQueue {
    /// Releases in it: the card's `RELEASE_QUEUE_ENTRIES` at most (one more is lost and counted
    /// in `release_overflow`).
    queued: u32,
    /// The CLOP engine leaves them there ([`SyntheticCard::hold_releases`]); else it takes each
    /// at once.
    held: bool,
}

impl SyntheticCard {
    /// A card with the most ports.
    pub fn new() -> Result<Self> {
        Self::with_ports(MAX_PORTS)
    }

    /// A card whose card block says it has `ports` ports (a card generated with that count).
    pub fn with_ports(ports: usize) -> Result<Self> {
        // SAFETY: plain syscall; owned below.
        let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error().into());
        }
        Ok(Self {
            registers: (0..BAR0_BYTES / 4).map(|_| AtomicU32::new(0)).collect(),
            mappings: Mutex::default(),
            // SAFETY: a fresh fd.
            irq: unsafe { OwnedFd::from_raw_fd(fd) },
            ports,
            releases: Mutex::default(),
            releases_held: AtomicBool::new(false),
            tx_rings: Mutex::new((0..ports).map(|_| TxRing::default()).collect()),
        })
    }

    /// Makes the CLOP engine leave releases in the release queue (`true`), or take every one
    /// there and from then on each at once (`false`).
    pub fn hold_releases(&self, hold: bool) {
        let mut q = self.releases.lock().unwrap();
        q.held = hold;
        self.releases_held.store(hold, Ordering::Relaxed);
        if !hold {
            let n = std::mem::take(&mut q.queued);
            self.count(RxCounter::ReleasesTaken, n);
        }
    }

    /// The CLOP engine takes up to `n` releases from the release queue.
    pub fn take_releases(&self, n: u32) {
        let mut q = self.releases.lock().unwrap();
        let n = n.min(q.queued);
        q.queued -= n;
        self.count(RxCounter::ReleasesTaken, n);
    }

    fn store_register(&self, offset: u64, value: u32) -> Result<()> {
        match self.registers.get(offset as usize / 4) {
            Some(r) => {
                r.store(value, Ordering::Relaxed);
                Ok(())
            }
            None => Err(Error::Memory(format!(
                "BAR0 offset {offset:#x} is beyond BAR0"
            ))),
        }
    }

    fn count(&self, c: RxCounter, n: u32) {
        self.registers[bar0::rx_engine(c.word()) as usize / 4].fetch_add(n, Ordering::Relaxed);
    }

    /// The mappings in the order of their bus addresses (the library allocates them upwards).
    pub fn mappings(&self) -> Vec<Mapping> {
        self.mappings.lock().unwrap().values().copied().collect()
    }

    /// Doorbells rung on transmit ring `ring`: writes of its tail.
    pub fn doorbells(&self, ring: u8) -> u64 {
        self.tx_rings.lock().unwrap()[ring as usize].doorbells
    }

    /// Transmit ring `ring` (one of the card's) takes up to `n` of the descriptors posted to it,
    /// in order, as the card does: it reads each from host memory and checks it (refused and
    /// counted in `BadDescriptor`: a length of 0 or over `TX_MAX_PAYLOAD`, a port other than the
    /// ring's, a buffer not 16-byte aligned), reads its payload (a read of memory not mapped is
    /// counted in `ReadError`), counts it `Sent` and advances `Head`. Returns the payloads sent.
    pub fn take_tx(&self, ring: u8, n: usize) -> Vec<Vec<u8>> {
        let mut rings = self.tx_rings.lock().unwrap();
        let r = &mut rings[ring as usize];
        let mut sent = vec![];
        for _ in 0..n {
            if !r.enabled() || r.head == r.tail {
                break;
            }
            let at = r.base + (r.head % r.slots()) as u64 * TX_DESC_BYTES as u64;
            let desc = self
                .read_dma(at, TX_DESC_BYTES)
                .map(|b| TxDescriptor::decode(&b.try_into().unwrap()));
            let outcome = match desc {
                Err(_) => TxReg::ReadError,
                Ok(d) if d.len == 0 || d.len as usize > TX_MAX_PAYLOAD => TxReg::BadDescriptor,
                Ok(d) if d.port != ring || d.buffer % TX_BUFFER_ALIGN != 0 => TxReg::BadDescriptor,
                Ok(d) => match self.read_dma(d.buffer, d.len as usize) {
                    Err(_) => TxReg::ReadError,
                    Ok(payload) => {
                        sent.push(payload);
                        TxReg::Sent
                    }
                },
            };
            r.count(outcome);
            r.head = r.head.wrapping_add(1);
        }
        sent
    }

    /// The last value written to a register outside the transmit rings (theirs: `read32`).
    pub fn register(&self, offset: u64) -> u32 {
        self.registers
            .get(offset as usize / 4)
            .map_or(u32::MAX, |r| r.load(Ordering::Relaxed))
    }

    /// Writes `data` at bus address `iova` as the card's DMA would (the first byte last, with
    /// release ordering, as the simulated card does).
    pub fn write_dma(&self, iova: u64, data: &[u8]) -> Result<()> {
        let at = self.mapped(iova, data.len())?;
        for (i, b) in data.iter().enumerate().rev() {
            // SAFETY: inside a live mapping (checked by `mapped`).
            unsafe { AtomicU8::from_ptr(at.add(i)) }.store(*b, Ordering::Release);
        }
        Ok(())
    }

    /// Reads `len` bytes at bus address `iova` as the card's DMA would.
    pub fn read_dma(&self, iova: u64, len: usize) -> Result<Vec<u8>> {
        let at = self.mapped(iova, len)?;
        // SAFETY: inside a live mapping (checked by `mapped`).
        let byte = |i| unsafe { AtomicU8::from_ptr(at.add(i)) }.load(Ordering::Acquire);
        Ok((0..len).map(byte).collect())
    }

    /// Where bus addresses `iova..iova + len` are in this process, if one mapping holds them all.
    fn mapped(&self, iova: u64, len: usize) -> Result<*mut u8> {
        let m = self
            .mappings
            .lock()
            .unwrap()
            .range(..=iova)
            .next_back()
            .map(|(_, m)| *m)
            .filter(|m| iova + len as u64 <= m.iova + m.len as u64)
            .ok_or_else(|| Error::Memory(format!("nothing mapped at {iova:#x}")))?;
        // SAFETY: inside the mapping (checked above).
        Ok(unsafe { m.memory.add((iova - m.iova) as usize) })
    }

    /// The transmit ring (one of the card's) and its register at BAR0 `offset`, if one is there.
    #[inline]
    fn tx_register(&self, offset: u64) -> Option<(usize, TxReg)> {
        // (The range first: most accesses are elsewhere, releases above all.)
        let rings = bar0::TX_ENGINE..bar0::TX_ENGINE + self.ports as u64 * bar0::TX_RING_STRIDE;
        if !rings.contains(&offset) {
            return None;
        }
        let Some(bar0::Target::TxRing { ring, word }) = bar0::decode(offset) else {
            return None;
        };
        let r = TxReg::ALL.iter().find(|r| r.word() == word as u32)?;
        Some((ring as usize, *r))
    }
}

impl Backend for SyntheticCard {
    fn describe(&self) -> String {
        "synthetic card (registers in memory, no data path)".into()
    }

    fn read32(&self, offset: u64) -> Result<u32> {
        if offset == bar0::port(0, Reg::Id.word()) {
            return Ok(ID_VALUE);
        }
        if let Some(w) = nanet_contract::card::constant_word(
            self.ports,
            nanet_contract::pcie::PcieVariant::Gen2x8,
            offset,
        ) {
            return Ok(w);
        }
        if offset == bar0::rx_engine(RxReg::ClopCommand.word()) {
            return Ok(0);
        }
        if let Some((ring, r)) = self.tx_register(offset) {
            return Ok(self.tx_rings.lock().unwrap()[ring].read(r));
        }
        Ok(self.register(offset))
    }

    fn write32(&self, offset: u64, value: u32) -> Result<()> {
        if let Some((ring, r)) = self.tx_register(offset) {
            self.tx_rings.lock().unwrap()[ring].write(r, value);
            return Ok(());
        }
        if offset == bar0::rx_engine(RxReg::Release.word()) {
            if !self.releases_held.load(Ordering::Relaxed) {
                self.count(RxCounter::ReleasesTaken, 1);
                return self.store_register(offset, value);
            }
            let mut q = self.releases.lock().unwrap();
            if q.held {
                if q.queued == RELEASE_QUEUE_ENTRIES as u32 {
                    self.count(RxCounter::ReleaseOverflow, 1);
                } else {
                    q.queued += 1;
                }
            } else {
                self.count(RxCounter::ReleasesTaken, 1);
            }
        }
        self.store_register(offset, value)
    }

    unsafe fn map_dma(&self, memory: *mut u8, len: usize, iova: u64, _: DmaMap) -> Result<()> {
        let m = Mapping { iova, memory, len };
        self.mappings.lock().unwrap().insert(iova, m);
        Ok(())
    }

    fn unmap_dma(&self, iova: u64, _len: usize) -> Result<()> {
        match self.mappings.lock().unwrap().remove(&iova) {
            Some(_) => Ok(()),
            None => Err(Error::Memory(format!("nothing mapped at {iova:#x}"))),
        }
    }

    fn irq_fd(&self) -> RawFd {
        self.irq.as_raw_fd()
    }

    fn max_payload(&self) -> u32 {
        256
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use std::time::Duration;

    use nanet_contract::bar0;
    use nanet_contract::rx::RxReg;
    use nanet_contract::tx::{self, TxReg, TX_DESC_BYTES};

    use super::SyntheticCard;
    use crate::backend::Backend;
    use crate::{Datagram, Device, Error, SendTo};

    const TO: SendTo = SendTo {
        dst_ip: [10, 0, 0, 1],
        dst_port: 9,
        src_port: 9,
    };

    fn counter(list: &[(&str, u32)], name: &str) -> u32 {
        list.iter().find(|(n, _)| *n == name).expect(name).1
    }

    #[test]
    fn the_library_takes_the_port_count_from_the_card() {
        let dev = Device::with_backend(Arc::new(SyntheticCard::with_ports(2).unwrap())).unwrap();
        assert_eq!(dev.ports(), 2);
        assert!(matches!(
            dev.send(2, TO, &[1]),
            Err(Error::NoSuchPort { port: 2, ports: 2 })
        ));
        assert!(matches!(
            dev.configure_port(
                3,
                &crate::PortConfig {
                    mac: [2, 0, 0, 0, 0, 1],
                    ip: [10, 0, 0, 2],
                    netmask: [255, 255, 255, 0],
                    gateway: [0; 4],
                }
            ),
            Err(Error::NoSuchPort { port: 3, ports: 2 })
        ));
        let none = Device::with_backend(Arc::new(SyntheticCard::with_ports(0).unwrap()));
        let err = none
            .err()
            .expect("a card of no ports is refused")
            .to_string();
        assert!(err.contains("0 ports"), "{err}");
    }

    /// `send_batch` rings one doorbell for a batch (none for an empty one), and one more before
    /// it waits for a free slot, so the card has what was posted; a batch with one bad datagram
    /// is refused whole, nothing posted. (Mutations: a doorbell per datagram, or none before the
    /// wait, fail below.)
    #[test]
    fn a_batch_rings_one_doorbell_and_one_before_each_wait_for_a_slot() {
        let card = Arc::new(SyntheticCard::new().unwrap());
        let dev = Device::with_backend(card.clone()).unwrap();
        let tail = bar0::tx_ring(0, TxReg::Tail.word());
        let payloads: Vec<Vec<u8>> = (0..400).map(|i| vec![i as u8; 1 + i % 64]).collect();
        let batch = |range: std::ops::Range<usize>| -> Vec<Datagram> {
            range
                .map(|i| Datagram {
                    port: 0,
                    to: TO,
                    payload: &payloads[i],
                })
                .collect()
        };
        dev.send_batch(&batch(0..100)).unwrap();
        assert_eq!(card.doorbells(0), 1, "one doorbell for 100 datagrams");
        assert_eq!(card.read32(tail).unwrap(), 100);

        let mut bad = batch(100..105);
        bad[3].payload = &[];
        let e = dev.send_batch(&bad).unwrap_err();
        assert!(
            matches!(&e, Error::InvalidSend(m) if m.contains("datagram 3 of the batch of 5")),
            "{e}"
        );
        bad[3] = Datagram { port: 4, ..bad[0] };
        assert!(matches!(
            dev.send_batch(&bad),
            Err(Error::NoSuchPort { port: 4, .. })
        ));
        dev.send_batch(&[]).unwrap();
        assert_eq!(card.doorbells(0), 1, "nothing posted: no doorbell");
        assert_eq!(dev.tx_progress(0).unwrap(), (0, 100), "nothing posted");

        // 200 more: the ring (256 slots) is full after 156 of them; the library rings for the
        // 256 posted, then waits until the card's head moves.
        let sender = {
            let dev = Device::clone(&dev);
            let payloads = payloads.clone();
            std::thread::spawn(move || {
                let batch: Vec<Datagram> = (100..300)
                    .map(|i| Datagram {
                        port: 0,
                        to: TO,
                        payload: &payloads[i],
                    })
                    .collect();
                dev.send_batch(&batch)
            })
        };
        let start = std::time::Instant::now();
        while card.doorbells(0) < 2 {
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "no doorbell before the wait"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(
            card.read32(tail).unwrap(),
            256,
            "the full ring, rung before the wait"
        );
        assert_eq!(card.take_tx(0, 60), payloads[..60]);
        sender.join().unwrap().unwrap();
        assert_eq!(card.doorbells(0), 3);
        assert_eq!(card.read32(tail).unwrap(), 300);
        assert_eq!(card.take_tx(0, 1000), payloads[60..300]);
        assert_eq!((1..4).map(|r| card.doorbells(r)).sum::<u64>(), 0);
    }

    /// A batch over two ports goes into their two rings, in order within each, with one doorbell
    /// on each; progress and counters are per ring (the sum over them too). A ring refuses a
    /// descriptor that names another port (counted in that ring's `tx_bad_descriptor`) and goes
    /// on with the next; a doorbell beyond the ring's size is refused (`tx_bad_tail`). (Mutations:
    /// every datagram into ring 0, a doorbell per datagram, or a card that sends a descriptor of
    /// another port from its ring, fail below.)
    #[test]
    fn a_batch_over_two_ports_rings_each_ring_once_and_a_ring_sends_only_for_its_port() {
        let card = Arc::new(SyntheticCard::new().unwrap());
        let dev = Device::with_backend(card.clone()).unwrap();
        let payloads: Vec<Vec<u8>> = (0..20u8).map(|i| vec![i; 1 + i as usize]).collect();
        let port_of = |i: usize| if i.is_multiple_of(3) { 2 } else { 1 };
        let batch: Vec<Datagram> = (0..20)
            .map(|i| Datagram {
                port: port_of(i),
                to: TO,
                payload: &payloads[i],
            })
            .collect();
        dev.send_batch(&batch).unwrap();
        let doorbells: Vec<u64> = (0..4).map(|r| card.doorbells(r)).collect();
        assert_eq!(doorbells, [0, 1, 1, 0], "one doorbell on each ring touched");
        assert_eq!(dev.tx_progress(1).unwrap(), (0, 13));
        assert_eq!(dev.tx_progress(2).unwrap(), (0, 7));
        assert!(matches!(
            dev.tx_progress(4),
            Err(Error::NoSuchPort { port: 4, .. })
        ));
        let from = |port: u8| -> Vec<Vec<u8>> {
            let sent = (0..20).filter(|i| port_of(*i) == port);
            sent.map(|i| payloads[i].clone()).collect()
        };
        assert_eq!(card.take_tx(2, 100), from(2), "port 2's, in order");
        assert_eq!(card.take_tx(1, 100), from(1), "port 1's, in order");
        assert_eq!(dev.tx_progress(1).unwrap(), (13, 13));

        // The next descriptor in ring 1 made to name port 2: the card refuses it.
        dev.send(1, TO, b"wrong ring").unwrap();
        let base_reg = |r: TxReg| card.read32(bar0::tx_ring(1, r.word())).unwrap() as u64;
        let base = base_reg(TxReg::RingBaseHi) << 32 | base_reg(TxReg::RingBaseLo);
        let port_field = base + 13 * TX_DESC_BYTES as u64 + tx::field::PORT.offset as u64;
        card.write_dma(port_field, &[2]).unwrap();
        assert!(card.take_tx(1, 1).is_empty(), "sent from the wrong ring");
        assert_eq!(dev.tx_progress(1).unwrap(), (14, 14), "taken all the same");
        dev.send(1, TO, b"next").unwrap();
        assert_eq!(card.take_tx(1, 1), [b"next".to_vec()]);

        // Ring 3's doorbell, 300 ahead of a ring of 256: refused, its tail kept.
        card.write32(bar0::tx_ring(3, TxReg::Tail.word()), 300)
            .unwrap();
        assert_eq!(dev.tx_progress(3).unwrap(), (0, 0));

        let ring = |r: u8| dev.tx_ring_counters(r).unwrap();
        let names = ["tx_sent", "tx_bad_descriptor", "tx_bad_tail"];
        let counts = |list: Vec<(&str, u32)>| names.map(|n| counter(&list, n));
        assert_eq!(counts(ring(1)), [14, 1, 0]);
        assert_eq!(counts(ring(2)), [7, 0, 0]);
        assert_eq!(counts(ring(3)), [0, 0, 1]);
        assert_eq!(counts(dev.tx_counters().unwrap()), [21, 1, 1], "summed");
    }

    /// The library keeps at most the card's release queue's worth of releases written beyond
    /// what the card took (`releases_taken`): the rest wait in order and are written by a poll or
    /// `flush_writes` as the card takes the ones before; a CLOP deregistered forgets its own.
    /// (Mutations: no limit loses 24 to `release_overflow`; a poll that writes none, or a
    /// deregistration that forgets none, fail below.)
    #[test]
    fn releases_beyond_the_card_queue_wait_in_the_library_and_none_is_lost() {
        use crate::ClopConfig;
        use nanet_contract::rx::RxCounter;
        let card = Arc::new(SyntheticCard::new().unwrap());
        let dev = Device::with_backend(card.clone()).unwrap();
        let counter = |c: RxCounter| card.register(bar0::rx_engine(c.word()));
        let written = |dev: &Device| 40 - dev.releases_waiting() as u32;
        card.hold_releases(true);
        for b in 0..40 {
            dev.release(0, b).unwrap();
        }
        assert_eq!(
            (written(&dev), counter(RxCounter::ReleaseOverflow)),
            (16, 0)
        );
        // The card takes ten: the next poll writes ten more, in order.
        card.take_releases(10);
        assert!(dev.poll().unwrap().is_none());
        assert_eq!(written(&dev), 26);
        assert_eq!(
            card.register(bar0::rx_engine(RxReg::Release.word())),
            25 << 8
        );
        // flush_writes returns once every release is written (the card taking one per turn).
        let taker = card.clone();
        let stop = Arc::new(AtomicBool::new(false));
        let stop2 = stop.clone();
        let engine = std::thread::spawn(move || {
            let mut t = 0u32;
            while !stop2.load(Ordering::Relaxed) {
                t = t.wrapping_add(250);
                taker
                    .write32(bar0::rx_engine(RxReg::Now.word()), t)
                    .unwrap();
                taker.take_releases(1);
                std::thread::yield_now();
            }
        });
        let flushed = dev.flush_writes();
        stop.store(true, Ordering::Relaxed);
        engine.join().unwrap();
        flushed.unwrap();
        assert_eq!(written(&dev), 40);
        assert_eq!(counter(RxCounter::ReleaseOverflow), 0);
        // A CLOP's releases still waiting when it is deregistered are never written.
        card.hold_releases(false);
        card.hold_releases(true);
        let clop = dev
            .register(&ClopConfig::new(0, 7000).buffers(32, 4096))
            .unwrap();
        let id = clop.id();
        for b in 0..20 {
            dev.release(id, b).unwrap();
        }
        assert_eq!(dev.releases_waiting(), 4);
        card.hold_releases(false);
        clop.deregister().unwrap();
        assert_eq!(dev.releases_waiting(), 0);
        assert!(dev.poll().unwrap().is_none());
        assert_eq!(counter(RxCounter::ReleasesTaken), 40 + 16);
    }

    #[test]
    fn a_wait_on_a_stuck_card_ends_with_card_stuck() {
        use nanet_contract::offload::{Reg, STATUS_ARP_FLUSHING};
        let card = Arc::new(SyntheticCard::new().unwrap());
        let dev = Device::with_backend(card.clone()).unwrap();
        // The flush never finishes and the card's clock stands still.
        card.write32(bar0::port(1, Reg::Status.word()), STATUS_ARP_FLUSHING)
            .unwrap();
        let e = dev.flush_arp(1).unwrap_err();
        assert!(matches!(e, Error::ClockStopped { .. }), "{e:?}");
        assert!(e.to_string().contains("the ARP flush of port 1"), "{e}");
        // The clock runs (1 us of card time per poll here): the card-time bound ends it.
        let ticking = card.clone();
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stop2 = stop.clone();
        let clock = std::thread::spawn(move || {
            let mut t = 0u32;
            while !stop2.load(std::sync::atomic::Ordering::Relaxed) {
                t = t.wrapping_add(250);
                ticking
                    .write32(bar0::rx_engine(RxReg::Now.word()), t)
                    .unwrap();
                std::thread::yield_now();
            }
        });
        let e = dev.flush_arp(1);
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        clock.join().unwrap();
        match e {
            Err(Error::CardStuck { waited_us, .. }) => assert!(waited_us > 1_000),
            other => panic!("{other:?}"),
        }
    }

    /// (Mutation: holding the state lock through the wait for room, as the library once did,
    /// blocks the poll and fails here.)
    #[test]
    fn flush_writes_waiting_for_the_card_blocks_no_poll() {
        let card = Arc::new(SyntheticCard::new().unwrap());
        let dev = Device::with_backend(card.clone()).unwrap();
        card.hold_releases(true);
        for b in 0..40 {
            dev.release(0, b).unwrap();
        }
        assert_eq!(dev.releases_waiting(), 24);
        // The card's clock runs, its CLOP engine takes no release until told.
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let ticking = (card.clone(), stop.clone());
        let clock = std::thread::spawn(move || {
            let mut t = 0u32;
            while !ticking.1.load(std::sync::atomic::Ordering::Relaxed) {
                t = t.wrapping_add(25);
                ticking
                    .0
                    .write32(bar0::rx_engine(RxReg::Now.word()), t)
                    .unwrap();
                std::thread::sleep(Duration::from_micros(50));
            }
        });
        let d = dev.clone();
        let flushing = std::thread::spawn(move || d.flush_writes());
        std::thread::sleep(Duration::from_millis(50));
        let d = dev.clone();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || tx.send(d.poll().map(|e| e.is_none())).ok());
        let polled = rx.recv_timeout(Duration::from_secs(20));
        assert!(
            matches!(polled, Ok(Ok(true))),
            "the poll waited for the flush: {polled:?}"
        );
        assert!(!flushing.is_finished(), "the flush is still waiting");
        card.hold_releases(false);
        let flushed = flushing.join().unwrap();
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        clock.join().unwrap();
        flushed.unwrap();
        assert_eq!(dev.releases_waiting(), 0);
    }
}

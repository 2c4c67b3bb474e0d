//! A card that is not there: BAR0 registers kept in memory (the ID answers, commands complete at
//! once), DMA mappings recorded so the owner can write into them as a card would. For the host
//! benchmark (the library's own cost per event, with no card or simulator behind it) and tests.

use std::collections::BTreeMap;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, Ordering};
use std::sync::Mutex;

use nanet_contract::bar0::{self, BAR0_BYTES};
use nanet_contract::offload::ID_VALUE;
use nanet_contract::rx::{RxCounter, RxReg, MAX_PORTS, RELEASE_QUEUE_ENTRIES};
use nanet_contract::tx::{TxReg, TX_STATUS_IDLE};
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
    /// Writes of the transmit ring's tail (doorbells).
    doorbells: AtomicU64,
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
            doorbells: AtomicU64::new(0),
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

    /// Doorbells rung: writes of the transmit ring's tail.
    pub fn doorbells(&self) -> u64 {
        self.doorbells.load(Ordering::Relaxed)
    }

    /// The last value written to a register.
    pub fn register(&self, offset: u64) -> u32 {
        self.registers
            .get(offset as usize / 4)
            .map_or(u32::MAX, |r| r.load(Ordering::Relaxed))
    }

    /// Writes `data` at bus address `iova` as the card's DMA would (the first byte last, with
    /// release ordering, as the simulated card does).
    pub fn write_dma(&self, iova: u64, data: &[u8]) -> Result<()> {
        let m = self
            .mappings
            .lock()
            .unwrap()
            .range(..=iova)
            .next_back()
            .map(|(_, m)| *m)
            .filter(|m| iova + data.len() as u64 <= m.iova + m.len as u64)
            .ok_or_else(|| Error::Memory(format!("nothing mapped at {iova:#x}")))?;
        let base = (iova - m.iova) as usize;
        for (i, b) in data.iter().enumerate().rev() {
            // SAFETY: inside a live mapping (checked above).
            unsafe { AtomicU8::from_ptr(m.memory.add(base + i)) }.store(*b, Ordering::Release);
        }
        Ok(())
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
        if let Some(w) = nanet_contract::card::constant_word(self.ports, offset) {
            return Ok(w);
        }
        if offset == bar0::rx_engine(RxReg::ClopCommand.word()) {
            return Ok(0);
        }
        // Nothing is ever in flight: the transmit engine reads idle.
        if offset == bar0::tx_engine(TxReg::Status.word()) {
            return Ok(TX_STATUS_IDLE);
        }
        Ok(self.register(offset))
    }

    fn write32(&self, offset: u64, value: u32) -> Result<()> {
        if offset == bar0::tx_engine(TxReg::Tail.word()) {
            self.doorbells.fetch_add(1, Ordering::Relaxed);
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

    use super::SyntheticCard;
    use crate::backend::Backend;
    use crate::{Device, Error, SendTo};

    #[test]
    fn the_library_takes_the_port_count_from_the_card() {
        let dev = Device::with_backend(Arc::new(SyntheticCard::with_ports(2).unwrap())).unwrap();
        assert_eq!(dev.ports(), 2);
        let to = SendTo {
            dst_ip: [10, 0, 0, 1],
            dst_port: 9,
            src_port: 9,
        };
        assert!(matches!(
            dev.send(2, to, &[1]),
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
        use crate::Datagram;
        use nanet_contract::tx::TxReg;
        let card = Arc::new(SyntheticCard::new().unwrap());
        let dev = Device::with_backend(card.clone()).unwrap();
        let (tail, head) = (
            bar0::tx_engine(TxReg::Tail.word()),
            bar0::tx_engine(TxReg::Head.word()),
        );
        let to = SendTo {
            dst_ip: [10, 0, 0, 1],
            dst_port: 9,
            src_port: 9,
        };
        let payloads: Vec<Vec<u8>> = (0..400).map(|i| vec![i as u8; 1 + i % 64]).collect();
        let batch = |range: std::ops::Range<usize>| -> Vec<Datagram> {
            range
                .map(|i| Datagram {
                    port: (i % 4) as u8,
                    to,
                    payload: &payloads[i],
                })
                .collect()
        };
        let rung = card.doorbells();
        dev.send_batch(&batch(0..100)).unwrap();
        assert_eq!(card.doorbells() - rung, 1, "one doorbell for 100 datagrams");
        assert_eq!(card.register(tail), 100);

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
        assert_eq!(card.doorbells() - rung, 1, "nothing posted: no doorbell");
        assert_eq!(dev.tx_progress().unwrap().1, 100, "nothing posted");

        // 200 more: the ring (256 slots) is full after 156 of them; the library rings for the
        // 256 posted, then waits until the card's head moves.
        let sender = {
            let dev = Device::clone(&dev);
            let payloads = payloads.clone();
            std::thread::spawn(move || {
                let batch: Vec<Datagram> = (100..300)
                    .map(|i| Datagram {
                        port: 0,
                        to,
                        payload: &payloads[i],
                    })
                    .collect();
                dev.send_batch(&batch)
            })
        };
        let start = std::time::Instant::now();
        while card.doorbells() - rung < 2 {
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "no doorbell before the wait"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(
            card.register(tail),
            256,
            "the full ring, rung before the wait"
        );
        // The card has taken the first 60.
        card.write32(head, 60).unwrap();
        sender.join().unwrap().unwrap();
        assert_eq!(card.doorbells() - rung, 3);
        assert_eq!(card.register(tail), 300);
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

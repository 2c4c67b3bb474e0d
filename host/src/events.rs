//! The event ring: records the card writes into host memory, read in order by their phase bits
//! (one in every 8-byte word: a record is taken only once all of it has landed).

use nanet_contract::events::{EventRecord, EVENT_BYTES};

use crate::dma::DmaMemory;
use crate::error::{Error, Result};

pub use nanet_contract::events::CORE_HZ;

/// Something the card reported: the contract's record (kind, CLOP, buffer, bytes, packets,
/// sequence numbers, stage timestamps; `is_buffer`, `latency_ns`).
pub type Event = EventRecord;

/// The consumer side of the ring.
pub struct EventRing {
    memory: DmaMemory,
    log2: u32,
    /// Records consumed (wrapping at 16 bits, as the card's head register).
    head: u16,
    /// Looks that found the next record's first word landed and another word not yet.
    incomplete_looks: u64,
}

impl EventRing {
    /// See [`DmaMemory::abandon`].
    pub fn abandon(&mut self) {
        self.memory.abandon();
    }

    pub fn new(memory: DmaMemory, log2: u32) -> Self {
        assert!(memory.len() >= EVENT_BYTES << log2);
        Self {
            memory,
            log2,
            head: 0,
            incomplete_looks: 0,
        }
    }

    pub fn iova(&self) -> u64 {
        self.memory.iova()
    }

    /// Records consumed so far (the value for the card's head register).
    pub fn head(&self) -> u16 {
        self.head
    }

    /// Looks at the ring that found a record partly landed (the rest came later).
    pub fn incomplete_looks(&self) -> u64 {
        self.incomplete_looks
    }

    /// Whether the next record is there, all of it.
    #[inline]
    pub fn ready(&self) -> bool {
        let (at, phase) = self.position();
        EventRecord::landed(&self.words(at), phase)
    }

    /// The four words of the record at byte `at`, each loaded with acquire ordering (on AArch64
    /// `ldar`: a later load of the buffer the record reports cannot be satisfied before it).
    #[inline]
    fn words(&self, at: usize) -> [u64; 4] {
        std::array::from_fn(|i| self.memory.load_u64(at + 8 * i))
    }

    /// Byte offset of the next record, and the phase it has when written.
    fn position(&self) -> (usize, bool) {
        let slot = (self.head as usize) & ((1 << self.log2) - 1);
        // The phase the card writes in this lap of the ring: 1 in the first.
        (
            slot * EVENT_BYTES,
            (self.head as usize >> self.log2) & 1 == 0,
        )
    }

    /// The next record if the card has written it.
    // Not an `Iterator`: a record can be malformed (the error), and `None` is "not yet", not the end.
    #[allow(clippy::should_implement_trait)]
    #[inline]
    pub fn next(&mut self) -> Result<Option<Event>> {
        let (at, phase) = self.position();
        let first = self.memory.load_u64(at);
        if (first & 0x80 != 0) != phase {
            return Ok(None);
        }
        // The first word is this lap's; the others may not have landed yet (PCIe orders whole
        // writes, not the bytes inside one): each carries the phase too.
        let words = [
            first,
            self.memory.load_u64(at + 8),
            self.memory.load_u64(at + 16),
            self.memory.load_u64(at + 24),
        ];
        if !EventRecord::landed(&words, phase) {
            self.incomplete_looks += 1;
            return Ok(None);
        }
        crate::barrier::record_before_buffer();
        let rec = EventRecord::decode_words(&words).map_err(|e| Error::BadEvent {
            index: self.head,
            why: format!("{e:?}"),
        })?;
        self.head = self.head.wrapping_add(1);
        Ok(Some(rec))
    }
}

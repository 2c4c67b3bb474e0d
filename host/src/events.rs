//! The event ring: records the card writes into host memory, read in order by their phase bit.

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
}

impl EventRing {
    pub fn new(memory: DmaMemory, log2: u32) -> Self {
        assert!(memory.len() >= EVENT_BYTES << log2);
        Self {
            memory,
            log2,
            head: 0,
        }
    }

    pub fn iova(&self) -> u64 {
        self.memory.iova()
    }

    /// Records consumed so far (the value for the card's head register).
    pub fn head(&self) -> u16 {
        self.head
    }

    /// Whether the next record is there.
    #[inline]
    pub fn ready(&self) -> bool {
        let (at, phase) = self.position();
        let first = self.memory.load_u64(at);
        (first & 0x80 != 0) == phase && first & 0x0F != 0
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
    #[inline]
    pub fn next(&mut self) -> Result<Option<Event>> {
        let (at, phase) = self.position();
        let first = self.memory.load_u64(at);
        if (first & 0x80 != 0) != phase || first & 0x0F == 0 {
            return Ok(None);
        }
        // The card's write ends with the first byte (acquire load above): the rest is there.
        let words = [
            first,
            self.memory.load_u64(at + 8),
            self.memory.load_u64(at + 16),
            self.memory.load_u64(at + 24),
        ];
        let rec = EventRecord::decode_words(&words).map_err(|e| Error::BadEvent {
            index: self.head,
            why: format!("{e:?}"),
        })?;
        self.head = self.head.wrapping_add(1);
        Ok(Some(rec))
    }
}

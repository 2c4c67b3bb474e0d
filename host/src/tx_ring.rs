//! The library's transmit ring in DMA memory: a ring of descriptors and a 2 KiB payload slot per
//! descriptor, set up once when the device opens (the sending itself is in `tx`). Kept apart from
//! `tx` so that the device, which owns the ring, does not import the sending code.

use std::sync::Arc;

use nanet_contract::bar0;
use nanet_contract::tx::{TxReg, TX_DESC_BYTES, TX_RING_ENABLE};

use crate::backend::Backend;
use crate::dma::{DmaMemory, IovaAllocator};
use crate::error::Result;

/// Descriptors in the library's ring (log2).
pub(crate) const TX_RING_LOG2: u32 = 8;
/// Bytes of one payload slot.
pub(crate) const SLOT_BYTES: usize = 2048;

/// The ring, its payload slots, the descriptors posted and the card's consumer index as last read.
pub(crate) struct TxQueue {
    pub(crate) ring: DmaMemory,
    pub(crate) slots: DmaMemory,
    /// Descriptors posted, and the card's consumer index as last read.
    pub(crate) tail: u16,
    pub(crate) head: u16,
}

impl TxQueue {
    /// Allocates the ring and its slots, and points the card's transmit engine at them.
    pub fn new(backend: &Arc<dyn Backend>, iovas: &IovaAllocator, hugepages: bool) -> Result<Self> {
        let n = 1usize << TX_RING_LOG2;
        let ring = DmaMemory::new(backend.clone(), iovas, n * TX_DESC_BYTES, hugepages)?;
        let slots = DmaMemory::new(backend.clone(), iovas, n * SLOT_BYTES, hugepages)?;
        let w = |r: TxReg, v: u32| backend.write32(bar0::tx_engine(r.word()), v);
        w(TxReg::RingSize, 0)?;
        w(TxReg::RingBaseLo, ring.iova() as u32)?;
        w(TxReg::RingBaseHi, (ring.iova() >> 32) as u32)?;
        w(TxReg::RingSize, TX_RING_ENABLE | TX_RING_LOG2)?;
        Ok(Self {
            ring,
            slots,
            tail: 0,
            head: 0,
        })
    }
}

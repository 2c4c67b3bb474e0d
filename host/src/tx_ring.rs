//! The library's transmit rings in DMA memory, one per port (the card's ring `r` sends from port
//! `r`): each a ring of descriptors and a 2 KiB payload slot per descriptor, set up once when the
//! device opens (the sending itself is in `tx`). Kept apart from `tx` so that the device, which
//! owns the rings, does not import the sending code.

use std::mem::ManuallyDrop;
use std::sync::Arc;

use nanet_contract::bar0;
use nanet_contract::tx::{TxReg, TX_DESC_BYTES, TX_RING_ENABLE, TX_STATUS_IDLE};

use crate::backend::Backend;
use crate::backend::DmaMap;
use crate::dma::{DmaMemory, IovaAllocator};
use crate::error::{Error, Result};

/// Descriptors in each of the library's rings (log2).
pub(crate) const TX_RING_LOG2: u32 = 8;
/// Bytes of one payload slot.
pub(crate) const SLOT_BYTES: usize = 2048;

/// One ring: its descriptors, its payload slots, the descriptors posted and the card's consumer
/// index as last read. Dropped, it stops the card's ring and frees the memory once the card holds
/// nothing of it (see [`stop_ring`]).
pub(crate) struct TxQueue {
    backend: Arc<dyn Backend>,
    /// The ring's number: the port it sends from.
    pub(crate) ring: u8,
    pub(crate) descriptors: ManuallyDrop<DmaMemory>,
    pub(crate) slots: ManuallyDrop<DmaMemory>,
    /// Descriptors posted, and the card's consumer index as last read.
    pub(crate) tail: u16,
    pub(crate) head: u16,
}

impl TxQueue {
    /// Allocates ring `ring`'s descriptors and slots, and points the card's ring at them.
    pub fn new(
        backend: &Arc<dyn Backend>,
        iovas: &Arc<IovaAllocator>,
        hugepages: bool,
        ring: u8,
    ) -> Result<Self> {
        let n = 1usize << TX_RING_LOG2;
        // The card only reads both: the IOMMU refuses it any write there.
        let map =
            |bytes| DmaMemory::new(backend.clone(), iovas, bytes, hugepages, DmaMap::CARD_READS);
        let descriptors = map(n * TX_DESC_BYTES)?;
        let slots = map(n * SLOT_BYTES)?;
        let w = |r: TxReg, v: u32| backend.write32(register(ring, r), v);
        // A ring left enabled by a process that died while sending was drained when the device
        // opened (`quiesce`): its reads land in no memory mapped anew.
        w(TxReg::RingBaseLo, descriptors.iova() as u32)?;
        w(TxReg::RingBaseHi, (descriptors.iova() >> 32) as u32)?;
        w(TxReg::RingSize, TX_RING_ENABLE | TX_RING_LOG2)?;
        Ok(Self {
            backend: backend.clone(),
            ring,
            descriptors: ManuallyDrop::new(descriptors),
            slots: ManuallyDrop::new(slots),
            tail: 0,
            head: 0,
        })
    }

    /// BAR0 offset of this ring's register `r`.
    pub fn register(&self, r: TxReg) -> u64 {
        register(self.ring, r)
    }

    /// See [`DmaMemory::abandon`].
    pub fn abandon(&mut self) {
        self.descriptors.abandon();
        self.slots.abandon();
    }
}

impl Drop for TxQueue {
    fn drop(&mut self) {
        match stop_ring(&*self.backend, self.ring) {
            // SAFETY: dropped once, here; the card reads neither any more.
            Ok(()) => unsafe {
                ManuallyDrop::drop(&mut self.descriptors);
                ManuallyDrop::drop(&mut self.slots);
            },
            // The card may still read them: leak the memory rather than let its bus addresses
            // be mapped to something else.
            Err(e) => eprintln!(
                "nanet: stopping transmit ring {} failed ({e}); its memory is leaked",
                self.ring
            ),
        }
    }
}

/// BAR0 offset of register `r` of ring `ring`.
fn register(ring: u8, r: TxReg) -> u64 {
    bar0::tx_ring(ring, r.word())
}

/// Disables the card's transmit ring `ring` (`RingSize` 0) and waits until the card holds nothing
/// of it ([`TX_STATUS_IDLE`]): descriptors it fetched and had not started are discarded (counted
/// in that ring's `tx_discarded`), datagrams whose payload it was reading are sent. Only then may
/// the ring's memory be freed or reused. The other rings run on.
pub(crate) fn stop_ring(backend: &dyn Backend, ring: u8) -> Result<()> {
    backend.write32(register(ring, TxReg::RingSize), 0)?;
    let what = format!("transmit ring {ring} to drain once disabled");
    let waited = crate::device::poll_card(backend, &what, DRAIN_TIMEOUT_US, || {
        match backend.read32(register(ring, TxReg::Status))? {
            u32::MAX => Err(Error::Card(format!(
                "{}: transmit ring {ring}'s status register reads all ones (the read failed, or \
                 the card is gone)",
                backend.describe()
            ))),
            v => Ok(v & TX_STATUS_IDLE != 0),
        }
    })?;
    match waited {
        None => Ok(()),
        Some(waited_us) => Err(Error::CardStuck { what, waited_us }),
    }
}

/// How long a drain may take, in the card's time: up to 32 datagrams' reads of at most 1472
/// bytes each take microseconds (each read that times out, 200 us: 6.4 ms for all).
const DRAIN_TIMEOUT_US: u64 = 100_000;

//! What the library needs from a card, whatever it is: 32-bit access to BAR0, DMA mappings of
//! host memory at bus addresses the library chooses (IOVAs), and the interrupt as a file
//! descriptor. The VFIO backend ([`vfio`]) gives a real card these; the simulated card ([`sim`],
//! feature `sim`) gives the gateware running in the simulator; [`synthetic`] is a card that is not
//! there (registers in memory), for the library's own tests and benchmark.

use std::ops::RangeInclusive;
use std::os::fd::RawFd;

#[cfg(feature = "sim")]
pub mod sim;
pub mod synthetic;
pub mod vfio;

use crate::error::Result;

/// What the card may do with a DMA mapping: the IOMMU grants that and nothing more.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum CardAccess {
    /// The card only reads it (the transmit rings and their payload slots).
    Read,
    /// The card writes it, and may read it (the event ring, CLOP buffers).
    ReadWrite,
}

/// What a DMA mapping's memory is to the kernel.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum MemoryKind {
    /// Ordinary pages: pinned while mapped and charged to RLIMIT_MEMLOCK.
    Pages,
    /// Another device's memory mapped into this process (a GPU's BAR through GDRCopy, a
    /// `VM_PFNMAP` mapping): never pinned nor charged; only the legacy VFIO container (type1)
    /// can map it for the card.
    DeviceMemory,
}

/// How one DMA mapping is made.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct DmaMap {
    pub access: CardAccess,
    pub kind: MemoryKind,
}

impl DmaMap {
    /// Host memory the card writes (the event ring, a CLOP's buffers).
    pub const CARD_WRITES: DmaMap = DmaMap {
        access: CardAccess::ReadWrite,
        kind: MemoryKind::Pages,
    };
    /// Host memory the card only reads (the transmit rings and their payload slots).
    pub const CARD_READS: DmaMap = DmaMap {
        access: CardAccess::Read,
        kind: MemoryKind::Pages,
    };
}

/// Every bus address: what a card without an IOMMU in the way may use.
pub fn all_bus_addresses() -> Vec<RangeInclusive<u64>> {
    vec![0..=u64::MAX]
}

pub trait Backend: Send + Sync {
    /// What this is, for messages ("sim (verilator, gen2x8)", "vfio 0000:03:00.0").
    fn describe(&self) -> String;
    /// Reads the 32-bit register at byte `offset` of BAR0. A read completes only after every DMA
    /// write the card issued before it is visible in memory (PCIe ordering).
    fn read32(&self, offset: u64) -> Result<u32>;
    /// Writes the 32-bit register at byte `offset` of BAR0 (posted; writes stay in order).
    fn write32(&self, offset: u64, value: u32) -> Result<()>;
    /// Lets the card reach `len` bytes at `memory` through bus addresses `iova..iova + len`, as
    /// `how` says (read only, or read and write).
    ///
    /// # Safety
    /// `memory` must stay valid for `len` bytes until [`Backend::unmap_dma`] of `iova` returns.
    unsafe fn map_dma(&self, memory: *mut u8, len: usize, iova: u64, how: DmaMap) -> Result<()>;
    /// Removes the mapping at `iova`: when this returns the card can no longer reach the memory.
    fn unmap_dma(&self, iova: u64, len: usize) -> Result<()>;
    /// An eventfd that counts the card's interrupts (readable when one arrived).
    fn irq_fd(&self) -> RawFd;
    /// Largest DMA write payload the link allows (PCIe Max Payload Size: 128 or 256).
    fn max_payload(&self) -> u32;
    /// The bus addresses mappings may use (inclusive ranges; an IOMMU's aperture has holes).
    fn iova_ranges(&self) -> Vec<RangeInclusive<u64>> {
        all_bus_addresses()
    }
    /// Lets the card start DMA (PCI bus mastering). The library calls it once it has stopped
    /// whatever a previous program left running on the card, before it maps anything.
    fn enable_bus_master(&self) -> Result<()> {
        Ok(())
    }
    /// Called after an interrupt was taken from [`Backend::irq_fd`]: a level interrupt (INTx)
    /// the kernel masked when it fired is unmasked, so the next one is delivered.
    fn interrupt_taken(&self) -> Result<()> {
        Ok(())
    }
}

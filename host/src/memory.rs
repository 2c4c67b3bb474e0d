//! Memory a CLOP can live in besides the host memory the library allocates: GPU memory, or any
//! memory the card reaches by peer-to-peer DMA (the paper's GPUDirect path).
//!
//! A provider pins a range of its memory and returns its page table: the bus address of each page.
//! The library loads those pages into the card's TLB (one entry per page, so a GPU's 64 KiB pages
//! scattered over its BAR are fine) and unpins the range only after the card has acknowledged the
//! CLOP's deregistration.
//!
//! A provider gets bus addresses in one of two ways: memory it can map into this process (a GPU's
//! BAR through GDRCopy, see [`crate::gpu`]) goes through the card's IOMMU like the library's own
//! buffers, by [`CardDma::map`]; a provider that learns physical bus addresses elsewhere (a kernel
//! helper calling `nvidia_p2p_get_pages` on a machine without an IOMMU) returns those directly.

use std::sync::Arc;

use crate::backend::Backend;
use crate::dma::IovaAllocator;
use crate::error::Result;
use crate::PageSize;

pub trait MemoryProvider: Send + Sync {
    /// Size of the pages the page table is made of.
    fn page_size(&self) -> PageSize;
    /// Pins `len` bytes at `va` (page aligned, whole pages) and returns the bus address of each
    /// page, in order. `card` maps memory for the card that asks.
    fn pin(&self, va: u64, len: u64, card: &CardDma) -> Result<Vec<u64>>;
    /// Undoes [`MemoryProvider::pin`]: afterwards the card cannot reach the memory. Called only
    /// once the card has let go of the range.
    fn unpin(&self, va: u64, len: u64, card: &CardDma) -> Result<()>;
}

/// One card's DMA mappings, for providers: maps memory of this process at fresh bus addresses of
/// the card (through the IOMMU on a real card), as the library does for its own buffers.
#[derive(Clone)]
pub struct CardDma {
    backend: Arc<dyn Backend>,
    iovas: Arc<IovaAllocator>,
}

impl CardDma {
    pub(crate) fn new(backend: Arc<dyn Backend>, iovas: Arc<IovaAllocator>) -> Self {
        Self { backend, iovas }
    }

    /// Lets the card reach `len` bytes at `memory` and returns their bus address (aligned to
    /// [`crate::dma::IOVA_ALIGN`]; addresses are never reused).
    ///
    /// # Safety
    /// `memory` must stay valid for `len` bytes until [`CardDma::unmap`] of the address returns.
    pub unsafe fn map(&self, memory: *mut u8, len: usize) -> Result<u64> {
        let iova = self.iovas.alloc(len as u64);
        // SAFETY: the caller keeps the memory valid until it unmaps.
        unsafe { self.backend.map_dma(memory, len, iova)? };
        Ok(iova)
    }

    /// Removes a mapping of [`CardDma::map`]: when this returns the card can no longer reach it.
    pub fn unmap(&self, iova: u64, len: usize) -> Result<()> {
        self.backend.unmap_dma(iova, len)
    }
}

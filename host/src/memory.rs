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

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use crate::backend::{Backend, CardAccess, DmaMap, MemoryKind};
use crate::dma::IovaAllocator;
use crate::error::{Error, Result};
use crate::PageSize;

/// # Safety
///
/// The page table is where the card will write, so an implementation promises, for every
/// range it pins:
/// - each bus address it returns reaches memory of the range, page by page in order (the page
///   of `va + i * page_size` at entry `i`), and nothing else: the card writes whole pages there;
/// - that memory stays valid, and reachable by the card at those addresses, until
///   [`MemoryProvider::unpin`] of the range returns (the library calls it only once the card
///   acknowledged the CLOP's deregistration);
/// - no memory of this process that Rust code holds a reference to is in the range (the card
///   writes it behind the compiler's back: only raw pointers, volatile reads or copies may
///   reach it);
/// - memory it maps with [`CardDma::map`] it unmaps with [`CardDma::unmap`] of the same `CardDma`.
pub unsafe trait MemoryProvider: Send + Sync {
    /// Size of the pages the page table is made of.
    fn page_size(&self) -> PageSize;
    /// Pins `len` bytes at `va` (page aligned, whole pages) and returns the bus address of each
    /// page, in order. `card` maps memory for the card that asks.
    fn pin(&self, va: u64, len: u64, card: &CardDma) -> Result<Vec<u64>>;
    /// Undoes [`MemoryProvider::pin`]: afterwards the card cannot reach the memory. Called only
    /// once the card has let go of the range.
    fn unpin(&self, va: u64, len: u64, card: &CardDma) -> Result<()>;
    /// Called before an event that reports a buffer in this memory is handed to the application:
    /// makes the card's writes that landed so far visible to the memory's owner (a GPU's work
    /// started afterwards; see [`crate::gpu::GpuDriver::flush_card_writes`]). Nothing to do for
    /// memory the CPU reads.
    fn card_writes_landed(&self) -> Result<()> {
        Ok(())
    }
}

/// One card's DMA mappings, for providers: maps memory of this process at fresh bus addresses of
/// the card (through the IOMMU on a real card), as the library does for its own buffers. It
/// unmaps only what it mapped: the library's own buffers and rings are out of its reach.
#[derive(Clone)]
pub struct CardDma {
    backend: Arc<dyn Backend>,
    iovas: Arc<IovaAllocator>,
    /// What this provider's calls mapped: bus address -> length (shared by clones).
    mapped: Arc<Mutex<BTreeMap<u64, usize>>>,
}

impl CardDma {
    pub(crate) fn new(backend: Arc<dyn Backend>, iovas: Arc<IovaAllocator>) -> Self {
        Self {
            backend,
            iovas,
            mapped: Arc::default(),
        }
    }

    /// Lets the card write `len` bytes at `memory` (of the `kind` it is) and returns their bus
    /// address, aligned to [`crate::dma::IOVA_ALIGN`]. An address is handed out again only after
    /// [`CardDma::unmap`] of it.
    ///
    /// # Safety
    /// `memory` must stay valid for `len` bytes until [`CardDma::unmap`] of the address returns.
    pub unsafe fn map(&self, memory: *mut u8, len: usize, kind: MemoryKind) -> Result<u64> {
        let iova = self.iovas.alloc(len as u64)?;
        let how = DmaMap {
            access: CardAccess::ReadWrite,
            kind,
        };
        // SAFETY: the caller keeps the memory valid until it unmaps.
        if let Err(e) = unsafe { self.backend.map_dma(memory, len, iova, how) } {
            self.iovas.free(iova, len as u64);
            return Err(e);
        }
        self.mapped.lock().unwrap().insert(iova, len);
        Ok(iova)
    }

    /// Removes a mapping of [`CardDma::map`]: when this returns the card can no longer reach it.
    /// Refused for anything this `CardDma` did not map (at that address, of that length).
    pub fn unmap(&self, iova: u64, len: usize) -> Result<()> {
        let mut mapped = self.mapped.lock().unwrap();
        if mapped.get(&iova) != Some(&len) {
            return Err(Error::Memory(format!(
                "{iova:#x}+{len:#x} is not a mapping this provider made (CardDma::unmap removes \
                 only its own CardDma::map's, whole)"
            )));
        }
        self.backend.unmap_dma(iova, len)?;
        mapped.remove(&iova);
        self.iovas.free(iova, len as u64);
        Ok(())
    }
}

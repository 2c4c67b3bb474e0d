//! Memory a CLOP can live in besides the host memory the library allocates: GPU memory, or any
//! memory the card reaches by peer-to-peer DMA (the paper's GPUDirect path).
//!
//! A provider pins a range of its memory and returns its page table: the bus address of each page.
//! The library loads those pages into the card's TLB (one entry per page, so a GPU's 64 KiB pages
//! scattered over its BAR are fine) and unpins the range only after the card has acknowledged the
//! CLOP's deregistration.
//!
//! # GPU memory
//! On NVIDIA GPUs the page table comes from the kernel (`nvidia_p2p_get_pages`, 64 KiB pages),
//! so a GPU provider is a thin client of a kernel helper that pins a CUDA allocation for the
//! card and returns the bus addresses (the role NaNet-10's own driver plays). That provider, and the
//! helper it needs, are not part of this repository yet (no GPU here to test them on); any type
//! implementing [`MemoryProvider`] plugs in through [`crate::Device::register_provided`], and the
//! library's side (TLB, alignment and overlap checks, unpinning after quiescence) is tested with a
//! provider that scatters host pages as a GPU's would (`host/tests/api.rs`).

use crate::error::Result;
use crate::PageSize;

pub trait MemoryProvider: Send + Sync {
    /// Size of the pages the page table is made of.
    fn page_size(&self) -> PageSize;
    /// Pins `len` bytes at `va` (page aligned, whole pages) and returns the bus address of each
    /// page, in order.
    fn pin(&self, va: u64, len: u64) -> Result<Vec<u64>>;
    /// Undoes [`MemoryProvider::pin`]: afterwards the card cannot reach the memory.
    fn unpin(&self, va: u64, len: u64) -> Result<()>;
}

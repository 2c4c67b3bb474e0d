//! What the library needs from a card, whatever it is: 32-bit access to BAR0, DMA mappings of
//! host memory at bus addresses the library chooses (IOVAs), and the interrupt as a file
//! descriptor. The VFIO backend ([`vfio`]) gives a real card these; the simulated card ([`sim`],
//! feature `sim`) gives the gateware running in the simulator; [`synthetic`] is a card that is not
//! there (registers in memory), for the library's own tests and benchmark.

use std::os::fd::RawFd;

#[cfg(feature = "sim")]
pub mod sim;
pub mod synthetic;
pub mod vfio;

use crate::error::Result;

pub trait Backend: Send + Sync {
    /// What this is, for messages ("sim (verilator, gen2x8)", "vfio 0000:03:00.0").
    fn describe(&self) -> String;
    /// Reads the 32-bit register at byte `offset` of BAR0. A read completes only after every DMA
    /// write the card issued before it is visible in memory (PCIe ordering).
    fn read32(&self, offset: u64) -> Result<u32>;
    /// Writes the 32-bit register at byte `offset` of BAR0 (posted; writes stay in order).
    fn write32(&self, offset: u64, value: u32) -> Result<()>;
    /// Lets the card write `len` bytes at `memory` through bus addresses `iova..iova + len`.
    ///
    /// # Safety
    /// `memory` must stay valid for `len` bytes until [`Backend::unmap_dma`] of `iova` returns.
    unsafe fn map_dma(&self, memory: *mut u8, len: usize, iova: u64) -> Result<()>;
    /// Removes the mapping at `iova`: when this returns the card can no longer reach the memory.
    fn unmap_dma(&self, iova: u64, len: usize) -> Result<()>;
    /// An eventfd that counts the card's interrupts (readable when one arrived).
    fn irq_fd(&self) -> RawFd;
    /// Largest DMA write payload the link allows (PCIe Max Payload Size: 128 or 256).
    fn max_payload(&self) -> u32;
}

//! Ordering between the host's own memory accesses and the card's view of them, where the CPU
//! needs an instruction for it. Each function is one of the three orderings the library relies
//! on, called where it relies on it.
//!
//! - x86-64: a device sees the host's earlier stores to write-back memory before a later store to
//!   uncached MMIO (the BAR), loads are never reordered with later stores, and loads are not
//!   reordered with other loads; only the compiler must be kept from reordering.
//! - AArch64 (Grace Hopper and other Arm hosts): none of the three holds without a barrier. The
//!   instructions are those Linux uses for the same three cases (`dma_wmb`, `mb` before a
//!   `writel` that hands memory back, `dma_rmb`), in the outer-shareable domain the device is in.

use std::sync::atomic::{compiler_fence, Ordering};

/// Before a doorbell (an MMIO write telling the card to read memory the host just wrote, the
/// tail of a transmit ring): the host's stores reach the card first. AArch64: `dmb oshst`.
#[inline(always)]
pub(crate) fn stores_before_doorbell() {
    compiler_fence(Ordering::SeqCst);
    #[cfg(target_arch = "aarch64")]
    // SAFETY: a barrier; touches no memory or register.
    unsafe {
        std::arch::asm!("dmb oshst", options(nostack, preserves_flags))
    };
}

/// Before an MMIO write that gives memory back to the card (a buffer release, the event ring's
/// head): every load the host made of that memory is done, so the card's next write cannot be
/// read by them. AArch64: `dmb osh` (orders earlier loads and stores before the later store).
#[inline(always)]
pub(crate) fn loads_before_handing_back() {
    compiler_fence(Ordering::SeqCst);
    #[cfg(target_arch = "aarch64")]
    // SAFETY: as above.
    unsafe {
        std::arch::asm!("dmb osh", options(nostack, preserves_flags))
    };
}

/// After the host found a whole event record landed and before it reads the buffer the record
/// reports: the buffer's loads cannot be satisfied before the record's. AArch64: `dmb oshld`.
#[inline(always)]
pub(crate) fn record_before_buffer() {
    compiler_fence(Ordering::SeqCst);
    #[cfg(target_arch = "aarch64")]
    // SAFETY: as above.
    unsafe {
        std::arch::asm!("dmb oshld", options(nostack, preserves_flags))
    };
}

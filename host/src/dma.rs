//! DMA-able host memory: anonymous memory mapped to a bus address range of the card, unmapped
//! before it is freed.

use std::mem::ManuallyDrop;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use memmap2::{MmapMut, MmapOptions, MmapRaw};

use crate::backend::Backend;
use crate::error::{Error, Result};

/// Alignment of every IOVA range (the largest TLB page), so any page size fits any allocation.
pub const IOVA_ALIGN: u64 = 2 << 20;
const HUGE_PAGE: usize = 2 << 20;
/// First IOVA handed out (leaves low addresses unused, to catch zeroed descriptors).
const IOVA_START: u64 = 1 << 32;

/// Hands out bus address ranges; ranges are not reused, so a stale address in the card can never
/// reach memory mapped later (the IOVA space is 64 bits wide).
#[derive(Debug)]
pub struct IovaAllocator {
    next: Mutex<u64>,
}

impl Default for IovaAllocator {
    fn default() -> Self {
        Self {
            next: Mutex::new(IOVA_START),
        }
    }
}

impl IovaAllocator {
    pub fn alloc(&self, len: u64) -> u64 {
        let mut next = self.next.lock().unwrap();
        let a = *next;
        *next += len.div_ceil(IOVA_ALIGN) * IOVA_ALIGN;
        a
    }
}

/// Host memory the card can write: `len` bytes at bus address `iova`. Reached only through raw
/// pointers (atomic loads, copies in, and slices over ranges the card does not write while they
/// are lent): never a Rust reference over the whole mapping, parts of which the card may be
/// writing at that moment.
pub struct DmaMemory {
    map: ManuallyDrop<MmapRaw>,
    iova: u64,
    backend: Arc<dyn Backend>,
}

impl DmaMemory {
    /// Allocates `len` zeroed bytes and maps them for the card at a fresh IOVA; in 2 MiB
    /// hugepages if `hugepages` (fewer IOMMU and TLB misses on a real card).
    pub fn new(
        backend: Arc<dyn Backend>,
        iovas: &IovaAllocator,
        len: usize,
        hugepages: bool,
    ) -> Result<Self> {
        if len == 0 {
            return Err(Error::Memory("cannot map zero bytes".into()));
        }
        let map = if hugepages {
            let rounded = len.div_ceil(HUGE_PAGE) * HUGE_PAGE;
            MmapOptions::new()
                .len(rounded)
                .huge(Some(21))
                .map_anon()
                .map_err(|e| {
                    Error::Memory(format!(
                        "cannot allocate {rounded} bytes in 2 MiB hugepages ({e}): reserve them \
                         (`echo 512 > /proc/sys/vm/nr_hugepages`) or unset NANET_HUGEPAGES"
                    ))
                })?
        } else {
            MmapMut::map_anon(len)
                .map_err(|e| Error::Memory(format!("cannot allocate {len} bytes: {e}")))?
        };
        // Raw from here on: no `Deref` to a slice over memory the card writes.
        let map = MmapRaw::from(map);
        let len = map.len();
        let iova = iovas.alloc(len as u64);
        // SAFETY: the mapping lives in `self` and is unmapped in `drop` before `map` is freed.
        unsafe { backend.map_dma(map.as_mut_ptr(), len, iova)? };
        Ok(Self {
            map: ManuallyDrop::new(map),
            iova,
            backend,
        })
    }

    pub fn iova(&self) -> u64 {
        self.iova
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.len() == 0
    }

    /// Loads the 8 bytes at `offset` (a multiple of 8) the card may be writing right now.
    #[inline]
    pub fn load_u64(&self, offset: usize) -> u64 {
        assert!(offset % 8 == 0 && offset + 8 <= self.map.len());
        // SAFETY: in bounds and aligned (the mapping is page aligned); the card side writes with
        // atomic byte stores.
        unsafe { AtomicU64::from_ptr(self.map.as_ptr().add(offset) as *mut u64) }
            .load(Ordering::Acquire)
    }

    /// Writes `bytes` at `offset`, where the card must not be reading now (the caller's ring
    /// protocol guarantees it: the slot is the card's again only after a later doorbell).
    #[inline]
    pub fn store(&mut self, offset: usize, bytes: &[u8]) {
        assert!(offset + bytes.len() <= self.map.len());
        // SAFETY: in bounds (checked above); the range is not the card's now (see above), and no
        // reference to the mapping exists to alias.
        unsafe {
            std::ptr::copy_nonoverlapping(
                bytes.as_ptr(),
                self.map.as_mut_ptr().add(offset),
                bytes.len(),
            )
        };
    }

    /// The bytes at `range`, which the card must not be writing (the caller's ownership rules
    /// guarantee it: an event reported them and they were not released since).
    #[inline]
    pub fn settled(&self, range: std::ops::Range<usize>) -> &[u8] {
        assert!(range.start <= range.end && range.end <= self.map.len());
        // SAFETY: in bounds (checked above); the card does not write this range while the
        // returned slice lives (the caller's ownership rules), whatever it writes elsewhere in
        // the mapping.
        unsafe { std::slice::from_raw_parts(self.map.as_ptr().add(range.start), range.len()) }
    }
}

impl Drop for DmaMemory {
    fn drop(&mut self) {
        // The card can no longer reach the memory once this returns; only then is it freed.
        match self.backend.unmap_dma(self.iova, self.map.len()) {
            // SAFETY: dropped once, here.
            Ok(()) => unsafe { ManuallyDrop::drop(&mut self.map) },
            // The card may still reach it: leak the memory rather than hand it back.
            Err(e) => eprintln!(
                "nanet: unmapping {} bytes at bus address {:#x} failed ({e}); the memory is leaked",
                self.map.len(),
                self.iova
            ),
        }
    }
}

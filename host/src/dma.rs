//! DMA-able host memory: anonymous memory mapped to a bus address range of the card, unmapped
//! before it is freed.

use std::collections::BTreeMap;
use std::mem::ManuallyDrop;
use std::ops::RangeInclusive;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use memmap2::{MmapMut, MmapOptions, MmapRaw};

use crate::backend::{all_bus_addresses, Backend, DmaMap};
use crate::error::{Error, Result};

/// Alignment of every IOVA range (the largest TLB page), so any page size fits any allocation.
pub const IOVA_ALIGN: u64 = 2 << 20;
const HUGE_PAGE: usize = 2 << 20;
/// Lowest IOVA handed out where the IOMMU allows it: low addresses stay unused, to catch zeroed
/// descriptors, and the MSI window below 4 GiB (0xfee00000 on x86) is never near.
const IOVA_START: u64 = 1 << 32;

/// Hands out bus address ranges, aligned to [`IOVA_ALIGN`], inside the ranges the IOMMU accepts,
/// lowest first. A range given back ([`IovaAllocator::free`]) is handed out again: it is given
/// back only once it is unmapped, when nothing of the card's still points into it (a CLOP's
/// memory after the card acknowledged its disable; the rings after the card stopped them).
#[derive(Debug)]
pub struct IovaAllocator {
    /// Free ranges: start -> end (exclusive), both aligned.
    free: Mutex<BTreeMap<u64, u64>>,
    /// The ranges as the backend reported them, for messages.
    ranges: Vec<RangeInclusive<u64>>,
}

impl Default for IovaAllocator {
    fn default() -> Self {
        Self::new(&all_bus_addresses())
    }
}

impl IovaAllocator {
    /// Bus addresses from `ranges` (inclusive, as IOMMUs report them), at or above 4 GiB where
    /// some range reaches that high.
    pub fn new(ranges: &[RangeInclusive<u64>]) -> Self {
        let aligned = |floor: u64| -> BTreeMap<u64, u64> {
            ranges
                .iter()
                .filter_map(|r| {
                    let start = (*r.start())
                        .max(floor)
                        .checked_next_multiple_of(IOVA_ALIGN)?;
                    let end = ((*r.end() as u128 + 1) / IOVA_ALIGN as u128 * IOVA_ALIGN as u128)
                        .min((u64::MAX - (IOVA_ALIGN - 1)) as u128)
                        as u64;
                    (start < end).then_some((start, end))
                })
                .collect()
        };
        let mut free = aligned(IOVA_START);
        if free.is_empty() {
            free = aligned(IOVA_ALIGN);
        }
        Self {
            free: Mutex::new(free),
            ranges: ranges.to_vec(),
        }
    }

    /// `len` bytes of bus addresses (rounded up to [`IOVA_ALIGN`]).
    pub fn alloc(&self, len: u64) -> Result<u64> {
        let want = len.div_ceil(IOVA_ALIGN).max(1) * IOVA_ALIGN;
        let mut free = self.free.lock().unwrap();
        let Some((&start, &end)) = free.iter().find(|(s, e)| **e - **s >= want) else {
            let ranges: Vec<String> = self
                .ranges
                .iter()
                .map(|r| format!("{:#x}..={:#x}", r.start(), r.end()))
                .collect();
            return Err(Error::Memory(format!(
                "no {want} bytes of bus addresses are left in the IOMMU's ranges ({}):                  deregister CLOPs, or use fewer or smaller buffers",
                ranges.join(", ")
            )));
        };
        free.remove(&start);
        if start + want < end {
            free.insert(start + want, end);
        }
        Ok(start)
    }

    /// Gives back what [`IovaAllocator::alloc`] returned for `len` bytes at `iova`.
    pub fn free(&self, iova: u64, len: u64) {
        let mut start = iova;
        let mut end = iova + len.div_ceil(IOVA_ALIGN).max(1) * IOVA_ALIGN;
        let mut free = self.free.lock().unwrap();
        if let Some((&s, &e)) = free.range(..start).next_back() {
            debug_assert!(e <= start, "{iova:#x} given back twice");
            if e == start {
                free.remove(&s);
                start = s;
            }
        }
        if let Some(e) = free.remove(&end) {
            end = e;
        }
        free.insert(start, end);
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
    iovas: Arc<IovaAllocator>,
    /// The card may still reach it: never unmapped nor freed ([`DmaMemory::abandon`]).
    abandoned: bool,
}

impl DmaMemory {
    /// Allocates `len` zeroed bytes and maps them for the card (as `how` says) at bus addresses
    /// from `iovas`; in 2 MiB hugepages if `hugepages` (fewer IOMMU and TLB misses on a real
    /// card).
    pub fn new(
        backend: Arc<dyn Backend>,
        iovas: &Arc<IovaAllocator>,
        len: usize,
        hugepages: bool,
        how: DmaMap,
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
        // Every page written once before it is pinned: a page never touched is the shared zero
        // page, and a pin for the card's reads alone (a transmit ring) could keep that page
        // while our later writes go to a fresh copy the card never sees.
        for at in (0..len).step_by(4096) {
            // SAFETY: inside the mapping, which nothing else uses yet.
            unsafe { map.as_mut_ptr().add(at).write_volatile(0) };
        }
        let iova = iovas.alloc(len as u64)?;
        // SAFETY: the mapping lives in `self` and is unmapped in `drop` before `map` is freed.
        if let Err(e) = unsafe { backend.map_dma(map.as_mut_ptr(), len, iova, how) } {
            iovas.free(iova, len as u64);
            return Err(e);
        }
        Ok(Self {
            map: ManuallyDrop::new(map),
            iova,
            backend,
            iovas: iovas.clone(),
            abandoned: false,
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
        assert!(offset.is_multiple_of(8) && offset + 8 <= self.map.len());
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

impl DmaMemory {
    /// Leaves the memory mapped and leaks it when dropped: for memory the card may still reach
    /// because it could not be stopped.
    pub fn abandon(&mut self) {
        self.abandoned = true;
    }
}

impl Drop for DmaMemory {
    fn drop(&mut self) {
        if self.abandoned {
            return;
        }
        // The card can no longer reach the memory once this returns; only then is it freed.
        match self.backend.unmap_dma(self.iova, self.map.len()) {
            Ok(()) => {
                self.iovas.free(self.iova, self.map.len() as u64);
                // SAFETY: dropped once, here.
                unsafe { ManuallyDrop::drop(&mut self.map) }
            }
            // The card may still reach it: leak the memory rather than hand it back.
            Err(e) => eprintln!(
                "nanet: unmapping {} bytes at bus address {:#x} failed ({e}); the memory is leaked",
                self.map.len(),
                self.iova
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB2: u64 = IOVA_ALIGN;

    #[test]
    fn bus_addresses_stay_inside_the_iommus_ranges_and_come_back() {
        // An Intel-like aperture: 39 bits with the MSI window cut out below 4 GiB.
        let a = IovaAllocator::new(&[0..=0xfedf_ffff, 0xfef0_0000..=(1 << 39) - 1]);
        let first = a.alloc(1).unwrap();
        assert_eq!(first, IOVA_START, "above 4 GiB, clear of the MSI window");
        let second = a.alloc(3 * MIB2).unwrap();
        assert_eq!(second, first + MIB2);
        a.free(first, 1);
        assert_eq!(
            a.alloc(MIB2).unwrap(),
            first,
            "given back, handed out again"
        );
        a.free(second, 3 * MIB2);
        a.free(first, MIB2);
        // Everything merged back: the whole range above 4 GiB in one piece.
        let all = (1 << 39) - IOVA_START;
        assert_eq!(a.alloc(all).unwrap(), IOVA_START);
        let e = a.alloc(1).unwrap_err().to_string();
        assert!(e.contains("0xfef00000..=0x7fffffffff"), "{e}");
    }

    #[test]
    fn an_aperture_below_4_gib_is_used_from_its_first_aligned_address() {
        let a = IovaAllocator::new(&[0x1000..=0x7fff_ffff]);
        assert_eq!(a.alloc(1).unwrap(), MIB2);
        // A range too small for one aligned piece is skipped.
        let a = IovaAllocator::new(&[0x1_0000_1000..=0x1_0010_0fff, 0x2_0000_0000..=u64::MAX]);
        assert_eq!(a.alloc(1).unwrap(), 0x2_0000_0000);
        assert!(
            a.alloc(u64::MAX - 0x2_0000_0000 - 2 * MIB2).is_ok(),
            "up to the top"
        );
    }
}

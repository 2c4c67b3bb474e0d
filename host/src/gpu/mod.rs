//! CLOPs in GPU memory: the card writes datagrams straight into a GPU's memory, as NaNet-10 does
//! for the NA62 GPU trigger.
//!
//! [`GpuMemory`] is a [`MemoryProvider`] over a [`GpuDriver`]: it allocates device memory,
//! pins a range for peer-to-peer access, maps the GPU's BAR window of that range into this
//! process and lets the card reach the mapping through its IOMMU ([`CardDma::map`]), so the
//! card's writes travel PCIe peer to peer into the GPU. Two drivers:
//! - [`CudaGdrcopy`] (feature `gpu`): NVIDIA GPUs through the CUDA driver API (`libcuda.so.1`)
//!   and GDRCopy (`libgdrapi.so.2` and its `gdrdrv` kernel module), both loaded at run time;
//! - [`HostGpu`]: a stand-in whose "device memory" is host memory, for the simulated card and the
//!   tests: the same program runs on both, unchanged but for the driver it picks.
//!
//! # Safety rules it keeps
//! - A pinned range keeps its allocation alive: dropping the application's [`GpuBuffer`] while a
//!   CLOP is registered in it frees nothing until the CLOP is deregistered.
//! - Unpinning goes in the order that keeps the card away from freed memory: the card's mapping
//!   first (after the card acknowledged the deregistration), then the BAR mapping, then the pin.
//!   If the card's mapping cannot be removed, nothing is unpinned or freed (leaked on purpose).
//!
//! # Using it on a real card
//! ```no_run
//! # #[cfg(feature = "gpu")] {
//! use nanet::gpu::{CudaGdrcopy, GpuMemory};
//! let dev = nanet::Device::open("0000:03:00.0")?;
//! let gpu = GpuMemory::new(std::sync::Arc::new(CudaGdrcopy::open(0)?));
//! let config = nanet::ClopConfig::new(0, 5000).buffers(64, 64 << 10);
//! let memory = gpu.alloc(64 * (64 << 10))?;
//! let clop = dev.register_provided(&config, gpu.clone(), memory.device_address())?;
//! // Events say which buffer is full; a CUDA kernel reads it at clop.device_address(buffer).
//! # }
//! # Ok::<(), nanet::Error>(())
//! ```
//! Needs: the NVIDIA driver, GDRCopy 2.x with `gdrdrv` loaded, the legacy VFIO container
//! (type1: iommufd cannot map another device's BAR; the card's open says which it got), and a
//! PCIe path on which the IOMMU sees the card's writes. The card writes GPU memory at IOVAs,
//! which only the IOMMU at the root complex translates into the GPU's BAR addresses, so:
//! - the card must sit in an IOMMU group of its own (checked at open: a GPU in its group means the
//!   switch above them does not redirect peer requests upstream, ACS off, and the writes would
//!   reach the GPU untranslated);
//! - the root complex must route peer-to-peer writes between its ports (recent server CPUs do;
//!   a card and GPU behind one switch still go up to the root complex and back down).
//!
//! Each CLOP in GPU memory takes 2 MiB TLB pages ([`GPU_CLOP_PAGE`]): 256 MiB of GPU CLOPs per
//! card. Untested on hardware so far.

mod host_gpu;
pub use host_gpu::HostGpu;
#[cfg(feature = "gpu")]
mod cuda;
#[cfg(feature = "gpu")]
pub use cuda::CudaGdrcopy;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, Weak};

use crate::backend::MemoryKind;
use crate::error::{Error, Result};
use crate::memory::{CardDma, MemoryProvider};
use crate::PageSize;

/// A GPU's page size for peer-to-peer access (`nvidia_p2p_get_pages` hands out 64 KiB pages, and
/// GDRCopy pins and maps in them).
pub const GPU_PAGE: u64 = 64 << 10;

/// The card's TLB page for CLOPs in GPU memory: 2 MiB, so the card's 128 TLB entries reach 256 MiB
/// of GPU CLOPs. The GPU's 64 KiB pages are mapped contiguously for the card (one IOVA range per
/// pinned range, aligned to 2 MiB), so any 2 MiB-aligned range of an allocation is one TLB page.
pub const GPU_CLOP_PAGE: u64 = 2 << 20;

/// What [`GpuMemory`] needs of a GPU's driver stack. Device addresses are the GPU's virtual
/// addresses (a `CUdeviceptr`); handles are the driver's names for pinned ranges.
pub trait GpuDriver: Send + Sync {
    /// What this is, for messages ("CUDA device 0 through GDRCopy").
    fn describe(&self) -> String;
    /// Allocates at least `len` bytes of device memory aligned to [`GPU_CLOP_PAGE`], prepared
    /// for third-party DMA, and returns its device address.
    fn alloc(&self, len: u64) -> Result<u64>;
    /// Frees memory [`GpuDriver::alloc`] returned.
    fn free(&self, dptr: u64) -> Result<()>;
    /// Copies device memory at `dptr` to `out` (slow; for checks and tools).
    fn copy_to_host(&self, dptr: u64, out: &mut [u8]) -> Result<()>;
    /// Pins `len` bytes at `dptr` (whole GPU pages) for peer-to-peer access.
    fn pin(&self, dptr: u64, len: u64) -> Result<u64>;
    /// Maps the pinned range of `handle` into this process (its window in the GPU's BAR).
    fn map(&self, handle: u64, len: u64) -> Result<*mut u8>;
    /// Removes the mapping of [`GpuDriver::map`].
    ///
    /// # Safety
    /// `ptr` and `len` come from `map(handle, len)`, and nothing uses the mapping afterwards.
    unsafe fn unmap(&self, handle: u64, ptr: *mut u8, len: u64) -> Result<()>;
    /// Unpins a range pinned by [`GpuDriver::pin`] (after unmapping it).
    fn unpin(&self, handle: u64) -> Result<()>;
    /// What [`GpuDriver::map`]'s memory is to the kernel: a real GPU's BAR is
    /// [`MemoryKind::DeviceMemory`].
    fn memory_kind(&self) -> MemoryKind {
        MemoryKind::DeviceMemory
    }
    /// Makes the card's writes that reached the GPU so far visible to work the GPU starts
    /// afterwards (`cuFlushGPUDirectRDMAWrites` where the GPU does not order them itself):
    /// called before a buffer in this memory is handed to the application.
    fn flush_card_writes(&self) -> Result<()>;
}

/// Device memory from [`GpuMemory::alloc`]. Clones share it; it is freed when the last clone
/// and the last CLOP registered in it are gone.
#[derive(Clone)]
pub struct GpuBuffer {
    allocation: Arc<Allocation>,
}

struct Allocation {
    driver: Arc<dyn GpuDriver>,
    dptr: u64,
    len: u64,
}

impl Drop for Allocation {
    fn drop(&mut self) {
        if let Err(e) = self.driver.free(self.dptr) {
            eprintln!(
                "nanet: freeing {} bytes of GPU memory at {:#x}: {e}",
                self.len, self.dptr
            );
        }
    }
}

impl GpuBuffer {
    /// The device (virtual) address, as CUDA kernels and [`crate::Device::register_provided`]
    /// take it.
    pub fn device_address(&self) -> u64 {
        self.allocation.dptr
    }

    pub fn len(&self) -> u64 {
        self.allocation.len
    }

    pub fn is_empty(&self) -> bool {
        self.allocation.len == 0
    }

    /// Copies `out.len()` bytes at `offset` to `out`. The card must not be writing them (an event
    /// reported them and the buffer was not released since).
    pub fn copy_to_host(&self, offset: u64, out: &mut [u8]) -> Result<()> {
        if offset
            .checked_add(out.len() as u64)
            .is_none_or(|end| end > self.allocation.len)
        {
            return Err(Error::Gpu(format!(
                "{} bytes at offset {offset} are outside the {}-byte allocation",
                out.len(),
                self.allocation.len
            )));
        }
        self.allocation
            .driver
            .copy_to_host(self.allocation.dptr + offset, out)
    }
}

/// GPU memory as a [`MemoryProvider`] for [`crate::Device::register_provided`]: only memory it
/// allocated, in 2 MiB pages ([`GPU_CLOP_PAGE`]).
pub struct GpuMemory {
    driver: Arc<dyn GpuDriver>,
    state: Mutex<ProviderState>,
}

#[derive(Default)]
struct ProviderState {
    /// Live allocations by device address (dead ones are pruned when seen).
    allocations: BTreeMap<u64, Weak<Allocation>>,
    /// Pinned ranges by device address.
    pinned: BTreeMap<u64, Pinned>,
}

/// A range the card can reach: pinned, mapped here at `cpu`, and mapped for the card at `iova`.
struct Pinned {
    len: u64,
    handle: u64,
    cpu: CpuPtr,
    iova: u64,
    /// Keeps the memory allocated while the card may write it.
    _allocation: Arc<Allocation>,
}

/// The BAR mapping's address; only passed back to the driver.
struct CpuPtr(*mut u8);
// SAFETY: the pointer is never dereferenced here, only handed back to the driver that made it.
unsafe impl Send for CpuPtr {}

impl GpuMemory {
    pub fn new(driver: Arc<dyn GpuDriver>) -> Arc<Self> {
        Arc::new(Self {
            driver,
            state: Mutex::default(),
        })
    }

    pub fn describe(&self) -> String {
        self.driver.describe()
    }

    /// Allocates `len` bytes of device memory, rounded up to whole 2 MiB pages
    /// ([`GPU_CLOP_PAGE`]) and aligned to them.
    pub fn alloc(&self, len: u64) -> Result<GpuBuffer> {
        if len == 0 {
            return Err(Error::Gpu("cannot allocate zero bytes".into()));
        }
        let len = len.div_ceil(GPU_CLOP_PAGE) * GPU_CLOP_PAGE;
        let dptr = self.driver.alloc(len)?;
        let allocation = Arc::new(Allocation {
            driver: self.driver.clone(),
            dptr,
            len,
        });
        if dptr % GPU_CLOP_PAGE != 0 {
            return Err(Error::Gpu(format!(
                "{} returned device memory at {dptr:#x}, not aligned to 2 MiB",
                self.driver.describe()
            )));
        }
        let mut st = self.state.lock().unwrap();
        st.allocations.retain(|_, a| a.strong_count() > 0);
        st.allocations.insert(dptr, Arc::downgrade(&allocation));
        Ok(GpuBuffer { allocation })
    }

    /// Ranges pinned for a card now.
    pub fn pinned_ranges(&self) -> usize {
        self.state.lock().unwrap().pinned.len()
    }

    /// The live allocation holding all of `va..va + len`.
    fn allocation_of(st: &ProviderState, va: u64, len: u64) -> Option<Arc<Allocation>> {
        let (_, a) = st.allocations.range(..=va).next_back()?;
        let a = a.upgrade()?;
        (va + len <= a.dptr + a.len).then_some(a)
    }
}

// SAFETY: the page table is the IOVAs of the range's own mapping (`CardDma::map` of the GPU
// pages GDRCopy mapped into this process), kept until `unpin` unmaps it from the card; the
// library reads GPU memory only through raw pointers.
unsafe impl MemoryProvider for GpuMemory {
    fn page_size(&self) -> PageSize {
        PageSize::Page2M
    }

    fn pin(&self, va: u64, len: u64, card: &CardDma) -> Result<Vec<u64>> {
        let mut st = self.state.lock().unwrap();
        let allocation = Self::allocation_of(&st, va, len).ok_or_else(|| {
            Error::Gpu(format!(
                "{va:#x}+{len:#x} is not inside one live allocation of this provider: allocate \
                 CLOP memory with GpuMemory::alloc"
            ))
        })?;
        if let Some((&at, p)) = st.pinned.range(..va + len).next_back() {
            if at + p.len > va {
                return Err(Error::Gpu(format!(
                    "{va:#x}+{len:#x} overlaps {at:#x}+{:#x}, pinned for another CLOP",
                    p.len
                )));
            }
        }
        let handle = self.driver.pin(va, len)?;
        let cpu = match self.driver.map(handle, len) {
            Ok(cpu) => cpu,
            Err(e) => {
                let _ = self.driver.unpin(handle);
                return Err(e);
            }
        };
        // SAFETY: the mapping stays until `unpin`, which unmaps it from the card first.
        let iova = match unsafe { card.map(cpu, len as usize, self.driver.memory_kind()) } {
            Ok(iova) => iova,
            Err(e) => {
                // SAFETY: from `map` above, unused.
                let _ = unsafe { self.driver.unmap(handle, cpu, len) };
                let _ = self.driver.unpin(handle);
                return Err(e);
            }
        };
        st.pinned.insert(
            va,
            Pinned {
                len,
                handle,
                cpu: CpuPtr(cpu),
                iova,
                _allocation: allocation,
            },
        );
        Ok((0..len / GPU_CLOP_PAGE)
            .map(|i| iova + i * GPU_CLOP_PAGE)
            .collect())
    }

    fn unpin(&self, va: u64, len: u64, card: &CardDma) -> Result<()> {
        let mut st = self.state.lock().unwrap();
        let Some(p) = st.pinned.remove(&va).filter(|p| p.len == len) else {
            return Err(Error::Gpu(format!("{va:#x}+{len:#x} is not pinned")));
        };
        if let Err(e) = card.unmap(p.iova, len as usize) {
            // The card may still reach the memory: keep it pinned, mapped and allocated.
            st.pinned.insert(va, p);
            return Err(e);
        }
        // SAFETY: from `map` in `pin`; the card's mapping is gone, nothing else uses it.
        let unmapped = unsafe { self.driver.unmap(p.handle, p.cpu.0, len) };
        let unpinned = self.driver.unpin(p.handle);
        // Dropping `p` frees the allocation if the application let go of it too.
        unmapped.and(unpinned)
    }

    fn card_writes_landed(&self) -> Result<()> {
        self.driver.flush_card_writes()
    }
}

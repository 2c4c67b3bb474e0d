//! NVIDIA GPUs through the CUDA driver API and GDRCopy, both loaded at run time (nothing to link
//! against at build time, so `--features gpu` builds on any machine).
//!
//! Memory: `cuMemAlloc` (over-allocated by 2 MiB and aligned up to 2 MiB, since `cuMemAlloc`
//! promises no alignment and the card's TLB maps GPU CLOPs in 2 MiB pages), marked
//! `CU_POINTER_ATTRIBUTE_SYNC_MEMOPS` so CUDA copies stay ordered with the card's writes.
//! Peer-to-peer: `gdr_pin_buffer` (GDRCopy's kernel module calls `nvidia_p2p_get_pages`) and
//! `gdr_map` (the range's window in the GPU's BAR, mapped into this process), which the library
//! then maps for the card through the IOMMU like any other memory.
//!
//! Ordering: at open the GPU must report GPUDirect RDMA support
//! (`CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED`); where it does not order the card's writes
//! for its own later work (`CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING` below
//! `..._OWNER`), every buffer is handed out only after `cuFlushGPUDirectRDMAWrites(CURRENT_CTX,
//! TO_OWNER)`.

use std::collections::HashMap;
use std::ffi::{c_int, c_uint, c_ulong, c_void};
use std::sync::Mutex;

use libloading::Library;

use super::{GpuDriver, GPU_CLOP_PAGE};
use crate::error::{Error, Result};

type CuResult = c_int;
type CuDevicePtr = u64;

/// `gdr_mh_t` of gdrapi.h.
#[repr(C)]
#[derive(Clone, Copy)]
struct GdrMh {
    h: c_ulong,
}

/// `CU_POINTER_ATTRIBUTE_SYNC_MEMOPS` of cuda.h.
const CU_POINTER_ATTRIBUTE_SYNC_MEMOPS: c_int = 6;
/// `CUdevice_attribute` values of cuda.h.
const CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED: c_int = 116;
const CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING: c_int = 118;
/// `CU_GPU_DIRECT_RDMA_WRITES_ORDERING_OWNER`: the GPU orders the writes for its own work.
const CU_GPU_DIRECT_RDMA_WRITES_ORDERING_OWNER: c_int = 100;
/// `CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TARGET_CURRENT_CTX` and `..._TO_OWNER` of cuda.h.
const CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TARGET_CURRENT_CTX: c_int = 0;
const CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_OWNER: c_int = 100;

/// The entry points used, resolved once.
struct Api {
    cu_init: unsafe extern "C" fn(c_uint) -> CuResult,
    cu_device_get: unsafe extern "C" fn(*mut c_int, c_int) -> CuResult,
    cu_primary_ctx_retain: unsafe extern "C" fn(*mut *mut c_void, c_int) -> CuResult,
    cu_ctx_set_current: unsafe extern "C" fn(*mut c_void) -> CuResult,
    cu_mem_alloc: unsafe extern "C" fn(*mut CuDevicePtr, usize) -> CuResult,
    cu_mem_free: unsafe extern "C" fn(CuDevicePtr) -> CuResult,
    cu_memcpy_dtoh: unsafe extern "C" fn(*mut c_void, CuDevicePtr, usize) -> CuResult,
    cu_pointer_set_attribute: unsafe extern "C" fn(*const c_void, c_int, CuDevicePtr) -> CuResult,
    cu_device_get_attribute: unsafe extern "C" fn(*mut c_int, c_int, c_int) -> CuResult,
    /// CUDA 11.3 on; needed only where the GPU does not order GPUDirect writes itself.
    cu_flush_gpu_direct_rdma_writes: Option<unsafe extern "C" fn(c_int, c_int) -> CuResult>,
    gdr_open: unsafe extern "C" fn() -> *mut c_void,
    gdr_close: unsafe extern "C" fn(*mut c_void) -> c_int,
    gdr_pin_buffer:
        unsafe extern "C" fn(*mut c_void, c_ulong, usize, u64, u32, *mut GdrMh) -> c_int,
    gdr_unpin_buffer: unsafe extern "C" fn(*mut c_void, GdrMh) -> c_int,
    gdr_map: unsafe extern "C" fn(*mut c_void, GdrMh, *mut *mut c_void, usize) -> c_int,
    gdr_unmap: unsafe extern "C" fn(*mut c_void, GdrMh, *mut c_void, usize) -> c_int,
}

/// One CUDA device, its primary context, and a GDRCopy handle.
pub struct CudaGdrcopy {
    api: Api,
    ordinal: i32,
    context: *mut c_void,
    gdr: *mut c_void,
    /// Aligned device address -> what `cuMemAlloc` returned (to free).
    allocations: Mutex<HashMap<u64, u64>>,
    /// The GPU does not order the card's writes for its own later work: flush before handing a
    /// buffer out.
    flush_needed: bool,
    /// gdrapi is not thread-safe; every call into it (and the context switch) holds this.
    lock: Mutex<()>,
    _cuda: Library,
    _gdrapi: Library,
}

// SAFETY: the raw handles are only used under `lock`; the CUDA context is made current on the
// calling thread before every CUDA call.
unsafe impl Send for CudaGdrcopy {}
unsafe impl Sync for CudaGdrcopy {}

fn load(name: &str, what_to_do: &str) -> Result<Library> {
    // SAFETY: loading a shared library runs its initialisers; these are the vendors' libraries.
    unsafe { Library::new(name) }
        .map_err(|e| Error::Gpu(format!("cannot load {name} ({e}): {what_to_do}")))
}

fn symbol<T: Copy>(lib: &Library, name: &str) -> Result<T> {
    // SAFETY: `T` is the C signature of `name` in cuda.h / gdrapi.h.
    unsafe { lib.get::<T>(name.as_bytes()) }
        .map(|s| *s)
        .map_err(|e| Error::Gpu(format!("{name} is missing ({e}): the library is too old")))
}

impl CudaGdrcopy {
    /// Opens CUDA device `ordinal` and GDRCopy. Each missing piece says what to install or load.
    pub fn open(ordinal: i32) -> Result<Self> {
        let cuda = load(
            "libcuda.so.1",
            "install the NVIDIA driver (it provides the CUDA driver library)",
        )?;
        let gdrapi = load(
            "libgdrapi.so.2",
            "install GDRCopy 2.x (https://github.com/NVIDIA/gdrcopy) and make its library \
             visible to the loader (ldconfig or LD_LIBRARY_PATH)",
        )?;
        let api = Api {
            cu_init: symbol(&cuda, "cuInit")?,
            cu_device_get: symbol(&cuda, "cuDeviceGet")?,
            cu_primary_ctx_retain: symbol(&cuda, "cuDevicePrimaryCtxRetain")?,
            cu_ctx_set_current: symbol(&cuda, "cuCtxSetCurrent")?,
            cu_mem_alloc: symbol(&cuda, "cuMemAlloc_v2")?,
            cu_mem_free: symbol(&cuda, "cuMemFree_v2")?,
            cu_memcpy_dtoh: symbol(&cuda, "cuMemcpyDtoH_v2")?,
            cu_pointer_set_attribute: symbol(&cuda, "cuPointerSetAttribute")?,
            cu_device_get_attribute: symbol(&cuda, "cuDeviceGetAttribute")?,
            cu_flush_gpu_direct_rdma_writes: symbol(&cuda, "cuFlushGPUDirectRDMAWrites").ok(),
            gdr_open: symbol(&gdrapi, "gdr_open")?,
            gdr_close: symbol(&gdrapi, "gdr_close")?,
            gdr_pin_buffer: symbol(&gdrapi, "gdr_pin_buffer")?,
            gdr_unpin_buffer: symbol(&gdrapi, "gdr_unpin_buffer")?,
            gdr_map: symbol(&gdrapi, "gdr_map")?,
            gdr_unmap: symbol(&gdrapi, "gdr_unmap")?,
        };
        let check = |what: &str, r: CuResult| match r {
            0 => Ok(()),
            r => Err(Error::Gpu(format!(
                "{what} failed with CUresult {r} (see cuda.h): is an NVIDIA GPU {ordinal} present \
                 and its driver loaded (nvidia-smi)?"
            ))),
        };
        let mut device = 0;
        let mut context = std::ptr::null_mut();
        // SAFETY: plain driver API calls with valid out-pointers.
        unsafe {
            check("cuInit", (api.cu_init)(0))?;
            check("cuDeviceGet", (api.cu_device_get)(&mut device, ordinal))?;
            check(
                "cuDevicePrimaryCtxRetain",
                (api.cu_primary_ctx_retain)(&mut context, device),
            )?;
        }
        let attribute = |what: &str, a: c_int| {
            let mut v = 0;
            // SAFETY: valid out-pointer and device.
            check(what, unsafe {
                (api.cu_device_get_attribute)(&mut v, a, device)
            })
            .map(|()| v)
        };
        if attribute(
            "cuDeviceGetAttribute(GPU_DIRECT_RDMA_SUPPORTED)",
            CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED,
        )? == 0
        {
            return Err(Error::Gpu(format!(
                "CUDA device {ordinal} does not support GPUDirect RDMA: the card cannot write \
                 into its memory (use a data-centre or workstation GPU)"
            )));
        }
        let flush_needed = attribute(
            "cuDeviceGetAttribute(GPU_DIRECT_RDMA_WRITES_ORDERING)",
            CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING,
        )? < CU_GPU_DIRECT_RDMA_WRITES_ORDERING_OWNER;
        if flush_needed && api.cu_flush_gpu_direct_rdma_writes.is_none() {
            return Err(Error::Gpu(format!(
                "CUDA device {ordinal} does not order GPUDirect writes itself and this driver has \
                 no cuFlushGPUDirectRDMAWrites: update the NVIDIA driver (CUDA 11.3 or later)"
            )));
        }
        // SAFETY: no arguments; null on failure.
        let gdr = unsafe { (api.gdr_open)() };
        if gdr.is_null() {
            return Err(Error::Gpu(
                "gdr_open failed: cannot open /dev/gdrdrv; load GDRCopy's kernel module \
                 (`insmod.sh` from GDRCopy, or `modprobe gdrdrv`)"
                    .into(),
            ));
        }
        Ok(Self {
            api,
            ordinal,
            context,
            gdr,
            allocations: Mutex::default(),
            flush_needed,
            lock: Mutex::new(()),
            _cuda: cuda,
            _gdrapi: gdrapi,
        })
    }

    /// Runs a CUDA call with the device's context current on this thread.
    fn cuda(&self, what: &str, call: impl FnOnce() -> CuResult) -> Result<()> {
        let _g = self.lock.lock().unwrap();
        // SAFETY: the context was retained in `open` and lives as long as `self`.
        let r = match unsafe { (self.api.cu_ctx_set_current)(self.context) } {
            0 => call(),
            r => r,
        };
        match r {
            0 => Ok(()),
            r => Err(Error::Gpu(format!(
                "{what} on CUDA device {} failed with CUresult {r}",
                self.ordinal
            ))),
        }
    }

    fn gdr(&self, what: &str, call: impl FnOnce() -> c_int) -> Result<()> {
        let _g = self.lock.lock().unwrap();
        match call() {
            0 => Ok(()),
            errno => Err(Error::Gpu(format!(
                "{what} failed: {} (GDRCopy needs 64 KiB aligned cuMemAlloc memory and a GPU that \
                 supports GPUDirect RDMA)",
                std::io::Error::from_raw_os_error(errno)
            ))),
        }
    }
}

impl Drop for CudaGdrcopy {
    fn drop(&mut self) {
        // SAFETY: opened in `open`; every pin is undone by the provider before it lets go.
        unsafe { (self.api.gdr_close)(self.gdr) };
    }
}

impl GpuDriver for CudaGdrcopy {
    fn describe(&self) -> String {
        format!("CUDA device {} through GDRCopy", self.ordinal)
    }

    fn alloc(&self, len: u64) -> Result<u64> {
        let mut raw = 0;
        // SAFETY: valid out-pointer.
        self.cuda("cuMemAlloc", || unsafe {
            (self.api.cu_mem_alloc)(&mut raw, (len + GPU_CLOP_PAGE) as usize)
        })?;
        let aligned = raw.div_ceil(GPU_CLOP_PAGE) * GPU_CLOP_PAGE;
        let one: c_uint = 1;
        // SAFETY: `one` outlives the call; `aligned` is inside the allocation.
        let synced = self.cuda("cuPointerSetAttribute(SYNC_MEMOPS)", || unsafe {
            (self.api.cu_pointer_set_attribute)(
                &one as *const c_uint as *const c_void,
                CU_POINTER_ATTRIBUTE_SYNC_MEMOPS,
                aligned,
            )
        });
        if let Err(e) = synced {
            // SAFETY: allocated just above, unused.
            let _ = self.cuda("cuMemFree", || unsafe { (self.api.cu_mem_free)(raw) });
            return Err(e);
        }
        self.allocations.lock().unwrap().insert(aligned, raw);
        Ok(aligned)
    }

    fn free(&self, dptr: u64) -> Result<()> {
        let raw = self
            .allocations
            .lock()
            .unwrap()
            .remove(&dptr)
            .ok_or_else(|| Error::Gpu(format!("{dptr:#x} was not allocated here")))?;
        // SAFETY: from cuMemAlloc, freed once.
        self.cuda("cuMemFree", || unsafe { (self.api.cu_mem_free)(raw) })
    }

    fn copy_to_host(&self, dptr: u64, out: &mut [u8]) -> Result<()> {
        // SAFETY: `out` is valid for its length.
        self.cuda("cuMemcpyDtoH", || unsafe {
            (self.api.cu_memcpy_dtoh)(out.as_mut_ptr().cast(), dptr, out.len())
        })
    }

    fn pin(&self, dptr: u64, len: u64) -> Result<u64> {
        let mut mh = GdrMh { h: 0 };
        // SAFETY: valid handle and out-pointer.
        self.gdr("gdr_pin_buffer", || unsafe {
            (self.api.gdr_pin_buffer)(self.gdr, dptr as c_ulong, len as usize, 0, 0, &mut mh)
        })?;
        Ok(mh.h)
    }

    fn map(&self, handle: u64, len: u64) -> Result<*mut u8> {
        let mut ptr = std::ptr::null_mut();
        let mh = GdrMh {
            h: handle as c_ulong,
        };
        // SAFETY: `handle` came from gdr_pin_buffer; valid out-pointer.
        self.gdr("gdr_map", || unsafe {
            (self.api.gdr_map)(self.gdr, mh, &mut ptr, len as usize)
        })?;
        Ok(ptr.cast())
    }

    unsafe fn unmap(&self, handle: u64, ptr: *mut u8, len: u64) -> Result<()> {
        let mh = GdrMh {
            h: handle as c_ulong,
        };
        // SAFETY: the caller passes what `map` returned.
        self.gdr("gdr_unmap", || unsafe {
            (self.api.gdr_unmap)(self.gdr, mh, ptr.cast(), len as usize)
        })
    }

    fn unpin(&self, handle: u64) -> Result<()> {
        let mh = GdrMh {
            h: handle as c_ulong,
        };
        // SAFETY: `handle` came from gdr_pin_buffer and is unmapped.
        self.gdr("gdr_unpin_buffer", || unsafe {
            (self.api.gdr_unpin_buffer)(self.gdr, mh)
        })
    }

    fn flush_card_writes(&self) -> Result<()> {
        let (true, Some(flush)) = (self.flush_needed, self.api.cu_flush_gpu_direct_rdma_writes)
        else {
            return Ok(());
        };
        // SAFETY: plain driver call on the current context.
        self.cuda("cuFlushGPUDirectRDMAWrites", || unsafe {
            flush(
                CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TARGET_CURRENT_CTX,
                CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_OWNER,
            )
        })
    }
}

//! A GPU stand-in in host memory, for the simulated card and the tests.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use memmap2::{MmapMut, MmapRaw};

use super::{GpuDriver, GPU_CLOP_PAGE, GPU_PAGE};
use crate::backend::MemoryKind;
use crate::error::{Error, Result};

/// Where the stand-in's device addresses start (a range no host mapping uses in tests; 2 MiB
/// aligned, as the real driver's allocations are made).
const DEVICE_BASE: u64 = 0x7e00_0000_0000;

/// A [`GpuDriver`] whose device memory is anonymous host memory at device addresses of its own;
/// pinning and mapping hand out that host memory, as GDRCopy hands out the GPU's BAR window. It
/// checks the rules a real driver leaves to luck: freeing or unpinning memory still pinned or
/// mapped, unmapping what is not mapped. Such misuse fails the call and is recorded
/// ([`HostGpu::violations`]). It counts the flushes of the card's writes
/// ([`HostGpu::flushes`]), as a GPU that does not order GPUDirect writes itself needs them. The
/// memory is reached only through raw pointers (the card writes it while the stand-in reads).
pub struct HostGpu {
    state: Mutex<HostGpuState>,
}

#[derive(Default)]
struct HostGpuState {
    next: u64,
    memory: BTreeMap<u64, MmapRaw>,
    /// Pinned ranges by handle: (device address, length, mapped).
    pins: HashMap<u64, (u64, u64, bool)>,
    next_handle: u64,
    calls: Vec<String>,
    violations: Vec<String>,
    flushes: u64,
}

impl Default for HostGpu {
    fn default() -> Self {
        Self::new()
    }
}

impl HostGpu {
    pub fn new() -> Self {
        Self {
            state: Mutex::new(HostGpuState {
                next: DEVICE_BASE,
                next_handle: 1,
                ..Default::default()
            }),
        }
    }

    /// Every driver call so far, in order ("alloc 0x7e0000000000+0x60000", "pin 1", ...).
    pub fn calls(&self) -> Vec<String> {
        self.state.lock().unwrap().calls.clone()
    }

    /// Misuse seen so far (each also failed its call).
    pub fn violations(&self) -> Vec<String> {
        self.state.lock().unwrap().violations.clone()
    }

    /// Flushes of the card's writes so far ([`GpuDriver::flush_card_writes`]).
    pub fn flushes(&self) -> u64 {
        self.state.lock().unwrap().flushes
    }

    /// Device memory allocated now, in bytes.
    pub fn allocated(&self) -> u64 {
        let st = self.state.lock().unwrap();
        st.memory.values().map(|m| m.len() as u64).sum()
    }
}

impl HostGpuState {
    /// The allocation holding `dptr..dptr + len`: its base and the host memory.
    fn find(&self, dptr: u64, len: u64) -> Option<(u64, &MmapRaw)> {
        let (&base, m) = self.memory.range(..=dptr).next_back()?;
        (dptr + len <= base + m.len() as u64).then_some((base, m))
    }

    fn refuse(&mut self, what: String) -> Error {
        self.violations.push(what.clone());
        Error::Gpu(what)
    }
}

impl GpuDriver for HostGpu {
    fn describe(&self) -> String {
        "GPU stand-in in host memory".into()
    }

    fn alloc(&self, len: u64) -> Result<u64> {
        let mut st = self.state.lock().unwrap();
        let map = MmapMut::map_anon(len as usize)
            .map_err(|e| Error::Gpu(format!("cannot allocate {len} bytes: {e}")))?;
        let dptr = st.next;
        st.next += len.div_ceil(GPU_CLOP_PAGE) * GPU_CLOP_PAGE;
        let map = MmapRaw::from(map);
        st.memory.insert(dptr, map);
        st.calls.push(format!("alloc {dptr:#x}+{len:#x}"));
        Ok(dptr)
    }

    fn free(&self, dptr: u64) -> Result<()> {
        let mut st = self.state.lock().unwrap();
        st.calls.push(format!("free {dptr:#x}"));
        let Some(len) = st.memory.get(&dptr).map(|m| m.len() as u64) else {
            return Err(st.refuse(format!("free of {dptr:#x}, which is not allocated")));
        };
        if st
            .pins
            .values()
            .any(|&(d, l, _)| d < dptr + len && dptr < d + l)
        {
            return Err(st.refuse(format!("free of {dptr:#x} while it is pinned")));
        }
        st.memory.remove(&dptr);
        Ok(())
    }

    fn copy_to_host(&self, dptr: u64, out: &mut [u8]) -> Result<()> {
        let mut st = self.state.lock().unwrap();
        let len = out.len() as u64;
        let Some((base, m)) = st.find(dptr, len) else {
            return Err(st.refuse(format!(
                "copy of {dptr:#x}+{len:#x}, which is not allocated"
            )));
        };
        // SAFETY: inside the allocation (found above); a copy, never a reference, since the card
        // may be writing other parts of it.
        unsafe {
            std::ptr::copy_nonoverlapping(
                m.as_ptr().add((dptr - base) as usize),
                out.as_mut_ptr(),
                out.len(),
            )
        };
        Ok(())
    }

    fn pin(&self, dptr: u64, len: u64) -> Result<u64> {
        let mut st = self.state.lock().unwrap();
        if !dptr.is_multiple_of(GPU_PAGE)
            || !len.is_multiple_of(GPU_PAGE)
            || st.find(dptr, len).is_none()
        {
            return Err(st.refuse(format!(
                "pin of {dptr:#x}+{len:#x}: not whole 64 KiB pages of one allocation"
            )));
        }
        let handle = st.next_handle;
        st.next_handle += 1;
        st.pins.insert(handle, (dptr, len, false));
        st.calls.push(format!("pin {handle}"));
        Ok(handle)
    }

    fn map(&self, handle: u64, len: u64) -> Result<*mut u8> {
        let mut st = self.state.lock().unwrap();
        st.calls.push(format!("map {handle}"));
        let Some(&(dptr, pinned, mapped)) = st.pins.get(&handle) else {
            return Err(st.refuse(format!("map of handle {handle}, which is not pinned")));
        };
        if mapped || len != pinned {
            return Err(st.refuse(format!(
                "map of handle {handle}: mapped already, or {len} bytes of {pinned}"
            )));
        }
        let (base, m) = st.find(dptr, len).expect("pinned memory stays allocated");
        // SAFETY: inside the allocation (pinned ranges are).
        let ptr = unsafe { m.as_mut_ptr().add((dptr - base) as usize) };
        st.pins.get_mut(&handle).unwrap().2 = true;
        Ok(ptr)
    }

    unsafe fn unmap(&self, handle: u64, _ptr: *mut u8, _len: u64) -> Result<()> {
        let mut st = self.state.lock().unwrap();
        st.calls.push(format!("unmap {handle}"));
        match st.pins.get_mut(&handle) {
            Some(p) if p.2 => {
                p.2 = false;
                Ok(())
            }
            _ => Err(st.refuse(format!("unmap of handle {handle}, which is not mapped"))),
        }
    }

    fn unpin(&self, handle: u64) -> Result<()> {
        let mut st = self.state.lock().unwrap();
        st.calls.push(format!("unpin {handle}"));
        match st.pins.get(&handle) {
            Some(p) if !p.2 => {
                st.pins.remove(&handle);
                Ok(())
            }
            Some(_) => Err(st.refuse(format!("unpin of handle {handle} while it is mapped"))),
            None => Err(st.refuse(format!("unpin of handle {handle}, which is not pinned"))),
        }
    }

    /// The stand-in's "GPU memory" is ordinary host pages.
    fn memory_kind(&self) -> MemoryKind {
        MemoryKind::Pages
    }

    fn flush_card_writes(&self) -> Result<()> {
        self.state.lock().unwrap().flushes += 1;
        Ok(())
    }
}

//! The real system behind [`VfioSys`] and [`VfioDevice`]: facts from sysfs, and the device opened
//! through the kernel's VFIO ioctls ([`super::kernel`]), by the legacy container or by the VFIO
//! device node with iommufd. Every error carries the kernel's errno.

use std::ffi::CString;
use std::fs::{File, OpenOptions};
use std::io;
use std::ops::RangeInclusive;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use memmap2::{MmapOptions, MmapRaw};

use super::kernel::{self as k, ioctl, ioctl_value, size_of};
use super::{IommuKind, IrqKind, OpenFailure, OpenStep, VfioDevice, VfioPath, VfioSys};
use crate::backend::CardAccess;

/// The real system: sysfs under `root` (normally `/sys`), device nodes under `/dev`.
pub struct SystemVfio {
    pub root: PathBuf,
    pub dev: PathBuf,
}

impl Default for SystemVfio {
    fn default() -> Self {
        Self {
            root: PathBuf::from("/sys"),
            dev: PathBuf::from("/dev"),
        }
    }
}

impl SystemVfio {
    fn device_dir(&self, address: &str) -> PathBuf {
        self.root.join("bus/pci/devices").join(address)
    }
}

fn link_name(p: &Path) -> Option<String> {
    std::fs::read_link(p)
        .ok()?
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
}

impl VfioSys for SystemVfio {
    fn device_exists(&self, address: &str) -> bool {
        self.device_dir(address).exists()
    }

    fn driver(&self, address: &str) -> Option<String> {
        link_name(&self.device_dir(address).join("driver"))
    }

    fn iommu_group(&self, address: &str) -> Option<u32> {
        link_name(&self.device_dir(address).join("iommu_group"))?
            .parse()
            .ok()
    }

    fn group_members(&self, group: u32) -> Vec<(String, Option<String>)> {
        let dir = self
            .root
            .join(format!("kernel/iommu_groups/{group}/devices"));
        let Ok(entries) = std::fs::read_dir(dir) else {
            return vec![];
        };
        entries
            .flatten()
            .map(|e| {
                let a = e.file_name().to_string_lossy().into_owned();
                let d = self.driver(&a);
                (a, d)
            })
            .collect()
    }

    fn container_nodes_exist(&self, group: u32) -> bool {
        self.dev.join("vfio/vfio").exists() && self.dev.join(format!("vfio/{group}")).exists()
    }

    fn cdev(&self, address: &str) -> Option<String> {
        let entries = std::fs::read_dir(self.device_dir(address).join("vfio-dev")).ok()?;
        let name = entries
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .find(|n| n.starts_with("vfio"))?;
        self.dev
            .join("vfio/devices")
            .join(&name)
            .exists()
            .then_some(name)
    }

    fn iommufd_exists(&self) -> bool {
        self.dev.join("iommu").exists()
    }

    fn memlock_limit(&self) -> Option<u64> {
        let mut r = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: one valid rlimit to fill.
        if unsafe { libc::getrlimit(libc::RLIMIT_MEMLOCK, &mut r) } != 0
            || r.rlim_cur == libc::RLIM_INFINITY
        {
            return None;
        }
        Some(r.rlim_cur)
    }

    fn can_lock_memory(&self) -> bool {
        std::fs::read_to_string("/proc/self/status").is_ok_and(|s| has_cap_ipc_lock(&s))
    }

    fn open(&self, address: &str, path: &VfioPath) -> Result<Box<dyn VfioDevice>, OpenFailure> {
        let (device, iommu) = match path {
            VfioPath::Container { group } => self.open_container(address, *group)?,
            VfioPath::Cdev { name } => self.open_cdev(name)?,
        };
        Ok(Box::new(
            KernelDevice::new(device, iommu).map_err(OpenFailure::at(OpenStep::Describe))?,
        ))
    }
}

/// Whether the effective capabilities in `status` (`/proc/self/status`, whose `CapEff:` line is
/// the set in hex) hold CAP_IPC_LOCK (bit 14).
fn has_cap_ipc_lock(status: &str) -> bool {
    const CAP_IPC_LOCK: u32 = 14;
    status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
        .is_some_and(|caps| caps & (1 << CAP_IPC_LOCK) != 0)
}

/// Opens a device node; the error keeps its errno (the caller's advice depends on it).
fn open_rw(path: &Path) -> io::Result<OwnedFd> {
    Ok(OpenOptions::new().read(true).write(true).open(path)?.into())
}

impl SystemVfio {
    /// `/dev/vfio/vfio` with the group attached and the type1 IOMMU set, then the device's fd.
    fn open_container(&self, address: &str, group: u32) -> Result<(OwnedFd, Iommu), OpenFailure> {
        use OpenStep as S;
        let container = open_rw(&self.dev.join("vfio/vfio")).map_err(OpenFailure::at(S::Nodes))?;
        let c = container.as_fd();
        // SAFETY: GET_API_VERSION reads no memory.
        if unsafe { ioctl_value(c, k::GET_API_VERSION, 0) }.map_err(OpenFailure::at(S::Nodes))?
            != k::API_VERSION
        {
            return Err(OpenFailure::at(S::Nodes)(io::Error::from_raw_os_error(
                libc::EPROTO,
            )));
        }
        let emulated = is_iommufd(c);
        let group_fd =
            open_rw(&self.dev.join(format!("vfio/{group}"))).map_err(OpenFailure::at(S::Nodes))?;
        let mut status = k::GroupStatus {
            argsz: size_of::<k::GroupStatus>(),
            flags: 0,
        };
        // SAFETY: GROUP_GET_STATUS fills a vfio_group_status.
        unsafe { ioctl(group_fd.as_fd(), k::GROUP_GET_STATUS, &mut status) }
            .map_err(OpenFailure::at(S::Nodes))?;
        if status.flags & k::GROUP_FLAGS_VIABLE == 0 {
            // A member of the group is bound to a host driver (checked before, but it may have
            // changed since).
            return Err(OpenFailure::at(S::GroupNotViable)(
                io::Error::from_raw_os_error(libc::EBUSY),
            ));
        }
        let mut container_fd: i32 = c.as_raw_fd();
        // SAFETY: GROUP_SET_CONTAINER reads an int.
        unsafe { ioctl(group_fd.as_fd(), k::GROUP_SET_CONTAINER, &mut container_fd) }
            .map_err(OpenFailure::at(S::SetContainer))?;
        // SAFETY: CHECK_EXTENSION and SET_IOMMU take a value and read no memory.
        let kind = if unsafe { ioctl_value(c, k::CHECK_EXTENSION, k::TYPE1V2_IOMMU) }
            .map_err(OpenFailure::at(S::SetIommu))?
            > 0
        {
            k::TYPE1V2_IOMMU
        } else {
            k::TYPE1_IOMMU
        };
        // SAFETY: as above.
        unsafe { ioctl_value(c, k::SET_IOMMU, kind) }.map_err(OpenFailure::at(S::SetIommu))?;
        let name = CString::new(address)
            .map_err(|_| OpenFailure::at(S::GetDevice)(io::ErrorKind::InvalidInput.into()))?;
        // SAFETY: GROUP_GET_DEVICE_FD reads a NUL-terminated name and returns a new fd.
        let fd = unsafe {
            ioctl(
                group_fd.as_fd(),
                k::GROUP_GET_DEVICE_FD,
                name.as_ptr() as *mut u8,
            )
        }
        .map_err(OpenFailure::at(S::GetDevice))?;
        // SAFETY: a fresh fd the kernel gave us.
        let device = unsafe { OwnedFd::from_raw_fd(fd) };
        let kind = if emulated {
            IommuKind::EmulatedType1
        } else {
            IommuKind::Type1
        };
        Ok((
            device,
            Iommu::Container {
                container,
                _group: group_fd,
                kind,
            },
        ))
    }

    /// `/dev/vfio/devices/<name>` bound to a fresh iommufd and attached to a new IOAS.
    fn open_cdev(&self, name: &str) -> Result<(OwnedFd, Iommu), OpenFailure> {
        use OpenStep as S;
        let device = open_rw(&self.dev.join("vfio/devices").join(name))
            .map_err(OpenFailure::at(S::Nodes))?;
        let iommufd = open_rw(&self.dev.join("iommu")).map_err(OpenFailure::at(S::Nodes))?;
        let mut bind = k::BindIommufd {
            argsz: size_of::<k::BindIommufd>(),
            flags: 0,
            iommufd: iommufd.as_raw_fd(),
            out_devid: 0,
        };
        // SAFETY: BIND_IOMMUFD reads and writes a vfio_device_bind_iommufd.
        unsafe { ioctl(device.as_fd(), k::DEVICE_BIND_IOMMUFD, &mut bind) }
            .map_err(OpenFailure::at(S::Bind))?;
        let mut alloc = k::IoasAlloc {
            size: size_of::<k::IoasAlloc>(),
            ..Default::default()
        };
        // SAFETY: IOAS_ALLOC reads and writes an iommu_ioas_alloc.
        unsafe { ioctl(iommufd.as_fd(), k::IOMMUFD_IOAS_ALLOC, &mut alloc) }
            .map_err(OpenFailure::at(S::Attach))?;
        let mut attach = k::AttachIommufdPt {
            argsz: size_of::<k::AttachIommufdPt>(),
            flags: 0,
            pt_id: alloc.out_ioas_id,
        };
        // SAFETY: ATTACH_IOMMUFD_PT reads and writes a vfio_device_attach_iommufd_pt.
        unsafe { ioctl(device.as_fd(), k::DEVICE_ATTACH_IOMMUFD_PT, &mut attach) }
            .map_err(OpenFailure::at(S::Attach))?;
        Ok((
            device,
            Iommu::Iommufd {
                iommufd,
                ioas: alloc.out_ioas_id,
            },
        ))
    }
}

/// Whether `fd` (an open `/dev/vfio/vfio`) is iommufd's emulation of the container: iommufd
/// answers its own IOAS_ALLOC there, a real container refuses it (EINVAL before SET_IOMMU).
fn is_iommufd(fd: BorrowedFd<'_>) -> bool {
    let mut alloc = k::IoasAlloc {
        size: size_of::<k::IoasAlloc>(),
        ..Default::default()
    };
    // SAFETY: IOAS_ALLOC reads and writes an iommu_ioas_alloc; a container ignores it.
    if unsafe { ioctl(fd, k::IOMMUFD_IOAS_ALLOC, &mut alloc) }.is_err() {
        return false;
    }
    let mut destroy = k::Destroy {
        size: size_of::<k::Destroy>(),
        id: alloc.out_ioas_id,
    };
    // SAFETY: DESTROY reads an iommu_destroy.
    let _ = unsafe { ioctl(fd, k::IOMMUFD_DESTROY, &mut destroy) };
    true
}

/// The IOMMU interface a device was opened with.
enum Iommu {
    Container {
        container: OwnedFd,
        _group: OwnedFd,
        kind: IommuKind,
    },
    Iommufd {
        iommufd: OwnedFd,
        ioas: u32,
    },
}

/// BAR0 mapped into this process, or reached by pread/pwrite where the kernel does not let it be
/// mapped.
enum Bar0 {
    Mapped(MmapRaw),
    ReadWrite { offset: u64, len: u64 },
}

/// A device opened through the kernel's VFIO ioctls.
struct KernelDevice {
    device: File,
    iommu: Iommu,
    flags: u32,
    config_offset: u64,
    bar0: Option<Bar0>,
    /// Vectors of INTx, MSI and MSI-X.
    irq_counts: [u32; 3],
}

impl KernelDevice {
    fn new(device: OwnedFd, iommu: Iommu) -> io::Result<Self> {
        let mut info = k::DeviceInfo {
            argsz: size_of::<k::DeviceInfo>(),
            ..Default::default()
        };
        // SAFETY: GET_INFO reads and writes a vfio_device_info.
        unsafe { ioctl(device.as_fd(), k::DEVICE_GET_INFO, &mut info)? };
        let region = |index: u32| -> io::Result<k::RegionInfo> {
            let mut r = k::RegionInfo {
                argsz: size_of::<k::RegionInfo>(),
                index,
                ..Default::default()
            };
            // SAFETY: GET_REGION_INFO reads and writes a vfio_region_info.
            unsafe { ioctl(device.as_fd(), k::DEVICE_GET_REGION_INFO, &mut r)? };
            Ok(r)
        };
        let config_offset = region(k::PCI_CONFIG_REGION_INDEX)?.offset;
        let bar = region(k::PCI_BAR0_REGION_INDEX)?;
        let device = File::from(device);
        let mapped = |len: u64| {
            MmapOptions::new()
                .offset(bar.offset)
                .len(len as usize)
                .map_raw(&device)
                .ok()
        };
        // Mapped where the kernel lets it be (not always where the MSI-X table lives in BAR0 on
        // older kernels); read and written through the device fd otherwise.
        let bar0 = match bar.size {
            0 => None,
            len => Some(
                (bar.flags & k::REGION_INFO_FLAG_MMAP != 0)
                    .then(|| mapped(len))
                    .flatten()
                    .map_or(
                        Bar0::ReadWrite {
                            offset: bar.offset,
                            len,
                        },
                        Bar0::Mapped,
                    ),
            ),
        };
        let mut irq_counts = [0; 3];
        for (i, index) in [
            k::PCI_INTX_IRQ_INDEX,
            k::PCI_MSI_IRQ_INDEX,
            k::PCI_MSIX_IRQ_INDEX,
        ]
        .into_iter()
        .enumerate()
        {
            let mut irq = k::IrqInfo {
                argsz: size_of::<k::IrqInfo>(),
                index,
                ..Default::default()
            };
            // SAFETY: GET_IRQ_INFO reads and writes a vfio_irq_info.
            unsafe { ioctl(device.as_fd(), k::DEVICE_GET_IRQ_INFO, &mut irq)? };
            irq_counts[i] = irq.count;
        }
        Ok(Self {
            device,
            iommu,
            flags: info.flags,
            config_offset,
            bar0,
            irq_counts,
        })
    }

    fn irq_index(kind: IrqKind) -> u32 {
        match kind {
            IrqKind::Intx => k::PCI_INTX_IRQ_INDEX,
            IrqKind::Msi => k::PCI_MSI_IRQ_INDEX,
            IrqKind::MsiX => k::PCI_MSIX_IRQ_INDEX,
        }
    }

    fn config_read<const N: usize>(&self, offset: u64) -> io::Result<[u8; N]> {
        let mut b = [0; N];
        self.device
            .read_exact_at(&mut b, self.config_offset + offset)?;
        Ok(b)
    }

    fn bar0_offset(&self, offset: u64) -> io::Result<&Bar0> {
        let bar = self.bar0.as_ref().ok_or(io::ErrorKind::NotFound)?;
        let len = match bar {
            Bar0::Mapped(m) => m.len() as u64,
            Bar0::ReadWrite { len, .. } => *len,
        };
        if !offset.is_multiple_of(4) || offset.checked_add(4).is_none_or(|end| end > len) {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        Ok(bar)
    }
}

impl VfioDevice for KernelDevice {
    fn iommu_kind(&self) -> IommuKind {
        match &self.iommu {
            Iommu::Container { kind, .. } => *kind,
            Iommu::Iommufd { .. } => IommuKind::Iommufd,
        }
    }

    fn can_reset(&self) -> bool {
        self.flags & k::DEVICE_FLAGS_RESET != 0
    }

    fn reset(&self) -> io::Result<()> {
        // SAFETY: DEVICE_RESET takes no argument.
        unsafe { ioctl_value(self.device.as_fd(), k::DEVICE_RESET, 0) }.map(drop)
    }

    fn config_read16(&self, offset: u64) -> io::Result<u16> {
        Ok(u16::from_le_bytes(self.config_read(offset)?))
    }

    fn config_write16(&self, offset: u64, value: u16) -> io::Result<()> {
        self.device
            .write_all_at(&value.to_le_bytes(), self.config_offset + offset)
    }

    fn config_read8(&self, offset: u64) -> io::Result<u8> {
        Ok(self.config_read::<1>(offset)?[0])
    }

    fn bar0_len(&self) -> Option<u64> {
        Some(match self.bar0.as_ref()? {
            Bar0::Mapped(m) => m.len() as u64,
            Bar0::ReadWrite { len, .. } => *len,
        })
    }

    fn bar0_read32(&self, offset: u64) -> io::Result<u32> {
        match self.bar0_offset(offset)? {
            // SAFETY: in bounds and aligned (checked); a device register, read once.
            Bar0::Mapped(m) => Ok(unsafe {
                std::ptr::read_volatile(m.as_ptr().add(offset as usize) as *const u32)
            }),
            Bar0::ReadWrite { offset: at, .. } => {
                let mut b = [0; 4];
                self.device.read_exact_at(&mut b, at + offset)?;
                Ok(u32::from_le_bytes(b))
            }
        }
    }

    fn bar0_write32(&self, offset: u64, value: u32) -> io::Result<()> {
        match self.bar0_offset(offset)? {
            // SAFETY: in bounds and aligned (checked); a device register, written once.
            Bar0::Mapped(m) => unsafe {
                std::ptr::write_volatile(m.as_mut_ptr().add(offset as usize) as *mut u32, value);
                Ok(())
            },
            Bar0::ReadWrite { offset: at, .. } => {
                self.device.write_all_at(&value.to_le_bytes(), at + offset)
            }
        }
    }

    fn iova_ranges(&self) -> io::Result<Option<Vec<RangeInclusive<u64>>>> {
        match &self.iommu {
            Iommu::Container { container, .. } => {
                // Asked once for the size with capabilities, then with room for them.
                let mut argsz = size_of::<k::Type1Info>();
                for _ in 0..2 {
                    let mut buf = vec![0u64; (argsz as usize).div_ceil(8)];
                    let info = buf.as_mut_ptr() as *mut k::Type1Info;
                    // SAFETY: `buf` holds `argsz` bytes, aligned for the struct.
                    unsafe {
                        (*info).argsz = argsz;
                        (*info).flags = 0;
                        ioctl(container.as_fd(), k::IOMMU_GET_INFO, info)?;
                    }
                    // SAFETY: filled by the kernel above.
                    let wanted = unsafe { (*info).argsz };
                    if wanted <= argsz {
                        // SAFETY: plain bytes of `buf`.
                        let bytes = unsafe {
                            std::slice::from_raw_parts(buf.as_ptr() as *const u8, argsz as usize)
                        };
                        return Ok(k::type1_iova_ranges(bytes));
                    }
                    argsz = wanted;
                }
                Ok(None)
            }
            Iommu::Iommufd { iommufd, ioas } => {
                let mut ranges: Vec<k::IovaRange> = vec![];
                loop {
                    let mut q = k::IoasIovaRanges {
                        size: size_of::<k::IoasIovaRanges>(),
                        ioas_id: *ioas,
                        num_iovas: ranges.len() as u32,
                        allowed_iovas: ranges.as_mut_ptr() as u64,
                        ..Default::default()
                    };
                    // SAFETY: IOVA_RANGES writes at most `num_iovas` ranges to `allowed_iovas`.
                    match unsafe { ioctl(iommufd.as_fd(), k::IOMMUFD_IOAS_IOVA_RANGES, &mut q) } {
                        Ok(_) => {
                            ranges.truncate(q.num_iovas as usize);
                            return Ok(Some(ranges.iter().map(|r| r.start..=r.last).collect()));
                        }
                        Err(e) if e.raw_os_error() == Some(libc::EMSGSIZE) => {
                            ranges = vec![k::IovaRange::default(); q.num_iovas as usize];
                        }
                        Err(e) => return Err(e),
                    }
                }
            }
        }
    }

    unsafe fn iommu_map(
        &self,
        iova: u64,
        len: usize,
        memory: *const u8,
        access: CardAccess,
    ) -> io::Result<()> {
        let writes = access == CardAccess::ReadWrite;
        match &self.iommu {
            Iommu::Container { container, .. } => {
                let mut m = k::DmaMapArgs {
                    argsz: size_of::<k::DmaMapArgs>(),
                    flags: k::DMA_MAP_FLAG_READ | if writes { k::DMA_MAP_FLAG_WRITE } else { 0 },
                    vaddr: memory as u64,
                    iova,
                    size: len as u64,
                };
                // SAFETY: MAP_DMA reads a vfio_iommu_type1_dma_map; the caller keeps the memory.
                unsafe { ioctl(container.as_fd(), k::IOMMU_MAP_DMA, &mut m)? };
            }
            Iommu::Iommufd { iommufd, ioas } => {
                let mut m = k::IoasMap {
                    size: size_of::<k::IoasMap>(),
                    flags: k::IOAS_MAP_FIXED_IOVA
                        | k::IOAS_MAP_READABLE
                        | if writes { k::IOAS_MAP_WRITEABLE } else { 0 },
                    ioas_id: *ioas,
                    user_va: memory as u64,
                    length: len as u64,
                    iova,
                    ..Default::default()
                };
                // SAFETY: IOAS_MAP reads an iommu_ioas_map; the caller keeps the memory.
                unsafe { ioctl(iommufd.as_fd(), k::IOMMUFD_IOAS_MAP, &mut m)? };
            }
        }
        Ok(())
    }

    fn iommu_unmap(&self, iova: u64, len: usize) -> io::Result<u64> {
        match &self.iommu {
            Iommu::Container { container, .. } => {
                let mut u = k::DmaUnmapArgs {
                    argsz: size_of::<k::DmaUnmapArgs>(),
                    flags: 0,
                    iova,
                    size: len as u64,
                };
                // SAFETY: UNMAP_DMA reads and writes a vfio_iommu_type1_dma_unmap.
                unsafe { ioctl(container.as_fd(), k::IOMMU_UNMAP_DMA, &mut u)? };
                Ok(u.size)
            }
            Iommu::Iommufd { iommufd, ioas } => {
                let mut u = k::IoasUnmap {
                    size: size_of::<k::IoasUnmap>(),
                    ioas_id: *ioas,
                    iova,
                    length: len as u64,
                };
                // SAFETY: IOAS_UNMAP reads and writes an iommu_ioas_unmap.
                unsafe { ioctl(iommufd.as_fd(), k::IOMMUFD_IOAS_UNMAP, &mut u)? };
                Ok(u.length)
            }
        }
    }

    fn irq_vectors(&self, kind: IrqKind) -> usize {
        self.irq_counts[Self::irq_index(kind) as usize] as usize
    }

    fn irq_enable(&self, kind: IrqKind, eventfd: RawFd) -> io::Result<()> {
        let index = Self::irq_index(kind);
        let mut set = k::IrqSet {
            argsz: size_of::<k::IrqSet>(),
            flags: k::IRQ_SET_DATA_EVENTFD | k::IRQ_SET_ACTION_TRIGGER,
            index,
            start: 0,
            count: 1,
            eventfd,
        };
        // SAFETY: SET_IRQS reads a vfio_irq_set and the one eventfd after it.
        unsafe { ioctl(self.device.as_fd(), k::DEVICE_SET_IRQS, &mut set)? };
        Ok(())
    }

    fn irq_unmask_intx(&self) -> io::Result<()> {
        let mut set = k::IrqSet {
            argsz: k::IRQ_SET_BYTES,
            flags: k::IRQ_SET_DATA_NONE | k::IRQ_SET_ACTION_UNMASK,
            index: k::PCI_INTX_IRQ_INDEX,
            start: 0,
            count: 1,
            eventfd: 0,
        };
        // SAFETY: SET_IRQS reads a vfio_irq_set without data (argsz says so).
        unsafe { ioctl(self.device.as_fd(), k::DEVICE_SET_IRQS, &mut set)? };
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;

    use super::*;

    /// A sysfs and /dev laid out as the kernel lays them out for a card bound to vfio-pci in
    /// IOMMU group 7, with a VFIO device node `vfio3`.
    fn tree(dir: &Path, cdev: bool, container: bool) -> SystemVfio {
        let sys = dir.join("sys");
        let dev = dir.join("dev");
        let card = sys.join("bus/pci/devices/0000:03:00.0");
        std::fs::create_dir_all(&card).unwrap();
        std::fs::create_dir_all(sys.join("bus/pci/drivers/vfio-pci")).unwrap();
        let group = sys.join("kernel/iommu_groups/7/devices");
        std::fs::create_dir_all(&group).unwrap();
        symlink(sys.join("bus/pci/drivers/vfio-pci"), card.join("driver")).unwrap();
        symlink(sys.join("kernel/iommu_groups/7"), card.join("iommu_group")).unwrap();
        symlink(&card, group.join("0000:03:00.0")).unwrap();
        std::fs::create_dir_all(dev.join("vfio/devices")).unwrap();
        if cdev {
            std::fs::create_dir_all(card.join("vfio-dev/vfio3")).unwrap();
            std::fs::write(dev.join("vfio/devices/vfio3"), "").unwrap();
            std::fs::write(dev.join("iommu"), "").unwrap();
        }
        if container {
            std::fs::write(dev.join("vfio/vfio"), "").unwrap();
            std::fs::write(dev.join("vfio/7"), "").unwrap();
        }
        SystemVfio { root: sys, dev }
    }

    #[test]
    fn sysfs_and_dev_are_read_as_the_kernel_lays_them_out() {
        let dir = std::env::temp_dir().join(format!("nanet-sysfs-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let s = tree(&dir.join("both"), true, true);
        let card = "0000:03:00.0";
        assert!(s.device_exists(card) && !s.device_exists("0000:04:00.0"));
        assert_eq!(s.driver(card).as_deref(), Some("vfio-pci"));
        assert_eq!(s.iommu_group(card), Some(7));
        assert_eq!(
            s.group_members(7),
            [(card.to_string(), Some("vfio-pci".to_string()))]
        );
        assert!(s.container_nodes_exist(7) && !s.container_nodes_exist(8));
        assert_eq!(s.cdev(card).as_deref(), Some("vfio3"));
        assert!(s.iommufd_exists());
        // A kernel without the legacy container; one without the device node.
        let s = tree(&dir.join("cdev"), true, false);
        assert!(!s.container_nodes_exist(7));
        assert_eq!(s.cdev(card).as_deref(), Some("vfio3"));
        let s = tree(&dir.join("container"), false, true);
        assert_eq!(s.cdev(card), None);
        assert!(!s.iommufd_exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn cap_ipc_lock_is_read_from_the_effective_set() {
        let status =
            |eff: &str| format!("CapInh:\t0000000000004000\nCapEff:\t{eff}\nSeccomp:\t0\n");
        assert!(has_cap_ipc_lock(&status("000001ffffffffff")), "root");
        assert!(
            has_cap_ipc_lock(&status("0000000000004000")),
            "CAP_IPC_LOCK alone"
        );
        assert!(
            !has_cap_ipc_lock(&status("0000000000003fff")),
            "all below it"
        );
        assert!(!has_cap_ipc_lock(&status("0000000000000000")), "a user");
        assert!(!has_cap_ipc_lock("Name:\tx\n"), "no CapEff line");
    }
}

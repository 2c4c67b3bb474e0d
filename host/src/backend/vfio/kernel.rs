//! The kernel's VFIO and iommufd interface as this library calls it: request numbers, argument
//! structs and flags, from the kernel's `include/uapi/linux/vfio.h` and `iommufd.h` (sizes and
//! offsets checked in the tests below against those headers), and an `ioctl` that keeps errno.

use std::io;
use std::ops::RangeInclusive;
use std::os::fd::{AsRawFd, BorrowedFd};

/// Every VFIO and iommufd request is `_IO(';', nr)`: no size nor direction bits (the struct's
/// own `argsz`/`size` field carries its size).
const fn io(nr: u64) -> u64 {
    (b';' as u64) << 8 | nr
}

pub const GET_API_VERSION: u64 = io(100);
pub const CHECK_EXTENSION: u64 = io(101);
pub const SET_IOMMU: u64 = io(102);
pub const GROUP_GET_STATUS: u64 = io(103);
pub const GROUP_SET_CONTAINER: u64 = io(104);
pub const GROUP_GET_DEVICE_FD: u64 = io(106);
pub const DEVICE_GET_INFO: u64 = io(107);
pub const DEVICE_GET_REGION_INFO: u64 = io(108);
pub const DEVICE_GET_IRQ_INFO: u64 = io(109);
pub const DEVICE_SET_IRQS: u64 = io(110);
pub const DEVICE_RESET: u64 = io(111);
pub const IOMMU_GET_INFO: u64 = io(112);
pub const IOMMU_MAP_DMA: u64 = io(113);
pub const IOMMU_UNMAP_DMA: u64 = io(114);
pub const DEVICE_BIND_IOMMUFD: u64 = io(118);
pub const DEVICE_ATTACH_IOMMUFD_PT: u64 = io(119);
pub const IOMMUFD_DESTROY: u64 = io(0x80);
pub const IOMMUFD_IOAS_ALLOC: u64 = io(0x81);
pub const IOMMUFD_IOAS_IOVA_RANGES: u64 = io(0x84);
pub const IOMMUFD_IOAS_MAP: u64 = io(0x85);
pub const IOMMUFD_IOAS_UNMAP: u64 = io(0x86);

pub const API_VERSION: i32 = 0;
pub const TYPE1_IOMMU: u64 = 1;
pub const TYPE1V2_IOMMU: u64 = 3;
pub const GROUP_FLAGS_VIABLE: u32 = 1 << 0;
pub const DEVICE_FLAGS_RESET: u32 = 1 << 0;
pub const REGION_INFO_FLAG_MMAP: u32 = 1 << 2;
pub const PCI_BAR0_REGION_INDEX: u32 = 0;
pub const PCI_CONFIG_REGION_INDEX: u32 = 7;
pub const PCI_INTX_IRQ_INDEX: u32 = 0;
pub const PCI_MSI_IRQ_INDEX: u32 = 1;
pub const PCI_MSIX_IRQ_INDEX: u32 = 2;
pub const IRQ_SET_DATA_NONE: u32 = 1 << 0;
pub const IRQ_SET_DATA_EVENTFD: u32 = 1 << 2;
pub const IRQ_SET_ACTION_UNMASK: u32 = 1 << 4;
pub const IRQ_SET_ACTION_TRIGGER: u32 = 1 << 5;
pub const IOMMU_INFO_CAPS: u32 = 1 << 1;
pub const IOMMU_TYPE1_INFO_CAP_IOVA_RANGE: u16 = 1;
pub const DMA_MAP_FLAG_READ: u32 = 1 << 0;
pub const DMA_MAP_FLAG_WRITE: u32 = 1 << 1;
pub const IOAS_MAP_FIXED_IOVA: u32 = 1 << 0;
pub const IOAS_MAP_WRITEABLE: u32 = 1 << 1;
pub const IOAS_MAP_READABLE: u32 = 1 << 2;

/// `struct vfio_group_status`.
#[repr(C)]
#[derive(Default)]
pub struct GroupStatus {
    pub argsz: u32,
    pub flags: u32,
}

/// `struct vfio_device_info`.
#[repr(C)]
#[derive(Default)]
pub struct DeviceInfo {
    pub argsz: u32,
    pub flags: u32,
    pub num_regions: u32,
    pub num_irqs: u32,
    pub cap_offset: u32,
    pub pad: u32,
}

/// `struct vfio_region_info`.
#[repr(C)]
#[derive(Default)]
pub struct RegionInfo {
    pub argsz: u32,
    pub flags: u32,
    pub index: u32,
    pub cap_offset: u32,
    pub size: u64,
    pub offset: u64,
}

/// `struct vfio_irq_info`.
#[repr(C)]
#[derive(Default)]
pub struct IrqInfo {
    pub argsz: u32,
    pub flags: u32,
    pub index: u32,
    pub count: u32,
}

/// `struct vfio_irq_set` with room for one eventfd after it (`argsz` says whether it is there).
#[repr(C)]
#[derive(Default)]
pub struct IrqSet {
    pub argsz: u32,
    pub flags: u32,
    pub index: u32,
    pub start: u32,
    pub count: u32,
    pub eventfd: i32,
}

/// Size of `struct vfio_irq_set` without data.
pub const IRQ_SET_BYTES: u32 = 20;

/// `struct vfio_iommu_type1_info`; capabilities follow it when `flags` has
/// [`IOMMU_INFO_CAPS`].
#[repr(C)]
#[derive(Default)]
pub struct Type1Info {
    pub argsz: u32,
    pub flags: u32,
    pub iova_pgsizes: u64,
    pub cap_offset: u32,
    pub pad: u32,
}

/// `struct vfio_iommu_type1_dma_map`.
#[repr(C)]
#[derive(Default)]
pub struct DmaMapArgs {
    pub argsz: u32,
    pub flags: u32,
    pub vaddr: u64,
    pub iova: u64,
    pub size: u64,
}

/// `struct vfio_iommu_type1_dma_unmap` (the kernel writes the bytes it unmapped into `size`).
#[repr(C)]
#[derive(Default)]
pub struct DmaUnmapArgs {
    pub argsz: u32,
    pub flags: u32,
    pub iova: u64,
    pub size: u64,
}

/// `struct vfio_device_bind_iommufd` (without the newer token pointer).
#[repr(C)]
#[derive(Default)]
pub struct BindIommufd {
    pub argsz: u32,
    pub flags: u32,
    pub iommufd: i32,
    pub out_devid: u32,
}

/// `struct vfio_device_attach_iommufd_pt` (without the newer PASID).
#[repr(C)]
#[derive(Default)]
pub struct AttachIommufdPt {
    pub argsz: u32,
    pub flags: u32,
    pub pt_id: u32,
}

/// `struct iommu_ioas_alloc`.
#[repr(C)]
#[derive(Default)]
pub struct IoasAlloc {
    pub size: u32,
    pub flags: u32,
    pub out_ioas_id: u32,
}

/// `struct iommu_destroy`.
#[repr(C)]
#[derive(Default)]
pub struct Destroy {
    pub size: u32,
    pub id: u32,
}

/// `struct iommu_iova_range` (`last` inclusive).
#[repr(C)]
#[derive(Default, Clone, Copy)]
pub struct IovaRange {
    pub start: u64,
    pub last: u64,
}

/// `struct iommu_ioas_iova_ranges`.
#[repr(C)]
#[derive(Default)]
pub struct IoasIovaRanges {
    pub size: u32,
    pub ioas_id: u32,
    pub num_iovas: u32,
    pub reserved: u32,
    pub allowed_iovas: u64,
    pub out_iova_alignment: u64,
}

/// `struct iommu_ioas_map`.
#[repr(C)]
#[derive(Default)]
pub struct IoasMap {
    pub size: u32,
    pub flags: u32,
    pub ioas_id: u32,
    pub reserved: u32,
    pub user_va: u64,
    pub length: u64,
    pub iova: u64,
}

/// `struct iommu_ioas_unmap` (the kernel writes the bytes it unmapped into `length`).
#[repr(C)]
#[derive(Default)]
pub struct IoasUnmap {
    pub size: u32,
    pub ioas_id: u32,
    pub iova: u64,
    pub length: u64,
}

/// The size of `T` as the `argsz`/`size` field wants it.
pub fn size_of<T>() -> u32 {
    std::mem::size_of::<T>() as u32
}

/// `ioctl(fd, request, arg)`, the kernel's errno kept in the error.
///
/// # Safety
/// `arg` must be what the kernel expects for `request` (the struct it reads and writes).
pub unsafe fn ioctl<T>(fd: BorrowedFd<'_>, request: u64, arg: *mut T) -> io::Result<i32> {
    // SAFETY: the caller passes the argument `request` takes.
    let r = unsafe { libc::ioctl(fd.as_raw_fd(), request as _, arg) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(r)
}

/// `ioctl(fd, request, value)` for requests that take a plain value (or nothing).
///
/// # Safety
/// `request` must take a value, not a pointer (the kernel would write where `value` points).
pub unsafe fn ioctl_value(fd: BorrowedFd<'_>, request: u64, value: u64) -> io::Result<i32> {
    // SAFETY: the caller's request reads no memory of ours.
    let r = unsafe { libc::ioctl(fd.as_raw_fd(), request as _, value as libc::c_ulong) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(r)
}

/// The IOVA ranges of a `VFIO_IOMMU_GET_INFO` answer (`info` from its start, capabilities
/// included): `None` when the kernel reports none (its capability came with Linux 5.4).
pub fn type1_iova_ranges(info: &[u8]) -> Option<Vec<RangeInclusive<u64>>> {
    let u16_at = |at: usize| Some(u16::from_ne_bytes(info.get(at..at + 2)?.try_into().ok()?));
    let u32_at = |at: usize| Some(u32::from_ne_bytes(info.get(at..at + 4)?.try_into().ok()?));
    let u64_at = |at: usize| Some(u64::from_ne_bytes(info.get(at..at + 8)?.try_into().ok()?));
    if u32_at(4)? & IOMMU_INFO_CAPS == 0 {
        return None;
    }
    // The chain of `struct vfio_info_cap_header { u16 id; u16 version; u32 next; }`, `next`
    // from the start of the answer, 0 at the end; at most one lap through the buffer.
    let mut at = u32_at(16)? as usize;
    for _ in 0..info.len() / 8 {
        if at == 0 {
            break;
        }
        if u16_at(at)? == IOMMU_TYPE1_INFO_CAP_IOVA_RANGE {
            // `{ header; u32 nr_iovas; u32 reserved; { u64 start; u64 end; }[] }`, end inclusive.
            let n = u32_at(at + 8)? as usize;
            return (0..n)
                .map(|i| Some(u64_at(at + 16 + 16 * i)?..=u64_at(at + 24 + 16 * i)?))
                .collect();
        }
        at = u32_at(at + 4)? as usize;
    }
    None
}

#[cfg(test)]
mod tests {
    use std::mem::{offset_of, size_of};

    use super::*;

    /// Sizes and offsets as the kernel's uapi headers define them (x86_64 and aarch64 alike:
    /// only fixed-width fields, u64s at 8-byte offsets).
    #[test]
    fn structs_match_the_kernels_headers() {
        assert_eq!(size_of::<GroupStatus>(), 8);
        assert_eq!(size_of::<DeviceInfo>(), 24);
        assert_eq!(offset_of!(DeviceInfo, num_irqs), 12);
        assert_eq!(size_of::<RegionInfo>(), 32);
        assert_eq!(offset_of!(RegionInfo, size), 16);
        assert_eq!(offset_of!(RegionInfo, offset), 24);
        assert_eq!(size_of::<IrqInfo>(), 16);
        assert_eq!(offset_of!(IrqSet, eventfd), IRQ_SET_BYTES as usize);
        assert_eq!(size_of::<IrqSet>(), 24);
        assert_eq!(size_of::<Type1Info>(), 24);
        assert_eq!(offset_of!(Type1Info, cap_offset), 16);
        assert_eq!(size_of::<DmaMapArgs>(), 32);
        assert_eq!(offset_of!(DmaMapArgs, vaddr), 8);
        assert_eq!(size_of::<DmaUnmapArgs>(), 24);
        assert_eq!(offset_of!(DmaUnmapArgs, size), 16);
        assert_eq!(size_of::<BindIommufd>(), 16);
        assert_eq!(offset_of!(BindIommufd, out_devid), 12);
        assert_eq!(size_of::<AttachIommufdPt>(), 12);
        assert_eq!(size_of::<IoasAlloc>(), 12);
        assert_eq!(size_of::<Destroy>(), 8);
        assert_eq!(size_of::<IovaRange>(), 16);
        assert_eq!(size_of::<IoasIovaRanges>(), 32);
        assert_eq!(offset_of!(IoasIovaRanges, allowed_iovas), 16);
        assert_eq!(size_of::<IoasMap>(), 40);
        assert_eq!(offset_of!(IoasMap, user_va), 16);
        assert_eq!(offset_of!(IoasMap, iova), 32);
        assert_eq!(size_of::<IoasUnmap>(), 24);
        assert_eq!(offset_of!(IoasUnmap, length), 16);
    }

    #[test]
    fn request_numbers_are_the_kernels() {
        assert_eq!(GET_API_VERSION, 0x3B64);
        assert_eq!(DEVICE_RESET, 0x3B6F);
        assert_eq!(IOMMU_UNMAP_DMA, 0x3B72);
        assert_eq!(DEVICE_BIND_IOMMUFD, 0x3B76);
        assert_eq!(DEVICE_ATTACH_IOMMUFD_PT, 0x3B77);
        assert_eq!(IOMMUFD_IOAS_ALLOC, 0x3B81);
        assert_eq!(IOMMUFD_IOAS_UNMAP, 0x3B86);
    }

    /// A GET_INFO answer as type1 writes it: the fixed part, then a migration capability, then
    /// the IOVA ranges (the kernel's own order), each pointing at the next.
    #[test]
    fn iova_ranges_are_found_in_the_capability_chain() {
        let mut b = vec![0u8; 24 + 32 + 16 + 2 * 16];
        let put32 =
            |b: &mut Vec<u8>, at: usize, v: u32| b[at..at + 4].copy_from_slice(&v.to_ne_bytes());
        let put64 =
            |b: &mut Vec<u8>, at: usize, v: u64| b[at..at + 8].copy_from_slice(&v.to_ne_bytes());
        let n = b.len() as u32;
        put32(&mut b, 0, n);
        put32(&mut b, 4, IOMMU_INFO_CAPS | 1);
        put32(&mut b, 16, 24);
        // Migration (id 2) at 24, next at 56.
        b[24] = 2;
        put32(&mut b, 28, 56);
        b[56] = IOMMU_TYPE1_INFO_CAP_IOVA_RANGE as u8;
        put32(&mut b, 64, 2);
        put64(&mut b, 72, 0);
        put64(&mut b, 80, 0xfedf_ffff);
        put64(&mut b, 88, 0xfef0_0000);
        put64(&mut b, 96, (1 << 39) - 1);
        assert_eq!(
            type1_iova_ranges(&b),
            Some(vec![0..=0xfedf_ffff, 0xfef0_0000..=(1 << 39) - 1])
        );
        // Without capabilities (before Linux 5.4), or with a chain that runs off the end.
        put32(&mut b, 4, 1);
        assert_eq!(type1_iova_ranges(&b), None);
        put32(&mut b, 4, IOMMU_INFO_CAPS);
        put32(&mut b, 64, 9);
        assert_eq!(type1_iova_ranges(&b), None);
    }
}

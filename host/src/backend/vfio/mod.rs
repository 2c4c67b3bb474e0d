//! The VFIO backend: a real card bound to vfio-pci.
//!
//! Everything that touches the system goes through [`VfioSys`] (sysfs facts, limits) and
//! [`VfioDevice`] (the opened device: BAR0, IOMMU, interrupts, config space), so the backend's own
//! logic, the order of the bring-up and every message a user can hit, is tested with a fake
//! (`tests`) that fails the way the kernel does (errno values). The real implementations
//! (`system.rs`) read `/sys` and call the kernel's VFIO and iommufd ioctls (`kernel.rs`) through
//! either of its two paths, chosen at open and reported by [`Backend::describe`]:
//! - the legacy container (`/dev/vfio/vfio` and the group's `/dev/vfio/<group>`, type1 IOMMU):
//!   the only one that can map another device's memory (a GPU's BAR) for the card;
//! - the VFIO device node with iommufd (`/dev/vfio/devices/vfioN` and `/dev/iommu`, Linux 6.6),
//!   on kernels built without the legacy container.

mod kernel;
mod system;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::io;
use std::ops::RangeInclusive;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::Mutex;

use nanet_contract::bar0::BAR0_BYTES;

pub use self::system::SystemVfio;
use crate::backend::{Backend, CardAccess, DmaMap, MemoryKind};
use crate::error::{Error, Result};

/// Whether `name` looks like a PCI address `dddd:bb:dd.f` (or `bb:dd.f`).
pub fn is_pci_address(name: &str) -> bool {
    let parts: Vec<&str> = name.split(':').collect();
    let hex = |s: &str, n: usize| s.len() == n && s.chars().all(|c| c.is_ascii_hexdigit());
    let (dom, bus, devfn) = match parts.as_slice() {
        [d, b, f] => (Some(*d), *b, *f),
        [b, f] => (None, *b, *f),
        _ => return false,
    };
    let Some((dev, func)) = devfn.split_once('.') else {
        return false;
    };
    dom.is_none_or(|d| hex(d, 4)) && hex(bus, 2) && hex(dev, 2) && hex(func, 1)
}

/// `bb:dd.f` becomes `0000:bb:dd.f`.
fn full_address(address: &str) -> String {
    // sysfs names are lower case.
    let address = address.to_ascii_lowercase();
    if address.matches(':').count() == 1 {
        format!("0000:{address}")
    } else {
        address
    }
}

/// Interrupt mechanisms, in the order they are tried.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum IrqKind {
    MsiX,
    Msi,
    Intx,
}

/// How the device was opened: which of the kernel's two VFIO paths, and so which IOMMU
/// interface maps memory for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum VfioPath {
    /// The legacy container: `/dev/vfio/vfio` with the group's `/dev/vfio/<group>`.
    Container { group: u32 },
    /// The VFIO device node (`/dev/vfio/devices/<name>`) bound to iommufd (`/dev/iommu`).
    Cdev { name: String },
}

/// The step of opening a device that failed, for advice that fits.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum OpenStep {
    /// Opening the device nodes (`/dev/vfio/...`, `/dev/iommu`).
    Nodes,
    /// The group is not viable (`VFIO_GROUP_GET_STATUS`): a member has a host driver.
    GroupNotViable,
    /// Attaching the group to the container (`VFIO_GROUP_SET_CONTAINER`).
    SetContainer,
    /// Setting the type1 IOMMU (`VFIO_SET_IOMMU`).
    SetIommu,
    /// Getting the device from the group (`VFIO_GROUP_GET_DEVICE_FD`).
    GetDevice,
    /// Binding the device node to iommufd (`VFIO_DEVICE_BIND_IOMMUFD`).
    Bind,
    /// Allocating an IOAS and attaching the device to it.
    Attach,
    /// Reading the device's regions and interrupts, mapping BAR0.
    Describe,
}

/// Why opening a device failed: the step, and the kernel's error.
#[derive(Debug)]
pub struct OpenFailure {
    pub step: OpenStep,
    pub error: io::Error,
}

impl OpenFailure {
    pub fn at(step: OpenStep) -> impl FnOnce(io::Error) -> OpenFailure {
        move |error| OpenFailure { step, error }
    }
}

/// The IOMMU interface behind an opened device.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum IommuKind {
    /// The legacy container with the type1 IOMMU driver.
    Type1,
    /// `/dev/vfio/vfio` served by iommufd's emulation of the container (kernels built with
    /// CONFIG_IOMMUFD_VFIO_CONTAINER): maps ordinary memory only.
    EmulatedType1,
    /// iommufd through the VFIO device node: maps ordinary memory only.
    Iommufd,
}

impl IommuKind {
    fn describe(self) -> &'static str {
        match self {
            IommuKind::Type1 => "type1 container",
            IommuKind::EmulatedType1 => "iommufd's container emulation",
            IommuKind::Iommufd => "iommufd",
        }
    }
}

/// The facts and calls the backend needs from the system.
pub trait VfioSys: Send + Sync {
    fn device_exists(&self, address: &str) -> bool;
    /// The driver the device is bound to.
    fn driver(&self, address: &str) -> Option<String>;
    fn iommu_group(&self, address: &str) -> Option<u32>;
    /// Every device of an IOMMU group, with its driver.
    fn group_members(&self, group: u32) -> Vec<(String, Option<String>)>;
    /// Whether the legacy container's nodes exist: `/dev/vfio/vfio` and `/dev/vfio/<group>`.
    fn container_nodes_exist(&self, group: u32) -> bool;
    /// The device's VFIO device node name (`vfio3` for `/dev/vfio/devices/vfio3`), if the
    /// kernel made one.
    fn cdev(&self, address: &str) -> Option<String>;
    /// Whether `/dev/iommu` exists.
    fn iommufd_exists(&self) -> bool;
    /// RLIMIT_MEMLOCK in bytes (None: unlimited).
    fn memlock_limit(&self) -> Option<u64>;
    /// Whether this process has CAP_IPC_LOCK (the kernel then skips the RLIMIT_MEMLOCK check).
    fn can_lock_memory(&self) -> bool;
    fn open(
        &self,
        address: &str,
        path: &VfioPath,
    ) -> std::result::Result<Box<dyn VfioDevice>, OpenFailure>;
}

/// An opened vfio-pci device: its config space, BAR0, interrupts, and the IOMMU behind it. Every
/// error is the kernel's errno.
pub trait VfioDevice: Send + Sync {
    fn iommu_kind(&self) -> IommuKind;
    /// Whether the device has a function-level reset (`VFIO_DEVICE_FLAGS_RESET`): vfio-pci
    /// already reset it at open when it has.
    fn can_reset(&self) -> bool;
    /// `VFIO_DEVICE_RESET` (EINVAL on a device that cannot reset).
    fn reset(&self) -> io::Result<()>;
    fn config_read16(&self, offset: u64) -> io::Result<u16>;
    fn config_write16(&self, offset: u64, value: u16) -> io::Result<()>;
    fn config_read8(&self, offset: u64) -> io::Result<u8>;
    /// Length of BAR0 (None: the device has none).
    fn bar0_len(&self) -> Option<u64>;
    fn bar0_read32(&self, offset: u64) -> io::Result<u32>;
    fn bar0_write32(&self, offset: u64, value: u32) -> io::Result<()>;
    /// The IOVA ranges the IOMMU accepts (inclusive), or None if the kernel does not say
    /// (type1 before Linux 5.4).
    fn iova_ranges(&self) -> io::Result<Option<Vec<RangeInclusive<u64>>>>;
    /// # Safety
    /// `memory` must stay valid for `len` bytes until unmapped.
    unsafe fn iommu_map(
        &self,
        iova: u64,
        len: usize,
        memory: *const u8,
        access: CardAccess,
    ) -> io::Result<()>;
    /// Returns the bytes the kernel unmapped.
    fn iommu_unmap(&self, iova: u64, len: usize) -> io::Result<u64>;
    fn irq_vectors(&self, kind: IrqKind) -> usize;
    fn irq_enable(&self, kind: IrqKind, eventfd: RawFd) -> io::Result<()>;
    /// Unmasks INTx, which the kernel masks when it fires (`VFIO_IRQ_INFO_AUTOMASKED`).
    fn irq_unmask_intx(&self) -> io::Result<()>;
}

/// What the card may use when the kernel does not report the IOMMU's ranges: 4 GiB to 512 GiB,
/// inside the smallest aperture of common IOMMUs (39 bits) and above the x86 MSI window.
const IOVA_RANGE_UNREPORTED: RangeInclusive<u64> = (1 << 32)..=(1 << 39) - 1;

/// Config space: command register bits, capability list, PCIe capability.
const COMMAND: u64 = 0x04;
const COMMAND_MEMORY: u16 = 1 << 1;
const COMMAND_BUS_MASTER: u16 = 1 << 2;
const STATUS: u64 = 0x06;
const STATUS_CAP_LIST: u16 = 1 << 4;
const CAP_POINTER: u64 = 0x34;
const CAP_ID_PCIE: u8 = 0x10;
/// Device Control, in the PCIe capability.
const PCIE_DEVICE_CONTROL: u64 = 0x08;

/// The card's Max Payload Size from its PCIe capability (128 when it cannot be read).
fn max_payload(dev: &dyn VfioDevice) -> io::Result<u32> {
    if dev.config_read16(STATUS)? & STATUS_CAP_LIST == 0 {
        return Ok(128);
    }
    let mut at = dev.config_read8(CAP_POINTER)? as u64 & !3;
    for _ in 0..48 {
        if at == 0 {
            break;
        }
        if dev.config_read8(at)? == CAP_ID_PCIE {
            let control = dev.config_read16(at + PCIE_DEVICE_CONTROL)?;
            return Ok(128 << ((control >> 5) & 7));
        }
        at = dev.config_read8(at + 1)? as u64 & !3;
    }
    Ok(128)
}

/// Checks everything that can be checked before opening, each failure saying what to do.
fn check_prerequisites(sys: &dyn VfioSys, address: &str) -> Result<u32> {
    if !sys.device_exists(address) {
        return Err(Error::Vfio(format!(
            "no PCI device {address} (see `lspci -D -d 1172:` for the card's address)"
        )));
    }
    let driver = sys.driver(address);
    if driver.as_deref() != Some("vfio-pci") {
        return Err(Error::Vfio(format!(
            "{address} is bound to {}, not vfio-pci: as root, `modprobe vfio-pci; echo vfio-pci > \
             /sys/bus/pci/devices/{address}/driver_override; echo {address} > \
             /sys/bus/pci/drivers_probe` (unbind it from its driver first)",
            driver.as_deref().unwrap_or("no driver"),
        )));
    }
    let Some(group) = sys.iommu_group(address) else {
        return Err(Error::Vfio(format!(
            "{address} has no IOMMU group: the IOMMU is off; enable VT-d/AMD-Vi in the firmware \
             and boot with intel_iommu=on iommu=pt (AMD: check the firmware setting, or \
             amd_iommu=force_enable)"
        )));
    };
    let members = sys.group_members(group);
    // A GPU in the card's group: the kernel groups devices whose traffic nothing isolates. The
    // card's writes into GPU memory carry IOVAs that only the IOMMU at the root complex
    // translates, so they must not be routed to the GPU on the way.
    if let Some((gpu, driver)) = members
        .iter()
        .find(|(_, d)| matches!(d.as_deref(), Some("nvidia" | "nouveau" | "amdgpu")))
    {
        return Err(Error::Vfio(format!(
            "the GPU {gpu} ({}) shares IOMMU group {group} with {address}: nothing between them \
             isolates their traffic (a PCIe switch port or root port without ACS Request \
             Redirect, or a conventional PCI bridge), so the card's DMA could reach the GPU \
             untranslated. Do not bind the GPU to vfio-pci: enable ACS on that switch (firmware \
             setting), or move the card to a slot where it has a group of its own",
            driver.as_deref().unwrap_or_default()
        )));
    }
    let blockers: Vec<String> = members
        .into_iter()
        .filter(|(_, d)| {
            // The kernel accepts members bound to vfio-pci, to no driver, or bridges' drivers.
            !matches!(
                d.as_deref(),
                None | Some("vfio-pci" | "pcieport" | "pci-stub")
            )
        })
        .map(|(a, d)| format!("{a} ({})", d.unwrap_or_default()))
        .collect();
    if !blockers.is_empty() {
        return Err(Error::Vfio(format!(
            "IOMMU group {group} is not viable: {} must be bound to vfio-pci or unbound too (or \
             the card moved to a slot with a group of its own)",
            blockers.join(", ")
        )));
    }
    Ok(group)
}

/// The legacy container where the kernel has it (the GPU path needs it), else the VFIO device
/// node with iommufd.
fn choose_path(sys: &dyn VfioSys, address: &str, group: u32) -> Result<VfioPath> {
    if sys.container_nodes_exist(group) {
        return Ok(VfioPath::Container { group });
    }
    match sys.cdev(address) {
        Some(name) if sys.iommufd_exists() => Ok(VfioPath::Cdev { name }),
        Some(name) => Err(Error::Vfio(format!(
            "{address} has the VFIO device node /dev/vfio/devices/{name} but /dev/iommu does not \
             exist: load iommufd (`modprobe iommufd`)"
        ))),
        None => Err(Error::Vfio(format!(
            "no VFIO node for {address}: neither /dev/vfio/vfio with /dev/vfio/{group} nor \
             /dev/vfio/devices/vfioN; load the modules (`modprobe vfio-pci`), and on a kernel \
             built without the legacy container (CONFIG_VFIO_CONTAINER=n) enable \
             CONFIG_VFIO_DEVICE_CDEV (Linux 6.6 or later)"
        ))),
    }
}

/// Why `open` failed, and what to do.
fn open_error(address: &str, path: &VfioPath, f: OpenFailure) -> Error {
    use OpenStep as S;
    let nodes = match path {
        VfioPath::Container { group } => format!("/dev/vfio/vfio and /dev/vfio/{group}"),
        VfioPath::Cdev { name } => format!("/dev/vfio/devices/{name} and /dev/iommu"),
    };
    let group = match path {
        VfioPath::Container { group } => format!("IOMMU group {group}"),
        VfioPath::Cdev { .. } => "the card's IOMMU group".into(),
    };
    let e = &f.error;
    Error::Vfio(match (f.step, e.raw_os_error()) {
        (S::Nodes, Some(libc::EACCES | libc::EPERM)) => format!(
            "no permission to open {nodes}: run as root, or give your user the device (`chown \
             $USER` on them)"
        ),
        (S::Nodes | S::Bind, Some(libc::EBUSY)) | (S::Bind, Some(libc::EINVAL)) => format!(
            "{address} is in use by another process (another nanet program, or a VM), through \
             {nodes}"
        ),
        (S::GroupNotViable, _) | (S::SetContainer, Some(libc::EPERM | libc::EBUSY)) => format!(
            "{group} is not viable: a device of it is bound to a host driver (see \
             /sys/kernel/iommu_groups/); bind it to vfio-pci or unbind it"
        ),
        (S::SetIommu | S::Bind | S::GetDevice, Some(libc::EPERM)) => format!(
            "the kernel refuses {address} because interrupt remapping is off: enable it (VT-d / \
             AMD-Vi interrupt remapping in the firmware); `dmesg` names the module option that \
             allows unsafe interrupts instead"
        ),
        (S::SetIommu, Some(libc::ENODEV)) => format!(
            "no type1 IOMMU driver for the VFIO container: `modprobe vfio_iommu_type1` ({e})"
        ),
        (step, _) => format!("opening {address} through {nodes} ({step:?}): {e}"),
    })
}

/// A card bound to vfio-pci.
pub struct VfioBackend {
    address: String,
    device: Box<dyn VfioDevice>,
    irq: OwnedFd,
    irq_kind: IrqKind,
    max_payload: u32,
    iova_ranges: Vec<RangeInclusive<u64>>,
    memlock: Option<u64>,
    /// CAP_IPC_LOCK: the kernel does not check RLIMIT_MEMLOCK.
    can_lock_memory: bool,
    /// IOVA -> (length, charged to RLIMIT_MEMLOCK) of what is mapped.
    mapped: Mutex<BTreeMap<u64, (usize, bool)>>,
}

impl VfioBackend {
    /// Opens the card at `address` (`0000:03:00.0` or `03:00.0`).
    pub fn open(address: &str) -> Result<Self> {
        Self::open_with(&SystemVfio::default(), address)
    }

    /// Brings the card up through `sys`: prerequisites, the VFIO path, open, reset (only where the
    /// device has one), memory space on and bus mastering off (the library turns it on once it
    /// has stopped the card: [`Backend::enable_bus_master`]), BAR0 size, IOVA ranges, interrupt
    /// (MSI-X, else MSI, else INTx), max payload size.
    pub fn open_with(sys: &dyn VfioSys, address: &str) -> Result<Self> {
        let address = full_address(address);
        let group = check_prerequisites(sys, &address)?;
        let path = choose_path(sys, &address, group)?;
        let device = sys
            .open(&address, &path)
            .map_err(|f| open_error(&address, &path, f))?;
        let fails = |what: &str| {
            let address = address.clone();
            let what = what.to_string();
            move |e: io::Error| Error::Vfio(format!("{what} of {address}: {e}"))
        };
        // vfio-pci reset the card at open if it can; a reset now also stops whatever an earlier
        // program of this open left running. A card without one is stopped by the library.
        if device.can_reset() {
            device
                .reset()
                .map_err(fails("resetting (VFIO_DEVICE_RESET)"))?;
        }
        let command = device
            .config_read16(COMMAND)
            .map_err(fails("reading the command register"))?;
        device
            .config_write16(COMMAND, (command | COMMAND_MEMORY) & !COMMAND_BUS_MASTER)
            .map_err(fails("enabling memory space"))?;
        match device.bar0_len() {
            Some(n) if n >= BAR0_BYTES => {}
            other => {
                return Err(Error::Vfio(format!(
                    "{address} has a BAR0 of {} bytes; a nanet card has {BAR0_BYTES}: wrong \
                     device, or the FPGA is not loaded with nanet",
                    other.unwrap_or(0)
                )))
            }
        }
        let iova_ranges = device
            .iova_ranges()
            .map_err(fails("reading the IOMMU's IOVA ranges"))?
            .unwrap_or_else(|| vec![IOVA_RANGE_UNREPORTED]);
        // SAFETY: plain syscall; the fd is owned below.
        let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
        if fd < 0 {
            return Err(io::Error::last_os_error().into());
        }
        // SAFETY: a fresh fd.
        let irq = unsafe { OwnedFd::from_raw_fd(fd) };
        let mut last = None;
        let mut irq_kind = None;
        for kind in [IrqKind::MsiX, IrqKind::Msi, IrqKind::Intx] {
            if device.irq_vectors(kind) == 0 {
                continue;
            }
            match device.irq_enable(kind, irq.as_raw_fd()) {
                Ok(()) => {
                    irq_kind = Some(kind);
                    break;
                }
                Err(e) => last = Some(format!("{kind:?}: {e}")),
            }
        }
        let Some(irq_kind) = irq_kind else {
            return Err(Error::Vfio(format!(
                "{address}: no interrupt could be enabled ({})",
                last.unwrap_or_else(|| "the device offers none".into())
            )));
        };
        let max_payload = max_payload(&*device).map_err(fails("reading the PCIe capability"))?;
        Ok(Self {
            address,
            device,
            irq,
            irq_kind,
            max_payload,
            iova_ranges,
            memlock: sys.memlock_limit(),
            can_lock_memory: sys.can_lock_memory(),
            mapped: Mutex::new(BTreeMap::new()),
        })
    }

    pub fn irq_kind(&self) -> IrqKind {
        self.irq_kind
    }

    pub fn iommu_kind(&self) -> IommuKind {
        self.device.iommu_kind()
    }

    fn memlock_error(&self, want: u64) -> Error {
        Error::Vfio(format!(
            "pinning {want} bytes for DMA exceeds RLIMIT_MEMLOCK ({}): raise it (`ulimit -l \
             unlimited`, or memlock in /etc/security/limits.conf), run with CAP_IPC_LOCK, or \
             register fewer buffers",
            self.memlock
                .map_or("unlimited".to_string(), |l| format!("{l} bytes"))
        ))
    }

    /// Why the kernel refused a mapping, and what to do. `pinned_with_it` is what the process
    /// would have had pinned for the card with this mapping.
    fn map_error(
        &self,
        e: io::Error,
        len: usize,
        iova: u64,
        how: DmaMap,
        pinned_with_it: u64,
    ) -> Error {
        let device_memory = how.kind == MemoryKind::DeviceMemory;
        match e.raw_os_error() {
            Some(libc::ENOMEM) if !device_memory => self.memlock_error(pinned_with_it),
            Some(libc::ENOSPC) => Error::Vfio(format!(
                "the IOMMU refused a mapping of {len} bytes: the type1 driver's limit of mappings \
                 is reached (raise it: `modprobe vfio_iommu_type1 dma_entry_limit=1048576`), or \
                 use hugepages (NANET_HUGEPAGES=1) and fewer CLOPs"
            )),
            Some(libc::EFAULT) if device_memory => Error::Vfio(format!(
                "the kernel could not map {len} bytes of device memory for the card at {iova:#x} \
                 ({e}): the memory must be a PFN mapping of another device's BAR (GDRCopy's \
                 gdr_map) made in this process"
            )),
            _ => Error::Vfio(format!(
                "mapping {len} bytes at bus address {iova:#x} for {}: {e}",
                self.address
            )),
        }
    }
}

impl Backend for VfioBackend {
    fn describe(&self) -> String {
        format!(
            "vfio {} ({}, {:?}{})",
            self.address,
            self.device.iommu_kind().describe(),
            self.irq_kind,
            if self.device.can_reset() {
                ", function reset"
            } else {
                ", no function reset"
            }
        )
    }

    fn read32(&self, offset: u64) -> Result<u32> {
        Ok(self.device.bar0_read32(offset)?)
    }

    fn write32(&self, offset: u64, value: u32) -> Result<()> {
        Ok(self.device.bar0_write32(offset, value)?)
    }

    unsafe fn map_dma(&self, memory: *mut u8, len: usize, iova: u64, how: DmaMap) -> Result<()> {
        if how.kind == MemoryKind::DeviceMemory && self.device.iommu_kind() != IommuKind::Type1 {
            return Err(Error::Vfio(format!(
                "{} is opened through {}, which cannot map another device's memory (a GPU's \
                 BAR) for the card: GPU CLOPs need the legacy VFIO container with the type1 \
                 IOMMU driver (a kernel with CONFIG_VFIO_CONTAINER=y and \
                 CONFIG_VFIO_IOMMU_TYPE1, `modprobe vfio_iommu_type1`)",
                self.address,
                self.device.iommu_kind().describe()
            )));
        }
        // The kernel charges pinned pages, not another device's memory, and skips the check
        // for a process with CAP_IPC_LOCK.
        let charged = how.kind == MemoryKind::Pages;
        let mut mapped = self.mapped.lock().unwrap();
        let pinned_with_it: u64 = mapped
            .values()
            .filter(|(_, c)| *c)
            .map(|(l, _)| *l as u64)
            .sum::<u64>()
            + if charged { len as u64 } else { 0 };
        if charged && !self.can_lock_memory && self.memlock.is_some_and(|l| pinned_with_it > l) {
            return Err(self.memlock_error(pinned_with_it));
        }
        // SAFETY: the caller keeps the memory valid until unmapped.
        match unsafe { self.device.iommu_map(iova, len, memory, how.access) } {
            Ok(()) => {
                mapped.insert(iova, (len, charged));
                Ok(())
            }
            Err(e) => Err(self.map_error(e, len, iova, how, pinned_with_it)),
        }
    }

    fn unmap_dma(&self, iova: u64, len: usize) -> Result<()> {
        let mut mapped = self.mapped.lock().unwrap();
        if mapped.get(&iova).map(|m| m.0) != Some(len) {
            return Err(Error::Memory(format!(
                "nothing of {len} bytes is mapped at {iova:#x}"
            )));
        }
        let unmapped = self.device.iommu_unmap(iova, len).map_err(|e| {
            Error::Vfio(format!(
                "unmapping {len} bytes at bus address {iova:#x} of {}: {e}",
                self.address
            ))
        })?;
        if unmapped != len as u64 {
            // The card may still reach what the kernel left: the caller keeps the memory.
            return Err(Error::Vfio(format!(
                "the kernel unmapped {unmapped} of the {len} bytes at bus address {iova:#x} of {}",
                self.address
            )));
        }
        mapped.remove(&iova);
        Ok(())
    }

    fn irq_fd(&self) -> RawFd {
        self.irq.as_raw_fd()
    }

    fn max_payload(&self) -> u32 {
        self.max_payload
    }

    fn iova_ranges(&self) -> Vec<RangeInclusive<u64>> {
        self.iova_ranges.clone()
    }

    fn enable_bus_master(&self) -> Result<()> {
        let command = self.device.config_read16(COMMAND)?;
        self.device
            .config_write16(COMMAND, command | COMMAND_MEMORY | COMMAND_BUS_MASTER)
            .map_err(|e| Error::Vfio(format!("enabling bus mastering of {}: {e}", self.address)))
    }

    fn interrupt_taken(&self) -> Result<()> {
        if self.irq_kind != IrqKind::Intx {
            return Ok(());
        }
        self.device.irq_unmask_intx().map_err(|e| {
            Error::Vfio(format!(
                "unmasking the INTx interrupt of {}: {e}",
                self.address
            ))
        })
    }
}

//! The VFIO backend: a real card bound to vfio-pci.
//!
//! Everything that touches the system goes through [`VfioSys`] (sysfs facts, limits) and
//! [`VfioDevice`] (the opened device: BAR0, IOMMU, interrupts, config space), so the backend's own
//! logic, the order of the bring-up and every message a user can hit, is tested with a fake
//! (`tests` below). The real implementations use `/sys` and the `pci-driver` crate.

use std::collections::BTreeMap;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use nanet_contract::bar0::BAR0_BYTES;

use crate::backend::Backend;
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
    if address.matches(':').count() == 1 {
        format!("0000:{address}")
    } else {
        address.to_string()
    }
}

/// Interrupt mechanisms, in the order they are tried.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum IrqKind {
    MsiX,
    Msi,
    Intx,
}

/// The facts and calls the backend needs from the system.
pub trait VfioSys: Send + Sync {
    fn device_exists(&self, address: &str) -> bool;
    /// The driver the device is bound to.
    fn driver(&self, address: &str) -> Option<String>;
    fn iommu_group(&self, address: &str) -> Option<u32>;
    /// Every device of an IOMMU group, with its driver.
    fn group_members(&self, group: u32) -> Vec<(String, Option<String>)>;
    /// Whether `/dev/vfio/<group>` exists.
    fn group_node_exists(&self, group: u32) -> bool;
    /// RLIMIT_MEMLOCK in bytes (None: unlimited).
    fn memlock_limit(&self) -> Option<u64>;
    fn open(&self, address: &str) -> io::Result<Box<dyn VfioDevice>>;
}

/// An opened vfio-pci device.
pub trait VfioDevice: Send + Sync {
    fn reset(&self) -> io::Result<()>;
    fn config_read16(&self, offset: u64) -> io::Result<u16>;
    fn config_write16(&self, offset: u64, value: u16) -> io::Result<()>;
    fn config_read8(&self, offset: u64) -> io::Result<u8>;
    /// Length of BAR0 (None: the device has none).
    fn bar0_len(&self) -> Option<u64>;
    fn bar0_read32(&self, offset: u64) -> io::Result<u32>;
    fn bar0_write32(&self, offset: u64, value: u32) -> io::Result<()>;
    /// # Safety
    /// `memory` must stay valid for `len` bytes until unmapped.
    unsafe fn iommu_map(&self, iova: u64, len: usize, memory: *const u8) -> io::Result<()>;
    fn iommu_unmap(&self, iova: u64, len: usize) -> io::Result<()>;
    fn irq_vectors(&self, kind: IrqKind) -> usize;
    fn irq_enable(&self, kind: IrqKind, eventfd: RawFd) -> io::Result<()>;
}

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
             and boot with intel_iommu=on (or amd_iommu=on) iommu=pt"
        )));
    };
    let blockers: Vec<String> = sys
        .group_members(group)
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
    if !sys.group_node_exists(group) {
        return Err(Error::Vfio(format!(
            "/dev/vfio/{group} does not exist: load the modules (`modprobe vfio-pci`)"
        )));
    }
    Ok(group)
}

/// A card bound to vfio-pci.
pub struct VfioBackend {
    address: String,
    device: Box<dyn VfioDevice>,
    irq: OwnedFd,
    irq_kind: IrqKind,
    max_payload: u32,
    memlock: Option<u64>,
    /// IOVA -> length of what is mapped.
    mapped: Mutex<BTreeMap<u64, usize>>,
}

impl VfioBackend {
    /// Opens the card at `address` (`0000:03:00.0` or `03:00.0`).
    pub fn open(address: &str) -> Result<Self> {
        Self::open_with(&SystemVfio::default(), address)
    }

    /// Brings the card up through `sys`: prerequisites, open, reset, memory and bus mastering,
    /// BAR0 size, interrupt (MSI-X, else MSI, else INTx), max payload size.
    pub fn open_with(sys: &dyn VfioSys, address: &str) -> Result<Self> {
        let address = full_address(address);
        let group = check_prerequisites(sys, &address)?;
        let device = sys.open(&address).map_err(|e| {
            Error::Vfio(match e.raw_os_error() {
                Some(libc::EACCES) | Some(libc::EPERM) => format!(
                    "no permission to open /dev/vfio/{group}: run as root, or give your user the \
                     device (`chown $USER /dev/vfio/{group}`)"
                ),
                Some(libc::EBUSY) => format!(
                    "IOMMU group {group} is in use by another process (another nanet program, or a VM)"
                ),
                _ => format!("opening {address} through VFIO: {e}"),
            })
        })?;
        // A card left running by a crashed program must not keep writing: reset it. Cards without
        // a function-level reset are cleared by the library instead (`Device::with_backend`).
        if let Err(e) = device.reset() {
            if e.raw_os_error() != Some(libc::ENOTTY) {
                return Err(Error::Vfio(format!("resetting {address}: {e}")));
            }
        }
        let command = device.config_read16(COMMAND)?;
        device.config_write16(COMMAND, command | COMMAND_MEMORY | COMMAND_BUS_MASTER)?;
        match device.bar0_len() {
            Some(n) if n >= BAR0_BYTES => {}
            other => {
                return Err(Error::Vfio(format!(
                "{address} has a BAR0 of {} bytes; a nanet card has {BAR0_BYTES}: wrong device, \
                     or the FPGA is not loaded with nanet",
                other.unwrap_or(0)
            )))
            }
        }
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
        let max_payload = max_payload(&*device)?;
        Ok(Self {
            address,
            device,
            irq,
            irq_kind,
            max_payload,
            memlock: sys.memlock_limit(),
            mapped: Mutex::new(BTreeMap::new()),
        })
    }

    pub fn irq_kind(&self) -> IrqKind {
        self.irq_kind
    }

    fn memlock_error(&self, want: u64) -> Error {
        Error::Vfio(format!(
            "pinning {want} bytes for DMA exceeds RLIMIT_MEMLOCK ({}): raise it (`ulimit -l \
             unlimited`, or memlock in /etc/security/limits.conf) or register fewer buffers",
            self.memlock
                .map_or("unlimited".to_string(), |l| format!("{l} bytes"))
        ))
    }
}

impl Backend for VfioBackend {
    fn describe(&self) -> String {
        format!("vfio {} ({:?})", self.address, self.irq_kind)
    }

    fn read32(&self, offset: u64) -> Result<u32> {
        Ok(self.device.bar0_read32(offset)?)
    }

    fn write32(&self, offset: u64, value: u32) -> Result<()> {
        Ok(self.device.bar0_write32(offset, value)?)
    }

    unsafe fn map_dma(&self, memory: *mut u8, len: usize, iova: u64) -> Result<()> {
        let mut mapped = self.mapped.lock().unwrap();
        let total: u64 = mapped.values().map(|l| *l as u64).sum::<u64>() + len as u64;
        if self.memlock.is_some_and(|l| total > l) {
            return Err(self.memlock_error(total));
        }
        match self.device.iommu_map(iova, len, memory) {
            Ok(()) => {
                mapped.insert(iova, len);
                Ok(())
            }
            Err(e) if e.raw_os_error() == Some(libc::ENOMEM) => Err(self.memlock_error(total)),
            Err(e) => Err(Error::Vfio(format!(
                "mapping {len} bytes at bus address {iova:#x}: {e}"
            ))),
        }
    }

    fn unmap_dma(&self, iova: u64, len: usize) -> Result<()> {
        let mut mapped = self.mapped.lock().unwrap();
        if mapped.get(&iova) != Some(&len) {
            return Err(Error::Memory(format!(
                "nothing of {len} bytes is mapped at {iova:#x}"
            )));
        }
        self.device.iommu_unmap(iova, len)?;
        mapped.remove(&iova);
        Ok(())
    }

    fn irq_fd(&self) -> RawFd {
        self.irq.as_raw_fd()
    }

    fn max_payload(&self) -> u32 {
        self.max_payload
    }
}

/// The real system: sysfs under `root` (normally `/sys`), `/dev/vfio`, and `pci-driver`.
pub struct SystemVfio {
    pub root: PathBuf,
}

impl Default for SystemVfio {
    fn default() -> Self {
        Self {
            root: PathBuf::from("/sys"),
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

    fn group_node_exists(&self, group: u32) -> bool {
        Path::new(&format!("/dev/vfio/{group}")).exists()
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

    fn open(&self, address: &str) -> io::Result<Box<dyn VfioDevice>> {
        Ok(Box::new(PciDriverDevice::open(&self.device_dir(address))?))
    }
}

/// A device opened with `pci-driver`.
struct PciDriverDevice {
    device: pci_driver::backends::vfio::VfioPciDevice,
    bar0: Option<pci_driver::regions::MappedOwningPciRegion>,
}

impl PciDriverDevice {
    fn open(sysfs: &Path) -> io::Result<Self> {
        use pci_driver::device::PciDevice;
        use pci_driver::regions::Permissions;
        let device = pci_driver::backends::vfio::VfioPciDevice::open(sysfs)?;
        let bar0 = match device.bar(0) {
            Some(b) => Some(b.map(.., Permissions::ReadWrite)?),
            None => None,
        };
        Ok(Self { device, bar0 })
    }

    fn bar0(&self) -> io::Result<&pci_driver::regions::MappedOwningPciRegion> {
        self.bar0
            .as_ref()
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no BAR0"))
    }
}

impl VfioDevice for PciDriverDevice {
    fn reset(&self) -> io::Result<()> {
        use pci_driver::device::PciDevice;
        self.device.reset()
    }
    fn config_read16(&self, offset: u64) -> io::Result<u16> {
        use pci_driver::device::PciDevice;
        use pci_driver::regions::PciRegion;
        self.device.config().read_le_u16(offset)
    }
    fn config_write16(&self, offset: u64, value: u16) -> io::Result<()> {
        use pci_driver::device::PciDevice;
        use pci_driver::regions::PciRegion;
        self.device.config().write_le_u16(offset, value)
    }
    fn config_read8(&self, offset: u64) -> io::Result<u8> {
        use pci_driver::device::PciDevice;
        use pci_driver::regions::PciRegion;
        self.device.config().read_u8(offset)
    }
    fn bar0_len(&self) -> Option<u64> {
        use pci_driver::regions::PciRegion;
        self.bar0.as_ref().map(|b| PciRegion::len(b))
    }
    fn bar0_read32(&self, offset: u64) -> io::Result<u32> {
        use pci_driver::regions::PciRegion;
        self.bar0()?.read_le_u32(offset)
    }
    fn bar0_write32(&self, offset: u64, value: u32) -> io::Result<()> {
        use pci_driver::regions::PciRegion;
        self.bar0()?.write_le_u32(offset, value)
    }
    unsafe fn iommu_map(&self, iova: u64, len: usize, memory: *const u8) -> io::Result<()> {
        use pci_driver::device::PciDevice;
        use pci_driver::regions::Permissions;
        self.device
            .iommu()
            .map(iova, len, memory, Permissions::ReadWrite)
    }
    fn iommu_unmap(&self, iova: u64, len: usize) -> io::Result<()> {
        use pci_driver::device::PciDevice;
        self.device.iommu().unmap(iova, len)
    }
    fn irq_vectors(&self, kind: IrqKind) -> usize {
        use pci_driver::device::PciDevice;
        let i = self.device.interrupts();
        match kind {
            IrqKind::MsiX => i.msi_x().max(),
            IrqKind::Msi => i.msi().max(),
            IrqKind::Intx => i.intx().max(),
        }
    }
    fn irq_enable(&self, kind: IrqKind, eventfd: RawFd) -> io::Result<()> {
        use pci_driver::device::PciDevice;
        let i = self.device.interrupts();
        match kind {
            IrqKind::MsiX => i.msi_x().enable(&[eventfd]),
            IrqKind::Msi => i.msi().enable(&[eventfd]),
            IrqKind::Intx => i.intx().enable(&[eventfd]),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use nanet_contract::bar0;
    use nanet_contract::offload::ID_VALUE;
    use nanet_contract::rx::{RxCounter, RxReg, MAX_PORTS, TLB_COMMAND_VALID};
    use nanet_contract::tx::TxReg;
    use nanet_contract::Reg;

    use super::*;
    use crate::{ClopConfig, Device};

    const CARD: &str = "0000:03:00.0";

    /// What the fake device saw.
    #[derive(Default)]
    struct Log {
        calls: Vec<String>,
        bar0: BTreeMap<u64, u32>,
        writes: Vec<(u64, u32)>,
        maps: BTreeMap<u64, usize>,
    }

    /// A fake system: sysfs facts as fields, and a device that records every call.
    struct FakeSys {
        exists: bool,
        driver: Option<&'static str>,
        group: Option<u32>,
        members: Vec<(String, Option<String>)>,
        node: bool,
        memlock: Option<u64>,
        open_error: Option<i32>,
        reset_error: Option<i32>,
        bar0_len: u64,
        msix: usize,
        map_error: Option<i32>,
        /// Device Control MPS code in the PCIe capability.
        mps_code: u16,
        log: Arc<Mutex<Log>>,
    }

    impl Default for FakeSys {
        fn default() -> Self {
            Self {
                exists: true,
                driver: Some("vfio-pci"),
                group: Some(7),
                members: vec![(CARD.into(), Some("vfio-pci".into()))],
                node: true,
                memlock: None,
                open_error: None,
                reset_error: None,
                bar0_len: BAR0_BYTES,
                msix: 1,
                map_error: None,
                mps_code: 1,
                log: Arc::default(),
            }
        }
    }

    struct FakeDevice {
        log: Arc<Mutex<Log>>,
        reset_error: Option<i32>,
        bar0_len: u64,
        msix: usize,
        map_error: Option<i32>,
        mps_code: u16,
    }

    impl FakeDevice {
        fn call(&self, c: String) {
            self.log.lock().unwrap().calls.push(c);
        }
    }

    impl VfioSys for FakeSys {
        fn device_exists(&self, _: &str) -> bool {
            self.exists
        }
        fn driver(&self, _: &str) -> Option<String> {
            self.driver.map(str::to_string)
        }
        fn iommu_group(&self, _: &str) -> Option<u32> {
            self.group
        }
        fn group_members(&self, _: u32) -> Vec<(String, Option<String>)> {
            self.members.clone()
        }
        fn group_node_exists(&self, _: u32) -> bool {
            self.node
        }
        fn memlock_limit(&self) -> Option<u64> {
            self.memlock
        }
        fn open(&self, address: &str) -> io::Result<Box<dyn VfioDevice>> {
            if let Some(e) = self.open_error {
                return Err(io::Error::from_raw_os_error(e));
            }
            self.log
                .lock()
                .unwrap()
                .calls
                .push(format!("open {address}"));
            Ok(Box::new(FakeDevice {
                log: self.log.clone(),
                reset_error: self.reset_error,
                bar0_len: self.bar0_len,
                msix: self.msix,
                map_error: self.map_error,
                mps_code: self.mps_code,
            }))
        }
    }

    impl VfioDevice for FakeDevice {
        fn reset(&self) -> io::Result<()> {
            self.call("reset".into());
            self.reset_error
                .map_or(Ok(()), |e| Err(io::Error::from_raw_os_error(e)))
        }
        fn config_read16(&self, offset: u64) -> io::Result<u16> {
            Ok(match offset {
                STATUS => STATUS_CAP_LIST,
                0x48 => self.mps_code << 5, // PCIe capability at 0x40: Device Control
                _ => 0,
            })
        }
        fn config_write16(&self, offset: u64, value: u16) -> io::Result<()> {
            self.call(format!("config {offset:#x} = {value:#x}"));
            Ok(())
        }
        fn config_read8(&self, offset: u64) -> io::Result<u8> {
            // Capability list: 0x34 -> 0x50 (MSI-X, id 0x11) -> 0x40 (PCIe) -> end.
            Ok(match offset {
                CAP_POINTER => 0x50,
                0x50 => 0x11,
                0x51 => 0x40,
                0x40 => CAP_ID_PCIE,
                _ => 0,
            })
        }
        fn bar0_len(&self) -> Option<u64> {
            Some(self.bar0_len)
        }
        fn bar0_read32(&self, offset: u64) -> io::Result<u32> {
            if offset == bar0::port(0, Reg::Id.word()) {
                return Ok(ID_VALUE);
            }
            if let Some(w) = nanet_contract::card::constant_word(MAX_PORTS, offset) {
                return Ok(w);
            }
            // Nothing is ever in flight: the transmit engine reads idle.
            if offset == bar0::tx_engine(TxReg::Status.word()) {
                return Ok(nanet_contract::tx::TX_STATUS_IDLE);
            }
            Ok(*self.log.lock().unwrap().bar0.get(&offset).unwrap_or(&0))
        }
        fn bar0_write32(&self, offset: u64, value: u32) -> io::Result<()> {
            let mut l = self.log.lock().unwrap();
            l.writes.push((offset, value));
            // Commands complete at once: the command register reads idle.
            if offset != bar0::rx_engine(RxReg::ClopCommand.word()) {
                l.bar0.insert(offset, value);
            }
            // The CLOP engine takes every release at once.
            if offset == bar0::rx_engine(RxReg::Release.word()) {
                let taken = bar0::rx_engine(RxCounter::ReleasesTaken.word());
                *l.bar0.entry(taken).or_default() += 1;
            }
            Ok(())
        }
        unsafe fn iommu_map(&self, iova: u64, len: usize, _: *const u8) -> io::Result<()> {
            if let Some(e) = self.map_error {
                return Err(io::Error::from_raw_os_error(e));
            }
            self.log.lock().unwrap().maps.insert(iova, len);
            Ok(())
        }
        fn iommu_unmap(&self, iova: u64, len: usize) -> io::Result<()> {
            let mut l = self.log.lock().unwrap();
            assert_eq!(l.maps.remove(&iova), Some(len), "unmap of what was mapped");
            Ok(())
        }
        fn irq_vectors(&self, kind: IrqKind) -> usize {
            match kind {
                IrqKind::MsiX => self.msix,
                _ => 1,
            }
        }
        fn irq_enable(&self, kind: IrqKind, _: RawFd) -> io::Result<()> {
            self.call(format!("irq {kind:?}"));
            Ok(())
        }
    }

    fn open(sys: &FakeSys) -> Result<VfioBackend> {
        VfioBackend::open_with(sys, "03:00.0")
    }

    fn message(sys: FakeSys) -> String {
        open(&sys).err().expect("the open fails").to_string()
    }

    #[test]
    fn pci_addresses_are_recognised() {
        assert!(is_pci_address("0000:03:00.0"));
        assert!(is_pci_address("03:00.1"));
        assert!(!is_pci_address("sim"));
        assert!(!is_pci_address("0000:03:00"));
        assert!(!is_pci_address("000:03:00.0"));
    }

    #[test]
    fn every_missing_prerequisite_says_what_to_do() {
        let cases: Vec<(FakeSys, &str)> = vec![
            (
                FakeSys {
                    exists: false,
                    ..Default::default()
                },
                "lspci",
            ),
            (
                FakeSys {
                    driver: Some("nanet_legacy"),
                    ..Default::default()
                },
                "driver_override",
            ),
            (
                FakeSys {
                    driver: None,
                    ..Default::default()
                },
                "bound to no driver",
            ),
            (
                FakeSys {
                    group: None,
                    ..Default::default()
                },
                "intel_iommu=on",
            ),
            (
                FakeSys {
                    members: vec![
                        (CARD.into(), Some("vfio-pci".into())),
                        ("0000:03:00.1".into(), Some("snd_hda_intel".into())),
                    ],
                    ..Default::default()
                },
                "0000:03:00.1 (snd_hda_intel) must be bound to vfio-pci",
            ),
            (
                FakeSys {
                    node: false,
                    ..Default::default()
                },
                "modprobe vfio-pci",
            ),
            (
                FakeSys {
                    open_error: Some(libc::EACCES),
                    ..Default::default()
                },
                "run as root",
            ),
            (
                FakeSys {
                    open_error: Some(libc::EBUSY),
                    ..Default::default()
                },
                "in use by another",
            ),
            (
                FakeSys {
                    reset_error: Some(libc::EIO),
                    ..Default::default()
                },
                "resetting",
            ),
            (
                FakeSys {
                    bar0_len: 4096,
                    ..Default::default()
                },
                "FPGA is not loaded",
            ),
        ];
        for (sys, want) in cases {
            let m = message(sys);
            assert!(m.contains(want), "{m:?} should contain {want:?}");
        }
    }

    #[test]
    fn bring_up_resets_enables_bus_mastering_and_falls_back_to_msi() {
        let sys = FakeSys {
            msix: 0,
            mps_code: 1,
            ..Default::default()
        };
        let b = open(&sys).unwrap();
        assert_eq!(b.irq_kind(), IrqKind::Msi);
        assert_eq!(b.max_payload(), 256);
        let calls = sys.log.lock().unwrap().calls.clone();
        assert_eq!(
            calls,
            ["open 0000:03:00.0", "reset", "config 0x4 = 0x6", "irq Msi"],
            "open, reset, memory + bus master, interrupt"
        );
        // A card without function-level reset is still usable.
        let sys = FakeSys {
            reset_error: Some(libc::ENOTTY),
            ..Default::default()
        };
        assert_eq!(open(&sys).unwrap().irq_kind(), IrqKind::MsiX);
    }

    #[test]
    fn dma_mappings_respect_the_memlock_limit_and_are_undone() {
        let sys = FakeSys {
            memlock: Some(1 << 20),
            ..Default::default()
        };
        let b = open(&sys).unwrap();
        let mut mem = vec![0u8; 8192];
        unsafe { b.map_dma(mem.as_mut_ptr(), 4096, 0x1_0000_0000) }.unwrap();
        let e = unsafe { b.map_dma(mem.as_mut_ptr(), 2 << 20, 0x2_0000_0000) }
            .err()
            .unwrap();
        assert!(e.to_string().contains("RLIMIT_MEMLOCK"), "{e}");
        assert!(
            b.unmap_dma(0x3_0000_0000, 4096).is_err(),
            "unmapping what is not mapped"
        );
        b.unmap_dma(0x1_0000_0000, 4096).unwrap();
        assert!(sys.log.lock().unwrap().maps.is_empty());
        // The kernel's own refusal (ENOMEM) gets the same advice.
        let sys = FakeSys {
            map_error: Some(libc::ENOMEM),
            ..Default::default()
        };
        let b = open(&sys).unwrap();
        let e = unsafe { b.map_dma(mem.as_mut_ptr(), 4096, 0x1_0000_0000) }
            .err()
            .unwrap();
        assert!(e.to_string().contains("ulimit -l"), "{e}");
    }

    #[test]
    fn hugepages_are_used_when_asked_or_their_absence_explained() {
        let sys = FakeSys::default();
        let b: Arc<dyn Backend> = Arc::new(open(&sys).unwrap());
        let iovas = crate::dma::IovaAllocator::default();
        match crate::dma::DmaMemory::new(b, &iovas, 4096, true) {
            Ok(m) => assert_eq!(m.len(), 2 << 20, "one whole hugepage"),
            Err(e) => assert!(e.to_string().contains("nr_hugepages"), "{e}"),
        }
    }

    #[test]
    fn the_library_drives_a_vfio_card_through_bar0_and_the_iommu() {
        let sys = FakeSys::default();
        let dev = Device::with_backend(Arc::new(open(&sys).unwrap())).unwrap();
        let ring = {
            let l = sys.log.lock().unwrap();
            // The event ring (first), the transmit ring and its payload slots.
            assert_eq!(l.maps.len(), 3, "the event and transmit rings are mapped");
            *l.maps.keys().next().unwrap()
        };
        let base = |r: RxReg| bar0::rx_engine(r.word());
        {
            let l = sys.log.lock().unwrap();
            assert_eq!(l.bar0[&base(RxReg::EventQueueBaseLo)], ring as u32);
            let tx_ring = l.bar0[&bar0::tx_engine(nanet_contract::tx::TxReg::RingBaseLo.word())];
            assert!(
                l.maps.keys().any(|k| *k as u32 == tx_ring),
                "the TX ring is mapped"
            );
        }
        let clop = dev
            .register(&ClopConfig::new(1, 6000).buffers(4, 64 << 10))
            .unwrap();
        {
            let l = sys.log.lock().unwrap();
            assert_eq!(l.maps.len(), 4, "the CLOP's buffers are mapped");
            // 256 KiB in 64 KiB pages: four valid TLB entries, then the CLOP, then its stream.
            let tlb: Vec<u32> = l
                .writes
                .iter()
                .filter(|(o, v)| *o == base(RxReg::TlbCommand) && v & TLB_COMMAND_VALID != 0)
                .map(|(_, v)| *v)
                .collect();
            assert_eq!(tlb.len(), 4);
            let stream = bar0::port(1, nanet_contract::rx::port::STREAM_TABLE);
            assert_eq!(
                l.writes.last().unwrap().0,
                stream,
                "the stream is opened last"
            );
        }
        clop.deregister().unwrap();
        let l = sys.log.lock().unwrap();
        assert_eq!(
            l.maps.len(),
            3,
            "the CLOP's memory is unmapped, the rings stay"
        );
    }
}

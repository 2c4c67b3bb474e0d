//! The VFIO backend against a fake system that answers as the kernel does: the same errno for the
//! same mistake (EINVAL for a reset the device lacks, ENOMEM over RLIMIT_MEMLOCK, EFAULT for
//! device memory through iommufd), the unmapped size written back.

use std::sync::Arc;

use nanet_contract::bar0;
use nanet_contract::offload::ID_VALUE;
use nanet_contract::rx::{RxCounter, RxReg, MAX_PORTS, TLB_COMMAND_VALID};
use nanet_contract::tx::TxReg;
use nanet_contract::Reg;

use super::*;
use crate::memory::CardDma;
use crate::{ClopConfig, Device};

const CARD: &str = "0000:03:00.0";

/// What the fake device saw.
#[derive(Default)]
struct Log {
    /// Calls in order: opens, resets, config writes, maps, unmaps, interrupt calls, and the BAR0
    /// writes named in `LOGGED_WRITES`.
    calls: Vec<String>,
    bar0: BTreeMap<u64, u32>,
    writes: Vec<(u64, u32)>,
    maps: BTreeMap<u64, (usize, CardAccess)>,
    eventfd: Option<RawFd>,
}

/// BAR0 writes worth seeing among the calls: the rings' enables and disables.
fn logged_write(offset: u64) -> Option<String> {
    match bar0::decode(offset)? {
        bar0::Target::TxRing { ring, word } if word as u32 == TxReg::RingSize.word() => {
            Some(format!("tx ring {ring} size"))
        }
        _ if offset == bar0::rx_engine(RxReg::EventQueueSize.word()) => {
            Some("event queue size".into())
        }
        _ => None,
    }
}

/// The BAR0 offset of register `r` of every transmit ring of a card of `MAX_PORTS` ports.
fn every_tx_ring(r: TxReg) -> impl Iterator<Item = u64> {
    (0..MAX_PORTS as u8).map(move |ring| bar0::tx_ring(ring, r.word()))
}

/// A fake system: sysfs facts as fields, and a device that records every call.
struct FakeSys {
    exists: bool,
    driver: Option<&'static str>,
    group: Option<u32>,
    members: Vec<(String, Option<String>)>,
    container: bool,
    cdev: Option<&'static str>,
    iommufd: bool,
    emulated: bool,
    memlock: Option<u64>,
    cap_ipc_lock: bool,
    open_error: Option<(OpenStep, i32)>,
    can_reset: bool,
    reset_error: Option<i32>,
    bar0_len: u64,
    msix: usize,
    msi: usize,
    map_error: Option<i32>,
    /// Bytes the kernel says it unmapped, if not all.
    unmaps_only: Option<u64>,
    ranges: Option<Vec<RangeInclusive<u64>>>,
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
            container: true,
            cdev: Some("vfio0"),
            iommufd: true,
            emulated: false,
            memlock: None,
            cap_ipc_lock: false,
            open_error: None,
            can_reset: true,
            reset_error: None,
            bar0_len: BAR0_BYTES,
            msix: 1,
            msi: 1,
            map_error: None,
            unmaps_only: None,
            ranges: Some(vec![0..=0xfedf_ffff, 0xfef0_0000..=(1 << 48) - 1]),
            mps_code: 1,
            log: Arc::default(),
        }
    }
}

struct FakeDevice {
    log: Arc<Mutex<Log>>,
    kind: IommuKind,
    can_reset: bool,
    reset_error: Option<i32>,
    bar0_len: u64,
    msix: usize,
    msi: usize,
    map_error: Option<i32>,
    unmaps_only: Option<u64>,
    ranges: Option<Vec<RangeInclusive<u64>>>,
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
    fn container_nodes_exist(&self, _: u32) -> bool {
        self.container
    }
    fn cdev(&self, _: &str) -> Option<String> {
        self.cdev.map(str::to_string)
    }
    fn iommufd_exists(&self) -> bool {
        self.iommufd
    }
    fn memlock_limit(&self) -> Option<u64> {
        self.memlock
    }
    fn can_lock_memory(&self) -> bool {
        self.cap_ipc_lock
    }
    fn open(
        &self,
        address: &str,
        path: &VfioPath,
    ) -> std::result::Result<Box<dyn VfioDevice>, OpenFailure> {
        if let Some((step, e)) = self.open_error {
            return Err(OpenFailure::at(step)(io::Error::from_raw_os_error(e)));
        }
        self.log
            .lock()
            .unwrap()
            .calls
            .push(format!("open {address} {path:?}"));
        let kind = match path {
            VfioPath::Container { .. } if self.emulated => IommuKind::EmulatedType1,
            VfioPath::Container { .. } => IommuKind::Type1,
            VfioPath::Cdev { .. } => IommuKind::Iommufd,
        };
        Ok(Box::new(FakeDevice {
            log: self.log.clone(),
            kind,
            can_reset: self.can_reset,
            reset_error: self.reset_error,
            bar0_len: self.bar0_len,
            msix: self.msix,
            msi: self.msi,
            map_error: self.map_error,
            unmaps_only: self.unmaps_only,
            ranges: self.ranges.clone(),
            mps_code: self.mps_code,
        }))
    }
}

impl VfioDevice for FakeDevice {
    fn iommu_kind(&self) -> IommuKind {
        self.kind
    }
    fn can_reset(&self) -> bool {
        self.can_reset
    }
    fn reset(&self) -> io::Result<()> {
        self.call("reset".into());
        if !self.can_reset {
            // vfio_pci_ioctl_reset: `if (!vdev->reset_works) return -EINVAL;`
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
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
        if let Some(w) = nanet_contract::card::constant_word(
            MAX_PORTS,
            nanet_contract::pcie::PcieVariant::Gen2x8,
            offset,
        ) {
            return Ok(w);
        }
        // Nothing is ever in flight: every transmit ring reads idle.
        if every_tx_ring(TxReg::Status).any(|o| o == offset) {
            return Ok(nanet_contract::tx::TX_STATUS_IDLE);
        }
        Ok(*self.log.lock().unwrap().bar0.get(&offset).unwrap_or(&0))
    }
    fn bar0_write32(&self, offset: u64, value: u32) -> io::Result<()> {
        let mut l = self.log.lock().unwrap();
        l.writes.push((offset, value));
        if let Some(name) = logged_write(offset) {
            l.calls.push(format!("{name} = {value:#x}"));
        }
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
    fn iova_ranges(&self) -> io::Result<Option<Vec<RangeInclusive<u64>>>> {
        Ok(self.ranges.clone())
    }
    unsafe fn iommu_map(
        &self,
        iova: u64,
        len: usize,
        _: *const u8,
        access: CardAccess,
    ) -> io::Result<()> {
        if let Some(e) = self.map_error {
            return Err(io::Error::from_raw_os_error(e));
        }
        // vfio_dma_do_map: outside the IOMMU's ranges is EINVAL.
        let ranges = self.ranges.clone().unwrap_or(vec![IOVA_RANGE_UNREPORTED]);
        let last = iova + len as u64 - 1;
        if !ranges
            .iter()
            .any(|r| r.contains(&iova) && r.contains(&last))
        {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        let mut l = self.log.lock().unwrap();
        if l.maps.contains_key(&iova) {
            return Err(io::Error::from_raw_os_error(libc::EEXIST));
        }
        l.calls.push(format!("map {iova:#x} {access:?}"));
        l.maps.insert(iova, (len, access));
        Ok(())
    }
    fn iommu_unmap(&self, iova: u64, len: usize) -> io::Result<u64> {
        let mut l = self.log.lock().unwrap();
        l.calls.push(format!("unmap {iova:#x}"));
        if let Some(n) = self.unmaps_only {
            return Ok(n);
        }
        // With type1v2 an unmap of nothing succeeds, having unmapped 0 bytes.
        Ok(match l.maps.remove(&iova) {
            Some((n, _)) if n == len => n as u64,
            Some(m) => {
                l.maps.insert(iova, m);
                return Err(io::Error::from_raw_os_error(libc::EINVAL));
            }
            None => 0,
        })
    }
    fn irq_vectors(&self, kind: IrqKind) -> usize {
        match kind {
            IrqKind::MsiX => self.msix,
            IrqKind::Msi => self.msi,
            IrqKind::Intx => 1,
        }
    }
    fn irq_enable(&self, kind: IrqKind, fd: RawFd) -> io::Result<()> {
        self.call(format!("irq {kind:?}"));
        self.log.lock().unwrap().eventfd = Some(fd);
        Ok(())
    }
    fn irq_unmask_intx(&self) -> io::Result<()> {
        self.call("unmask intx".into());
        Ok(())
    }
}

fn open(sys: &FakeSys) -> Result<VfioBackend> {
    VfioBackend::open_with(sys, "03:00.0")
}

fn message(sys: FakeSys) -> String {
    open(&sys).err().expect("the open fails").to_string()
}

fn calls(sys: &FakeSys) -> Vec<String> {
    sys.log.lock().unwrap().calls.clone()
}

/// Where `what` first appears among the calls.
fn at(calls: &[String], what: &str) -> usize {
    calls
        .iter()
        .position(|c| c.starts_with(what))
        .unwrap_or_else(|| panic!("no {what:?} in {calls:?}"))
}

#[test]
fn pci_addresses_are_recognised() {
    assert_eq!(full_address("03:00.0"), CARD);
    assert_eq!(
        full_address("0000:0A:00.0"),
        "0000:0a:00.0",
        "sysfs is lower case"
    );
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
                members: vec![
                    (CARD.into(), Some("vfio-pci".into())),
                    ("0000:04:00.0".into(), Some("nvidia".into())),
                ],
                ..Default::default()
            },
            "Do not bind the GPU to vfio-pci: enable ACS",
        ),
        (
            FakeSys {
                container: false,
                cdev: None,
                ..Default::default()
            },
            "modprobe vfio-pci",
        ),
        (
            FakeSys {
                container: false,
                cdev: None,
                ..Default::default()
            },
            "CONFIG_VFIO_DEVICE_CDEV",
        ),
        (
            FakeSys {
                container: false,
                iommufd: false,
                ..Default::default()
            },
            "modprobe iommufd",
        ),
        (
            FakeSys {
                open_error: Some((OpenStep::Nodes, libc::EACCES)),
                ..Default::default()
            },
            "run as root",
        ),
        (
            FakeSys {
                open_error: Some((OpenStep::Nodes, libc::EBUSY)),
                ..Default::default()
            },
            "in use by another",
        ),
        // The same errno means other things at other steps (as vfio and iommufd return them).
        (
            FakeSys {
                open_error: Some((OpenStep::SetIommu, libc::EPERM)),
                ..Default::default()
            },
            "interrupt remapping is off",
        ),
        (
            FakeSys {
                container: false,
                open_error: Some((OpenStep::Bind, libc::EPERM)),
                ..Default::default()
            },
            "interrupt remapping is off",
        ),
        (
            FakeSys {
                container: false,
                open_error: Some((OpenStep::Bind, libc::EINVAL)),
                ..Default::default()
            },
            "in use by another",
        ),
        (
            FakeSys {
                open_error: Some((OpenStep::SetContainer, libc::EPERM)),
                ..Default::default()
            },
            "IOMMU group 7 is not viable",
        ),
        (
            FakeSys {
                open_error: Some((OpenStep::GroupNotViable, libc::EBUSY)),
                ..Default::default()
            },
            "bound to a host driver",
        ),
        (
            FakeSys {
                open_error: Some((OpenStep::SetIommu, libc::ENODEV)),
                ..Default::default()
            },
            "modprobe vfio_iommu_type1",
        ),
        (
            FakeSys {
                reset_error: Some(libc::EIO),
                ..Default::default()
            },
            "resetting (VFIO_DEVICE_RESET) of 0000:03:00.0",
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
        assert!(!m.contains("TODO"), "{m}");
    }
}

#[test]
fn a_card_is_reset_only_when_vfio_says_it_can_be() {
    let sys = FakeSys::default();
    open(&sys).unwrap();
    assert_eq!(calls(&sys).iter().filter(|c| *c == "reset").count(), 1);
    // Without a function reset (the kernel would answer EINVAL) the card opens unreset, and is
    // stopped by the library instead (`Device::with_backend`).
    let sys = FakeSys {
        can_reset: false,
        ..Default::default()
    };
    let b = open(&sys).unwrap();
    assert!(!calls(&sys).contains(&"reset".to_string()));
    assert!(
        b.describe().contains("no function reset"),
        "{}",
        b.describe()
    );
}

#[test]
fn the_legacy_container_is_preferred_and_iommufd_used_without_it() {
    let sys = FakeSys::default();
    let b = open(&sys).unwrap();
    assert_eq!(b.iommu_kind(), IommuKind::Type1);
    assert!(calls(&sys)[0].contains("Container { group: 7 }"));
    assert!(b.describe().contains("type1 container"), "{}", b.describe());
    let sys = FakeSys {
        container: false,
        ..Default::default()
    };
    let b = open(&sys).unwrap();
    assert_eq!(b.iommu_kind(), IommuKind::Iommufd);
    assert!(calls(&sys)[0].contains("Cdev { name: \"vfio0\" }"));
    assert!(b.describe().contains("iommufd"), "{}", b.describe());
    // Permission advice names the nodes of the path taken.
    let sys = FakeSys {
        container: false,
        open_error: Some((OpenStep::Nodes, libc::EACCES)),
        ..Default::default()
    };
    assert!(message(sys).contains("/dev/vfio/devices/vfio0 and /dev/iommu"));
}

#[test]
fn bus_mastering_waits_until_the_card_is_stopped() {
    let sys = FakeSys {
        msix: 0,
        ..Default::default()
    };
    let b = open(&sys).unwrap();
    assert_eq!(b.irq_kind(), IrqKind::Msi);
    assert_eq!(b.max_payload(), 256);
    assert_eq!(
        calls(&sys)[1..],
        ["reset", "config 0x4 = 0x2", "irq Msi"],
        "reset, memory space on and bus mastering off, interrupt"
    );
    let _dev = Device::with_backend(Arc::new(b)).unwrap();
    let c = calls(&sys);
    let bus_master = at(&c, "config 0x4 = 0x6");
    // The library stopped the event queue and every transmit ring first, and mapped nothing
    // before bus mastering was on.
    assert!(at(&c, "event queue size = 0x0") < bus_master, "{c:?}");
    for r in 0..MAX_PORTS {
        assert!(
            at(&c, &format!("tx ring {r} size = 0x0")) < bus_master,
            "{c:?}"
        );
    }
    assert!(bus_master < at(&c, "map "), "{c:?}");
}

#[test]
fn the_card_reads_the_transmit_rings_and_writes_only_what_it_must() {
    let sys = FakeSys::default();
    let dev = Device::with_backend(Arc::new(open(&sys).unwrap())).unwrap();
    let event_ring = dev.state().ring.iova();
    let _clop = dev
        .register(&ClopConfig::new(0, 6000).buffers(2, 4096))
        .unwrap();
    let l = sys.log.lock().unwrap();
    let access: Vec<CardAccess> = l.maps.values().map(|m| m.1).collect();
    // The event ring, each port's transmit ring and its payload slots, the CLOP's buffers.
    let mut want = vec![CardAccess::ReadWrite];
    want.extend([CardAccess::Read; 2 * MAX_PORTS]);
    want.push(CardAccess::ReadWrite);
    assert_eq!(access, want);
    let maps: Vec<u64> = l.maps.keys().copied().collect();
    assert_eq!(maps[0], event_ring);
    let rings: Vec<u32> = every_tx_ring(TxReg::RingBaseLo)
        .map(|o| l.bar0[&o])
        .collect();
    let descriptors = maps[1..].iter().step_by(2).take(MAX_PORTS);
    let descriptors: Vec<u32> = descriptors.map(|k| *k as u32).collect();
    assert_eq!(rings, descriptors, "each ring at its own descriptors");
}

#[test]
fn bus_addresses_come_from_the_iommus_ranges_and_are_reused() {
    // An aperture of 39 bits, above a hole: every mapping inside it (the fake refuses others
    // with EINVAL, as type1 does).
    let sys = FakeSys {
        ranges: Some(vec![0..=0xfedf_ffff, 0x1_0000_0000..=(1 << 39) - 1]),
        ..Default::default()
    };
    let dev = Device::with_backend(Arc::new(open(&sys).unwrap())).unwrap();
    let config = ClopConfig::new(0, 6000).buffers(2, 64 << 10);
    let first = dev.register(&config).unwrap();
    let iova = |sys: &FakeSys| *sys.log.lock().unwrap().maps.keys().last().unwrap();
    let at = iova(&sys);
    first.deregister().unwrap();
    let again = dev.register(&config).unwrap();
    assert_eq!(
        iova(&sys),
        at,
        "the bus addresses given back are handed out again"
    );
    drop(again);
    // A kernel that reports no ranges (before Linux 5.4): 4 GiB to 512 GiB.
    let sys = FakeSys {
        ranges: None,
        ..Default::default()
    };
    let b = open(&sys).unwrap();
    assert_eq!(b.iova_ranges(), [IOVA_RANGE_UNREPORTED]);
    Device::with_backend(Arc::new(b)).unwrap();
    assert!(sys
        .log
        .lock()
        .unwrap()
        .maps
        .keys()
        .all(|k| IOVA_RANGE_UNREPORTED.contains(k)));
}

#[test]
fn an_unmap_the_kernel_did_not_finish_keeps_the_memory() {
    let sys = FakeSys::default();
    let b = open(&sys).unwrap();
    let mut mem = vec![0u8; 8192];
    unsafe { b.map_dma(mem.as_mut_ptr(), 8192, 1 << 32, DmaMap::CARD_WRITES) }.unwrap();
    // The kernel says it unmapped less than asked (UNMAP_DMA's size written back).
    let sys_short = FakeSys {
        unmaps_only: Some(4096),
        ..Default::default()
    };
    let short = open(&sys_short).unwrap();
    unsafe { short.map_dma(mem.as_mut_ptr(), 8192, 1 << 32, DmaMap::CARD_WRITES) }.unwrap();
    let e = short.unmap_dma(1 << 32, 8192).unwrap_err().to_string();
    assert!(e.contains("unmapped 4096 of the 8192 bytes"), "{e}");
    assert!(
        short.unmap_dma(1 << 32, 8192).is_err(),
        "still counted as mapped"
    );
    // Unmapping what is not mapped is refused before the kernel is asked.
    assert!(b.unmap_dma(0x3_0000_0000, 4096).is_err());
    b.unmap_dma(1 << 32, 8192).unwrap();
    assert!(sys.log.lock().unwrap().maps.is_empty());
}

#[test]
fn the_memlock_check_counts_what_the_kernel_charges() {
    let sys = FakeSys {
        memlock: Some(1 << 20),
        ..Default::default()
    };
    let b = open(&sys).unwrap();
    let mut mem = vec![0u8; 8192];
    unsafe { b.map_dma(mem.as_mut_ptr(), 4096, 1 << 32, DmaMap::CARD_WRITES) }.unwrap();
    let e = unsafe { b.map_dma(mem.as_mut_ptr(), 2 << 20, 2 << 32, DmaMap::CARD_WRITES) }
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("RLIMIT_MEMLOCK") && e.contains("CAP_IPC_LOCK"),
        "{e}"
    );
    // Another device's memory (a GPU's BAR) is not charged.
    let gpu = DmaMap {
        access: CardAccess::ReadWrite,
        kind: MemoryKind::DeviceMemory,
    };
    unsafe { b.map_dma(mem.as_mut_ptr(), 2 << 20, 3 << 32, gpu) }.unwrap();
    // With CAP_IPC_LOCK the kernel checks no limit, and neither does the library.
    let sys = FakeSys {
        memlock: Some(1 << 20),
        cap_ipc_lock: true,
        ..Default::default()
    };
    let b = open(&sys).unwrap();
    unsafe { b.map_dma(mem.as_mut_ptr(), 2 << 20, 1 << 32, DmaMap::CARD_WRITES) }.unwrap();
}

#[test]
fn the_kernels_refusals_keep_their_errno_and_get_their_advice() {
    let mut mem = vec![0u8; 4096];
    let cases = [
        (libc::ENOMEM, "ulimit -l"),
        (libc::ENOSPC, "dma_entry_limit"),
        (libc::EEXIST, "File exists"),
    ];
    for (errno, want) in cases {
        let sys = FakeSys {
            map_error: Some(errno),
            ..Default::default()
        };
        let b = open(&sys).unwrap();
        let e = unsafe { b.map_dma(mem.as_mut_ptr(), 4096, 1 << 32, DmaMap::CARD_WRITES) }
            .unwrap_err()
            .to_string();
        assert!(e.contains(want), "errno {errno}: {e}");
    }
}

#[test]
fn gpu_memory_needs_the_type1_container() {
    let gpu = DmaMap {
        access: CardAccess::ReadWrite,
        kind: MemoryKind::DeviceMemory,
    };
    let mut mem = vec![0u8; 4096];
    for sys in [
        FakeSys {
            container: false,
            ..Default::default()
        },
        FakeSys {
            emulated: true,
            ..Default::default()
        },
    ] {
        let b = open(&sys).unwrap();
        let e = unsafe { b.map_dma(mem.as_mut_ptr(), 4096, 1 << 32, gpu) }
            .unwrap_err()
            .to_string();
        assert!(e.contains("CONFIG_VFIO_CONTAINER"), "{e}");
        assert!(
            sys.log.lock().unwrap().maps.is_empty(),
            "the kernel is not asked"
        );
        // Host memory is fine there.
        unsafe { b.map_dma(mem.as_mut_ptr(), 4096, 1 << 32, DmaMap::CARD_WRITES) }.unwrap();
    }
    // Through type1 it is mapped; a providers' CardDma says what its memory is.
    let sys = FakeSys::default();
    let b: Arc<dyn Backend> = Arc::new(open(&sys).unwrap());
    let card = CardDma::new(b, Arc::default());
    let iova = unsafe { card.map(mem.as_mut_ptr(), 4096, MemoryKind::DeviceMemory) }.unwrap();
    card.unmap(iova, 4096).unwrap();
}

#[test]
fn an_intx_interrupt_is_unmasked_after_it_is_taken() {
    let sys = FakeSys {
        msix: 0,
        msi: 0,
        ..Default::default()
    };
    let dev = Device::with_backend(Arc::new(open(&sys).unwrap())).unwrap();
    assert!(dev.describe().contains("Intx"), "{}", dev.describe());
    let fd = sys.log.lock().unwrap().eventfd.unwrap();
    assert_eq!(dev.clear_interrupt().unwrap(), 0);
    assert!(!calls(&sys).contains(&"unmask intx".to_string()));
    // The kernel signals the interrupt (and masks the line).
    let one = 1u64.to_ne_bytes();
    assert_eq!(unsafe { libc::write(fd, one.as_ptr().cast(), 8) }, 8);
    assert_eq!(dev.clear_interrupt().unwrap(), 1);
    assert_eq!(
        calls(&sys).iter().filter(|c| *c == "unmask intx").count(),
        1
    );
    // MSI needs no unmask.
    let sys = FakeSys::default();
    let dev = Device::with_backend(Arc::new(open(&sys).unwrap())).unwrap();
    let fd = sys.log.lock().unwrap().eventfd.unwrap();
    assert_eq!(unsafe { libc::write(fd, one.as_ptr().cast(), 8) }, 8);
    assert_eq!(dev.clear_interrupt().unwrap(), 1);
    assert!(!calls(&sys).contains(&"unmask intx".to_string()));
}

#[test]
fn closing_stops_the_rings_before_unmapping_them() {
    let sys = FakeSys::default();
    let dev = Device::with_backend(Arc::new(open(&sys).unwrap())).unwrap();
    let clop = dev
        .register(&ClopConfig::new(0, 6000).buffers(2, 4096))
        .unwrap();
    let start = calls(&sys).len();
    drop(clop);
    drop(dev);
    let c = calls(&sys)[start..].to_vec();
    let events_stop = at(&c, "event queue size = 0x0");
    let unmaps: Vec<usize> = (0..c.len())
        .filter(|i| c[*i].starts_with("unmap"))
        .collect();
    assert_eq!(unmaps.len(), 2 + 2 * MAX_PORTS, "{c:?}");
    // The CLOP went first; then every transmit ring stopped, then the event queue (a ring's
    // drain can still post a record), and only then were the rings unmapped.
    for r in 0..MAX_PORTS {
        let tx_stop = at(&c, &format!("tx ring {r} size = 0x0"));
        assert!(unmaps[0] < tx_stop && tx_stop < events_stop, "{c:?}");
    }
    assert!(events_stop < unmaps[1], "{c:?}");
    assert!(sys.log.lock().unwrap().maps.is_empty());
}

/// An open that fails after the event queue was enabled (here: a transmit ring's slots over
/// RLIMIT_MEMLOCK) stops the queue before its ring is unmapped. (Mutation: returning the error
/// at once unmaps the ring under an enabled queue.)
#[test]
fn an_open_that_fails_midway_stops_the_event_queue_before_unmapping_its_ring() {
    // Room for the event ring (32 KiB) and ring 0's descriptors (8 KiB), not for its slots.
    let sys = FakeSys {
        memlock: Some(64 << 10),
        ..Default::default()
    };
    let e = Device::with_backend(Arc::new(open(&sys).unwrap()))
        .err()
        .expect("refused");
    assert!(e.to_string().contains("RLIMIT_MEMLOCK"), "{e}");
    let c = calls(&sys);
    let event_ring = c.iter().find(|c| c.starts_with("map ")).unwrap();
    let event_ring = event_ring.split(' ').nth(1).unwrap();
    let unmapped = at(&c, &format!("unmap {event_ring}"));
    let queue = |c: &String| c.starts_with("event queue size");
    let last_queue_write = c.iter().rposition(queue).unwrap();
    assert_eq!(c[last_queue_write], "event queue size = 0x0", "{c:?}");
    assert!(last_queue_write < unmapped, "{c:?}");
    assert!(sys.log.lock().unwrap().maps.is_empty());
}

#[test]
fn hugepages_are_used_when_asked_or_their_absence_explained() {
    let sys = FakeSys::default();
    let b: Arc<dyn Backend> = Arc::new(open(&sys).unwrap());
    let iovas = Arc::new(crate::dma::IovaAllocator::default());
    match crate::dma::DmaMemory::new(b, &iovas, 4096, true, DmaMap::CARD_WRITES) {
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
        // The event ring (first), each port's transmit ring and its payload slots.
        assert_eq!(
            l.maps.len(),
            1 + 2 * MAX_PORTS,
            "the event and transmit rings are mapped"
        );
        *l.maps.keys().next().unwrap()
    };
    let base = |r: RxReg| bar0::rx_engine(r.word());
    assert_eq!(
        sys.log.lock().unwrap().bar0[&base(RxReg::EventQueueBaseLo)],
        ring as u32
    );
    let clop = dev
        .register(&ClopConfig::new(1, 6000).buffers(4, 64 << 10))
        .unwrap();
    {
        let l = sys.log.lock().unwrap();
        assert_eq!(
            l.maps.len(),
            2 + 2 * MAX_PORTS,
            "the CLOP's buffers are mapped"
        );
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
        1 + 2 * MAX_PORTS,
        "the CLOP's memory is unmapped, the rings stay"
    );
}

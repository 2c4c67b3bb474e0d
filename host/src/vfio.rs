//! The VFIO backend: a real card bound to vfio-pci.
//!
//! Not built yet (issue [host], VFIO part): opening a PCI address checks what can be checked from
//! sysfs and says what is missing, then reports that this build cannot drive hardware.

use std::path::{Path, PathBuf};

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

/// Checks a card's VFIO prerequisites; no backend can be made yet, hence `Infallible`.
pub fn open(address: &str) -> Result<std::convert::Infallible> {
    open_at(Path::new("/sys"), address)
}

/// As [`open`], with sysfs at `sys` (tests use a fake tree).
pub fn open_at(sys: &Path, address: &str) -> Result<std::convert::Infallible> {
    {
        let address = if address.matches(':').count() == 1 {
            format!("0000:{address}")
        } else {
            address.to_string()
        };
        let dev: PathBuf = sys.join("bus/pci/devices").join(&address);
        if !dev.exists() {
            return Err(Error::Vfio(format!(
                "no PCI device {address} (see `lspci -D` for the card's address)"
            )));
        }
        let driver = std::fs::read_link(dev.join("driver"))
            .ok()
            .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()));
        if driver.as_deref() != Some("vfio-pci") {
            return Err(Error::Vfio(format!(
                "{address} is bound to {}, not vfio-pci: run `echo vfio-pci > {}/driver_override; \
                 echo {address} > /sys/bus/pci/drivers_probe` as root",
                driver.as_deref().unwrap_or("no driver"),
                dev.display()
            )));
        }
        if !dev.join("iommu_group").exists() {
            return Err(Error::Vfio(format!(
                "{address} has no IOMMU group: enable the IOMMU (intel_iommu=on or amd_iommu=on \
                 on the kernel command line)"
            )));
        }
        Err(Error::Vfio(format!(
            "{address} is ready for VFIO, but this build of nanet cannot drive hardware yet (the \
             VFIO backend is not implemented); use \"sim\""
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pci_addresses_are_recognised() {
        assert!(is_pci_address("0000:03:00.0"));
        assert!(is_pci_address("03:00.1"));
        assert!(!is_pci_address("sim"));
        assert!(!is_pci_address("0000:03:00"));
        assert!(!is_pci_address("000:03:00.0"));
    }

    #[test]
    fn missing_or_unbound_devices_say_what_to_do() {
        let sys = std::env::temp_dir().join(format!("nanet-fake-sys-{}", std::process::id()));
        let dev = sys.join("bus/pci/devices/0000:03:00.0");
        std::fs::create_dir_all(&dev).unwrap();
        let e = open_at(&sys, "0000:04:00.0").err().unwrap();
        assert!(e.to_string().contains("lspci"), "{e}");
        let e = open_at(&sys, "03:00.0").err().unwrap();
        assert!(e.to_string().contains("not vfio-pci"), "{e}");
        let drv = sys.join("bus/pci/drivers/vfio-pci");
        std::fs::create_dir_all(&drv).unwrap();
        std::os::unix::fs::symlink(&drv, dev.join("driver")).unwrap();
        let e = open_at(&sys, "03:00.0").err().unwrap();
        assert!(e.to_string().contains("IOMMU"), "{e}");
        std::fs::remove_dir_all(&sys).unwrap();
    }
}

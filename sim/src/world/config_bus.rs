//! The Stratix V Hard IP for PCIe's configuration bus (`tl_cfg_add`, `tl_cfg_ctl`) as Intel
//! documents it: the Hard IP shows its configuration registers one after another, round robin
//! over the 16 addresses, moving on every four or eight core cycles (by parameterization), with no
//! strobe: the Stratix V Hard IP has no `tl_cfg_ctl_wr` (Arria V's has), and the paths are
//! multicycle, so the application must sample in the middle of a window. Address 0xF carries the
//! bus number (bits 12:5) and device number (bits 4:0) the root complex assigned when it enumerated
//! the card; it reads 0 until then. (Stratix V Avalon-ST Interface for PCIe Solutions user guide,
//! "Configuration Space Signals"; Intel's `altpcierd_tl_cfg_sample.v`.)
//!
//! The model makes a sampler's mistakes visible: `tl_cfg_ctl` is unsettled in the first two
//! cycles of each window (a mix of the old and the new register), and the registers the card does not read
//! hold values whose low 13 bits are not the bus/device number.

/// The address of the bus/device number.
pub const BUSDEV_ADDRESS: u8 = 0xF;

pub struct ConfigBus {
    /// The ID the root complex enumerated: bus (15:8), device (7:3), function 0.
    pub id: u16,
    /// Core cycles each register is shown for: 4 or 8.
    pub period: u64,
    /// The core cycle enumeration ends: address 0xF reads 0 before.
    pub enumerated_at: u64,
    cycle: u64,
    last_ctl: u32,
}

impl ConfigBus {
    pub fn new(id: u16, period: u64) -> Self {
        assert!(
            period == 4 || period == 8,
            "the Hard IP moves every 4 or 8 cycles"
        );
        assert_eq!(id & 7, 0, "a single-function card: function 0");
        Self {
            id,
            period,
            enumerated_at: 0,
            cycle: 0,
            last_ctl: 0,
        }
    }

    /// The value of register `address` (settled).
    pub fn register(&self, address: u8) -> u32 {
        if address == BUSDEV_ADDRESS {
            if self.cycle >= self.enumerated_at {
                (self.id >> 3) as u32
            } else {
                0
            }
        } else {
            // Registers the card does not read: values whose low 13 bits are never a bus/device
            // number the tests use (bit 12 set, distinct per address).
            0xA5A5_1000 | (address as u32) << 8 | ((address as u32) * 0x11)
        }
    }

    /// `tl_cfg_add` and `tl_cfg_ctl` in this core cycle; then one cycle on.
    pub fn drive(&mut self) -> (u8, u32) {
        let address = ((self.cycle / self.period) % 16) as u8;
        let first = self.cycle % self.period < 2;
        let settled = self.register(address);
        let ctl = if first {
            // Mid-transition: the upper half still the old register's.
            (self.last_ctl & 0xFFFF_0000) | (settled & 0x0000_FFFF) ^ 0x0000_0A5A
        } else {
            settled
        };
        if !first {
            self.last_ctl = settled;
        }
        self.cycle += 1;
        (address, ctl)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bus_shows_every_register_for_its_period_and_the_id_after_enumeration() {
        let mut bus = ConfigBus::new(0x6508, 8);
        bus.enumerated_at = 200;
        let mut seen_id = vec![];
        for cycle in 0..400u64 {
            let (add, ctl) = bus.drive();
            assert_eq!(add as u64, (cycle / 8) % 16);
            if add == BUSDEV_ADDRESS && cycle % 8 >= 2 {
                seen_id.push((cycle, ctl));
            }
        }
        assert!(seen_id
            .iter()
            .all(|&(c, v)| v == if c >= 200 { 0x6508 >> 3 } else { 0 }));
        assert!(seen_id.iter().any(|&(_, v)| v != 0));
    }
}

//! The reset outputs of the Stratix V Hard IP for PCIe as Intel's user guide and the IP's own
//! wrapper describe them, on its core clock:
//! - `npor` and `pin_perst` (both active low) reset the whole Hard IP and its transceivers; either
//!   low puts every output below back to reset.
//! - `serdes_pll_locked`: the transceiver PLL that makes `coreclkout_hip` locks some cycles after
//!   both are released.
//! - `pld_core_ready` (from the application): the application's clock is stable; with `pld_clk`
//!   from `coreclkout_hip` it follows `serdes_pll_locked` (Intel's example ties them). Raised
//!   before the PLL locked is a violation.
//! - `pld_clk_inuse`: the Hard IP runs from `pld_clk`, a few cycles after `pld_core_ready`.
//! - `reset_status` (active high): the Hard IP's core reset; the soft reset controller of Gen2
//!   variants releases it 1024 cycles after `pld_clk_inuse`. The application's reset follows it.

pub struct HardIpReset {
    /// Core cycles from release to `serdes_pll_locked`.
    pub pll_lock_cycles: u64,
    /// Core cycles from `pld_core_ready` to `pld_clk_inuse`, and from that to `reset_status` low.
    pub clk_switch_cycles: u64,
    pub core_reset_cycles: u64,
    released_for: u64,
    ready_for: u64,
    inuse_for: u64,
    pub serdes_pll_locked: bool,
    pub pld_clk_inuse: bool,
    pub reset_status: bool,
    pub violations: Vec<String>,
}

impl Default for HardIpReset {
    fn default() -> Self {
        Self {
            pll_lock_cycles: 200,
            clk_switch_cycles: 8,
            core_reset_cycles: 1024,
            released_for: 0,
            ready_for: 0,
            inuse_for: 0,
            serdes_pll_locked: false,
            pld_clk_inuse: false,
            reset_status: true,
            violations: vec![],
        }
    }
}

impl HardIpReset {
    /// One core cycle with these inputs; the outputs are then those of the next cycle.
    pub fn tick(&mut self, npor: bool, pin_perst: bool, pld_core_ready: bool) {
        if !(npor && pin_perst) {
            self.released_for = 0;
            self.ready_for = 0;
            self.inuse_for = 0;
        } else {
            self.released_for += 1;
            if pld_core_ready {
                if !self.serdes_pll_locked && self.ready_for == 0 {
                    self.violations
                        .push("pld_core_ready raised before serdes_pll_locked".to_string());
                }
                self.ready_for += 1;
            } else {
                self.ready_for = 0;
                self.inuse_for = 0;
            }
            if self.pld_clk_inuse {
                self.inuse_for += 1;
            }
        }
        self.serdes_pll_locked = self.released_for >= self.pll_lock_cycles;
        self.pld_clk_inuse = self.ready_for >= self.clk_switch_cycles;
        self.reset_status = self.inuse_for < self.core_reset_cycles;
    }
}

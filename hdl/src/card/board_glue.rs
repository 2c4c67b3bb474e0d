//! The glue between the NIC and a board's vendor IP: reset sequencing across the board's clocks,
//! the card's PCIe bus/device number from the Hard IP's configuration bus, and the status LEDs.
//! The board top (`nanet-board`) wires it; everything with state on the board is here, so that it
//! is simulated and linted like the rest of the gateware.
//!
//! Resets (a DFF has no reset of its own and starts at 0, so every "ready" here starts low):
//! - management domain (`mgmt_clock`, free running): ready once `POR` cycles have passed since
//!   power-up with the reset button released (synchronized through two flip-flops); a press
//!   starts the count again. `npor` (the Hard IP's) and `mgmt_reset` (PHY, MAC management,
//!   transceiver reconfiguration) follow it.
//! - core domain (the Hard IP's `coreclkout_hip`): ready while the management domain is, PERST#
//!   is released, the Hard IP's transceiver PLL is locked, its `pld_clk` is in use and its own
//!   reset is over: each condition through two flip-flops of its own, combined after them on two
//!   consecutive samples (a single sample of all five does not release the reset), and registered
//!   once more. A reset condition reaches `core_reset` in three core cycles.
//! - network domain (the PHY's XGMII clock): ready while the management domain is and the PHY's
//!   transmit side is (the XGMII clock comes from its transmit PLL): the two combined in a
//!   management register, which crosses through two flip-flops.
//! - `pld_core_ready` follows the Hard IP's PLL lock through two management flip-flops.
//!
//! Every crossing goes from a register (or an input) straight into two flip-flops, with no logic
//! between: `make timing`'s rule.
//!
//! The bus/device number: the Hard IP multiplexes its configuration registers on `tl_cfg_ctl` by
//! `tl_cfg_add` and toggles `tl_cfg_ctl_wr` when the value changes; the value is stable for
//! several cycles after the toggle, so it is taken one cycle after a toggle is seen, when the
//! address is 0xF (`cfg_busdev`: bus in bits 12:5, device in 4:0). The requester/completer ID is
//! `{bus, device, function 0}`.
//!
//! LEDs (active high here; the board top inverts them for active-low LEDs): link per port, and
//! activity per port, stretched to `STRETCH` network cycles so a single frame is visible.

use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct BoardGlue<const POR: u64, const STRETCH: u64> {
    pub mgmt_clock: Signal<In, Clock>,
    pub core_clock: Signal<In, Clock>,
    pub net_clock: Signal<In, Clock>,
    /// The board's reset button and PCIe PERST#, both active low, asynchronous.
    pub button_n: Signal<In, Bit>,
    pub perst_n: Signal<In, Bit>,
    /// The Hard IP: `reset_status` (its application logic in reset), `serdes_pll_locked`,
    /// `pld_clk_inuse`.
    pub hip_reset_status: Signal<In, Bit>,
    pub hip_pll_locked: Signal<In, Bit>,
    pub hip_clk_inuse: Signal<In, Bit>,
    /// The PHY's transmit side is out of reset (management domain).
    pub phy_tx_ready: Signal<In, Bit>,
    /// Per port: the link is up; a frame moved in either direction this cycle (network domain).
    pub link_up: Signal<In, Bits<4>>,
    pub activity: Signal<In, Bits<4>>,
    /// The Hard IP's configuration bus (core domain).
    pub tl_cfg_add: Signal<In, Bits<4>>,
    pub tl_cfg_ctl: Signal<In, Bits<32>>,
    pub tl_cfg_ctl_wr: Signal<In, Bit>,

    pub mgmt_reset: Signal<Out, Bit>,
    /// The Hard IP's `npor` (active low).
    pub npor: Signal<Out, Bit>,
    pub core_reset: Signal<Out, Bit>,
    pub net_reset: Signal<Out, Bit>,
    /// The Hard IP's `pld_core_ready`.
    pub pld_core_ready: Signal<Out, Bit>,
    /// Our bus/device/function number (the NIC's `pcie_id`).
    pub pcie_id: Signal<Out, Bits<16>>,
    pub led_link: Signal<Out, Bits<4>>,
    pub led_activity: Signal<Out, Bits<4>>,

    por_cycles: Constant<Bits<32>>,
    stretch_cycles: Constant<Bits<32>>,
    // management domain
    button_1: DFF<Bit>,
    button_2: DFF<Bit>,
    por_count: DFF<Bits<32>>,
    mgmt_ready: DFF<Bit>,
    pll_1: DFF<Bit>,
    pll_2: DFF<Bit>,
    net_ok: DFF<Bit>,
    // core domain: the five conditions, synchronized
    core_1: DFF<Bits<5>>,
    core_2: DFF<Bits<5>>,
    core_3: DFF<Bits<5>>,
    core_ready: DFF<Bit>,
    wr_1: DFF<Bit>,
    wr_2: DFF<Bit>,
    cfg_add: DFF<Bits<4>>,
    cfg_ctl: DFF<Bits<32>>,
    busdev: DFF<Bits<13>>,
    // network domain
    net_1: DFF<Bit>,
    net_ready: DFF<Bit>,
    link: DFF<Bits<4>>,
    stretch: [DFF<Bits<32>>; 4],
}

impl<const POR: u64, const STRETCH: u64> Default for BoardGlue<POR, STRETCH> {
    fn default() -> Self {
        Self {
            mgmt_clock: Default::default(),
            core_clock: Default::default(),
            net_clock: Default::default(),
            button_n: Default::default(),
            perst_n: Default::default(),
            hip_reset_status: Default::default(),
            hip_pll_locked: Default::default(),
            hip_clk_inuse: Default::default(),
            phy_tx_ready: Default::default(),
            link_up: Default::default(),
            activity: Default::default(),
            tl_cfg_add: Default::default(),
            tl_cfg_ctl: Default::default(),
            tl_cfg_ctl_wr: Default::default(),
            mgmt_reset: Default::default(),
            npor: Default::default(),
            core_reset: Default::default(),
            net_reset: Default::default(),
            pld_core_ready: Default::default(),
            pcie_id: Default::default(),
            led_link: Default::default(),
            led_activity: Default::default(),
            por_cycles: Constant::new(POR.into()),
            stretch_cycles: Constant::new(STRETCH.into()),
            button_1: Default::default(),
            button_2: Default::default(),
            por_count: Default::default(),
            mgmt_ready: Default::default(),
            pll_1: Default::default(),
            pll_2: Default::default(),
            net_ok: Default::default(),
            core_1: Default::default(),
            core_2: Default::default(),
            core_3: Default::default(),
            core_ready: Default::default(),
            wr_1: Default::default(),
            wr_2: Default::default(),
            cfg_add: Default::default(),
            cfg_ctl: Default::default(),
            busdev: Default::default(),
            net_1: Default::default(),
            net_ready: Default::default(),
            link: Default::default(),
            stretch: Default::default(),
        }
    }
}

/// The DE5-net's: 20 ms of power-on reset at 50 MHz, activity shown for 54 ms at 156.25 MHz.
pub type De5NetGlue = BoardGlue<1_000_000, 8_388_608>;

impl<const POR: u64, const STRETCH: u64> Logic for BoardGlue<POR, STRETCH> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, mgmt_clock, button_1, button_2, por_count, mgmt_ready, pll_1, pll_2, net_ok
        );
        dff_setup!(
            self, core_clock, core_1, core_2, core_3, core_ready, wr_1, wr_2, cfg_add, cfg_ctl,
            busdev
        );
        dff_setup!(self, net_clock, net_1, net_ready, link);

        // ---- management domain: power-on reset and the button ------------------------------
        self.button_1.d.next = self.button_n.val();
        self.button_2.d.next = self.button_1.q.val();
        if !self.button_2.q.val() {
            self.por_count.d.next = 0.into();
        } else if self.por_count.q.val() != self.por_cycles.val() {
            self.por_count.d.next = self.por_count.q.val() + 1;
        }
        self.mgmt_ready.d.next =
            self.button_2.q.val() & (self.por_count.q.val() == self.por_cycles.val());
        self.mgmt_reset.next = !self.mgmt_ready.q.val();
        self.npor.next = self.mgmt_ready.q.val();

        self.pll_1.d.next = self.hip_pll_locked.val();
        self.pll_2.d.next = self.pll_1.q.val();
        self.pld_core_ready.next = self.pll_2.q.val();
        self.net_ok.d.next = self.mgmt_ready.q.val() & self.phy_tx_ready.val();

        // ---- core domain ---------------------------------------------------------------------
        self.core_1.d.next = bit_cast::<5, 1>(self.mgmt_ready.q.val().into())
            | (bit_cast::<5, 1>(self.perst_n.val().into()) << 1)
            | (bit_cast::<5, 1>(self.hip_pll_locked.val().into()) << 2)
            | (bit_cast::<5, 1>(self.hip_clk_inuse.val().into()) << 3)
            | (bit_cast::<5, 1>((!self.hip_reset_status.val()).into()) << 4);
        self.core_2.d.next = self.core_1.q.val();
        self.core_3.d.next = self.core_2.q.val();
        self.core_ready.d.next = (self.core_2.q.val() & self.core_3.q.val()) == 0x1F;
        self.core_reset.next = !self.core_ready.q.val();

        self.wr_1.d.next = self.tl_cfg_ctl_wr.val();
        self.wr_2.d.next = self.wr_1.q.val();
        self.cfg_add.d.next = self.tl_cfg_add.val();
        self.cfg_ctl.d.next = self.tl_cfg_ctl.val();
        if (self.wr_1.q.val() != self.wr_2.q.val()) & (self.cfg_add.q.val() == 0xF) {
            self.busdev.d.next = self.cfg_ctl.q.val().get_bits::<13>(0);
        }
        self.pcie_id.next = bit_cast::<16, 13>(self.busdev.q.val()) << 3;

        // ---- network domain ------------------------------------------------------------------
        self.net_1.d.next = self.net_ok.q.val();
        self.net_ready.d.next = self.net_1.q.val();
        self.net_reset.next = !self.net_ready.q.val();
        self.link.d.next = self.link_up.val();
        self.led_link.next = self.link.q.val();
        self.led_activity.next = 0.into();
        for i in 0..4 {
            self.stretch[i].clock.next = self.net_clock.val();
            self.stretch[i].d.next = self.stretch[i].q.val();
            if self.activity.val().get_bit(i) {
                self.stretch[i].d.next = self.stretch_cycles.val();
            } else if self.stretch[i].q.val() != 0 {
                self.stretch[i].d.next = self.stretch[i].q.val() - 1;
            }
            if self.stretch[i].q.val() != 0 {
                self.led_activity.next = self.led_activity.val() | (1 << i);
            }
        }
    }
}

//! The glue between the NIC and a board's vendor IP: reset sequencing across the board's clocks,
//! the transceivers' reference oscillator programmed (`si570.rs`), the MACs set up
//! (`mac_init.rs`), the Hard IP's power-management handshake, and the status LEDs.
//! The board top (`nanet-board`) wires it; everything with state on the board is here, so that it
//! is simulated and linted like the rest of the gateware.
//!
//! Resets (a DFF has no reset of its own and starts at 0, so every "ready" here starts low):
//! - management domain (`mgmt_clock`, the board's management PLL; 100 to 125 MHz, as the
//!   transceiver reconfiguration controller needs): ready once `POR` cycles have passed since the
//!   PLL locked with the reset button released (both synchronized through two flip-flops); a
//!   press, or the PLL losing lock, starts the count again. `mgmt_reset` (the MACs' registers)
//!   follows it, and so does the Hard IP's `npor`, which also follows PERST# (through two
//!   flip-flops of this domain), as Intel's user guide asks: the Hard IP's whole reset, its
//!   configuration space included, is PERST# or power-on. Once ready, the domain programs the
//!   Si570 that clocks the transceivers and writes the MACs' settings.
//! - transceivers (`xcvr_reset`: the PHY's management reset, which resets the PHY through its
//!   embedded reset controller, and the reconfiguration controller's): out of reset once the
//!   Si570 runs at its new frequency, so that the PHY's PLL locks to the right reference; or once
//!   the programmer gave up on a part that never answered (the Hard IP's lanes, which the same
//!   controller calibrates, must not wait for a part that is not there: the card then comes up
//!   on PCIe, without a network link).
//! - the MACs (`mac_reset`, network domain): out of reset once the management domain is ready and
//!   the PHY's transmit side is (their clocks run then); their registers are written after that
//!   (the MAC's CSR reaches its receive and transmit registers through bridges in those clocks).
//! - core domain (the Hard IP's `coreclkout_hip`): ready while the management domain is, PERST#
//!   is released, the Hard IP's transceiver PLL is locked, its `pld_clk` is in use and its own
//!   reset is over: each condition through two flip-flops of its own, combined after them on two
//!   consecutive samples (a single sample of all five does not release the reset), and registered
//!   once more. A reset condition reaches `core_reset` in three core cycles.
//! - network domain (the PHY's XGMII clock): ready once the MACs are set up (the XGMII clock comes
//!   from the PHY's transmit PLL): a management register, which crosses through two flip-flops.
//! - `pld_core_ready` follows the Hard IP's PLL lock through two management flip-flops.
//!
//! Every crossing goes from a register (or an input) straight into two flip-flops, with no logic
//! between: `make timing`'s rule.
//!
//! Power management: the Hard IP raises `pme_to_sr` for a PME_Turn_Off message from the root
//! complex; the card has no state to save, so `pme_to_cr` acknowledges it in the next core
//! cycle (the Hard IP then sends PME_TO_Ack). (The card's bus/device number is the NIC's own
//! business: `pcie/config_sampler.rs`.)
//!
//! LEDs (active high here; the board top inverts them for active-low LEDs): link per port, and
//! activity per port, stretched to `STRETCH` network cycles so a single frame is visible.

use rust_hdl::prelude::*;

use crate::board::mac_init::MacCsrInit;
use crate::board::si570::Si570Init;

/// `POR`: power-on reset in management cycles; `STRETCH`: an activity LED's minimum on time in
/// network cycles; `I2C_QUARTER`: a quarter of an I2C bit in management cycles; `SETTLE`: the
/// Si570's settling time (and the wait before a new try) in management cycles.
#[derive(LogicBlock)]
pub struct BoardGlue<const POR: u64, const STRETCH: u64, const I2C_QUARTER: u64, const SETTLE: u64>
{
    pub mgmt_clock: Signal<In, Clock>,
    pub core_clock: Signal<In, Clock>,
    pub net_clock: Signal<In, Clock>,
    /// The board's reset button and PCIe PERST#, both active low, asynchronous.
    pub button_n: Signal<In, Bit>,
    /// The management PLL is locked (asynchronous).
    pub mgmt_pll_locked: Signal<In, Bit>,
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
    /// The Hard IP's PME_Turn_Off request (core domain).
    pub pme_to_sr: Signal<In, Bit>,
    /// The Si570's I2C bus (open drain: pull SCL / SDA low; SDA as the pin reads it).
    pub si570_scl_low: Signal<Out, Bit>,
    pub si570_sda_low: Signal<Out, Bit>,
    pub si570_sda_in: Signal<In, Bit>,
    /// The MACs' CSR interfaces (management domain; see `mac_init.rs`).
    pub mac_csr_address: Signal<Out, Bits<13>>,
    pub mac_csr_writedata: Signal<Out, Bits<32>>,
    pub mac_csr_write: Signal<Out, Bits<4>>,
    pub mac_csr_waitrequest: Signal<In, Bits<4>>,
    /// The PHY's and the reconfiguration controller's reset.
    pub xcvr_reset: Signal<Out, Bit>,
    /// The MACs' transmit and receive reset (network domain).
    pub mac_reset: Signal<Out, Bit>,

    pub mgmt_reset: Signal<Out, Bit>,
    /// The Hard IP's `npor` (active low).
    pub npor: Signal<Out, Bit>,
    pub core_reset: Signal<Out, Bit>,
    pub net_reset: Signal<Out, Bit>,
    /// The Hard IP's `pld_core_ready`.
    pub pld_core_ready: Signal<Out, Bit>,
    /// The acknowledge of `pme_to_sr`.
    pub pme_to_cr: Signal<Out, Bit>,
    pub led_link: Signal<Out, Bits<4>>,
    pub led_activity: Signal<Out, Bits<4>>,

    si570: Si570Init<I2C_QUARTER, SETTLE>,
    mac_init: MacCsrInit,
    xcvr_ready: DFF<Bit>,
    mac_ok: DFF<Bit>,
    mac_1: DFF<Bit>,
    mac_2: DFF<Bit>,
    por_cycles: Constant<Bits<32>>,
    stretch_cycles: Constant<Bits<32>>,
    // management domain
    button_1: DFF<Bit>,
    button_2: DFF<Bit>,
    mgmt_pll_1: DFF<Bit>,
    mgmt_pll_2: DFF<Bit>,
    por_count: DFF<Bits<32>>,
    mgmt_ready: DFF<Bit>,
    perst_1: DFF<Bit>,
    perst_2: DFF<Bit>,
    npor_q: DFF<Bit>,
    pll_1: DFF<Bit>,
    pll_2: DFF<Bit>,
    net_ok: DFF<Bit>,
    // core domain: the five conditions, synchronized
    core_1: DFF<Bits<5>>,
    core_2: DFF<Bits<5>>,
    core_3: DFF<Bits<5>>,
    core_ready: DFF<Bit>,
    pme_ack: DFF<Bit>,
    // network domain
    net_1: DFF<Bit>,
    net_ready: DFF<Bit>,
    link: DFF<Bits<4>>,
    stretch: [DFF<Bits<32>>; 4],
}

impl<const POR: u64, const STRETCH: u64, const I2C_QUARTER: u64, const SETTLE: u64> Default
    for BoardGlue<POR, STRETCH, I2C_QUARTER, SETTLE>
{
    fn default() -> Self {
        Self {
            mgmt_clock: Default::default(),
            core_clock: Default::default(),
            net_clock: Default::default(),
            button_n: Default::default(),
            mgmt_pll_locked: Default::default(),
            perst_n: Default::default(),
            hip_reset_status: Default::default(),
            hip_pll_locked: Default::default(),
            hip_clk_inuse: Default::default(),
            phy_tx_ready: Default::default(),
            link_up: Default::default(),
            activity: Default::default(),
            pme_to_sr: Default::default(),
            si570_scl_low: Default::default(),
            si570_sda_low: Default::default(),
            si570_sda_in: Default::default(),
            mac_csr_address: Default::default(),
            mac_csr_writedata: Default::default(),
            mac_csr_write: Default::default(),
            mac_csr_waitrequest: Default::default(),
            xcvr_reset: Default::default(),
            mac_reset: Default::default(),
            mgmt_reset: Default::default(),
            npor: Default::default(),
            core_reset: Default::default(),
            net_reset: Default::default(),
            pld_core_ready: Default::default(),
            pme_to_cr: Default::default(),
            led_link: Default::default(),
            led_activity: Default::default(),
            si570: Default::default(),
            mac_init: Default::default(),
            xcvr_ready: Default::default(),
            mac_ok: Default::default(),
            mac_1: Default::default(),
            mac_2: Default::default(),
            por_cycles: Constant::new(POR.into()),
            stretch_cycles: Constant::new(STRETCH.into()),
            button_1: Default::default(),
            button_2: Default::default(),
            mgmt_pll_1: Default::default(),
            mgmt_pll_2: Default::default(),
            por_count: Default::default(),
            mgmt_ready: Default::default(),
            perst_1: Default::default(),
            perst_2: Default::default(),
            npor_q: Default::default(),
            pll_1: Default::default(),
            pll_2: Default::default(),
            net_ok: Default::default(),
            core_1: Default::default(),
            core_2: Default::default(),
            core_3: Default::default(),
            core_ready: Default::default(),
            pme_ack: Default::default(),
            net_1: Default::default(),
            net_ready: Default::default(),
            link: Default::default(),
            stretch: Default::default(),
        }
    }
}

/// The management clock the DE5-Net's glue is timed for (its power-on count, I2C rate and the
/// Si570's settling time are in cycles of it).
pub const DE5NET_MGMT_MHZ: f64 = 100.0;

/// The DE5-net's: 20 ms of power-on reset at 100 MHz, activity shown for 54 ms at 156.25 MHz,
/// I2C at 100 kHz, 10 ms for the Si570 to settle.
pub type De5NetGlue = BoardGlue<2_000_000, 8_388_608, 250, 1_000_000>;

impl<const POR: u64, const STRETCH: u64, const I2C_QUARTER: u64, const SETTLE: u64> Logic
    for BoardGlue<POR, STRETCH, I2C_QUARTER, SETTLE>
{
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, mgmt_clock, button_1, button_2, mgmt_pll_1, mgmt_pll_2, por_count, mgmt_ready,
            perst_1, perst_2, npor_q, pll_1, pll_2, net_ok, xcvr_ready, mac_ok
        );
        dff_setup!(self, core_clock, core_1, core_2, core_3, core_ready, pme_ack);
        dff_setup!(self, net_clock, net_1, net_ready, link, mac_1, mac_2);

        // ---- management domain: power-on reset and the button ------------------------------
        self.button_1.d.next = self.button_n.val();
        self.button_2.d.next = self.button_1.q.val();
        self.mgmt_pll_1.d.next = self.mgmt_pll_locked.val();
        self.mgmt_pll_2.d.next = self.mgmt_pll_1.q.val();
        if !self.button_2.q.val() | !self.mgmt_pll_2.q.val() {
            self.por_count.d.next = 0.into();
        } else if self.por_count.q.val() != self.por_cycles.val() {
            self.por_count.d.next = self.por_count.q.val() + 1;
        }
        self.mgmt_ready.d.next =
            self.button_2.q.val() & (self.por_count.q.val() == self.por_cycles.val());
        self.mgmt_reset.next = !self.mgmt_ready.q.val();
        self.perst_1.d.next = self.perst_n.val();
        self.perst_2.d.next = self.perst_1.q.val();
        self.npor_q.d.next = self.mgmt_ready.q.val() & self.perst_2.q.val();
        self.npor.next = self.npor_q.q.val();

        self.pll_1.d.next = self.hip_pll_locked.val();
        self.pll_2.d.next = self.pll_1.q.val();
        self.pld_core_ready.next = self.pll_2.q.val();
        // ---- management domain: the Si570, then the transceivers; the MACs, then the network --
        self.si570.clock.next = self.mgmt_clock.val();
        self.si570.reset.next = !self.mgmt_ready.q.val();
        self.si570.start.next = self.mgmt_ready.q.val();
        self.si570.sda_in.next = self.si570_sda_in.val();
        self.si570_scl_low.next = self.si570.scl_low.val();
        self.si570_sda_low.next = self.si570.sda_low.val();
        self.xcvr_ready.d.next =
            self.mgmt_ready.q.val() & (self.si570.done.val() | self.si570.gave_up.val());
        self.xcvr_reset.next = !self.xcvr_ready.q.val();
        self.mac_init.clock.next = self.mgmt_clock.val();
        self.mac_ok.d.next = self.mgmt_ready.q.val() & self.phy_tx_ready.val();
        self.mac_init.reset.next = !self.mac_ok.q.val();
        self.mac_init.start.next = self.mac_ok.q.val();
        self.mac_init.csr_waitrequest.next = self.mac_csr_waitrequest.val();
        self.mac_csr_address.next = self.mac_init.csr_address.val();
        self.mac_csr_writedata.next = self.mac_init.csr_writedata.val();
        self.mac_csr_write.next = self.mac_init.csr_write.val();
        self.net_ok.d.next = self.mac_ok.q.val() & self.mac_init.done.val();

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

        self.pme_ack.d.next = self.pme_to_sr.val();
        self.pme_to_cr.next = self.pme_ack.q.val();

        // ---- network domain ------------------------------------------------------------------
        self.mac_1.d.next = self.mac_ok.q.val();
        self.mac_2.d.next = self.mac_1.q.val();
        self.mac_reset.next = !self.mac_2.q.val();
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

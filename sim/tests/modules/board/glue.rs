//! Board glue (`nanet_hdl::board::glue`) with a 50-cycle power-on reset, a 20-cycle LED stretch,
//! I2C bits of 8 cycles and 100 cycles for the Si570 to settle, its three clocks at the DE5-net's
//! rates, with the board's Si570 (`nanet_sim::world::si570`) on its I2C bus and four MACs'
//! registers (`nanet_sim::world::mac_csr`, with random wait states) on its CSR ports: resets come
//! out of power-on, a button press and PERST# in order (management first; the Hard IP's `npor`
//! with power-on and PERST#; core only with the Hard IP ready; network only with the MACs set up
//! and the PHY ready), the transceivers leave reset only once the Si570 runs at 644.53125 MHz, a
//! PME_Turn_Off is acknowledged, the core leaves reset only after the Hard IP's own sequence
//! (`nanet_sim::world::hard_ip_reset`: PLL lock, `pld_core_ready`, `pld_clk_inuse`,
//! `reset_status`) and goes back with PERST#, and the LEDs follow link and activity (stretched).
//! On the rust-hdl model and its Verilog in lockstep.

use nanet_hdl::board::glue::BoardGlue;
use nanet_hdl::board::mac_init::MAC_MAX_FRAME;
use nanet_sim::design_ports;
use nanet_sim::engine::clocks::{CORE_CLOCK_PS, NET_CLOCK_PS};
use nanet_sim::engine::{ClockId, DesignSim, EngineKind};
use nanet_sim::world::hard_ip_reset::HardIpReset;
use nanet_sim::world::mac_csr::MacCsr;
use nanet_sim::world::si570::Si570;

#[derive(Clone, Default)]
pub struct GIn {
    button_n: bool,
    mgmt_pll_locked: bool,
    perst_n: bool,
    hip_reset_status: bool,
    hip_pll_locked: bool,
    hip_clk_inuse: bool,
    phy_tx_ready: bool,
    link_up: u8,
    activity: u8,
    pme_to_sr: bool,
    si570_sda_in: bool,
    mac_csr_waitrequest: u8,
}

#[derive(Clone, Default, Debug)]
pub struct GOut {
    mgmt_reset: bool,
    npor: bool,
    core_reset: bool,
    net_reset: bool,
    xcvr_reset: bool,
    mac_reset: bool,
    pld_core_ready: bool,
    pme_to_cr: bool,
    led_link: u8,
    led_activity: u8,
    si570_scl_low: bool,
    si570_sda_low: bool,
    mac_csr_address: u16,
    mac_csr_writedata: u32,
    mac_csr_write: u8,
}

design_ports! {
    pub GlueDesign for BoardGlue<50, 20, 2, 100>, top "nanet_board_glue_test", inputs GIn,
    outputs GOut,
    clocks { mgmt_clock, core_clock, net_clock }
    inputs {
        button_n => button_n, mgmt_pll_locked => mgmt_pll_locked, perst_n => perst_n,
        hip_reset_status => hip_reset_status, hip_pll_locked => hip_pll_locked,
        hip_clk_inuse => hip_clk_inuse, phy_tx_ready => phy_tx_ready, link_up => link_up,
        activity => activity, pme_to_sr => pme_to_sr, si570_sda_in => si570_sda_in,
        mac_csr_waitrequest => mac_csr_waitrequest,
    }
    outputs {
        mgmt_reset => mgmt_reset, npor => npor, core_reset => core_reset, net_reset => net_reset,
        xcvr_reset => xcvr_reset, mac_reset => mac_reset, pld_core_ready => pld_core_ready, pme_to_cr => pme_to_cr,
        led_link => led_link, led_activity => led_activity, si570_scl_low => si570_scl_low,
        si570_sda_low => si570_sda_low, mac_csr_address => mac_csr_address,
        mac_csr_writedata => mac_csr_writedata, mac_csr_write => mac_csr_write,
    }
}

struct Bench {
    d: DesignSim<GlueDesign>,
    mgmt: ClockId,
    core: ClockId,
    net: ClockId,
    si570: Si570,
    /// The Si570 pulls SDA low.
    part_pull: bool,
    macs: [MacCsr; 4],
}

impl Bench {
    fn new() -> Self {
        let mut d =
            DesignSim::<GlueDesign>::new(EngineKind::Both).unwrap_or_else(|e| panic!("{e}"));
        let mgmt = d.add_clock("mgmt", 0, 10_000);
        d.inputs.mgmt_pll_locked = true;
        d.inputs.si570_sda_in = true;
        let core = d.add_clock("core", 1, CORE_CLOCK_PS);
        let net = d.add_clock("net", 2, NET_CLOCK_PS);
        // The DE5-Net's part: address 0, 100 MHz from the factory, its crystal 700 ppm slow.
        let mut si570 = Si570::new(0, 114.285 * (1.0 - 700e-6), 100.0, 9, 6);
        // 10 ms is 1000 bits at 100 kHz.
        si570.cycles_10ms = 8000;
        Self {
            d,
            mgmt,
            core,
            net,
            si570,
            part_pull: false,
            macs: std::array::from_fn(|p| MacCsr::new(0.4, 70 + p as u64)),
        }
    }

    /// One management cycle, with the Si570 on the I2C bus and the MACs on the CSR ports.
    fn mgmt_cycle(&mut self) -> GOut {
        let mut wait = 0;
        for (p, m) in self.macs.iter().enumerate() {
            wait |= (m.waitrequest() as u8) << p;
        }
        self.d.inputs.mac_csr_waitrequest = wait;
        let o = self.d.settle().clone();
        for (p, m) in self.macs.iter_mut().enumerate() {
            m.in_reset = o.mac_reset;
            let write = o.mac_csr_write >> p & 1 == 1;
            m.tick(write.then_some((o.mac_csr_address, o.mac_csr_writedata)));
        }
        let scl = !o.si570_scl_low;
        let sda = !(o.si570_sda_low || self.part_pull);
        self.part_pull = self.si570.tick(scl, sda);
        self.d.inputs.si570_sda_in = !(o.si570_sda_low || self.part_pull);
        self.d.tick(self.mgmt);
        o
    }

    fn mgmt_cycles(&mut self, n: usize) -> GOut {
        for _ in 0..n {
            self.mgmt_cycle();
        }
        self.d.settle().clone()
    }

    /// Management cycles until `done` holds of the outputs (at most `limit`); how many.
    fn until(&mut self, limit: usize, done: impl Fn(&GOut) -> bool) -> usize {
        for n in 0..limit {
            if done(self.d.settle()) {
                return n;
            }
            self.mgmt_cycle();
        }
        panic!(
            "not within {limit} management cycles: {:?}",
            self.d.settle()
        );
    }

    fn assert_models_clean(&self) {
        assert!(
            self.si570.violations.is_empty(),
            "{:?}",
            self.si570.violations
        );
        for m in &self.macs {
            assert!(m.violations.is_empty(), "{:?}", m.violations);
        }
    }
}

#[test]
fn resets_come_out_in_order_and_go_back_on_a_press() {
    let mut b = Bench::new();
    b.d.inputs.button_n = true;
    let o = b.mgmt_cycles(40);
    assert!(
        o.mgmt_reset && !o.npor && o.core_reset && o.net_reset,
        "{o:?}"
    );
    let o = b.mgmt_cycles(20);
    assert!(
        !o.mgmt_reset && !o.npor,
        "out of power-on reset after 50 cycles, the Hard IP held by PERST#: {o:?}"
    );
    assert!(
        o.core_reset && o.net_reset,
        "the Hard IP and the PHY are not ready: {o:?}"
    );
    // The PHY's transmit side comes up: the network domain follows once the MACs are set up
    // (every write taken by every MAC); the core domain does not.
    b.d.inputs.phy_tx_ready = true;
    b.until(200, |o| !o.net_reset);
    for m in &b.macs {
        assert_eq!(m.writes, nanet_hdl::board::mac_init::MAC_SETUP);
    }
    let o = b.d.settle().clone();
    assert!(o.core_reset, "{o:?}");
    // The Hard IP: PLL locked (pld_core_ready), clock in use, its reset over, PERST# released.
    b.d.inputs.hip_pll_locked = true;
    b.d.inputs.hip_clk_inuse = true;
    let o = b.mgmt_cycles(2);
    assert!(
        o.pld_core_ready && o.core_reset,
        "PERST# still asserted: {o:?}"
    );
    b.d.inputs.perst_n = true;
    let o = b.mgmt_cycles(2);
    assert!(!o.core_reset && !o.npor, "{o:?}");
    // npor: PERST#'s two flip-flops and its register.
    let o = b.mgmt_cycles(1);
    assert!(o.npor, "PERST# released: {o:?}");
    b.d.inputs.perst_n = false;
    let o = b.mgmt_cycles(3);
    assert!(
        !o.npor && o.core_reset && !o.mgmt_reset,
        "PERST# again: {o:?}"
    );
    b.d.inputs.perst_n = true;
    let o = b.mgmt_cycles(3);
    assert!(o.npor && !o.core_reset, "{o:?}");
    b.d.inputs.hip_reset_status = true;
    let o = b.mgmt_cycles(2);
    assert!(
        o.core_reset,
        "the Hard IP's own reset holds the core: {o:?}"
    );
    b.d.inputs.hip_reset_status = false;
    // A press: everything back in reset, out again 50 cycles after the release. (Seven cycles: two
    // of the button's synchronizer, one of mgmt_ready, one of the MACs' condition register, one of
    // the network domain's, then its two flip-flops and their clock's phase.)
    b.d.inputs.button_n = false;
    let o = b.mgmt_cycles(7);
    assert!(
        o.mgmt_reset && !o.npor && o.core_reset && o.net_reset,
        "{o:?}"
    );
    b.d.inputs.button_n = true;
    let o = b.mgmt_cycles(30);
    assert!(o.mgmt_reset, "{o:?}");
    let o = b.mgmt_cycles(30);
    assert!(!o.mgmt_reset && !o.core_reset, "{o:?}");
    // The MACs are set up again before the network leaves reset.
    b.until(200, |o| !o.net_reset);
    b.assert_models_clean();
}

#[test]
fn losing_the_management_pll_resets_the_card() {
    let mut b = Bench::new();
    b.d.inputs.button_n = true;
    let o = b.mgmt_cycles(60);
    assert!(!o.mgmt_reset, "{o:?}");
    b.d.inputs.mgmt_pll_locked = false;
    let o = b.mgmt_cycles(4);
    assert!(o.mgmt_reset && !o.npor && o.xcvr_reset, "{o:?}");
    b.d.inputs.mgmt_pll_locked = true;
    let o = b.mgmt_cycles(40);
    assert!(o.mgmt_reset, "the power-on count starts again: {o:?}");
    let o = b.mgmt_cycles(20);
    assert!(!o.mgmt_reset, "{o:?}");
}

/// The PHY and the reconfiguration controller stay in reset until the Si570, programmed from its
/// own factory registers (its crystal 700 ppm off nominal), runs at 644.53125 MHz and has settled;
/// the MACs hold the card's settings.
#[test]
fn the_transceivers_leave_reset_once_the_si570_runs_at_its_new_frequency() {
    let mut b = Bench::new();
    b.d.inputs.button_n = true;
    b.d.inputs.phy_tx_ready = true;
    let mut new_freq_at = None;
    let mut cycles = 0;
    while b.d.settle().xcvr_reset {
        assert!(
            cycles < 40_000,
            "the Si570 never set: {:?}",
            b.si570.accesses
        );
        if new_freq_at.is_none() && !b.si570.new_freqs.is_empty() {
            new_freq_at = Some(cycles);
        }
        b.mgmt_cycle();
        cycles += 1;
    }
    let at = new_freq_at.expect("NewFreq before the transceivers leave reset");
    assert!(
        cycles - at >= 100,
        "the output settled for {} cycles",
        cycles - at
    );
    assert_eq!(b.si570.new_freqs.len(), 1);
    let ppm = (b.si570.output_mhz / 644.53125 - 1.0) * 1e6;
    assert!(ppm.abs() < 0.01, "{} MHz ({ppm} ppm)", b.si570.output_mhz);
    b.assert_models_clean();
    for m in &b.macs {
        assert_eq!(m.reg("rx_padcrc_control"), 1, "FCS stripped, pads kept");
        assert_eq!(m.reg("rx_frame_maxlength"), MAC_MAX_FRAME);
        assert_eq!(m.reg("tx_frame_maxlength"), MAC_MAX_FRAME);
        assert_eq!(m.reg("rx_crccheck_control"), 2);
        assert_eq!(m.reg("tx_crcins_control"), 3);
        assert_eq!(m.reg("rx_frame_control"), 3);
        assert_eq!(
            m.reg("rx_transfer_control") | m.reg("tx_transfer_control"),
            0
        );
        assert_eq!(m.writes, nanet_hdl::board::mac_init::MAC_SETUP);
    }
}

/// No Si570 answers (the part at another address): the programmer gives up after its tries and
/// the transceivers leave reset all the same (the Hard IP's lanes share their reconfiguration
/// controller), the part's output untouched.
#[test]
fn without_an_si570_the_transceivers_leave_reset_once_the_programmer_gives_up() {
    let mut b = Bench::new();
    b.si570 = Si570::new(0x55, 114.285, 100.0, 9, 6);
    b.d.inputs.button_n = true;
    b.until(20_000, |o| !o.xcvr_reset);
    assert!(b.si570.accesses.is_empty());
    assert!((b.si570.output_mhz - 100.0).abs() < 1e-6);
}

#[test]
fn a_pme_turn_off_is_acknowledged_in_the_next_core_cycle() {
    let mut b = Bench::new();
    assert!(!b.d.settle().pme_to_cr);
    b.d.inputs.pme_to_sr = true;
    b.d.tick(b.core);
    assert!(b.d.settle().pme_to_cr);
    b.d.inputs.pme_to_sr = false;
    b.d.tick(b.core);
    assert!(!b.d.settle().pme_to_cr);
}

#[test]
fn leds_show_link_and_stretched_activity() {
    let mut b = Bench::new();
    b.d.inputs.link_up = 0b0101;
    b.d.inputs.activity = 0b0010;
    b.d.tick(b.net);
    b.d.tick(b.net);
    b.d.inputs.activity = 0;
    let o = b.d.settle().clone();
    assert_eq!((o.led_link, o.led_activity), (0b0101, 0b0010));
    for _ in 0..15 {
        b.d.tick(b.net);
    }
    assert_eq!(b.d.settle().led_activity, 0b0010, "still shown");
    for _ in 0..10 {
        b.d.tick(b.net);
    }
    assert_eq!(b.d.settle().led_activity, 0, "off after the stretch");
}

/// The Hard IP's reset outputs from its model, driven by the glue's `npor`, PERST# and
/// `pld_core_ready`: the core leaves reset only once the Hard IP's own reset is over
/// (`reset_status` low, after its PLL locked and it took `pld_clk`), and goes back with PERST#.
#[test]
fn the_core_leaves_reset_after_the_hard_ips_own_sequence() {
    let mut b = Bench::new();
    let mut hip = HardIpReset::default();
    b.d.inputs.button_n = true;
    b.d.inputs.perst_n = true;
    let mut released_at = None;
    for cycle in 0..4000u64 {
        let o = b.d.settle().clone();
        // The Hard IP's outputs as the glue sees them (its core clock).
        hip.tick(o.npor, b.d.inputs.perst_n, o.pld_core_ready);
        b.d.inputs.hip_pll_locked = hip.serdes_pll_locked;
        b.d.inputs.hip_clk_inuse = hip.pld_clk_inuse;
        b.d.inputs.hip_reset_status = hip.reset_status;
        if !o.core_reset && released_at.is_none() {
            assert!(
                !hip.reset_status,
                "the core out of reset before the Hard IP"
            );
            released_at = Some(cycle);
            // PERST# again: the Hard IP and the core go back to reset.
            b.d.inputs.perst_n = false;
        }
        if let Some(at) = released_at {
            if cycle == at + 10 {
                assert!(o.core_reset && !o.npor, "{o:?}");
                b.d.inputs.perst_n = true;
            }
            if cycle > at + 10 && !o.core_reset {
                assert!(cycle > at + hip.core_reset_cycles, "{cycle}");
                assert!(hip.violations.is_empty(), "{:?}", hip.violations);
                return;
            }
        }
        b.d.tick(b.core);
    }
    panic!("the core never left reset twice: {:?}", b.d.settle());
}

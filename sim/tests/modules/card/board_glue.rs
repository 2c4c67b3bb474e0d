//! Board glue (`nanet_hdl::card::board_glue`) with a 50-cycle power-on reset and 20-cycle LED stretch,
//! its three clocks at the DE5-net's rates: resets come out of power-on, a button press and
//! PERST# in order (management first; core only with the Hard IP ready; network only with the
//! PHY ready), the bus/device number is taken from the configuration bus one cycle after a toggle
//! of `tl_cfg_ctl_wr` at address 0xF and not at other addresses, and the LEDs follow link and
//! activity (stretched). On the rust-hdl model and its Verilog in lockstep.

use nanet_hdl::card::board_glue::BoardGlue;
use nanet_sim::design_ports;
use nanet_sim::engine::clocks::{CORE_CLOCK_PS, NET_CLOCK_PS};
use nanet_sim::engine::{ClockId, DesignSim, EngineKind};

#[derive(Clone, Default)]
pub struct GIn {
    button_n: bool,
    perst_n: bool,
    hip_reset_status: bool,
    hip_pll_locked: bool,
    hip_clk_inuse: bool,
    phy_tx_ready: bool,
    link_up: u8,
    activity: u8,
    tl_cfg_add: u8,
    tl_cfg_ctl: u32,
    tl_cfg_ctl_wr: bool,
}

#[derive(Clone, Default, Debug)]
pub struct GOut {
    mgmt_reset: bool,
    npor: bool,
    core_reset: bool,
    net_reset: bool,
    pld_core_ready: bool,
    pcie_id: u16,
    led_link: u8,
    led_activity: u8,
}

design_ports! {
    pub GlueDesign for BoardGlue<50, 20>, top "nanet_board_glue_test", inputs GIn, outputs GOut,
    clocks { mgmt_clock, core_clock, net_clock }
    inputs {
        button_n => button_n, perst_n => perst_n, hip_reset_status => hip_reset_status,
        hip_pll_locked => hip_pll_locked, hip_clk_inuse => hip_clk_inuse,
        phy_tx_ready => phy_tx_ready, link_up => link_up, activity => activity,
        tl_cfg_add => tl_cfg_add, tl_cfg_ctl => tl_cfg_ctl, tl_cfg_ctl_wr => tl_cfg_ctl_wr,
    }
    outputs {
        mgmt_reset => mgmt_reset, npor => npor, core_reset => core_reset, net_reset => net_reset,
        pld_core_ready => pld_core_ready, pcie_id => pcie_id, led_link => led_link,
        led_activity => led_activity,
    }
}

struct Bench {
    d: DesignSim<GlueDesign>,
    mgmt: ClockId,
    core: ClockId,
    net: ClockId,
}

impl Bench {
    fn new() -> Self {
        let mut d =
            DesignSim::<GlueDesign>::new(EngineKind::Both).unwrap_or_else(|e| panic!("{e}"));
        let mgmt = d.add_clock("mgmt", 0, 20_000);
        let core = d.add_clock("core", 1, CORE_CLOCK_PS);
        let net = d.add_clock("net", 2, NET_CLOCK_PS);
        Self { d, mgmt, core, net }
    }
    fn mgmt_cycles(&mut self, n: usize) -> GOut {
        for _ in 0..n {
            self.d.tick(self.mgmt);
        }
        self.d.settle().clone()
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
        !o.mgmt_reset && o.npor,
        "out of power-on reset after 50 cycles: {o:?}"
    );
    assert!(
        o.core_reset && o.net_reset,
        "the Hard IP and the PHY are not ready: {o:?}"
    );
    // The PHY's transmit side comes up: the network domain follows; the core domain does not.
    b.d.inputs.phy_tx_ready = true;
    let o = b.mgmt_cycles(2);
    assert!(!o.net_reset && o.core_reset, "{o:?}");
    // The Hard IP: PLL locked (pld_core_ready), clock in use, its reset over, PERST# released.
    b.d.inputs.hip_pll_locked = true;
    b.d.inputs.hip_clk_inuse = true;
    let o = b.mgmt_cycles(2);
    assert!(
        o.pld_core_ready && o.core_reset,
        "PERST# still asserted: {o:?}"
    );
    b.d.inputs.perst_n = true;
    let o = b.mgmt_cycles(1);
    assert!(!o.core_reset, "{o:?}");
    b.d.inputs.hip_reset_status = true;
    let o = b.mgmt_cycles(1);
    assert!(
        o.core_reset,
        "the Hard IP's own reset holds the core: {o:?}"
    );
    b.d.inputs.hip_reset_status = false;
    // A press: everything back in reset, out again 50 cycles after the release. (Five cycles: two
    // of the button's synchronizer, one of mgmt_ready, one of the network domain's condition
    // register, then its two flip-flops.)
    b.d.inputs.button_n = false;
    let o = b.mgmt_cycles(5);
    assert!(
        o.mgmt_reset && !o.npor && o.core_reset && o.net_reset,
        "{o:?}"
    );
    b.d.inputs.button_n = true;
    let o = b.mgmt_cycles(30);
    assert!(o.mgmt_reset, "{o:?}");
    let o = b.mgmt_cycles(30);
    assert!(!o.mgmt_reset && !o.core_reset && !o.net_reset, "{o:?}");
}

#[test]
fn the_bus_number_is_taken_after_a_toggle_at_address_f() {
    let mut b = Bench::new();
    let mut wr = false;
    let mut put = |b: &mut Bench, add: u8, ctl: u32| {
        b.d.inputs.tl_cfg_add = add;
        b.d.inputs.tl_cfg_ctl = ctl;
        wr = !wr;
        b.d.inputs.tl_cfg_ctl_wr = wr;
        for _ in 0..8 {
            b.d.tick(b.core);
        }
        b.d.settle().pcie_id
    };
    // Bus 3, device 0: 0x0300 as requester ID; the bits above 12 are not ours.
    assert_eq!(put(&mut b, 0xF, 0xFFFF_E000 | 3 << 5), 0x0300);
    // Another address changes nothing.
    assert_eq!(put(&mut b, 0x2, 0x1FFF), 0x0300);
    // Bus 0x81, device 5.
    assert_eq!(put(&mut b, 0xF, 0x81 << 5 | 5), 0x8128);
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

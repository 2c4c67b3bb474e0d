//! The vendor IP the board top instantiates, as black boxes: each variation's settings (the IP
//! editor's parameters, by their names in Intel's `_hw.tcl` and in the editor) and its port list
//! (names, directions, widths), from which the stub modules for lint, the instances in the top,
//! the IP generation commands and the README's settings table are all made, so none of them can
//! disagree. A variation is named `<board top>_<instance>`.
//!
//! Where the facts come from: the port lists are those Intel's IP generation exports for the
//! stated settings (the Quartus 13.1 `_hw.tcl` of each core, cross-checked against variations
//! that Quartus 14.0-16.1 generated in public DE5-Net and Stratix V designs); the options that add
//! or remove a port are named beside it. `boards/tests/vendor_ip.rs` compares every instance of
//! the generated top with an independent statement of Intel's interfaces
//! (`shared/vendor-ip/*.json`).

use std::fmt::Write;

use nanet_contract::pcie::PcieVariant;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    In,
    Out,
    /// Board top ports only: an open-drain line the top both drives low and reads.
    InOut,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IpPort {
    pub name: String,
    pub dir: Dir,
    pub width: usize,
}

/// A port of a card's top module, read from its block (`nanet_hdl::verilog::top_ports`).
impl From<nanet_hdl::verilog::TopPort> for IpPort {
    fn from(p: nanet_hdl::verilog::TopPort) -> Self {
        IpPort {
            name: p.name,
            dir: if p.input { Dir::In } else { Dir::Out },
            width: p.bits,
        }
    }
}

/// One parameter of an IP variation: its `_hw.tcl` name, the IP editor's label, the value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IpSetting {
    pub param: &'static str,
    pub gui: &'static str,
    pub value: String,
}

/// One vendor IP variation.
#[derive(Clone, Debug)]
pub struct IpBlock {
    /// The variation's module name.
    pub module: String,
    /// The IP core (`ip-generate --component-name`).
    pub component: &'static str,
    /// The core's name in the IP Catalog.
    pub title: &'static str,
    pub settings: Vec<IpSetting>,
    pub ports: Vec<IpPort>,
}

/// Reconfiguration interfaces: width of one `reconfig_to_xcvr` / `reconfig_from_xcvr` slice.
pub const RECONFIG_TO_BITS: usize = 70;
pub const RECONFIG_FROM_BITS: usize = 46;
/// Reconfiguration interfaces of the PCIe Hard IP at x8: 8 channels, the channel that routes the
/// PCS clock, and the PLL; Gen3 adds one more (the fixtures' and Intel's Gen3 x8 designs' 11).
pub fn pcie_reconfig_interfaces(variant: PcieVariant) -> usize {
    match variant {
        PcieVariant::Gen2x8 => 10,
        PcieVariant::Gen3x8 => 11,
    }
}

/// Interfaces of a 10GBASE-R PHY of `channels` channels (a channel and its transmit PLL each).
pub fn phy_reconfig_interfaces(channels: usize) -> usize {
    2 * channels
}

struct PortList(Vec<IpPort>);

impl PortList {
    fn port(&mut self, dir: Dir, name: impl Into<String>, width: usize) -> &mut Self {
        self.0.push(IpPort {
            name: name.into(),
            dir,
            width,
        });
        self
    }
    fn i(&mut self, name: impl Into<String>, width: usize) -> &mut Self {
        self.port(Dir::In, name, width)
    }
    fn o(&mut self, name: impl Into<String>, width: usize) -> &mut Self {
        self.port(Dir::Out, name, width)
    }
}

/// Settings as (`_hw.tcl` name, editor label, value).
fn settings(list: &[(&'static str, &'static str, String)]) -> Vec<IpSetting> {
    list.iter()
        .map(|(param, gui, value)| IpSetting {
            param,
            gui,
            value: value.clone(),
        })
        .collect()
}

/// Stratix V Hard IP for PCI Express (`altera_pcie_sv_hip_ast`) for `variant` (Gen2 x8 with the
/// 128-bit Avalon-ST interface, Gen3 x8 with the 256-bit one, single packet per cycle), native
/// endpoint, every optional port off. There is no `tl_cfg_ctl_wr`/`tl_cfg_sts_wr` (Arria V and
/// Stratix IV have them): the configuration bus multicycles without a strobe.
pub fn pcie_hip(module: &str, variant: PcieVariant) -> IpBlock {
    let off = || "0".to_string();
    // Gen3 needs the 3.0 specification in the editor (2.1 stops at 5 GT/s).
    let (rate, spec) = match variant {
        PcieVariant::Gen2x8 => ("Gen2 (5.0 Gbps)", "2.1"),
        PcieVariant::Gen3x8 => ("Gen3 (8.0 Gbps)", "3.0"),
    };
    let settings = settings(&[
        ("lane_mask_hwtcl", "Number of lanes", "x8".into()),
        ("gen123_lane_rate_mode_hwtcl", "Lane rate", rate.into()),
        ("port_type_hwtcl", "Port type", "Native endpoint".into()),
        (
            "pcie_spec_version_hwtcl",
            "PCI Express Base Specification version",
            spec.into(),
        ),
        (
            "ast_width_hwtcl",
            "Application interface",
            format!("Avalon-ST {}-bit", variant.beat_bits()),
        ),
        (
            "rxbuffer_rxreq_hwtcl",
            "RX buffer credit allocation - performance for received requests",
            "Low".into(),
        ),
        (
            "pll_refclk_freq_hwtcl",
            "Reference clock frequency",
            "100 MHz".into(),
        ),
        (
            "set_pld_clk_x1_625MHz_hwtcl",
            "Use 62.5 MHz application clock",
            off(),
        ),
        (
            "use_rx_st_be_hwtcl",
            "Use deprecated RX Avalon-ST data byte enable port (rx_st_be)",
            off(),
        ),
        (
            "use_ast_parity",
            "Enable byte parity ports on Avalon-ST interface",
            off(),
        ),
        (
            "multiple_packets_per_cycle_hwtcl",
            "Enable multiple packets per cycle",
            off(),
        ),
        (
            "in_cvp_mode_hwtcl",
            "Enable configuration via the PCIe link",
            off(),
        ),
        (
            "use_tx_cons_cred_sel_hwtcl",
            "Use credit consumed selection port tx_cons_cred_sel",
            off(),
        ),
        (
            "use_config_bypass_hwtcl",
            "Enable Configuration Bypass",
            off(),
        ),
        (
            "hip_reconfig_hwtcl",
            "Enable Hard IP reconfiguration",
            off(),
        ),
        (
            "track_rxfc_cplbuf_ovf_hwtcl",
            "Track Receive Completion Buffer Overflow",
            off(),
        ),
        (
            "use_pci_ext_hwtcl",
            "Use PCI extended space (hidden)",
            off(),
        ),
        (
            "use_pcie_ext_hwtcl",
            "Use PCI Express extended space (hidden)",
            off(),
        ),
        (
            "enable_tl_only_sim_hwtcl",
            "Enable TL-Direct simulation (hidden)",
            off(),
        ),
        // The card's configuration space: BAR0 of 64 KiB, 32-bit non-prefetchable memory (type 2;
        // 0 disables a BAR), no other BAR; one MSI message, no MSI-X; 256-byte max payload; class
        // 02 00 00 (Ethernet controller).
        ("bar0_type_hwtcl", "BAR0 type", "2".into()),
        (
            "bar0_size_mask_hwtcl",
            "BAR0 size (address bits)",
            "16".into(),
        ),
        ("bar1_type_hwtcl", "BAR1 type", off()),
        ("bar2_type_hwtcl", "BAR2 type", off()),
        ("bar3_type_hwtcl", "BAR3 type", off()),
        ("bar4_type_hwtcl", "BAR4 type", off()),
        ("bar5_type_hwtcl", "BAR5 type", off()),
        (
            "msi_multi_message_capable_hwtcl",
            "Number of MSI messages requested",
            "1".into(),
        ),
        (
            "enable_function_msix_support_hwtcl",
            "Implement MSI-X",
            off(),
        ),
        (
            "max_payload_size_hwtcl",
            "Maximum payload size",
            "256".into(),
        ),
        ("class_code_hwtcl", "Class code", "0x020000".into()),
    ]);
    let d = variant.beat_bits();
    let mut p = PortList(vec![]);
    p.i("npor", 1).i("pin_perst", 1);
    // Local management interface (unused: the card reads no configuration register through it).
    p.i("lmi_addr", 12)
        .i("lmi_din", 32)
        .i("lmi_rden", 1)
        .i("lmi_wren", 1)
        .o("lmi_ack", 1)
        .o("lmi_dout", 32);
    p.i("hpg_ctrler", 5)
        .o("tl_cfg_add", 4)
        .o("tl_cfg_ctl", 32)
        .o("tl_cfg_sts", 53)
        .i("cpl_err", 7)
        .i("cpl_pending", 1);
    p.i("pm_auxpwr", 1)
        .i("pm_data", 10)
        .i("pme_to_cr", 1)
        .i("pm_event", 1)
        .o("pme_to_sr", 1);
    p.o("rx_st_sop", 1)
        .o("rx_st_eop", 1)
        .o("rx_st_err", 1)
        .o("rx_st_valid", 1)
        .o("rx_st_empty", variant.empty_bits())
        .i("rx_st_ready", 1)
        .o("rx_st_data", d)
        .o("rx_st_bar", 8)
        .i("rx_st_mask", 1);
    p.i("tx_st_sop", 1)
        .i("tx_st_eop", 1)
        .i("tx_st_err", 1)
        .i("tx_st_valid", 1)
        .i("tx_st_empty", variant.empty_bits())
        .o("tx_st_ready", 1)
        .i("tx_st_data", d);
    p.o("tx_cred_datafccp", 12)
        .o("tx_cred_datafcnp", 12)
        .o("tx_cred_datafcp", 12)
        .o("tx_cred_fchipcons", 6)
        .o("tx_cred_fcinfinite", 6)
        .o("tx_cred_hdrfccp", 8)
        .o("tx_cred_hdrfcnp", 8)
        .o("tx_cred_hdrfcp", 8);
    p.i("pld_clk", 1)
        .o("coreclkout_hip", 1)
        .i("refclk", 1)
        .o("reset_status", 1)
        .o("serdes_pll_locked", 1)
        .o("pld_clk_inuse", 1)
        .i("pld_core_ready", 1)
        .o("testin_zero", 1);
    p.i(
        "reconfig_to_xcvr",
        RECONFIG_TO_BITS * pcie_reconfig_interfaces(variant),
    )
    .o(
        "reconfig_from_xcvr",
        RECONFIG_FROM_BITS * pcie_reconfig_interfaces(variant),
    );
    for lane in 0..8 {
        p.i(format!("rx_in{lane}"), 1);
    }
    for lane in 0..8 {
        p.o(format!("tx_out{lane}"), 1);
    }
    // The PIPE interface, for simulation only (`simu_mode_pipe` = 0 in hardware).
    p.i("sim_pipe_pclk_in", 1)
        .o("sim_pipe_rate", 2)
        .o("sim_ltssmstate", 5);
    for (name, dir, width) in [
        ("eidleinfersel", Dir::Out, 3),
        ("powerdown", Dir::Out, 2),
        ("rxpolarity", Dir::Out, 1),
        ("txcompl", Dir::Out, 1),
        ("txdata", Dir::Out, 8),
        ("txdatak", Dir::Out, 1),
        ("txdetectrx", Dir::Out, 1),
        ("txelecidle", Dir::Out, 1),
        ("txdeemph", Dir::Out, 1),
        ("txmargin", Dir::Out, 3),
        ("txswing", Dir::Out, 1),
        ("phystatus", Dir::In, 1),
        ("rxdata", Dir::In, 8),
        ("rxdatak", Dir::In, 1),
        ("rxelecidle", Dir::In, 1),
        ("rxstatus", Dir::In, 3),
        ("rxvalid", Dir::In, 1),
    ] {
        for lane in 0..8 {
            p.port(dir, format!("{name}{lane}"), width);
        }
    }
    p.i("app_int_sts", 1)
        .i("app_msi_num", 5)
        .i("app_msi_req", 1)
        .i("app_msi_tc", 3)
        .o("app_int_ack", 1)
        .o("app_msi_ack", 1);
    p.i("test_in", 32).i("simu_mode_pipe", 1);
    p.o("derr_cor_ext_rcv", 1)
        .o("derr_cor_ext_rpl", 1)
        .o("derr_rpl", 1)
        .o("dlup", 1)
        .o("dlup_exit", 1)
        .o("ev128ns", 1)
        .o("ev1us", 1)
        .o("hotrst_exit", 1)
        .o("int_status", 4)
        .o("l2_exit", 1)
        .o("lane_act", 4)
        .o("ltssmstate", 5)
        .o("rx_par_err", 1)
        .o("tx_par_err", 2)
        .o("cfg_par_err", 1)
        .o("ko_cpl_spc_header", 8)
        .o("ko_cpl_spc_data", 12)
        .o("currentspeed", 2);
    IpBlock {
        module: module.into(),
        component: "altera_pcie_sv_hip_ast",
        title: "Stratix V Hard IP for PCI Express (Avalon-ST)",
        settings,
        ports: p.0,
    }
}

/// 10GBASE-R PHY (`altera_xcvr_10gbaser`) of `channels` channels sharing one XGMII clock, with
/// its embedded reset controller (which exports `tx_ready`/`rx_ready`) and without the optional
/// `pll_locked` port.
pub fn phy_10gbaser(module: &str, channels: usize) -> IpBlock {
    let off = || "0".to_string();
    let settings = settings(&[
        ("num_channels", "Number of channels", channels.to_string()),
        ("operation_mode", "Mode of operation", "duplex".into()),
        ("gui_pll_type", "PLL type", "CMU".into()),
        (
            "ref_clk_freq",
            "Reference clock frequency",
            "644.53125 MHz".into(),
        ),
        ("pma_mode", "PCS / PMA interface width", "40".into()),
        (
            "gui_embedded_reset",
            "Enable embedded reset controller",
            "1".into(),
        ),
        ("pll_locked_out", "Enable pll_locked status port", off()),
        (
            "control_pin_out",
            "Enable additional control and status pins",
            off(),
        ),
        ("recovered_clk_out", "Enable rx_recovered_clk pin", off()),
        ("rx_use_coreclk", "Enable rx_coreclkin port", off()),
        ("latadj", "Enable IEEE 1588 latency adjustment ports", off()),
        (
            "high_precision_latadj",
            "Enable High Precision IEEE 1588 latency measurement (hidden)",
            "1".into(),
        ),
        (
            "external_pma_ctrl_config",
            "Use external PMA control and reconfig (Stratix IV only)",
            off(),
        ),
    ]);
    let mut p = PortList(vec![]);
    p.i("pll_ref_clk", 1)
        .o("xgmii_rx_clk", 1)
        .o("tx_ready", 1)
        .i("xgmii_tx_clk", 1)
        .o("rx_ready", 1)
        .o("rx_data_ready", channels);
    for c in 0..channels {
        p.i(format!("rx_serial_data_{c}"), 1)
            .o(format!("xgmii_rx_dc_{c}"), 72)
            .o(format!("tx_serial_data_{c}"), 1)
            .i(format!("xgmii_tx_dc_{c}"), 72);
    }
    let interfaces = phy_reconfig_interfaces(channels);
    p.o("reconfig_from_xcvr", RECONFIG_FROM_BITS * interfaces)
        .i("reconfig_to_xcvr", RECONFIG_TO_BITS * interfaces)
        .i("phy_mgmt_clk", 1)
        .i("phy_mgmt_clk_reset", 1)
        .i("phy_mgmt_address", 9)
        .i("phy_mgmt_read", 1)
        .o("phy_mgmt_readdata", 32)
        .i("phy_mgmt_write", 1)
        .i("phy_mgmt_writedata", 32)
        .o("phy_mgmt_waitrequest", 1);
    IpBlock {
        module: module.into(),
        component: "altera_xcvr_10gbaser",
        title: "10GBASE-R PHY",
        settings,
        ports: p.0,
    }
}

/// 10-Gbps Ethernet MAC (`altera_eth_10g_mac`), 64-bit Avalon-ST client, 10G only, statistics
/// collection on (it exports `avalon_st_txstatus_*`).
pub fn mac_10g(module: &str) -> IpBlock {
    let settings = settings(&[
        ("ENABLE_1G10G_MAC", "Speed", "0".into()),
        ("DATAPATH_OPTION", "Datapath option", "3".into()),
        (
            "PREAMBLE_PASSTHROUGH",
            "Enable preamble pass-through mode",
            "0".into(),
        ),
        (
            "ENABLE_PFC",
            "Enable priority-based flow control (PFC)",
            "0".into(),
        ),
        ("PFC_PRIORITY_NUM", "Number of PFC queues", "8".into()),
        (
            "ENABLE_SUPP_ADDR",
            "Enable supplementary address",
            "1".into(),
        ),
        (
            "INSTANTIATE_TX_CRC",
            "Enable CRC on transmit path",
            "1".into(),
        ),
        (
            "INSTANTIATE_STATISTICS",
            "Enable statistics collection",
            "1".into(),
        ),
        (
            "REGISTER_BASED_STATISTICS",
            "Statistics counters (memory-based)",
            "0".into(),
        ),
        ("ENABLE_TIMESTAMPING", "Enable time stamping", "0".into()),
        (
            "ENABLE_PTP_1STEP",
            "Enable PTP one-step clock support",
            "0".into(),
        ),
        ("TSTAMP_FP_WIDTH", "Timestamp fingerprint width", "4".into()),
    ]);
    let mut p = PortList(vec![]);
    p.i("csr_clk_clk", 1)
        .i("csr_reset_reset_n", 1)
        .i("csr_address", 13)
        .o("csr_waitrequest", 1)
        .i("csr_read", 1)
        .o("csr_readdata", 32)
        .i("csr_write", 1)
        .i("csr_writedata", 32)
        .i("tx_clk_clk", 1)
        .i("tx_reset_reset_n", 1)
        .i("avalon_st_tx_startofpacket", 1)
        .i("avalon_st_tx_valid", 1)
        .i("avalon_st_tx_data", 64)
        .i("avalon_st_tx_empty", 3)
        .o("avalon_st_tx_ready", 1)
        .i("avalon_st_tx_error", 1)
        .i("avalon_st_tx_endofpacket", 1)
        .i("avalon_st_pause_data", 2)
        .o("avalon_st_txstatus_valid", 1)
        .o("avalon_st_txstatus_data", 40)
        .o("avalon_st_txstatus_error", 7)
        .o("xgmii_tx_data", 72)
        .i("xgmii_rx_data", 72)
        .i("rx_clk_clk", 1)
        .i("rx_reset_reset_n", 1)
        .o("avalon_st_rx_startofpacket", 1)
        .o("avalon_st_rx_endofpacket", 1)
        .o("avalon_st_rx_valid", 1)
        .i("avalon_st_rx_ready", 1)
        .o("avalon_st_rx_data", 64)
        .o("avalon_st_rx_empty", 3)
        .o("avalon_st_rx_error", 6)
        .o("avalon_st_rxstatus_valid", 1)
        .o("avalon_st_rxstatus_data", 40)
        .o("avalon_st_rxstatus_error", 7)
        .o("link_fault_status_xgmii_rx_data", 2);
    IpBlock {
        module: module.into(),
        component: "altera_eth_10g_mac",
        title: "10-Gbps Ethernet MAC",
        settings,
        ports: p.0,
    }
}

/// Transceiver Reconfiguration Controller (`alt_xcvr_reconfig`) for `interfaces` interfaces in
/// one bundle (one `reconfig_to_xcvr`/`reconfig_from_xcvr` pair), offset cancellation and PLL
/// calibration on, no optional status ports; the adaptive equalization block on where the Hard IP
/// of `variant` runs Gen3 (its reconfiguration driver runs AEQ over the Hard IP's channels).
pub fn xcvr_reconfig(module: &str, interfaces: usize, variant: PcieVariant) -> IpBlock {
    let aeq = if variant.generation() >= 3 { "1" } else { "0" };
    let settings = settings(&[
        (
            "number_of_reconfig_interfaces",
            "Number of reconfiguration interfaces",
            interfaces.to_string(),
        ),
        (
            "gui_split_sizes",
            "Optional interface grouping (Interface Bundles)",
            String::new(),
        ),
        ("enable_offset", "Enable offset cancellation", "1".into()),
        ("enable_lc", "Enable PLL calibration", "1".into()),
        (
            "enable_dcd",
            "Enable duty cycle calibration (hidden)",
            "0".into(),
        ),
        ("enable_analog", "Enable Analog controls", "1".into()),
        ("enable_eyemon", "Enable EyeQ block", "0".into()),
        ("ber_en", "Enable Bit Error Rate Block", "0".into()),
        (
            "enable_dfe",
            "Enable decision feedback equalizer (DFE) block",
            "0".into(),
        ),
        (
            "enable_adce",
            "Enable adaptive equalization (AEQ) block",
            aeq.into(),
        ),
        (
            "enable_mif",
            "Enable channel/PLL reconfiguration",
            "0".into(),
        ),
        (
            "gui_enable_pll",
            "Enable PLL reconfiguration support block",
            "0".into(),
        ),
        (
            "gui_cal_status_port",
            "Create optional calibration status ports",
            "0".into(),
        ),
    ]);
    let mut p = PortList(vec![]);
    p.o("reconfig_busy", 1)
        .i("mgmt_clk_clk", 1)
        .i("mgmt_rst_reset", 1)
        .i("reconfig_mgmt_address", 7)
        .i("reconfig_mgmt_read", 1)
        .o("reconfig_mgmt_readdata", 32)
        .o("reconfig_mgmt_waitrequest", 1)
        .i("reconfig_mgmt_write", 1)
        .i("reconfig_mgmt_writedata", 32)
        .o("reconfig_to_xcvr", RECONFIG_TO_BITS * interfaces)
        .i("reconfig_from_xcvr", RECONFIG_FROM_BITS * interfaces);
    IpBlock {
        module: module.into(),
        component: "alt_xcvr_reconfig",
        title: "Transceiver Reconfiguration Controller",
        settings,
        ports: p.0,
    }
}

/// PLL (`altera_pll`, a Stratix V fractional PLL used in integer mode) of one output clock of
/// `out_mhz` from a reference of `ref_mhz`, with its `locked` output. (No fixture of Intel's
/// interface beside the project states this core's ports; they are those of the Quartus 13.1
/// `pll_hw.tcl` for these settings, as public generated variations of it show.)
pub fn pll(module: &str, ref_mhz: f64, out_mhz: f64) -> IpBlock {
    let settings = settings(&[
        ("gui_pll_mode", "PLL Mode", "Integer-N PLL".into()),
        (
            "gui_reference_clock_frequency",
            "Reference Clock Frequency",
            format!("{ref_mhz:.1}"),
        ),
        ("gui_operation_mode", "Operation Mode", "direct".into()),
        ("gui_number_of_clocks", "Number Of Clocks", "1".into()),
        (
            "gui_output_clock_frequency0",
            "Desired Frequency (outclk0)",
            format!("{out_mhz:.1}"),
        ),
        ("gui_use_locked", "Enable locked output port", "true".into()),
    ]);
    let mut p = PortList(vec![]);
    p.i("refclk", 1).i("rst", 1).o("outclk_0", 1).o("locked", 1);
    IpBlock {
        module: module.into(),
        component: "altera_pll",
        title: "PLL (altera_pll)",
        settings,
        ports: p.0,
    }
}

/// Verilog range of a port of `width` bits (`""` for one bit).
pub fn range(width: usize) -> String {
    if width == 1 {
        String::new()
    } else {
        format!("[{}:0] ", width - 1)
    }
}

impl IpBlock {
    pub fn port(&self, name: &str) -> Option<&IpPort> {
        self.ports.iter().find(|p| p.name == name)
    }

    pub fn setting(&self, param: &str) -> Option<&IpSetting> {
        self.settings.iter().find(|s| s.param == param)
    }

    /// A black-box stub of the variation: its ports, no body (for lint and for resource
    /// estimates; Quartus uses the generated IP instead).
    pub fn stub(&self, what: &str) -> String {
        let mut s = String::new();
        writeln!(s, "// Black box: {what}.").unwrap();
        writeln!(
            s,
            "// Generate the real variation `{}` in Quartus; this stub only declares its ports.",
            self.module
        )
        .unwrap();
        writeln!(s, "(* blackbox *)").unwrap();
        writeln!(s, "module {} (", self.module).unwrap();
        for (i, p) in self.ports.iter().enumerate() {
            let dir = match p.dir {
                Dir::In => "input ",
                Dir::Out => "output",
                Dir::InOut => "inout ",
            };
            let comma = if i + 1 < self.ports.len() { "," } else { "" };
            writeln!(s, "    {dir} wire {}{}{comma}", range(p.width), p.name).unwrap();
        }
        writeln!(s, ");").unwrap();
        // Outputs of a black box are driven by the IP; tie them in the stub so lint sees no
        // undriven nets.
        for p in self.ports.iter().filter(|p| p.dir == Dir::Out) {
            writeln!(s, "    assign {} = {}'d0;", p.name, p.width).unwrap();
        }
        writeln!(s, "endmodule").unwrap();
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn port_lists_have_no_duplicates_and_the_widths_of_the_data_paths() {
        for b in [
            pcie_hip("p", PcieVariant::Gen2x8),
            pcie_hip("p", PcieVariant::Gen3x8),
            phy_10gbaser("y", 3),
            mac_10g("m"),
            xcvr_reconfig("r", 16, PcieVariant::Gen2x8),
        ] {
            let mut names: Vec<_> = b.ports.iter().map(|p| &p.name).collect();
            names.sort();
            names.dedup();
            assert_eq!(names.len(), b.ports.len(), "{}", b.module);
        }
        for v in PcieVariant::ALL {
            let hip = pcie_hip("p", v);
            assert_eq!(hip.port("rx_st_data").unwrap().width, v.beat_bits());
            assert_eq!(hip.port("tx_st_data").unwrap().width, v.beat_bits());
        }
        assert_eq!(
            phy_10gbaser("y", 3).port("reconfig_to_xcvr").unwrap().width,
            70 * 6
        );
        assert!(phy_10gbaser("y", 3).port("xgmii_tx_dc_2").is_some());
        assert_eq!(mac_10g("m").port("avalon_st_rx_error").unwrap().width, 6);
    }

    #[test]
    fn a_stub_declares_every_port_and_drives_its_outputs() {
        let s = mac_10g("nanet_de5net_mac").stub("MAC");
        assert!(s.contains("module nanet_de5net_mac ("));
        assert!(s.contains("input  wire [63:0] avalon_st_tx_data,"));
        assert!(s.contains("assign avalon_st_rx_data = 64'd0;"));
        assert!(s.trim_end().ends_with("endmodule"));
    }
}

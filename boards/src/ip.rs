//! The vendor IP the board top instantiates, as black boxes: their port lists (names, directions,
//! widths, as the IP generators of Quartus 15-era ACDS write the variations for Stratix V), from
//! which both the stub modules for lint and the instances in the top are made, so the two cannot
//! disagree. A variation is named `<board top>_<instance>`; the project README says which settings
//! to generate it with.

use std::fmt::Write;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    In,
    Out,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IpPort {
    pub name: String,
    pub dir: Dir,
    pub width: usize,
}

/// One vendor IP variation.
#[derive(Clone, Debug)]
pub struct IpBlock {
    /// The variation's module name.
    pub module: String,
    pub ports: Vec<IpPort>,
}

/// Reconfiguration interfaces: width of one `reconfig_to_xcvr` / `reconfig_from_xcvr` slice.
pub const RECONFIG_TO_BITS: usize = 70;
pub const RECONFIG_FROM_BITS: usize = 46;
/// Reconfiguration interfaces of the PCIe Hard IP at x8 (8 channels and 2 PLLs).
pub const PCIE_RECONFIG_INTERFACES: usize = 10;

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

/// Stratix V Hard IP for PCI Express, Avalon-ST 128-bit (`altera_pcie_sv_hip_ast`), x8.
pub fn pcie_hip(module: &str) -> IpBlock {
    let mut p = PortList(vec![]);
    p.i("refclk", 1)
        .i("npor", 1)
        .i("pin_perst", 1)
        .o("reset_status", 1)
        .o("serdes_pll_locked", 1)
        .o("pld_clk_inuse", 1)
        .i("pld_core_ready", 1)
        .o("coreclkout_hip", 1)
        .i("pld_clk", 1)
        .i("test_in", 32)
        .i("simu_mode_pipe", 1);
    for lane in 0..8 {
        p.i(format!("rx_in{lane}"), 1).o(format!("tx_out{lane}"), 1);
    }
    p.o("rx_st_data", 128)
        .o("rx_st_sop", 1)
        .o("rx_st_eop", 1)
        .o("rx_st_empty", 2)
        .o("rx_st_err", 1)
        .o("rx_st_valid", 1)
        .i("rx_st_ready", 1)
        .i("rx_st_mask", 1)
        .o("rx_st_bar", 8)
        .o("rx_st_be", 16)
        .i("tx_st_data", 128)
        .i("tx_st_sop", 1)
        .i("tx_st_eop", 1)
        .i("tx_st_empty", 2)
        .i("tx_st_err", 1)
        .i("tx_st_valid", 1)
        .o("tx_st_ready", 1)
        .o("tx_cred_datafccp", 12)
        .o("tx_cred_datafcnp", 12)
        .o("tx_cred_datafcp", 12)
        .o("tx_cred_fchipcons", 6)
        .o("tx_cred_fcinfinite", 6)
        .o("tx_cred_hdrfccp", 8)
        .o("tx_cred_hdrfcnp", 8)
        .o("tx_cred_hdrfcp", 8)
        .i("tx_cons_cred_sel", 1)
        .o("ko_cpl_spc_header", 8)
        .o("ko_cpl_spc_data", 12)
        .i("app_msi_req", 1)
        .o("app_msi_ack", 1)
        .i("app_msi_num", 5)
        .i("app_msi_tc", 3)
        .i("app_int_sts", 1)
        .o("app_int_ack", 1)
        .o("tl_cfg_add", 4)
        .o("tl_cfg_ctl", 32)
        .o("tl_cfg_ctl_wr", 1)
        .o("tl_cfg_sts", 53)
        .o("tl_cfg_sts_wr", 1)
        .i("cpl_err", 7)
        .i("cpl_pending", 1)
        .i("pm_auxpwr", 1)
        .i("pm_data", 10)
        .i("pm_event", 1)
        .i("pme_to_cr", 1)
        .o("pme_to_sr", 1)
        .i("hpg_ctrler", 5)
        .o("dlup", 1)
        .o("dlup_exit", 1)
        .o("ev128ns", 1)
        .o("ev1us", 1)
        .o("hotrst_exit", 1)
        .o("l2_exit", 1)
        .o("int_status", 4)
        .o("lane_act", 4)
        .o("ltssmstate", 5)
        .o("currentspeed", 2)
        .o("derr_cor_ext_rcv", 1)
        .o("derr_cor_ext_rpl", 1)
        .o("derr_rpl", 1)
        .o("rx_par_err", 1)
        .o("tx_par_err", 2)
        .o("cfg_par_err", 1)
        .i(
            "reconfig_to_xcvr",
            RECONFIG_TO_BITS * PCIE_RECONFIG_INTERFACES,
        )
        .o(
            "reconfig_from_xcvr",
            RECONFIG_FROM_BITS * PCIE_RECONFIG_INTERFACES,
        );
    IpBlock {
        module: module.into(),
        ports: p.0,
    }
}

/// 10GBASE-R PHY (`altera_xcvr_10gbaser`) of `channels` channels sharing one XGMII clock.
pub fn phy_10gbaser(module: &str, channels: usize) -> IpBlock {
    let mut p = PortList(vec![]);
    p.i("pll_ref_clk", 1)
        .o("xgmii_rx_clk", 1)
        .o("pll_locked", 1)
        .o("tx_ready", 1)
        .i("xgmii_tx_clk", 1)
        .o("rx_ready", 1)
        .o("rx_data_ready", channels);
    for c in 0..channels {
        p.o(format!("xgmii_rx_dc_{c}"), 72)
            .i(format!("rx_serial_data_{c}"), 1)
            .i(format!("xgmii_tx_dc_{c}"), 72)
            .o(format!("tx_serial_data_{c}"), 1);
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
        ports: p.0,
    }
}

/// 10-Gbps Ethernet MAC (`altera_eth_10g_mac`), 64-bit Avalon-ST client.
pub fn mac_10g(module: &str) -> IpBlock {
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
        ports: p.0,
    }
}

/// Transceiver Reconfiguration Controller (`alt_xcvr_reconfig`) for `interfaces` interfaces.
pub fn xcvr_reconfig(module: &str, interfaces: usize) -> IpBlock {
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
            pcie_hip("p"),
            phy_10gbaser("y", 3),
            mac_10g("m"),
            xcvr_reconfig("r", 16),
        ] {
            let mut names: Vec<_> = b.ports.iter().map(|p| &p.name).collect();
            names.sort();
            names.dedup();
            assert_eq!(names.len(), b.ports.len(), "{}", b.module);
        }
        assert_eq!(pcie_hip("p").port("rx_st_data").unwrap().width, 128);
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

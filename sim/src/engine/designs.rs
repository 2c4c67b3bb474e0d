//! Port bindings of the gateware tops that the engines simulate.

use nanet_hdl::offload::core::OffloadCore;

use crate::design_ports;
use crate::engine::pins::{AvalonStIn, AvalonStOut, StreamIn, StreamOut};

/// Inputs of one offload core (all but its clock).
#[derive(Clone, Debug, Default)]
pub struct CoreInputs {
    pub reset: bool,
    pub mac_rx: AvalonStIn,
    pub mac_tx_ready: bool,
    pub rx_ready: bool,
    pub tx_req_valid: bool,
    pub tx_dst_ip: u32,
    pub tx_src_port: u16,
    pub tx_dst_port: u16,
    pub tx_len: u16,
    pub tx: StreamIn,
    pub reg_addr: u8,
    pub reg_wdata: u32,
    pub reg_write: bool,
}

/// Outputs of one offload core.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CoreOutputs {
    pub mac_rx_ready: bool,
    pub mac_tx: AvalonStOut,
    pub rx: StreamOut,
    pub rx_src_ip: u32,
    pub rx_src_port: u16,
    pub rx_dst_port: u16,
    pub rx_len: u16,
    pub tx_req_ready: bool,
    pub tx_ready: bool,
    pub reg_rdata: u32,
}

design_ports! {
    pub OffloadCoreDesign for OffloadCore, top "nanet_offload_core", inputs CoreInputs, outputs CoreOutputs,
    clocks { clock }
    inputs {
        reset => reset,
        mac_rx.data => mac_rx.data,
        mac_rx.valid => mac_rx.valid,
        mac_rx.startofpacket => mac_rx.startofpacket,
        mac_rx.endofpacket => mac_rx.endofpacket,
        mac_rx.empty => mac_rx.empty,
        mac_rx.error => mac_rx.error,
        mac_tx_ready => mac_tx.ready,
        rx_ready => rx.ready,
        tx_req_valid => tx.req_valid,
        tx_dst_ip => tx.dst_ip,
        tx_src_port => tx.src_port,
        tx_dst_port => tx.dst_port,
        tx_len => tx.len,
        tx.data => tx.payload.data,
        tx.keep => tx.payload.keep,
        tx.last => tx.payload.last,
        tx.error => tx.payload.error,
        tx.valid => tx.payload.valid,
        reg_addr => reg_addr,
        reg_wdata => reg_wdata,
        reg_write => reg_write,
    }
    outputs {
        mac_rx_ready => mac_rx.ready,
        mac_tx.data => mac_tx.data,
        mac_tx.valid => mac_tx.valid,
        mac_tx.startofpacket => mac_tx.startofpacket,
        mac_tx.endofpacket => mac_tx.endofpacket,
        mac_tx.empty => mac_tx.empty,
        mac_tx.error => mac_tx.error,
        rx.data => rx.data,
        rx.keep => rx.keep,
        rx.last => rx.last,
        rx.error => rx.error,
        rx.valid => rx.valid,
        rx_src_ip => rx_src_ip,
        rx_src_port => rx_src_port,
        rx_dst_port => rx_dst_port,
        rx_len => rx_len,
        tx_req_ready => tx.req_ready,
        tx_ready => tx.payload.ready,
        reg_rdata => reg_rdata,
    }
}

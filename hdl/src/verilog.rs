//! Verilog generation for the gateware's top-level modules (for lint, Verilator and boards).

use nanet_contract::pcie::PcieVariant;
use rust_hdl::core::check_error::check_all;
use rust_hdl::core::module_defines::ModuleDefines;
use rust_hdl::prelude::*;

use crate::card::bar0_regs::Bar0Regs;
use crate::card::nic::Nic;
use crate::card::reg_bridge::RegBridge;
use crate::card::rx_path::RxPath;
use crate::common::async_fifo::AsyncFifo;
use crate::common::stream::{AvalonToStream, StreamToAvalon};
use crate::common::sync_fifo::SyncFifo;
use crate::common::time_sync::TimeSync;
use crate::offload::arp_cache::ArpCache;
use crate::offload::arp_resolver::ArpResolver;
use crate::offload::arp_tx::ArpTx;
use crate::offload::core::OffloadCore;
use crate::offload::frame_tx::FrameTx;
use crate::offload::icmp_echo::IcmpEcho;
use crate::offload::packet_buffer::PacketBuffer;
use crate::offload::regs::OffloadRegs;
use crate::offload::rx_parser::RxParser;
use crate::offload::tx_arbiter::TxArbiter;
use crate::offload::udp_tx::UdpTx;
use crate::offload::udp_tx_checksum::UdpTxChecksum;
use crate::pcie::read::PcieRead;
use crate::pcie::target::PcieTarget;
use crate::pcie::tx_arbiter::PcieTxArbiter;
use crate::pcie::write_tlp::PcieWriteTlp;
use crate::port::multi_stream::MultiStream;
use crate::port::packet_gen::PacketGen;
use crate::port::rx_packer::RxPacker;
use crate::port::rx_port::RxPort;
use crate::rx::clop::engine::ClopEngine;
use crate::rx::clop::gather::ClopGather;
use crate::rx::clop::route::ClopRoute;
use crate::rx::dma_writer::DmaWriter;
use crate::rx::engine::RxEngine;
use crate::rx::event_arbiter::EventArbiter;
use crate::rx::event_queue::EventQueue;
use crate::rx::tlb::Tlb;
use crate::rx::write_arbiter::WriteArbiter;
use crate::rx::write_mux::WriteMux;
use crate::tx::engine::TxEngine;
use crate::tx::rings::TxRings;

/// Modules that can be generated alone, by name. Every one is linted by `make lint`.
pub const MODULES: &[&str] = &[
    "nanet_offload_core",
    "nanet_rx_parser",
    "nanet_icmp_echo",
    "nanet_arp_cache",
    "nanet_arp_tx",
    "nanet_arp_resolver",
    "nanet_udp_tx",
    "nanet_udp_tx_checksum",
    "nanet_packet_buffer",
    "nanet_frame_tx",
    "nanet_tx_arbiter",
    "nanet_offload_regs",
    "nanet_avalon_to_stream",
    "nanet_stream_to_avalon",
    "nanet_multi_stream",
    "nanet_async_fifo",
    "nanet_tlb",
    "nanet_dma_writer",
    "nanet_clop_engine",
    "nanet_event_queue",
    "nanet_sync_fifo",
    "nanet_write_mux",
    "nanet_write_arbiter",
    "nanet_event_arbiter",
    "nanet_clop_route",
    "nanet_clop_gather",
    "nanet_round_robin",
    "nanet_rx_engine",
    "nanet_rx_packer",
    "nanet_rx_port",
    "nanet_time_sync",
    "nanet_rx_path",
    "nanet_pcie_target",
    "nanet_pcie_write_tlp",
    "nanet_pcie_tx_arbiter",
    "nanet_reg_bridge",
    "nanet_bar0_regs",
    "nanet_nic",
    "nanet_packet_gen",
    "nanet_pcie_read",
    "nanet_pcie_credit_gate",
    "nanet_tx_engine",
    "nanet_tx_rings",
    "nanet_tlp_merge",
    "nanet_pcie_rx_demux",
    "nanet_pcie_config_sampler",
    "nanet_tx_feeder",
    "nanet_event_mux",
    "nanet_board_glue",
    "nanet_i2c_master",
    "nanet_si570_init",
    "nanet_mac_csr_init",
    "nanet_skid_buffer",
    "nanet_pair_fifo",
    "nanet_fifo_output",
    "nanet_tlp_skid",
    "nanet_stream_skid",
    // The transaction layer's blocks at 256 bits (Gen3 x8).
    "nanet_pcie_target_256",
    "nanet_pcie_rx_demux_256",
    "nanet_pcie_tx_arbiter_256",
    "nanet_pcie_credit_gate_256",
    "nanet_pcie_read_256",
    "nanet_tx_engine_256",
    "nanet_tx_rings_256",
    "nanet_tx_feeder_256",
    "nanet_tlp_merge_256",
    "nanet_tlp_skid_256",
    "nanet_pcie_write_tlp_256",
    "nanet_write_mux_256",
    "nanet_write_arbiter_256",
    "nanet_dma_writer_256",
    "nanet_event_queue_256",
    // The receive path's blocks at 256 bits.
    "nanet_rx_packer_256",
    "nanet_clop_engine_256",
    "nanet_rx_engine_256",
    "nanet_rx_port_256",
    "nanet_rx_path_256",
    "nanet_nic_256",
];

/// rust-hdl names the top module `top` and its children `top$child`; give them the real name so
/// that several generated designs can sit in one project.
fn named(verilog: String, name: &str) -> String {
    verilog
        .replace("module top(", &format!("module {name}("))
        .replace("top$", &format!("{name}$"))
}

/// The Verilog of block `B` with its top module named `name`.
pub fn generate<B: Block + Default>(name: &str) -> String {
    generate_block(B::default(), name)
}

/// The Verilog of `uut` (a block built other than by `Default`) with its top module named `name`.
pub fn generate_block<B: Block>(mut uut: B, name: &str) -> String {
    generate_dyn(&mut uut, name)
}

/// As [`generate_block`], for a block the caller has as `dyn Block` (the simulator's designs,
/// through [`AsBlock`](crate::as_block::AsBlock): not generic, so it is compiled here alone).
/// Panics, as rust-hdl's `generate_verilog` does, when the block fails rust-hdl's checks
/// (an unconnected or doubly driven signal, a combinational loop).
pub fn generate_dyn(uut: &mut dyn Block, name: &str) -> String {
    uut.connect_all();
    if let Err(e) = check_all(uut) {
        panic!("{name} fails rust-hdl's checks: {e:?}");
    }
    let mut defines = ModuleDefines::default();
    uut.accept("top", &mut defines);
    named(defines.defines(), name)
}

/// A port of a generated top module: its name in the Verilog (an interface's signal as
/// `interface$signal`), its width, and whether it is an input (else an output; rust-hdl's inout
/// ports are left out).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopPort {
    pub name: String,
    pub bits: usize,
    pub input: bool,
}

/// Collects the top module's ports in the order rust-hdl's Verilog header lists them: the
/// parameter atoms of the outermost scope, named with their interfaces' namespaces as
/// rust-hdl's module writer names them.
#[derive(Default)]
struct TopPortProbe {
    depth: usize,
    namespace: Vec<String>,
    ports: Vec<TopPort>,
}

impl Probe for TopPortProbe {
    fn visit_start_scope(&mut self, _name: &str, _node: &dyn Block) {
        self.depth += 1;
    }
    fn visit_start_namespace(&mut self, name: &str, _node: &dyn Block) {
        if self.depth == 1 {
            self.namespace.push(name.to_string());
        }
    }
    fn visit_atom(&mut self, name: &str, signal: &dyn Atom) {
        let input = match signal.kind() {
            AtomKind::InputParameter => true,
            AtomKind::OutputParameter | AtomKind::OutputPassthrough => false,
            _ => return,
        };
        if self.depth != 1 {
            return;
        }
        let name = match self.namespace.is_empty() {
            true => name.to_string(),
            false => format!("{}${name}", self.namespace.join("$")),
        };
        self.ports.push(TopPort {
            name,
            bits: signal.bits(),
            input,
        });
    }
    fn visit_end_namespace(&mut self, _name: &str, _node: &dyn Block) {
        if self.depth == 1 {
            self.namespace.pop();
        }
    }
    fn visit_end_scope(&mut self, _name: &str, _node: &dyn Block) {
        self.depth -= 1;
    }
}

/// The ports of block `B`'s top module, read from the block (a walk of its tree, milliseconds)
/// without generating its Verilog (seconds for a card).
pub fn top_ports<B: Block + Default>() -> Vec<TopPort> {
    let mut probe = TopPortProbe::default();
    B::default().accept("top", &mut probe);
    probe.ports
}

/// The ports of the NIC top of [`nic_verilog`], `None` for a port count other than 1 to 4.
pub fn nic_top_ports(variant: PcieVariant, ports: usize) -> Option<Vec<TopPort>> {
    macro_rules! of {
        ($w:literal) => {
            match ports {
                1 => top_ports::<Nic<1, $w>>(),
                2 => top_ports::<Nic<2, $w>>(),
                3 => top_ports::<Nic<3, $w>>(),
                4 => top_ports::<Nic<4, $w>>(),
                _ => return None,
            }
        };
    }
    Some(match variant {
        PcieVariant::Gen2x8 => of!(128),
        PcieVariant::Gen3x8 => of!(256),
    })
}

/// Ports of the card when nothing else is asked (the DE5-net's four SFP+ cages).
pub const DEFAULT_PORTS: usize = 4;
/// Most ports a card can have.
pub const MAX_PORTS: usize = nanet_contract::rx::MAX_PORTS;

/// The Verilog of module `name` (one of [`MODULES`]) for a card with [`DEFAULT_PORTS`] ports.
pub fn module_verilog(name: &str) -> Option<String> {
    module_verilog_for(name, DEFAULT_PORTS)
}

/// Block `$block` with `$ports` ports (1 to 4) as its first const parameter, and `$more` after it.
macro_rules! with_ports {
    ($block:ident, $ports:expr, $name:expr $(, $more:literal)*) => {
        match $ports {
            1 => generate::<$block<1 $(, $more)*>>($name),
            2 => generate::<$block<2 $(, $more)*>>($name),
            3 => generate::<$block<3 $(, $more)*>>($name),
            4 => generate::<$block<4 $(, $more)*>>($name),
            _ => return None,
        }
    };
}

/// The PCIe variant of a card when nothing else is asked (`make verilog`; `PCIE=gen3` for the
/// other).
pub const DEFAULT_PCIE: PcieVariant = PcieVariant::Gen2x8;

/// The Verilog of the NIC top for `ports` ports (1 to 4) with the core datapath of `variant`
/// (`Nic<P, 128>` for Gen2 x8, `Nic<P, 256>` for Gen3 x8), its module named `name`.
pub fn nic_verilog(variant: PcieVariant, ports: usize, name: &str) -> Option<String> {
    Some(match variant {
        PcieVariant::Gen2x8 => with_ports!(Nic, ports, name, 128),
        PcieVariant::Gen3x8 => with_ports!(Nic, ports, name, 256),
    })
}

/// The Verilog of module `name` (one of [`MODULES`]) for a card with `ports` ports, 1 to 4 (the
/// modules that have ports: the NIC top, the receive path, its port arbiter and the register
/// file); `None` for an unknown module or port count.
pub fn module_verilog_for(name: &str, ports: usize) -> Option<String> {
    Some(match name {
        "nanet_offload_core" => generate::<OffloadCore>(name),
        "nanet_rx_parser" => generate::<RxParser>(name),
        "nanet_icmp_echo" => generate::<IcmpEcho>(name),
        "nanet_arp_cache" => generate::<ArpCache>(name),
        "nanet_arp_tx" => generate::<ArpTx>(name),
        "nanet_arp_resolver" => generate::<ArpResolver>(name),
        "nanet_udp_tx" => generate::<UdpTx>(name),
        "nanet_udp_tx_checksum" => generate::<UdpTxChecksum>(name),
        "nanet_packet_buffer" => generate::<PacketBuffer>(name),
        "nanet_frame_tx" => generate::<FrameTx>(name),
        "nanet_tx_arbiter" => generate::<TxArbiter>(name),
        "nanet_offload_regs" => generate::<OffloadRegs>(name),
        "nanet_multi_stream" => generate::<MultiStream>(name),
        // A representative instance: 32 entries, 16 bits of metadata.
        "nanet_async_fifo" => generate::<AsyncFifo<64, 16, 5, 6>>(name),
        "nanet_tlb" => generate::<Tlb>(name),
        "nanet_dma_writer" => generate::<DmaWriter<128>>(name),
        "nanet_dma_writer_256" => generate::<DmaWriter<256>>(name),
        "nanet_clop_engine" => generate::<ClopEngine<128>>(name),
        "nanet_clop_engine_256" => generate::<ClopEngine<256>>(name),
        "nanet_event_queue" => generate::<EventQueue<128>>(name),
        "nanet_event_queue_256" => generate::<EventQueue<256>>(name),
        // The release queue's instance: 16 entries of 14 bits.
        "nanet_sync_fifo" => generate::<SyncFifo<14, 4, 5>>(name),
        "nanet_write_mux" => generate::<WriteMux<128>>(name),
        "nanet_write_mux_256" => generate::<WriteMux<256>>(name),
        "nanet_rx_engine" => with_ports!(RxEngine, ports, name, 128),
        "nanet_rx_engine_256" => with_ports!(RxEngine, ports, name, 256),
        "nanet_write_arbiter" => with_ports!(WriteArbiter, ports, name, 128),
        "nanet_write_arbiter_256" => with_ports!(WriteArbiter, ports, name, 256),
        "nanet_event_arbiter" => with_ports!(EventArbiter, ports, name),
        "nanet_clop_route" => with_ports!(ClopRoute, ports, name),
        "nanet_clop_gather" => with_ports!(ClopGather, ports, name),
        "nanet_round_robin" => generate::<crate::common::round_robin::RoundRobinPick>(name),
        "nanet_rx_packer" => generate::<RxPacker<128>>(name),
        "nanet_rx_packer_256" => generate::<RxPacker<256>>(name),
        "nanet_rx_port" => generate::<RxPort<128>>(name),
        "nanet_rx_port_256" => generate::<RxPort<256>>(name),
        "nanet_time_sync" => generate::<TimeSync>(name),
        "nanet_rx_path" => with_ports!(RxPath, ports, name, 128),
        "nanet_rx_path_256" => with_ports!(RxPath, ports, name, 256),
        "nanet_pcie_target" => generate::<PcieTarget<128>>(name),
        "nanet_pcie_target_256" => generate::<PcieTarget<256>>(name),
        "nanet_pcie_write_tlp" => generate::<PcieWriteTlp<128>>(name),
        "nanet_pcie_write_tlp_256" => generate::<PcieWriteTlp<256>>(name),
        "nanet_pcie_tx_arbiter" => generate::<PcieTxArbiter<128>>(name),
        "nanet_pcie_tx_arbiter_256" => generate::<PcieTxArbiter<256>>(name),
        "nanet_reg_bridge" => generate::<RegBridge>(name),
        "nanet_bar0_regs" => with_ports!(Bar0Regs, ports, name, 128),
        "nanet_nic" => nic_verilog(PcieVariant::Gen2x8, ports, name)?,
        "nanet_nic_256" => nic_verilog(PcieVariant::Gen3x8, ports, name)?,
        "nanet_packet_gen" => generate::<PacketGen>(name),
        "nanet_pcie_read" => generate::<PcieRead<128>>(name),
        "nanet_pcie_read_256" => generate::<PcieRead<256>>(name),
        "nanet_pcie_credit_gate" => generate::<crate::pcie::credit_gate::PcieCreditGate<128>>(name),
        "nanet_pcie_credit_gate_256" => {
            generate::<crate::pcie::credit_gate::PcieCreditGate<256>>(name)
        }
        "nanet_tx_engine" => generate::<TxEngine<128>>(name),
        "nanet_tx_engine_256" => generate::<TxEngine<256>>(name),
        "nanet_tx_rings" => with_ports!(TxRings, ports, name, 128),
        "nanet_tx_rings_256" => with_ports!(TxRings, ports, name, 256),
        "nanet_tlp_merge" => generate::<crate::pcie::tlp_merge::TlpMerge<128>>(name),
        "nanet_tlp_merge_256" => generate::<crate::pcie::tlp_merge::TlpMerge<256>>(name),
        "nanet_pcie_rx_demux" => generate::<crate::pcie::rx_demux::PcieRxDemux<128>>(name),
        "nanet_pcie_rx_demux_256" => generate::<crate::pcie::rx_demux::PcieRxDemux<256>>(name),
        "nanet_pcie_config_sampler" => {
            generate::<crate::pcie::config_sampler::PcieConfigSampler>(name)
        }
        "nanet_tx_feeder" => generate::<crate::port::tx_feeder::TxFeeder<128>>(name),
        "nanet_tx_feeder_256" => generate::<crate::port::tx_feeder::TxFeeder<256>>(name),
        "nanet_event_mux" => generate::<crate::rx::event_mux::EventMux>(name),
        "nanet_board_glue" => generate::<crate::board::glue::De5NetGlue>(name),
        // The DE5-Net's rates: I2C at 100 kHz from 100 MHz, 10 ms to settle.
        "nanet_i2c_master" => generate::<crate::board::i2c_master::I2cMaster<250>>(name),
        "nanet_si570_init" => generate::<crate::board::si570::Si570Init<250, 1_000_000>>(name),
        "nanet_mac_csr_init" => generate::<crate::board::mac_init::MacCsrInit>(name),
        // A representative instance: 16-bit words.
        "nanet_skid_buffer" => generate::<crate::common::skid_buffer::SkidBuffer<16>>(name),
        "nanet_pair_fifo" => generate::<crate::common::pair_fifo::PairFifo<16>>(name),
        "nanet_fifo_output" => generate::<crate::common::fifo_output::FifoOutput<16>>(name),
        "nanet_tlp_skid" => generate::<crate::pcie::tlp_stream::TlpSkid<128>>(name),
        "nanet_tlp_skid_256" => generate::<crate::pcie::tlp_stream::TlpSkid<256>>(name),
        "nanet_stream_skid" => generate::<crate::common::stream::StreamSkid>(name),
        "nanet_avalon_to_stream" => generate::<AvalonToStream>(name),
        "nanet_stream_to_avalon" => generate::<StreamToAvalon>(name),
        _ => return None,
    })
}

//! The gateware's blocks as `dyn Block`, made in this crate.
//!
//! A `&dyn Block` of a block carries the block's whole vtable: `update_all`, and `hdl`, the syntax
//! tree rust-hdl generates the Verilog from (the largest code of every block, about half of the
//! code a crate compiles for it). A generic block (`Nic<4, 256>`, `DmaWriter<128>`) has its methods
//! compiled in every crate that makes such a reference to it, since release builds do not share
//! generic code between crates; the simulator's library and the module tests compiled each
//! design's `hdl` again. [`AsBlock`]'s impls are not generic: the reference is made here, where
//! the Verilog generator compiles those methods anyway (all but a few small blocks at test-only
//! parameters, compiled here for the tests instead), and a crate that simulates a design calls
//! this crate's copy (`settle`, `connect_all`, the checks, the VCD and the Verilog all go
//! through it).
//!
//! Every block a design of the simulator or of a test is built from has its impl below; a block
//! defined outside this crate (a test's own wrapper) takes one with [`as_block!`](crate::as_block)
//! where it is defined.

/// (Re-exported for [`as_block!`](crate::as_block): a crate that invokes it needs no path of its
/// own to rust-hdl.)
#[doc(hidden)]
pub use rust_hdl::prelude::Block;

use crate::board::glue::BoardGlue;
use crate::board::si570::Si570Init;
use crate::card::nic::Nic;
use crate::card::rx_path::RxPath;
use crate::common::async_fifo::AsyncFifo;
use crate::common::pair_fifo::PairFifo;
use crate::common::round_robin::RoundRobinPick;
use crate::common::skid_buffer::SkidBuffer;
use crate::common::stream::StreamSkid;
use crate::common::sync_fifo::SyncFifo;
use crate::common::time_sync::TimeSync;
use crate::offload::core::OffloadCore;
use crate::offload::packet_buffer::PacketBuffer;
use crate::offload::rx_parser::RxParser;
use crate::offload::tx_arbiter::TxArbiter;
use crate::offload::udp_tx::UdpTx;
use crate::pcie::config_sampler::PcieConfigSampler;
use crate::pcie::credit_gate::PcieCreditGate;
use crate::pcie::read::PcieRead;
use crate::pcie::rx_demux::PcieRxDemux;
use crate::pcie::target::PcieTarget;
use crate::pcie::tlp_merge::TlpMerge;
use crate::pcie::tx_arbiter::PcieTxArbiter;
use crate::pcie::write_tlp::PcieWriteTlp;
use crate::port::multi_stream::MultiStream;
use crate::port::packet_gen::PacketGen;
use crate::port::rx_packer::RxPacker;
use crate::port::tx_feeder::TxFeeder;
use crate::rx::dma_writer::DmaWriter;
use crate::rx::engine::RxEngine;
use crate::rx::event_arbiter::EventArbiter;
use crate::rx::event_queue::EventQueue;
use crate::rx::tlb::Tlb;
use crate::rx::write_arbiter::WriteArbiter;
use crate::rx::write_mux::WriteMux;
use crate::tx::engine::TxEngine;
use crate::tx::rings::TxRings;

/// A block as `dyn Block`, made where the impl is (see the module's header).
pub trait AsBlock {
    fn as_block(&self) -> &dyn Block;
    fn as_block_mut(&mut self) -> &mut dyn Block;
}

/// Implements [`AsBlock`] for each listed type, in the crate that invokes it. (Never inlined:
/// a caller in another crate that inlined it would make the vtable, and compile the methods,
/// itself.)
#[macro_export]
macro_rules! as_block {
    ($($t:ty),* $(,)?) => {$(
        impl $crate::as_block::AsBlock for $t {
            #[inline(never)]
            fn as_block(&self) -> &dyn $crate::as_block::Block {
                self
            }
            #[inline(never)]
            fn as_block_mut(&mut self) -> &mut dyn $crate::as_block::Block {
                self
            }
        }
    )*};
}

// The cards and the receive path, as the simulator builds them.
as_block!(Nic<1, 128>, Nic<2, 128>, Nic<3, 128>, Nic<4, 128>, Nic<1, 256>, Nic<4, 256>);
as_block!(RxPath<4, 128>, RxPath<4, 256>, RxEngine<1, 128>, RxEngine<1, 256>);
// The blocks the module tests build, at both widths where they have two.
as_block!(
    PcieTxArbiter<128>,
    PcieTxArbiter<256>,
    PcieRead<128>,
    PcieRead<256>,
    TlpMerge<128>,
    TlpMerge<256>,
    PcieRxDemux<128>,
    PcieRxDemux<256>,
    PcieCreditGate<128>,
    PcieCreditGate<256>,
    PcieWriteTlp<128>,
    PcieWriteTlp<256>,
    PcieTarget<128>,
    PcieTarget<256>,
    TxFeeder<128>,
    TxFeeder<256>,
    RxPacker<128>,
    RxPacker<256>,
    TxRings<2, 128>,
    TxRings<2, 256>,
    TxRings<4, 128>,
    TxEngine<128>,
    TxEngine<256>,
    WriteArbiter<1, 128>,
    WriteArbiter<4, 128>,
    WriteArbiter<4, 256>,
    WriteMux<128>,
    WriteMux<256>,
    EventQueue<128>,
    EventQueue<256>,
    DmaWriter<128>,
    DmaWriter<256>,
    EventArbiter<4>,
    SyncFifo<14, 4, 5>,
    AsyncFifo<64, 10, 4, 5>,
    SkidBuffer<16>,
    SkidBuffer<256>,
    PairFifo<16>,
    Si570Init<2, 200>,
    BoardGlue<50, 20, 2, 100>,
);
as_block!(
    OffloadCore,
    RxParser,
    UdpTx,
    TxArbiter,
    PacketBuffer,
    MultiStream,
    PacketGen,
    Tlb,
    TimeSync,
    StreamSkid,
    RoundRobinPick,
    PcieConfigSampler,
);

//! Per-module testbenches of the gateware: random valid/ready stalls on both sides, scoreboards
//! against the reference model in `nanet_sim::model`.

mod async_fifo;
mod board_glue;
mod dma_writer;
mod event_queue;
mod multi_stream;
mod packet_buffer;
mod packet_gen;
mod pcie_credit_gate;
mod pcie_read;
mod pcie_target;
mod pcie_tx_arbiter;
mod pcie_write_tlp;
mod rx_arbiter;
mod rx_packer;
mod rx_parser;
mod sync_fifo;
mod tlb;
mod tx_arbiter;
mod tx_engine;
mod udp_tx;

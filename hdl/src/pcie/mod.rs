//! The transaction layer against the Stratix V Hard IP for PCIe (Avalon-ST at the core datapath's
//! width: 128 bits for Gen2 x8, 256 for Gen3 x8): the card's ID
//! from the configuration bus, the BAR0 target,
//! DMA writes and reads as TLPs, the receive demux, the transmit arbiter, TLP merges and the
//! flow-control credit gates, and the streams they speak (TLP beats, write requests).
//!
//! Guarantees: a TLP is sent only with the credits for it; completions are matched by tag and handed
//! on in issue order; a malformed or unexpected TLP is dropped and counted.

pub mod config_sampler;
pub mod credit_gate;
pub mod read;
pub mod rx_demux;
pub mod target;
pub mod tlp_merge;
pub mod tlp_stream;
pub mod tx_arbiter;
pub mod write_request;
pub mod write_tlp;

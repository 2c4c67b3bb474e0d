//! The transaction layer against the Stratix V Hard IP for PCIe (128-bit Avalon-ST): the card's ID
//! from the configuration bus, the BAR0 target,
//! DMA writes and reads as TLPs, the receive demux, the transmit arbiter, TLP merges and the
//! flow-control credit gates, and the streams they speak (TLP beats, write requests).
//!
//! Guarantees: a TLP is sent only with the credits for it; completions are matched by tag and handed
//! on in issue order; a malformed or unexpected TLP is dropped and counted.

use nanet_contract::pcie::PcieVariant;

/// The PCIe variant this transaction layer and the core datapath are built for: the Hard IP's
/// 128-bit interface (`Bits<128>` beats).
pub const CARD_PCIE: PcieVariant = PcieVariant::Gen2x8;

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

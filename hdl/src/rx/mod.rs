//! The receive side of the core domain (250 MHz): the receive engine and its register file, per
//! port a CLOP engine (NaNet's TCL) and a DMA writer with its TLB, the arbiters and muxes in front
//! of the event queue and the PCIe write path.
//!
//! Guarantees: the card writes only through a TLB hit into a registered, released buffer; a packet
//! that ends badly is never reported and the CLOP's write offset does not move past it.

pub mod clop;
pub mod dma_writer;
pub mod engine;
pub mod event_arbiter;
pub mod event_mux;
pub mod event_queue;
pub mod regs;
pub mod tlb;
pub mod words;
pub mod write_arbiter;
pub mod write_mux;

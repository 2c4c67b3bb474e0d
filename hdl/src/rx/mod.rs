//! The receive side of the core domain (250 MHz): the arbiter over the ports' clock-crossing FIFOs,
//! the receive engine and its register file, the CLOP engine (NaNet's TCL), the TLB, the DMA writer,
//! the event queue and the muxes in front of the PCIe write path.
//!
//! Guarantees: the card writes only through a TLB hit into a registered, released buffer; a packet
//! that ends badly is never reported and the CLOP's write offset does not move past it.

pub mod arbiter;
pub mod clop;
pub mod dma_writer;
pub mod engine;
pub mod event_mux;
pub mod event_queue;
pub mod regs;
pub mod tlb;
pub mod words;
pub mod write_mux;

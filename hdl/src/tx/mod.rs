//! The transmit side of the core domain (250 MHz): the host's descriptor rings (one per port),
//! payload reads through
//! the PCIe read engine, and entries of the datapath's width into each port's clock-crossing FIFO.
//!
//! Guarantees: a descriptor is checked before any read is issued for it; a bad one or a failed read
//! is reported by an event and counted, never sent as a good frame.

pub mod descriptor;
pub mod engine;
pub mod rings;

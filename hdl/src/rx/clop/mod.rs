//! The CLOP engine (NaNet's TCL) and its parts: the engine that places packets into their CLOP's
//! buffers, closes buffers and reports them ([`engine`]); the store of every CLOP's configuration
//! and state, the only place that knows the RAM words' layout ([`store`]); the scanner that finds
//! buffers whose flush timeout has passed ([`timeout_scan`]); a packet's fit in a buffer
//! ([`fit`]); the register file's side of the engines, one per port: commands and releases to the
//! engine of the CLOP's port ([`route`]), their `ready`s and counts back ([`gather`]).
//!
//! Configure/disable commands and buffer releases stay states of the engine's one state machine,
//! beside the packet path: they write the same store and ownership bits, and running them strictly
//! between packets is what lets a disable promise that no write to the old buffers follows.

pub mod engine;
pub mod fit;
pub mod gather;
pub mod header_join;
pub mod route;
pub mod store;
pub mod timeout_scan;

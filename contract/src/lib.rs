//! The host <-> card contract of nanet, defined once.
//!
//! The gateware (`nanet-hdl`), the simulator (`nanet-sim`), the host library and the documentation all
//! read the register map, the counter list and the protocol constants from here. The crate has no
//! dependencies so that any of them (and generators of C headers or docs) can use it.
//!
//! Byte order on the card's 64-bit streams is defined in [`stream`].

#![forbid(unsafe_code)]

pub mod bar0;
pub mod card;
pub mod docs;
pub mod events;
pub mod offload;
pub mod packed;
pub mod pcie;
pub mod regdef;
pub mod rx;
pub mod stream;
pub mod tx;

pub use offload::{Counter, DropReason, Reg};

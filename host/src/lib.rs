//! nanet: the host library of the nanet NIC.
//!
//! ```no_run
//! use std::time::Duration;
//! use nanet::{ClopConfig, Device};
//!
//! let dev = Device::open("sim")?; // or "0000:03:00.0"
//! let clop = dev.register(&ClopConfig::new(0, 5000).buffers(8, 64 << 10))?;
//! while let Some(event) = clop.wait(Duration::from_secs(1))? {
//!     if event.is_buffer() {
//!         let buf = clop.take(&event)?;
//!         for p in buf.packets()? {
//!             println!("{} bytes from {:?}", p.payload.len(), p.header.src_ip);
//!         }
//!     } // the buffer goes back to the card here
//! }
//! # Ok::<(), nanet::Error>(())
//! ```
//!
//! The same program runs on a real card (VFIO) and on the simulated card (`"sim"`): both are a
//! [`backend::Backend`], reached only through BAR0 registers, DMA mappings and an interrupt fd.

pub mod backend;
mod barrier;
pub mod clop;
pub mod device;
pub mod dma;
pub mod error;
pub mod events;
pub mod generator;
pub mod gpu;
pub mod memory;
mod ownership;
mod pending;
mod release_credits;
pub mod tx;
mod tx_ring;

pub use clop::{Clop, ClopConfig, FilledBuffer, FullPolicy, Layout, Packet};
pub use device::{ArpEntry, Device, PortConfig};
pub use error::{Error, Result};
pub use events::Event;
pub use generator::{GenConfig, GenStatus};
pub use memory::MemoryProvider;
pub use nanet_contract::events::{EventKind, StageTimes};
pub use nanet_contract::pcie::PcieVariant;
pub use nanet_contract::rx::{PacketHeader, PageSize};
pub use tx::{Datagram, SendTo};

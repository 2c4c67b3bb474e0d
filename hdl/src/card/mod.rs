//! The assembly: the NIC top (`nanet_nic`) behind the Hard IP and `P` MAC clients, the receive path
//! of `P` ports, and the BAR0 register file with its clock-crossing bridge to the ports. (The glue
//! to a board's vendor IP is `board/`.)
//!
//! Guarantees: register accesses land in the host's order across clock domains; the card block and
//! block table describe exactly what was generated.

pub mod bar0_regs;
pub mod nic;
pub mod reg_bridge;
pub mod rx_path;

//! The glue between the NIC and a board's vendor IP, in the board's management domain and at the
//! Hard IP's and the PHY's edges: reset sequencing across the board's clocks, the programming of
//! the transceivers' reference oscillator over I2C, the MACs' configuration registers, and the
//! status LEDs. The board top (`nanet-board`) wires it; everything with state on the board is
//! here, so that it is simulated and linted like the rest of the gateware.

pub mod glue;
pub mod i2c_master;
pub mod mac_init;
pub mod si570;

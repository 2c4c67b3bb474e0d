//! What the simulation is checked against: the reference model of the offload core's receive
//! decisions, the host side of the receive path (CLOP buffers, event ring, scoreboard of what
//! landed), and the map from the gateware's drop reasons to the contract's.

pub mod drop_reason;
pub mod reference;
pub mod rx_host;

//! Around one offload core, still in the network domain: Multi-Stream (UDP destination port ->
//! stream id), the packer into the 128-bit words of the port's clock-crossing FIFO, the transmit
//! feeder that shares the core's UDP transmitter between host datagrams and the packet generator,
//! and [`rx_port::RxPort`], which assembles them with the core.
//!
//! Guarantees: a datagram enters the clock-crossing FIFO only whole and with its stream resolved,
//! or is counted as dropped (no stream, FIFO overflow).

pub mod multi_stream;
pub mod packet_gen;
pub mod rx_packer;
pub mod rx_port;
pub mod tx_feeder;

//! The per-port UDP/IPv4/ARP offload core, in the network domain (156.25 MHz, one 64-bit beat per
//! cycle), one module per protocol layer: the receive parser with the Ethernet, IPv4, ARP, ICMP and
//! UDP checks; the ARP cache, resolver and replies; the ICMP echo responder; the transmit side
//! (UDP checksum, header builder, frame transmitter, frame arbiter in front of the MAC); and the
//! core's register file.
//!
//! Guarantees: every received frame leaves either as a good datagram or as a drop counted under one
//! reason; a frame to send leaves the MAC whole, or ends with the MAC error flag.

pub mod arp;
pub mod arp_cache;
pub mod arp_resolver;
pub mod arp_tx;
pub mod core;
pub mod eth;
pub mod frame_tx;
pub mod icmp;
pub mod icmp_echo;
pub mod ipv4;
pub mod packet_buffer;
pub mod regs;
pub mod rx_parser;
pub mod tx_arbiter;
pub mod udp;
pub mod udp_datagram;
pub mod udp_tx;
pub mod udp_tx_checksum;

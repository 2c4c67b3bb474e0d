//! Traffic into and out of the simulation: frames built with etherparse, pcap files in and out,
//! replay of a capture into a port, and one-line frame descriptions for the CLI.

pub mod describe;
pub mod packets;
pub mod pcap;
pub mod replay;

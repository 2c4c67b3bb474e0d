//! Every way a call can fail, each saying what to do about it.

use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(
        "unknown device {0:?}: use \"sim\" (or \"sim:option=value,...\") for the simulated card, or \
         a PCI address such as 0000:03:00.0"
    )]
    UnknownDevice(String),
    #[error("option {option:?} of the simulated card: {why}")]
    SimOption { option: String, why: String },
    #[error("this build of nanet has no simulated card (build with the `sim` feature)")]
    NoSim,
    #[error("the simulated card failed to start: {0}")]
    SimStart(String),
    #[error("the simulated card stopped: {0}")]
    CardStopped(String),
    #[error("VFIO: {0}")]
    Vfio(String),
    #[error("the card: {0}")]
    Card(String),
    #[error("port {port} does not exist (the card has ports 0..{ports})")]
    NoSuchPort { port: u8, ports: usize },
    #[error("invalid CLOP configuration: {0}")]
    InvalidClop(String),
    #[error("invalid packet generator configuration: {0}")]
    InvalidGenerator(String),
    #[error("cannot send {0}")]
    InvalidSend(String),
    #[error("UDP port {udp_port} on port {port} is already taken by CLOP {clop}")]
    UdpPortTaken { port: u8, udp_port: u16, clop: u8 },
    #[error("port {0} has no free Multi-Stream entry (all 16 are in use)")]
    NoStreamEntry(u8),
    #[error(
        "the CLOP needs {needed} contiguous TLB entries but at most {free} are free: use fewer or \
         larger pages, or deregister a CLOP"
    )]
    TlbFull { needed: usize, free: usize },
    #[error("buffer {buffer} of CLOP {clop} is not held by the application (released already, or never reported)")]
    NotHeld { clop: u8, buffer: u16 },
    #[error(
        "CLOP {0} keeps its buffers in provided (device) memory the library cannot read: use \
         Clop::device_address and Clop::release"
    )]
    NotHostMemory(u8),
    #[error("the event is for CLOP {event}, not for CLOP {clop}")]
    WrongClop { clop: u8, event: u8 },
    #[error(
        "the card did not finish the command on CLOP {clop} within {waited:?} of its own time"
    )]
    CommandTimeout { clop: u8, waited: Duration },
    #[error(
        "the card refused the command on CLOP {clop} (a staged value out of range, a configure \
         of an enabled CLOP, or a write while a command was pending; counted in bad_clop_command)"
    )]
    CommandRefused { clop: u8 },
    #[error(
        "the card did not finish {what} within {waited_us} us of its own time (it should take \
         far less): the card may be hung; reset it"
    )]
    CardStuck { what: String, waited_us: u64 },
    #[error(
        "the card's clock stood still for a second while the library waited for {what}: the card \
         is hung or gone; reset it"
    )]
    ClockStopped { what: String },
    #[error(
        "event record {index} is corrupt ({why}): the event ring is out of step with the card"
    )]
    BadEvent { index: u16, why: String },
    #[error("DMA memory: {0}")]
    Memory(String),
    #[error("GPU memory: {0}")]
    Gpu(String),
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

pub type Result<T> = std::result::Result<T, Error>;

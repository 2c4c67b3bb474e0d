//! A UDP datagram to send, as the offload core's transmitter takes it: a request (destination IP,
//! source and destination port, payload length; `req_valid`/`req_ready`) and the payload on a
//! packet stream beside it. The request and the payload have handshakes of their own: the core
//! holds the request while it resolves the next hop, and takes the payload after that.
//!
//! Spoken by the packet generator and the transmit feeder (which shares the core between the
//! generator and host datagrams) and taken by the offload core.

use rust_hdl::prelude::*;

use crate::common::stream::{StreamSink, StreamSource};

/// Producer end of a datagram to send.
#[derive(LogicInterface, Default)]
#[join = "UdpTxSink"]
pub struct UdpTxSource {
    pub req_valid: Signal<Out, Bit>,
    pub req_ready: Signal<In, Bit>,
    pub dst_ip: Signal<Out, Bits<32>>,
    pub src_port: Signal<Out, Bits<16>>,
    pub dst_port: Signal<Out, Bits<16>>,
    /// Payload length in bytes.
    pub len: Signal<Out, Bits<16>>,
    pub payload: StreamSource,
}

/// Consumer end of a datagram to send.
#[derive(LogicInterface, Default)]
#[join = "UdpTxSource"]
pub struct UdpTxSink {
    pub req_valid: Signal<In, Bit>,
    pub req_ready: Signal<Out, Bit>,
    pub dst_ip: Signal<In, Bits<32>>,
    pub src_port: Signal<In, Bits<16>>,
    pub dst_port: Signal<In, Bits<16>>,
    pub len: Signal<In, Bits<16>>,
    pub payload: StreamSink,
}

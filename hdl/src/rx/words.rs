//! The core domain's datagram stream, from the port arbiter to the receive engine: 128-bit words,
//! a meta word first (`meta` set; its layout is in `clop_engine`), then the payload in network
//! order (first byte in `data[127:120]`), the last word flagged `last` and, if the datagram ended
//! badly, `error`. `port` (the port the datagram came from) is valid with every word.

use rust_hdl::prelude::*;

/// Producer end.
#[derive(LogicInterface, Default)]
#[join = "RxWordsSink"]
pub struct RxWordsSource {
    pub data: Signal<Out, Bits<128>>,
    pub meta: Signal<Out, Bit>,
    pub last: Signal<Out, Bit>,
    pub error: Signal<Out, Bit>,
    pub port: Signal<Out, Bits<2>>,
    pub valid: Signal<Out, Bit>,
    pub ready: Signal<In, Bit>,
}

/// Consumer end.
#[derive(LogicInterface, Default)]
#[join = "RxWordsSource"]
pub struct RxWordsSink {
    pub data: Signal<In, Bits<128>>,
    pub meta: Signal<In, Bit>,
    pub last: Signal<In, Bit>,
    pub error: Signal<In, Bit>,
    pub port: Signal<In, Bits<2>>,
    pub valid: Signal<In, Bit>,
    pub ready: Signal<Out, Bit>,
}

//! The card's TLP streams: 128-bit beats in the Stratix V Hard IP's Avalon-ST layout (see
//! `pcie/target.rs` for the layout), `sop`/`eop` around a TLP, `empty` in its last beat when the
//! upper qword is unused. Inside the card a beat moves when `valid && ready`, and a source leaves no
//! gap inside a TLP; at the Hard IP's edge the ready latency of 2 is met by `pcie/tx_arbiter.rs`
//! (transmit) and by the receive buffer of `pcie/target.rs`.

use rust_hdl::prelude::*;

/// Producer end of a TLP stream.
#[derive(LogicInterface, Default)]
#[join = "TlpSink"]
pub struct TlpSource {
    pub data: Signal<Out, Bits<128>>,
    pub sop: Signal<Out, Bit>,
    pub eop: Signal<Out, Bit>,
    pub empty: Signal<Out, Bit>,
    pub valid: Signal<Out, Bit>,
    pub ready: Signal<In, Bit>,
}

/// Consumer end of a TLP stream.
#[derive(LogicInterface, Default)]
#[join = "TlpSource"]
pub struct TlpSink {
    pub data: Signal<In, Bits<128>>,
    pub sop: Signal<In, Bit>,
    pub eop: Signal<In, Bit>,
    pub empty: Signal<In, Bit>,
    pub valid: Signal<In, Bit>,
    pub ready: Signal<Out, Bit>,
}

/// The Hard IP's receive TLPs as the card's receivers see them: a TLP stream with the one-hot BAR
/// hit (bit 0: BAR0, valid with `sop`); at the Hard IP's edge `ready` has a latency of 2.
#[derive(LogicInterface, Default)]
#[join = "TlpRxSink"]
pub struct TlpRxSource {
    pub data: Signal<Out, Bits<128>>,
    pub sop: Signal<Out, Bit>,
    pub eop: Signal<Out, Bit>,
    pub empty: Signal<Out, Bit>,
    pub valid: Signal<Out, Bit>,
    pub bar: Signal<Out, Bits<8>>,
    pub ready: Signal<In, Bit>,
}

/// Consumer end of [`TlpRxSource`].
#[derive(LogicInterface, Default)]
#[join = "TlpRxSource"]
pub struct TlpRxSink {
    pub data: Signal<In, Bits<128>>,
    pub sop: Signal<In, Bit>,
    pub eop: Signal<In, Bit>,
    pub empty: Signal<In, Bit>,
    pub valid: Signal<In, Bit>,
    pub bar: Signal<In, Bits<8>>,
    pub ready: Signal<Out, Bit>,
}

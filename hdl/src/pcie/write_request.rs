//! The write-request interface of the DMA side: what the DMA writer and the event queue produce,
//! and what the PCIe TLP layer (issue [card]) or the host-memory model consumes.
//!
//! Beats of 128 bits in little-endian memory lanes: the byte at address `A` is in lane `A % 16`,
//! bits `[8*(A%16)+7 : 8*(A%16)]`, enabled by `be` bit `A % 16`. `sop` marks a request's first beat
//! and carries its byte length `len` (1..=256); `addr` is the bus address of the beat's first
//! enabled byte, so on `sop` the request's address; `eop` marks its last beat. The enabled lanes of a
//! beat are contiguous; only a request's first beat may start above lane 0 and only its last may end
//! below lane 15. A request never crosses a 4 KiB boundary. A beat moves when `valid && ready`.

use rust_hdl::prelude::*;

/// Producer end of a write-request interface.
#[derive(LogicInterface, Default)]
#[join = "WriteRequestSink"]
pub struct WriteRequestSource {
    pub valid: Signal<Out, Bit>,
    pub ready: Signal<In, Bit>,
    pub sop: Signal<Out, Bit>,
    pub eop: Signal<Out, Bit>,
    pub addr: Signal<Out, Bits<64>>,
    pub len: Signal<Out, Bits<9>>,
    pub data: Signal<Out, Bits<128>>,
    pub be: Signal<Out, Bits<16>>,
}

/// Consumer end of a write-request interface.
#[derive(LogicInterface, Default)]
#[join = "WriteRequestSource"]
pub struct WriteRequestSink {
    pub valid: Signal<In, Bit>,
    pub ready: Signal<Out, Bit>,
    pub sop: Signal<In, Bit>,
    pub eop: Signal<In, Bit>,
    pub addr: Signal<In, Bits<64>>,
    pub len: Signal<In, Bits<9>>,
    pub data: Signal<In, Bits<128>>,
    pub be: Signal<In, Bits<16>>,
}

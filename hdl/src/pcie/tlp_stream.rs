//! The card's TLP streams: beats of `W` bits (the PCIe variant's, `nanet_contract::pcie`) in the
//! Stratix V Hard IP's Avalon-ST layout (see `pcie/target.rs` for the layout at 128 bits;
//! `sim/src/world/tlp.rs` at both widths), `sop`/`eop` around a TLP, `empty` in its last beat the unused
//! qwords at its top (the Hard IP's 2-bit `empty`; at 128 bits 0 or 1). Inside the card a beat moves when `valid && ready`, and a source leaves no
//! gap inside a TLP; at the Hard IP's edge the ready latency of 2 is met by `pcie/tx_arbiter.rs`
//! (transmit) and by the receive buffer of `pcie/target.rs`.

use rust_hdl::prelude::*;

use crate::common::skid_buffer::SidedSkidBuffer;

/// Producer end of a TLP stream.
#[derive(LogicInterface, Default)]
#[join = "TlpSink"]
pub struct TlpSource<const W: usize> {
    pub data: Signal<Out, Bits<W>>,
    pub sop: Signal<Out, Bit>,
    pub eop: Signal<Out, Bit>,
    pub empty: Signal<Out, Bits<2>>,
    pub valid: Signal<Out, Bit>,
    pub ready: Signal<In, Bit>,
}

/// Consumer end of a TLP stream.
#[derive(LogicInterface, Default)]
#[join = "TlpSource"]
pub struct TlpSink<const W: usize> {
    pub data: Signal<In, Bits<W>>,
    pub sop: Signal<In, Bit>,
    pub eop: Signal<In, Bit>,
    pub empty: Signal<In, Bits<2>>,
    pub valid: Signal<In, Bit>,
    pub ready: Signal<Out, Bit>,
}

/// The Hard IP's receive TLPs as the card's receivers see them: a TLP stream with the one-hot BAR
/// hit (bit 0: BAR0, valid with `sop`); at the Hard IP's edge `ready` has a latency of 2.
#[derive(LogicInterface, Default)]
#[join = "TlpRxSink"]
pub struct TlpRxSource<const W: usize> {
    pub data: Signal<Out, Bits<W>>,
    pub sop: Signal<Out, Bit>,
    pub eop: Signal<Out, Bit>,
    pub empty: Signal<Out, Bits<2>>,
    pub valid: Signal<Out, Bit>,
    pub bar: Signal<Out, Bits<8>>,
    pub ready: Signal<In, Bit>,
}

/// Consumer end of [`TlpRxSource`].
#[derive(LogicInterface, Default)]
#[join = "TlpRxSource"]
pub struct TlpRxSink<const W: usize> {
    pub data: Signal<In, Bits<W>>,
    pub sop: Signal<In, Bit>,
    pub eop: Signal<In, Bit>,
    pub empty: Signal<In, Bits<2>>,
    pub valid: Signal<In, Bit>,
    pub bar: Signal<In, Bits<8>>,
    pub ready: Signal<Out, Bit>,
}

/// A register slice on a TLP stream of `W`-bit beats (`common/skid_buffer.rs`): the beat, `valid`
/// and `ready` on both sides come from flip-flops, one cycle of latency, full throughput, gap-free
/// TLPs stay gap-free. `side_in` travels with each beat to `side_out`: a few bits the stage in
/// front computed from the beat for the stage behind (the credit gate's data need); unused, they
/// cost nothing.
#[derive(LogicBlock, Default)]
pub struct TlpSkid<const W: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub inp: TlpSink<W>,
    pub side_in: Signal<In, Bits<10>>,
    pub out: TlpSource<W>,
    pub side_out: Signal<Out, Bits<10>>,
    /// The data; `sop`, `eop`, `empty` and the side bits as the side word.
    slice: SidedSkidBuffer<W, 14>,
}

impl<const W: usize> Logic for TlpSkid<W> {
    #[hdl_gen]
    fn update(&mut self) {
        self.slice.clock.next = self.clock.val();
        self.slice.reset.next = self.reset.val();
        self.slice.in_data.next = self.inp.data.val();
        self.slice.in_side.next = bit_cast::<14, 1>(self.inp.sop.val().into())
            | (bit_cast::<14, 1>(self.inp.eop.val().into()) << 1)
            | (bit_cast::<14, 2>(self.inp.empty.val()) << 2)
            | (bit_cast::<14, 10>(self.side_in.val()) << 4);
        self.slice.in_valid.next = self.inp.valid.val();
        self.inp.ready.next = self.slice.in_ready.val();
        self.out.data.next = self.slice.out_data.val();
        self.out.sop.next = self.slice.out_side.val().get_bit(0);
        self.out.eop.next = self.slice.out_side.val().get_bit(1);
        self.out.empty.next = self.slice.out_side.val().get_bits::<2>(2);
        self.side_out.next = self.slice.out_side.val().get_bits::<10>(4);
        self.out.valid.next = self.slice.out_valid.val();
        self.slice.out_ready.next = self.out.ready.val();
    }
}

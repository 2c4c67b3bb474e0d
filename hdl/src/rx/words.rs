//! The core domain's datagram stream, from a port's FIFO to its CLOP engine: `W`-bit words
//! (the core datapath's width, 128 or 256), a meta word first (`meta` set; its layout is
//! `nanet_contract::packed::rx_meta`, in the word's low 128 bits, packed by [`RxMetaPack`] in the
//! port and unpacked by [`RxMetaUnpack`] in the CLOP engine), then the payload in network order
//! (first byte in the top byte, `data[W-1:W-8]`), the last word flagged `last` and, if the
//! datagram ended badly, `error`. `port` (the port the datagram came from) is valid with every
//! word.

use nanet_contract::packed::{rx_meta, BitField};
use rust_hdl::prelude::*;

use crate::common::position::bit_position;
use crate::common::skid_buffer::SidedSkidBuffer;

/// Producer end.
#[derive(LogicInterface, Default)]
#[join = "RxWordsSink"]
pub struct RxWordsSource<const W: usize> {
    pub data: Signal<Out, Bits<W>>,
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
pub struct RxWordsSink<const W: usize> {
    pub data: Signal<In, Bits<W>>,
    pub meta: Signal<In, Bit>,
    pub last: Signal<In, Bit>,
    pub error: Signal<In, Bit>,
    pub port: Signal<In, Bits<2>>,
    pub valid: Signal<In, Bit>,
    pub ready: Signal<Out, Bit>,
}

/// A register slice for the word stream (a [`SidedSkidBuffer`]: the data, and the rest as its
/// side word): everything it drives comes from flip-flops, one cycle of latency, full throughput.
#[derive(LogicBlock, Default)]
pub struct RxWordsSkid<const W: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub inp: RxWordsSink<W>,
    pub out: RxWordsSource<W>,
    /// The data; `meta`, `last`, `error` and `port` as the side word, bit 0 up.
    slice: SidedSkidBuffer<W, 5>,
}

impl<const W: usize> Logic for RxWordsSkid<W> {
    #[hdl_gen]
    fn update(&mut self) {
        self.slice.clock.next = self.clock.val();
        self.slice.reset.next = self.reset.val();
        self.slice.in_data.next = self.inp.data.val();
        self.slice.in_side.next = bit_cast::<5, 1>(self.inp.meta.val().into())
            | (bit_cast::<5, 1>(self.inp.last.val().into()) << 1)
            | (bit_cast::<5, 1>(self.inp.error.val().into()) << 2)
            | (bit_cast::<5, 2>(self.inp.port.val()) << 3);
        self.slice.in_valid.next = self.inp.valid.val();
        self.slice.out_ready.next = self.out.ready.val();
        self.inp.ready.next = self.slice.in_ready.val();
        self.out.data.next = self.slice.out_data.val();
        self.out.meta.next = self.slice.out_side.val().get_bit(0);
        self.out.last.next = self.slice.out_side.val().get_bit(1);
        self.out.error.next = self.slice.out_side.val().get_bit(2);
        self.out.port.next = self.slice.out_side.val().get_bits::<2>(3);
        self.out.valid.next = self.slice.out_valid.val();
    }
}

// The fields' widths as the blocks below declare them; their positions are read from the
// contract as constants.
const _: () = assert!(
    rx_meta::STREAM.width == 4
        && rx_meta::LEN.width == 16
        && rx_meta::SRC_IP.width == 32
        && rx_meta::SRC_PORT.width == 16
        && rx_meta::SOP_TIME.width == 32
        && rx_meta::HDR_DELTA.width == 16
);

fn lsb_of(f: BitField) -> Constant<Bits<8>> {
    bit_position(f.lsb)
}

/// The fields of a receive meta word into the word (combinational).
#[derive(LogicBlock)]
pub struct RxMetaPack {
    pub stream: Signal<In, Bits<4>>,
    pub len: Signal<In, Bits<16>>,
    pub src_ip: Signal<In, Bits<32>>,
    pub src_port: Signal<In, Bits<16>>,
    pub sop_time: Signal<In, Bits<32>>,
    pub hdr_delta: Signal<In, Bits<16>>,
    pub word: Signal<Out, Bits<128>>,
    at_stream: Constant<Bits<8>>,
    at_len: Constant<Bits<8>>,
    at_src_ip: Constant<Bits<8>>,
    at_src_port: Constant<Bits<8>>,
    at_sop_time: Constant<Bits<8>>,
    at_hdr_delta: Constant<Bits<8>>,
}

impl Default for RxMetaPack {
    fn default() -> Self {
        Self {
            stream: Default::default(),
            len: Default::default(),
            src_ip: Default::default(),
            src_port: Default::default(),
            sop_time: Default::default(),
            hdr_delta: Default::default(),
            word: Default::default(),
            at_stream: lsb_of(rx_meta::STREAM),
            at_len: lsb_of(rx_meta::LEN),
            at_src_ip: lsb_of(rx_meta::SRC_IP),
            at_src_port: lsb_of(rx_meta::SRC_PORT),
            at_sop_time: lsb_of(rx_meta::SOP_TIME),
            at_hdr_delta: lsb_of(rx_meta::HDR_DELTA),
        }
    }
}

impl Logic for RxMetaPack {
    #[hdl_gen]
    fn update(&mut self) {
        self.word.next = (bit_cast::<128, 4>(self.stream.val()) << self.at_stream.val())
            | (bit_cast::<128, 16>(self.len.val()) << self.at_len.val())
            | (bit_cast::<128, 32>(self.src_ip.val()) << self.at_src_ip.val())
            | (bit_cast::<128, 16>(self.src_port.val()) << self.at_src_port.val())
            | (bit_cast::<128, 32>(self.sop_time.val()) << self.at_sop_time.val())
            | (bit_cast::<128, 16>(self.hdr_delta.val()) << self.at_hdr_delta.val());
    }
}

/// A receive meta word into its fields (combinational).
#[derive(LogicBlock)]
pub struct RxMetaUnpack {
    pub word: Signal<In, Bits<128>>,
    pub stream: Signal<Out, Bits<4>>,
    pub len: Signal<Out, Bits<16>>,
    pub src_ip: Signal<Out, Bits<32>>,
    pub src_port: Signal<Out, Bits<16>>,
    pub sop_time: Signal<Out, Bits<32>>,
    pub hdr_delta: Signal<Out, Bits<16>>,
    at_stream: Constant<Bits<8>>,
    at_len: Constant<Bits<8>>,
    at_src_ip: Constant<Bits<8>>,
    at_src_port: Constant<Bits<8>>,
    at_sop_time: Constant<Bits<8>>,
    at_hdr_delta: Constant<Bits<8>>,
}

impl Default for RxMetaUnpack {
    fn default() -> Self {
        Self {
            word: Default::default(),
            stream: Default::default(),
            len: Default::default(),
            src_ip: Default::default(),
            src_port: Default::default(),
            sop_time: Default::default(),
            hdr_delta: Default::default(),
            at_stream: lsb_of(rx_meta::STREAM),
            at_len: lsb_of(rx_meta::LEN),
            at_src_ip: lsb_of(rx_meta::SRC_IP),
            at_src_port: lsb_of(rx_meta::SRC_PORT),
            at_sop_time: lsb_of(rx_meta::SOP_TIME),
            at_hdr_delta: lsb_of(rx_meta::HDR_DELTA),
        }
    }
}

impl Logic for RxMetaUnpack {
    #[hdl_gen]
    fn update(&mut self) {
        self.stream.next = self.word.val().get_bits::<4>(self.at_stream.val().index());
        self.len.next = self.word.val().get_bits::<16>(self.at_len.val().index());
        self.src_ip.next = self.word.val().get_bits::<32>(self.at_src_ip.val().index());
        self.src_port.next = self
            .word
            .val()
            .get_bits::<16>(self.at_src_port.val().index());
        self.sop_time.next = self
            .word
            .val()
            .get_bits::<32>(self.at_sop_time.val().index());
        self.hdr_delta.next = self
            .word
            .val()
            .get_bits::<16>(self.at_hdr_delta.val().index());
    }
}

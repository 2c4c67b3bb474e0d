//! The packet stream every module of the card speaks: 64-bit data, byte keep, last, error, and a
//! valid/ready handshake. A beat moves on a rising clock edge where `valid && ready`.
//!
//! Byte order (network order, first wire byte in `data[63:56]`, `keep[7]` for it) is defined once in
//! [`nanet_contract::stream`]. `error` is meaningful on the last beat only: a packet whose last beat
//! has `error` set must be discarded by whoever consumes it (cut-through with safe commit).

use rust_hdl::prelude::*;

use crate::common::skid_buffer::SkidBuffer;

/// Producer end of a packet stream.
#[derive(LogicInterface, Default)]
#[join = "StreamSink"]
pub struct StreamSource {
    pub data: Signal<Out, Bits<64>>,
    pub keep: Signal<Out, Bits<8>>,
    pub last: Signal<Out, Bit>,
    pub error: Signal<Out, Bit>,
    pub valid: Signal<Out, Bit>,
    pub ready: Signal<In, Bit>,
}

/// Consumer end of a packet stream.
#[derive(LogicInterface, Default)]
#[join = "StreamSource"]
pub struct StreamSink {
    pub data: Signal<In, Bits<64>>,
    pub keep: Signal<In, Bits<8>>,
    pub last: Signal<In, Bit>,
    pub error: Signal<In, Bit>,
    pub valid: Signal<In, Bit>,
    pub ready: Signal<Out, Bit>,
}

/// Altera 10G MAC client interface (Avalon-ST, 64-bit), producer end. Same byte order as the stream;
/// `empty` counts the unused bytes at the end of the end-of-packet beat.
#[derive(LogicInterface, Default)]
#[join = "AvalonStSink"]
pub struct AvalonStSource {
    pub data: Signal<Out, Bits<64>>,
    pub valid: Signal<Out, Bit>,
    pub ready: Signal<In, Bit>,
    pub startofpacket: Signal<Out, Bit>,
    pub endofpacket: Signal<Out, Bit>,
    pub empty: Signal<Out, Bits<3>>,
    pub error: Signal<Out, Bit>,
}

/// Altera 10G MAC client interface (Avalon-ST, 64-bit), consumer end.
#[derive(LogicInterface, Default)]
#[join = "AvalonStSource"]
pub struct AvalonStSink {
    pub data: Signal<In, Bits<64>>,
    pub valid: Signal<In, Bit>,
    pub ready: Signal<Out, Bit>,
    pub startofpacket: Signal<In, Bit>,
    pub endofpacket: Signal<In, Bit>,
    pub empty: Signal<In, Bits<3>>,
    pub error: Signal<In, Bit>,
}

/// Bits of an Avalon-ST beat in a register slice: `data`, then `empty`, `endofpacket` and `error`
/// above it (`startofpacket` is implied by the beat after an `endofpacket`, or made afresh).
const AVALON_BEAT: usize = 69;

/// MAC RX client (Avalon-ST) to stream, through a register slice: the MAC's pins go into
/// flip-flops (a skid buffer, so `ready` is a register too), one cycle of latency, full
/// throughput. Then `empty` becomes `keep`, `endofpacket` becomes `last`, `error` is passed on the
/// last beat. `startofpacket` is implied by the beat after a `last` and not needed downstream.
#[derive(LogicBlock, Default)]
pub struct AvalonToStream {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub mac: AvalonStSink,
    pub out: StreamSource,
    slice: SkidBuffer<AVALON_BEAT>,
    empty: Signal<Local, Bits<3>>,
    eop: Signal<Local, Bit>,
}

impl Logic for AvalonToStream {
    #[hdl_gen]
    fn update(&mut self) {
        self.slice.clock.next = self.clock.val();
        self.slice.reset.next = self.reset.val();
        self.slice.in_cancel.next = false;
        self.slice.in_data.next = bit_cast::<AVALON_BEAT, 64>(self.mac.data.val())
            | (bit_cast::<AVALON_BEAT, 3>(self.mac.empty.val()) << 64)
            | (bit_cast::<AVALON_BEAT, 1>(self.mac.endofpacket.val().into()) << 67)
            | (bit_cast::<AVALON_BEAT, 1>(self.mac.error.val().into()) << 68);
        self.slice.in_valid.next = self.mac.valid.val();
        self.mac.ready.next = self.slice.in_ready.val();

        self.empty.next = self.slice.out_data.val().get_bits::<3>(64);
        self.eop.next = self.slice.out_data.val().get_bit(67);
        self.out.data.next = self.slice.out_data.val().get_bits::<64>(0);
        self.out.valid.next = self.slice.out_valid.val();
        self.out.last.next = self.eop.val();
        self.out.error.next = self.slice.out_data.val().get_bit(68) & self.eop.val();
        self.slice.out_ready.next = self.out.ready.val();
        self.out.keep.next = 0xFF.into();
        if self.eop.val() {
            match self.empty.val().index() {
                1 => self.out.keep.next = 0xFE.into(),
                2 => self.out.keep.next = 0xFC.into(),
                3 => self.out.keep.next = 0xF8.into(),
                4 => self.out.keep.next = 0xF0.into(),
                5 => self.out.keep.next = 0xE0.into(),
                6 => self.out.keep.next = 0xC0.into(),
                7 => self.out.keep.next = 0x80.into(),
                _ => self.out.keep.next = 0xFF.into(),
            }
        }
    }
}

/// Stream to MAC TX client (Avalon-ST), through a register slice: `startofpacket` is made on the
/// first beat of each packet and `keep` becomes `empty` on the last beat before the slice, so the
/// MAC's pins come straight from flip-flops and its `ready` ends in them. One cycle of latency,
/// full throughput, a gap-free packet stays gap-free.
#[derive(LogicBlock, Default)]
pub struct StreamToAvalon {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub inp: StreamSink,
    pub mac: AvalonStSource,
    in_packet: DFF<Bit>,
    /// `data`, `empty`, `endofpacket`, `error`, and `startofpacket` on top.
    slice: SkidBuffer<70>,
    empty: Signal<Local, Bits<3>>,
    sop: Signal<Local, Bit>,
}

impl Logic for StreamToAvalon {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, in_packet);
        self.slice.clock.next = self.clock.val();
        self.slice.reset.next = self.reset.val();
        self.slice.in_cancel.next = false;
        self.sop.next = !self.in_packet.q.val();
        self.empty.next = 0.into();
        if self.inp.last.val() {
            match self.inp.keep.val().index() {
                254 => self.empty.next = 1.into(),
                252 => self.empty.next = 2.into(),
                248 => self.empty.next = 3.into(),
                240 => self.empty.next = 4.into(),
                224 => self.empty.next = 5.into(),
                192 => self.empty.next = 6.into(),
                128 => self.empty.next = 7.into(),
                _ => self.empty.next = 0.into(),
            }
        }
        self.slice.in_data.next = bit_cast::<70, 64>(self.inp.data.val())
            | (bit_cast::<70, 3>(self.empty.val()) << 64)
            | (bit_cast::<70, 1>(self.inp.last.val().into()) << 67)
            | (bit_cast::<70, 1>((self.inp.error.val() & self.inp.last.val()).into()) << 68)
            | (bit_cast::<70, 1>(self.sop.val().into()) << 69);
        self.slice.in_valid.next = self.inp.valid.val();
        self.inp.ready.next = self.slice.in_ready.val();
        if self.inp.valid.val() & self.slice.in_ready.val() {
            self.in_packet.d.next = !self.inp.last.val();
        }

        self.mac.data.next = self.slice.out_data.val().get_bits::<64>(0);
        self.mac.empty.next = self.slice.out_data.val().get_bits::<3>(64);
        self.mac.endofpacket.next = self.slice.out_data.val().get_bit(67);
        self.mac.error.next = self.slice.out_data.val().get_bit(68);
        self.mac.startofpacket.next =
            self.slice.out_data.val().get_bit(69) & self.slice.out_valid.val();
        self.mac.valid.next = self.slice.out_valid.val();
        self.slice.out_ready.next = self.mac.ready.val();
        if self.reset.val() {
            self.in_packet.d.next = false;
        }
    }
}

/// Clears the bytes of a beat that `keep` does not cover. `keep` must have the contiguous form of a
/// packet's last beat (see `nanet_contract::stream`).
#[derive(LogicBlock, Default)]
pub struct ByteMask {
    pub data: Signal<In, Bits<64>>,
    pub keep: Signal<In, Bits<8>>,
    pub masked: Signal<Out, Bits<64>>,
}

impl Logic for ByteMask {
    #[hdl_gen]
    fn update(&mut self) {
        match self.keep.val().index() {
            0 => self.masked.next = 0.into(),
            128 => self.masked.next = self.data.val() & 0xFF00_0000_0000_0000u64,
            192 => self.masked.next = self.data.val() & 0xFFFF_0000_0000_0000u64,
            224 => self.masked.next = self.data.val() & 0xFFFF_FF00_0000_0000u64,
            240 => self.masked.next = self.data.val() & 0xFFFF_FFFF_0000_0000u64,
            248 => self.masked.next = self.data.val() & 0xFFFF_FFFF_FF00_0000u64,
            252 => self.masked.next = self.data.val() & 0xFFFF_FFFF_FFFF_0000u64,
            254 => self.masked.next = self.data.val() & 0xFFFF_FFFF_FFFF_FF00u64,
            _ => self.masked.next = self.data.val(),
        }
    }
}

/// `keep` of a beat that holds the first `len` bytes of what is left (all eight when `len >= 8`,
/// none when `len == 0`).
#[derive(LogicBlock, Default)]
pub struct KeepForLen {
    pub len: Signal<In, Bits<16>>,
    pub keep: Signal<Out, Bits<8>>,
}

impl Logic for KeepForLen {
    #[hdl_gen]
    fn update(&mut self) {
        self.keep.next = 0xFF.into();
        match self.len.val().index() {
            0 => self.keep.next = 0x00.into(),
            1 => self.keep.next = 0x80.into(),
            2 => self.keep.next = 0xC0.into(),
            3 => self.keep.next = 0xE0.into(),
            4 => self.keep.next = 0xF0.into(),
            5 => self.keep.next = 0xF8.into(),
            6 => self.keep.next = 0xFC.into(),
            7 => self.keep.next = 0xFE.into(),
            _ => {}
        }
    }
}

/// Number of bytes a beat's `keep` covers (contiguous form; anything else counts as 8).
#[derive(LogicBlock, Default)]
pub struct KeepLen {
    pub keep: Signal<In, Bits<8>>,
    pub len: Signal<Out, Bits<4>>,
}

impl Logic for KeepLen {
    #[hdl_gen]
    fn update(&mut self) {
        self.len.next = 8.into();
        match self.keep.val().index() {
            0 => self.len.next = 0.into(),
            128 => self.len.next = 1.into(),
            192 => self.len.next = 2.into(),
            224 => self.len.next = 3.into(),
            240 => self.len.next = 4.into(),
            248 => self.len.next = 5.into(),
            252 => self.len.next = 6.into(),
            254 => self.len.next = 7.into(),
            _ => {}
        }
    }
}

/// A register slice on a packet stream (`common/skid_buffer.rs`): `data`, `keep`, `last`,
/// `error`, `valid` and `ready` on both sides come from flip-flops, one cycle of latency, full
/// throughput, a gap-free packet stays gap-free. Where a source's logic would otherwise run on
/// into the sink's in the same cycle (the transmit feeder into the offload core's checksum buffer;
/// UDP transmit's payload into its frame assembler).
#[derive(LogicBlock, Default)]
pub struct StreamSkid {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub inp: StreamSink,
    pub out: StreamSource,
    /// A beat as one word: `data`, then `keep`, `last` and `error` above it.
    slice: SkidBuffer<74>,
}

impl Logic for StreamSkid {
    #[hdl_gen]
    fn update(&mut self) {
        self.slice.clock.next = self.clock.val();
        self.slice.reset.next = self.reset.val();
        self.slice.in_cancel.next = false;
        self.slice.in_data.next = bit_cast::<74, 64>(self.inp.data.val())
            | (bit_cast::<74, 8>(self.inp.keep.val()) << 64)
            | (bit_cast::<74, 1>(self.inp.last.val().into()) << 72)
            | (bit_cast::<74, 1>(self.inp.error.val().into()) << 73);
        self.slice.in_valid.next = self.inp.valid.val();
        self.inp.ready.next = self.slice.in_ready.val();
        self.out.data.next = self.slice.out_data.val().get_bits::<64>(0);
        self.out.keep.next = self.slice.out_data.val().get_bits::<8>(64);
        self.out.last.next = self.slice.out_data.val().get_bit(72);
        self.out.error.next = self.slice.out_data.val().get_bit(73);
        self.out.valid.next = self.slice.out_valid.val();
        self.slice.out_ready.next = self.out.ready.val();
    }
}

//! An event record's fields into the two 128-bit halves the event queue writes (bytes 0..15 and
//! 16..31, little-endian lanes, phase bits clear: the two stamps that share a byte with a phase
//! bit are cut to their low 31 bits): combinational, the positions are constants read
//! from `nanet_contract::events::field`. The CLOP engine and the transmit engine both pack their
//! records here.

use nanet_contract::events::{field, Field, SHORT_STAMP_BITS};
use rust_hdl::prelude::*;

use crate::common::position::bit_position;

// The widths the block declares, against the contract's (the kind is the low nibble of byte 0;
// the header-parsed and last-beat stamps are packed in 31 bits).
const _: () = assert!(SHORT_STAMP_BITS == 31);
const _: () = assert!(
    field::CLOP.bytes == 1
        && field::BUFFER.bytes == 2
        && field::BYTES.bytes == 4
        && field::PACKETS.bytes == 2
        && field::FIRST_SEQ.bytes == 2
        && field::LAST_SEQ.bytes == 2
        && field::SOP_AT_MAC.bytes == 4
        && field::HEADER_PARSED.bytes == 4
        && field::FIRST_DMA_BEAT.bytes == 4
        && field::LAST_DMA_BEAT.bytes == 4
);

/// The bit position of a field inside its 128-bit half.
fn lsb_in_half(f: Field) -> Constant<Bits<8>> {
    bit_position((f.offset % 16) * 8)
}

/// The field lies in bytes 0..15 (`low`) or 16..31.
const fn in_half(f: Field, low: bool) -> bool {
    if low {
        f.offset + f.bytes <= 16
    } else {
        f.offset >= 16 && f.offset + f.bytes <= 32
    }
}

// Each field in the half this block packs it into.
const _: () = assert!(
    in_half(field::KIND_PHASE, true)
        && in_half(field::CLOP, true)
        && in_half(field::BUFFER, true)
        && in_half(field::BYTES, true)
        && in_half(field::PACKETS, true)
        && in_half(field::FIRST_SEQ, true)
        && in_half(field::LAST_SEQ, true)
        && in_half(field::SOP_AT_MAC, false)
        && in_half(field::HEADER_PARSED, false)
        && in_half(field::FIRST_DMA_BEAT, false)
        && in_half(field::LAST_DMA_BEAT, false)
);

#[derive(LogicBlock)]
pub struct EventPack {
    pub kind: Signal<In, Bits<4>>,
    pub clop: Signal<In, Bits<8>>,
    pub buffer: Signal<In, Bits<16>>,
    pub bytes: Signal<In, Bits<32>>,
    pub packets: Signal<In, Bits<16>>,
    pub first_seq: Signal<In, Bits<16>>,
    pub last_seq: Signal<In, Bits<16>>,
    pub sop_at_mac: Signal<In, Bits<32>>,
    pub header_parsed: Signal<In, Bits<32>>,
    pub first_dma_beat: Signal<In, Bits<32>>,
    pub last_dma_beat: Signal<In, Bits<32>>,
    /// Bytes 0..15 and 16..31 of the record.
    pub lo: Signal<Out, Bits<128>>,
    pub hi: Signal<Out, Bits<128>>,
    at_kind: Constant<Bits<8>>,
    at_clop: Constant<Bits<8>>,
    at_buffer: Constant<Bits<8>>,
    at_bytes: Constant<Bits<8>>,
    at_packets: Constant<Bits<8>>,
    at_first_seq: Constant<Bits<8>>,
    at_last_seq: Constant<Bits<8>>,
    at_sop_at_mac: Constant<Bits<8>>,
    at_header_parsed: Constant<Bits<8>>,
    at_first_dma_beat: Constant<Bits<8>>,
    at_last_dma_beat: Constant<Bits<8>>,
}

impl Default for EventPack {
    fn default() -> Self {
        Self {
            kind: Default::default(),
            clop: Default::default(),
            buffer: Default::default(),
            bytes: Default::default(),
            packets: Default::default(),
            first_seq: Default::default(),
            last_seq: Default::default(),
            sop_at_mac: Default::default(),
            header_parsed: Default::default(),
            first_dma_beat: Default::default(),
            last_dma_beat: Default::default(),
            lo: Default::default(),
            hi: Default::default(),
            at_kind: lsb_in_half(field::KIND_PHASE),
            at_clop: lsb_in_half(field::CLOP),
            at_buffer: lsb_in_half(field::BUFFER),
            at_bytes: lsb_in_half(field::BYTES),
            at_packets: lsb_in_half(field::PACKETS),
            at_first_seq: lsb_in_half(field::FIRST_SEQ),
            at_last_seq: lsb_in_half(field::LAST_SEQ),
            at_sop_at_mac: lsb_in_half(field::SOP_AT_MAC),
            at_header_parsed: lsb_in_half(field::HEADER_PARSED),
            at_first_dma_beat: lsb_in_half(field::FIRST_DMA_BEAT),
            at_last_dma_beat: lsb_in_half(field::LAST_DMA_BEAT),
        }
    }
}

impl Logic for EventPack {
    #[hdl_gen]
    fn update(&mut self) {
        self.lo.next = (bit_cast::<128, 4>(self.kind.val()) << self.at_kind.val())
            | (bit_cast::<128, 8>(self.clop.val()) << self.at_clop.val())
            | (bit_cast::<128, 16>(self.buffer.val()) << self.at_buffer.val())
            | (bit_cast::<128, 32>(self.bytes.val()) << self.at_bytes.val())
            | (bit_cast::<128, 16>(self.packets.val()) << self.at_packets.val())
            | (bit_cast::<128, 16>(self.first_seq.val()) << self.at_first_seq.val())
            | (bit_cast::<128, 16>(self.last_seq.val()) << self.at_last_seq.val());
        self.hi.next = (bit_cast::<128, 32>(self.sop_at_mac.val()) << self.at_sop_at_mac.val())
            | (bit_cast::<128, 31>(self.header_parsed.val().get_bits::<31>(0))
                << self.at_header_parsed.val())
            | (bit_cast::<128, 32>(self.first_dma_beat.val()) << self.at_first_dma_beat.val())
            | (bit_cast::<128, 31>(self.last_dma_beat.val().get_bits::<31>(0))
                << self.at_last_dma_beat.val());
    }
}

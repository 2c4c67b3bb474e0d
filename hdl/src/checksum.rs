//! Internet checksum (RFC 1071) building blocks shared by every layer.

use rust_hdl::prelude::*;

/// Folds a 32-bit sum of 16-bit words into the 16-bit ones' complement sum (two end-around carry
/// steps are always enough for sums below 2^32). A received header or segment is intact when
/// `folded == 0xFFFF`; the checksum to transmit is `!folded`.
#[derive(LogicBlock, Default)]
pub struct ChecksumFold {
    pub sum: Signal<In, Bits<32>>,
    pub folded: Signal<Out, Bits<16>>,
    pub all_ones: Signal<Out, Bit>,
    fold1: Signal<Local, Bits<32>>,
    fold2: Signal<Local, Bits<32>>,
}

impl Logic for ChecksumFold {
    #[hdl_gen]
    fn update(&mut self) {
        self.fold1.next = bit_cast::<32, 16>(self.sum.val().get_bits::<16>(0))
            + bit_cast::<32, 16>(self.sum.val().get_bits::<16>(16));
        self.fold2.next = bit_cast::<32, 16>(self.fold1.val().get_bits::<16>(0))
            + bit_cast::<32, 16>(self.fold1.val().get_bits::<16>(16));
        self.folded.next = self.fold2.val().get_bits::<16>(0);
        self.all_ones.next = self.fold2.val().get_bits::<16>(0) == 0xFFFF;
    }
}

/// Sum of the four 16-bit words of a beat, with bytes outside `keep` counted as zero.
/// `keep` must have the contiguous form of the last beat of a packet (see `nanet_contract::stream`).
#[derive(LogicBlock, Default)]
pub struct BeatSum {
    pub data: Signal<In, Bits<64>>,
    pub keep: Signal<In, Bits<8>>,
    pub sum: Signal<Out, Bits<32>>,
    masked: Signal<Local, Bits<64>>,
}

impl Logic for BeatSum {
    #[hdl_gen]
    fn update(&mut self) {
        // `keep` always has its set bits at the top (see nanet_contract::stream).
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
        self.sum.next = bit_cast::<32, 16>(self.masked.val().get_bits::<16>(0))
            + bit_cast::<32, 16>(self.masked.val().get_bits::<16>(16))
            + bit_cast::<32, 16>(self.masked.val().get_bits::<16>(32))
            + bit_cast::<32, 16>(self.masked.val().get_bits::<16>(48));
    }
}

//! Internet checksum (RFC 1071) building blocks shared by every layer.

use rust_hdl::prelude::*;

use crate::common::adders::Add4;
use crate::common::stream::ByteMask;

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
        // `fold2` is all ones exactly when `fold1` (at most 0x1FFFE) is 0xFFFF, or 0x1FFFE (its
        // end-around carry makes 0xFFFE all ones): two compares, no second carry chain before them.
        self.all_ones.next = (self.fold1.val() == 0xFFFF) | (self.fold1.val() == 0x1FFFE);
    }
}

/// Sum of the four 16-bit words of a beat, with bytes outside `keep` counted as zero.
/// `keep` must have the contiguous form of the last beat of a packet (see `nanet_contract::stream`).
/// The four words go through carry-save compressors into one carry chain (`Add4`).
#[derive(LogicBlock, Default)]
pub struct BeatSum {
    pub data: Signal<In, Bits<64>>,
    pub keep: Signal<In, Bits<8>>,
    pub sum: Signal<Out, Bits<32>>,
    mask: ByteMask,
    add: Add4,
}

impl Logic for BeatSum {
    #[hdl_gen]
    fn update(&mut self) {
        self.mask.data.next = self.data.val();
        self.mask.keep.next = self.keep.val();
        self.add.a.next = bit_cast::<32, 16>(self.mask.masked.val().get_bits::<16>(0));
        self.add.b.next = bit_cast::<32, 16>(self.mask.masked.val().get_bits::<16>(16));
        self.add.c.next = bit_cast::<32, 16>(self.mask.masked.val().get_bits::<16>(32));
        self.add.d.next = bit_cast::<32, 16>(self.mask.masked.val().get_bits::<16>(48));
        self.sum.next = self.add.sum.val();
    }
}

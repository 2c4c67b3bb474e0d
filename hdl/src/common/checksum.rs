//! Internet checksum (RFC 1071) building blocks shared by every layer.

use rust_hdl::prelude::*;

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
#[derive(LogicBlock, Default)]
pub struct BeatSum {
    pub data: Signal<In, Bits<64>>,
    pub keep: Signal<In, Bits<8>>,
    pub sum: Signal<Out, Bits<32>>,
    mask: ByteMask,
}

impl Logic for BeatSum {
    #[hdl_gen]
    fn update(&mut self) {
        self.mask.data.next = self.data.val();
        self.mask.keep.next = self.keep.val();
        self.sum.next = bit_cast::<32, 16>(self.mask.masked.val().get_bits::<16>(0))
            + bit_cast::<32, 16>(self.mask.masked.val().get_bits::<16>(16))
            + bit_cast::<32, 16>(self.mask.masked.val().get_bits::<16>(32))
            + bit_cast::<32, 16>(self.mask.masked.val().get_bits::<16>(48));
    }
}

/// A carry-save (3:2) compressor: `partial + carries == a + b + c` (modulo 2^32), one LUT per bit.
/// Written as a sum of three or more, yosys maps an adder into a chain of LUTs several levels deep;
/// compressors in front of a single carry chain (which counts as one level) keep it shallow.
#[derive(LogicBlock, Default)]
pub struct CarrySave {
    pub a: Signal<In, Bits<32>>,
    pub b: Signal<In, Bits<32>>,
    pub c: Signal<In, Bits<32>>,
    pub partial: Signal<Out, Bits<32>>,
    pub carries: Signal<Out, Bits<32>>,
}

impl Logic for CarrySave {
    #[hdl_gen]
    fn update(&mut self) {
        self.partial.next = self.a.val() ^ self.b.val() ^ self.c.val();
        self.carries.next = ((self.a.val() & self.b.val())
            | (self.a.val() & self.c.val())
            | (self.b.val() & self.c.val()))
            << 1;
    }
}

/// `a + b + c` (modulo 2^32): one compressor level and one carry chain.
#[derive(LogicBlock, Default)]
pub struct Add3 {
    pub a: Signal<In, Bits<32>>,
    pub b: Signal<In, Bits<32>>,
    pub c: Signal<In, Bits<32>>,
    pub sum: Signal<Out, Bits<32>>,
    csa: CarrySave,
}

impl Logic for Add3 {
    #[hdl_gen]
    fn update(&mut self) {
        self.csa.a.next = self.a.val();
        self.csa.b.next = self.b.val();
        self.csa.c.next = self.c.val();
        self.sum.next = self.csa.partial.val() + self.csa.carries.val();
    }
}

/// `a + b + c + d` (modulo 2^32): two compressor levels and one carry chain.
#[derive(LogicBlock, Default)]
pub struct Add4 {
    pub a: Signal<In, Bits<32>>,
    pub b: Signal<In, Bits<32>>,
    pub c: Signal<In, Bits<32>>,
    pub d: Signal<In, Bits<32>>,
    pub sum: Signal<Out, Bits<32>>,
    first: CarrySave,
    second: CarrySave,
}

impl Logic for Add4 {
    #[hdl_gen]
    fn update(&mut self) {
        self.first.a.next = self.a.val();
        self.first.b.next = self.b.val();
        self.first.c.next = self.c.val();
        self.second.a.next = self.first.partial.val();
        self.second.b.next = self.first.carries.val();
        self.second.c.next = self.d.val();
        self.sum.next = self.second.partial.val() + self.second.carries.val();
    }
}

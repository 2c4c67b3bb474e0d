//! Multi-operand adders that stay shallow after synthesis. Written as a sum of three or more
//! terms, yosys maps an adder into a chain of LUTs several levels deep; carry-save compressors in
//! front of a single carry chain (which counts as one level) keep it to two or three.

use rust_hdl::prelude::*;

/// A carry-save (3:2) compressor: `partial + carries == a + b + c` (modulo 2^32), one LUT per bit.
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

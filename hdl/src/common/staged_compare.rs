//! `a >= b` for 32-bit numbers over a register stage (for timing: abc maps a whole 32-bit compare
//! as a chain of LUTs in the card): the halves compared side by side into registers (`a.hi >
//! b.hi`, `a.hi == b.hi`, `a.lo >= b.lo`), and `ge` combined from them, a cycle after `a` and `b`.
//! `clear` makes the next cycle's `ge` false (a user restarting what it compares).

use rust_hdl::prelude::*;

#[derive(LogicBlock, Default)]
pub struct StagedGe32 {
    pub clock: Signal<In, Clock>,
    pub a: Signal<In, Bits<32>>,
    pub b: Signal<In, Bits<32>>,
    pub clear: Signal<In, Bit>,
    /// `a >= b` of the previous cycle.
    pub ge: Signal<Out, Bit>,

    hi_gt: DFF<Bit>,
    hi_eq: DFF<Bit>,
    lo_ge: DFF<Bit>,
}

impl Logic for StagedGe32 {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, hi_gt, hi_eq, lo_ge);
        self.hi_gt.d.next = self.a.val().get_bits::<16>(16) > self.b.val().get_bits::<16>(16);
        self.hi_eq.d.next = self.a.val().get_bits::<16>(16) == self.b.val().get_bits::<16>(16);
        self.lo_ge.d.next = self.a.val().get_bits::<16>(0) >= self.b.val().get_bits::<16>(0);
        if self.clear.val() {
            self.hi_gt.d.next = false;
            self.hi_eq.d.next = false;
        }
        self.ge.next = self.hi_gt.q.val() | (self.hi_eq.q.val() & self.lo_ge.q.val());
    }
}

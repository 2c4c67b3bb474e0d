//! The round-robin choice of the card's arbiters: of up to four requesters (`valid`, bit `i` for
//! requester `i`), the first after `after`, wrapping round, `after` itself last (`pick`; with
//! `found_other`, a requester other than `after`: the next turn once `after`'s is over).
//! Combinational: every output bit is a function of the six inputs, so it fits a level or two of
//! logic; requesters that do not exist keep their bit low.

use rust_hdl::prelude::*;

#[derive(LogicBlock, Default)]
pub struct RoundRobinPick {
    pub valid: Signal<In, Bits<4>>,
    pub after: Signal<In, Bits<2>>,
    /// Some requester is valid, and `pick` is the one chosen.
    pub found: Signal<Out, Bit>,
    pub pick: Signal<Out, Bits<2>>,
    /// A requester other than `after` is valid (then `pick` is one: `after` comes last).
    pub found_other: Signal<Out, Bit>,

    /// The requesters numbered above `after` (before the wrap), and the mask that selects them.
    above_mask: Signal<Local, Bits<4>>,
    above: Signal<Local, Bits<4>>,
    from: Signal<Local, Bits<4>>,
    /// `after` as a one-hot bit.
    after_bit: Signal<Local, Bits<4>>,
}

impl Logic for RoundRobinPick {
    #[hdl_gen]
    fn update(&mut self) {
        self.above_mask.next = 0xE.into();
        if self.after.val() == 1 {
            self.above_mask.next = 0xC.into();
        }
        if self.after.val() == 2 {
            self.above_mask.next = 0x8.into();
        }
        if self.after.val() == 3 {
            self.above_mask.next = 0.into();
        }
        self.above.next = self.valid.val() & self.above_mask.val();
        self.after_bit.next = bit_cast::<4, 1>(true.into()) << self.after.val();
        self.from.next = self.valid.val();
        if self.above.val() != 0 {
            self.from.next = self.above.val();
        }
        self.pick.next = 3.into();
        if self.from.val().get_bit(2) {
            self.pick.next = 2.into();
        }
        if self.from.val().get_bit(1) {
            self.pick.next = 1.into();
        }
        if self.from.val().get_bit(0) {
            self.pick.next = 0.into();
        }
        self.found.next = self.valid.val() != 0;
        self.found_other.next = (self.valid.val() & !self.after_bit.val()) != 0;
    }
}

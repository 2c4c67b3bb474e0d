//! Whether a packet fits its CLOP's buffers (combinational): the bytes it takes in the CLOP's
//! layout (`len` raw, or `need_hdr` behind a header: the header's 16 and the payload padded to
//! 16), whether that is more than a buffer holds (`too_big`), and whether it does not fit behind
//! the current buffer's offset (`no_fit`). The compares are subtractions whose sign is the answer
//! (carry chains, for timing). The CLOP engine checks a packet with it in `Decide`.

use rust_hdl::prelude::*;

#[derive(LogicBlock, Default)]
pub struct BufferFit {
    pub header: Signal<In, Bit>,
    pub len: Signal<In, Bits<16>>,
    pub need_hdr: Signal<In, Bits<17>>,
    pub offset: Signal<In, Bits<24>>,
    pub size: Signal<In, Bits<24>>,
    pub need: Signal<Out, Bits<24>>,
    pub too_big: Signal<Out, Bit>,
    pub no_fit: Signal<Out, Bit>,
    fit_end: Signal<Local, Bits<25>>,
    size_left: Signal<Local, Bits<25>>,
    fit_left: Signal<Local, Bits<26>>,
}

impl Logic for BufferFit {
    #[hdl_gen]
    fn update(&mut self) {
        self.need.next = bit_cast::<24, 16>(self.len.val());
        if self.header.val() {
            self.need.next = bit_cast::<24, 17>(self.need_hdr.val());
        }
        self.fit_end.next =
            bit_cast::<25, 24>(self.offset.val()) + bit_cast::<25, 24>(self.need.val());
        self.size_left.next =
            bit_cast::<25, 24>(self.size.val()) - bit_cast::<25, 24>(self.need.val());
        self.fit_left.next =
            bit_cast::<26, 24>(self.size.val()) - bit_cast::<26, 25>(self.fit_end.val());
        self.too_big.next = self.size_left.val().get_bit(24);
        self.no_fit.next = self.fit_left.val().get_bit(25);
    }
}

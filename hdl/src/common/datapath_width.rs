//! The constants of a core datapath width `W` (128 bits for Gen2 x8, 256 for Gen3 x8) that a
//! kernel reads: a kernel cannot name a Rust `const`, and a width-generic block's `Constant`
//! fields would each need a hand-written `Default`. Outputs only, so a block reads them without
//! tying its handshakes to anything (a block between two handshakes can close a false loop in
//! Verilator's eyes).

use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct DatapathWidth<const W: usize> {
    /// The datapath is 256 bits wide: a beat holds two 16-byte lines, and a TLP's header fills
    /// only its lower half.
    pub wide: Signal<Out, Bit>,
    /// `W - 128`: the shift that brings a beat's upper half down (0 at 128 bits).
    pub half_shift: Signal<Out, Bits<9>>,
    wide_w: Constant<Bit>,
    half_shift_w: Constant<Bits<9>>,
}

impl<const W: usize> DatapathWidth<W> {
    const WIDTH_OK: () = assert!(W == 128 || W == 256, "DatapathWidth: 128 or 256 bits");
}

impl<const W: usize> Default for DatapathWidth<W> {
    fn default() -> Self {
        let () = Self::WIDTH_OK;
        Self {
            wide: Default::default(),
            half_shift: Default::default(),
            wide_w: Constant::new(W > 128),
            half_shift_w: Constant::new(((W - 128) as u64).into()),
        }
    }
}

impl<const W: usize> Logic for DatapathWidth<W> {
    #[hdl_gen]
    fn update(&mut self) {
        self.wide.next = self.wide_w.val();
        self.half_shift.next = self.half_shift_w.val();
    }
}

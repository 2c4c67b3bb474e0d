//! The CLOP engine's DMA beats behind a per-packet header, by width (`W`, network order).
//!
//! At 128 bits the header is a beat of its own, so the payload words go as they come. At 256 bits
//! the header fills half a beat, so the payload is shifted by 16 bytes: the first beat is
//! `{header, word[255:128]}`, each one after it `{carry, word[255:128]}`, where `carry` is the
//! lower half of the word taken before; and when the last word's lower half holds payload bytes
//! ([`tail_due`]) one beat more, `{carry, 0}`, follows it. In a raw CLOP the words go as they come
//! at either width. The engine builds the beats in its own kernel (a block between its handshakes
//! and the DMA writer's would close a false loop in Verilator's eyes), from the constants here.

use rust_hdl::prelude::*;

/// Whether a packet of `len` payload bytes behind a header ends with a beat of its own at 256
/// bits (its last word's lower half holds payload bytes): `(len - 1) & 16` for `len > 0`. The
/// CLOP engine's `p_tail` computes it without a carry chain, as `len[4] ^ (len[3:0] == 0)`
/// (`len - 1` borrows through bit 4 exactly when bits 3:0 are zero); the test below checks that
/// identity for every length (the engine's expression itself is checked by the 256-bit system
/// tests behind a header).
pub fn tail_due(len: u16) -> bool {
    len > 0 && (len - 1) & 16 != 0
}

/// The constants of width `W` that the CLOP engine's kernel reads (a kernel cannot name a Rust
/// `const`): whether the width shifts the payload behind a header (`joins`: 256 bits), and
/// `W - 128`, the shift that brings a word's upper half down (`half_shift`). Outputs only, so the
/// engine reads them without tying its handshakes to anything.
#[derive(LogicBlock)]
pub struct JoinWidth<const W: usize> {
    pub joins: Signal<Out, Bit>,
    pub half_shift: Signal<Out, Bits<9>>,
    joins_w: Constant<Bit>,
    half_shift_w: Constant<Bits<9>>,
}

impl<const W: usize> JoinWidth<W> {
    const WIDTH_OK: () = assert!(W == 128 || W == 256, "JoinWidth: 128 or 256 bits");
}

impl<const W: usize> Default for JoinWidth<W> {
    fn default() -> Self {
        let () = Self::WIDTH_OK;
        Self {
            joins: Default::default(),
            half_shift: Default::default(),
            joins_w: Constant::new(W > 128),
            half_shift_w: Constant::new(((W - 128) as u64).into()),
        }
    }
}

impl<const W: usize> Logic for JoinWidth<W> {
    #[hdl_gen]
    fn update(&mut self) {
        self.joins.next = self.joins_w.val();
        self.half_shift.next = self.half_shift_w.val();
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_engines_carry_free_tail_test_is_the_arithmetic_one() {
        for len in 1..=u16::MAX {
            let carry_free = ((len >> 4) & 1 == 1) ^ (len & 15 == 0);
            assert_eq!(super::tail_due(len), carry_free, "len {len}");
        }
        assert!(!super::tail_due(0));
    }
}

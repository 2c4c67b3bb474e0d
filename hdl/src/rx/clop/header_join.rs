//! The CLOP engine's DMA beats behind a per-packet header, by width (`W`, network order).
//!
//! At 128 bits the header is a beat of its own, so the payload words go as they come. At 256 bits
//! the header fills half a beat, so the payload is shifted by 16 bytes: the first beat is
//! `{header, word[255:128]}`, each one after it `{carry, word[255:128]}`, where `carry` is the
//! lower half of the word taken before; and when the last word's lower half holds payload bytes
//! ([`tail_due`]) one beat more, `{carry, 0}`, follows it. In a raw CLOP the words go as they come
//! at either width. The engine builds the beats in its own kernel (a block between its handshakes
//! and the DMA writer's would close a false loop in Verilator's eyes), from the width's constants
//! (`common::datapath_width`).

/// Whether a packet of `len` payload bytes behind a header ends with a beat of its own at 256
/// bits (its last word's lower half holds payload bytes): `(len - 1) & 16` for `len > 0`. The
/// CLOP engine's `p_tail` computes it without a carry chain, as `len[4] ^ (len[3:0] == 0)`
/// (`len - 1` borrows through bit 4 exactly when bits 3:0 are zero); the test below checks that
/// identity for every length (the engine's expression itself is checked by the 256-bit system
/// tests behind a header).
pub fn tail_due(len: u16) -> bool {
    len > 0 && (len - 1) & 16 != 0
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

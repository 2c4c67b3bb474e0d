//! The card's BAR0: where each register block sits in the 64 KiB memory window the host maps.
//!
//! | bytes | block |
//! | --- | --- |
//! | `0x0000..0x0100` | the card block: identification, card-wide counters, block table ([`CardReg`]) |
//! | `0x1000..0x1400` | receive engine: [`RxReg`] and [`RxCounter`] at `4 * word` |
//! | `0x1800 + r * 0x100` | transmit ring `r` (0..4, one per port): [`TxReg`] at `4 * word` |
//! | `0x2000 + p * 0x1000` | port `p` (0..4): offload core ([`Reg`], [`Counter`]) and receive side ([`PortReg`]) at `4 * word` |
//!
//! Every register is 32 bits wide and must be accessed as one aligned 32-bit word.
//!
//! [`CardReg`]: crate::card::CardReg
//! [`TxReg`]: crate::tx::TxReg
//! [`RxReg`]: crate::rx::RxReg
//! [`RxCounter`]: crate::rx::RxCounter
//! [`Reg`]: crate::Reg
//! [`Counter`]: crate::Counter
//! [`PortReg`]: crate::rx::PortReg

use crate::rx::{self, MAX_PORTS};

/// Size of BAR0.
pub const BAR0_BYTES: u64 = 0x1_0000;
/// Byte offset of the receive engine's block.
pub const RX_ENGINE: u64 = 0x1000;
/// Byte offset of transmit ring 0's block.
pub const TX_ENGINE: u64 = 0x1800;
/// Word addresses inside a transmit ring's block.
pub const TX_WORDS: u64 = 64;
/// Distance between two transmit rings' blocks (ring `r` serves port `r`).
pub const TX_RING_STRIDE: u64 = 4 * TX_WORDS;
/// Byte offset of port 0's block.
pub const PORT0: u64 = 0x2000;
/// Distance between two ports' blocks.
pub const PORT_STRIDE: u64 = 0x1000;
/// Word addresses inside the card block.
pub const CARD_WORDS: u64 = 64;
/// Word addresses inside the receive engine's block (8-bit bus).
pub const RX_WORDS: u64 = 1 << rx::ADDR_BITS;
/// Word addresses inside a port's block (7-bit bus).
pub const PORT_WORDS: u64 = 1 << 7;

/// What a BAR0 offset addresses.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// A word of the card block.
    Card(u8),
    /// A word of the receive engine's register bus.
    RxEngine(u8),
    /// A word of a transmit ring's registers.
    TxRing { ring: u8, word: u8 },
    /// A word of a port's register bus.
    Port { port: u8, word: u8 },
}

/// Byte offset of receive-engine word `word`.
pub const fn rx_engine(word: u32) -> u64 {
    RX_ENGINE + 4 * word as u64
}

/// Byte offset of word `word` of transmit ring `ring`'s block (the ring of port `ring`).
pub const fn tx_ring(ring: u8, word: u32) -> u64 {
    TX_ENGINE + ring as u64 * TX_RING_STRIDE + 4 * word as u64
}

/// Byte offset of word `word` of port `port`'s block.
pub const fn port(port: u8, word: u32) -> u64 {
    PORT0 + port as u64 * PORT_STRIDE + 4 * word as u64
}

/// The register an offset addresses, or `None` (unaligned, or no register there).
pub fn decode(offset: u64) -> Option<Target> {
    if !offset.is_multiple_of(4) {
        return None;
    }
    let word = |base: u64| (offset - base) / 4;
    if offset < 4 * CARD_WORDS {
        return Some(Target::Card(word(0) as u8));
    }
    if (RX_ENGINE..RX_ENGINE + 4 * RX_WORDS).contains(&offset) {
        return Some(Target::RxEngine(word(RX_ENGINE) as u8));
    }
    if (TX_ENGINE..TX_ENGINE + MAX_PORTS as u64 * TX_RING_STRIDE).contains(&offset) {
        let r = (offset - TX_ENGINE) / TX_RING_STRIDE;
        return Some(Target::TxRing {
            ring: r as u8,
            word: word(TX_ENGINE + r * TX_RING_STRIDE) as u8,
        });
    }
    if offset >= PORT0 {
        let p = (offset - PORT0) / PORT_STRIDE;
        let base = PORT0 + p * PORT_STRIDE;
        if p < MAX_PORTS as u64 && word(base) < PORT_WORDS {
            return Some(Target::Port {
                port: p as u8,
                word: word(base) as u8,
            });
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rx::{PortReg, RxCounter, RxReg};
    use crate::{Counter, Reg};

    #[test]
    fn every_register_decodes_to_itself() {
        for r in RxReg::ALL {
            assert_eq!(
                decode(rx_engine(r.word())),
                Some(Target::RxEngine(r.word() as u8))
            );
        }
        for c in RxCounter::ALL {
            assert_eq!(
                decode(rx_engine(c.word())),
                Some(Target::RxEngine(c.word() as u8))
            );
        }
        for ring in 0..MAX_PORTS as u8 {
            for r in crate::tx::TxReg::ALL {
                assert_eq!(
                    decode(tx_ring(ring, r.word())),
                    Some(Target::TxRing {
                        ring,
                        word: r.word() as u8
                    })
                );
            }
        }
        for p in 0..MAX_PORTS as u8 {
            let words = Reg::ALL.iter().map(|r| r.word());
            let words = words.chain(Counter::ALL.iter().map(|c| c.word()));
            let words = words.chain(crate::offload::ArpRead::ALL.iter().map(|r| r.word()));
            for w in words.chain(PortReg::ALL.iter().map(|r| r.word())) {
                assert_eq!(
                    decode(port(p, w)),
                    Some(Target::Port {
                        port: p,
                        word: w as u8
                    })
                );
            }
        }
    }

    #[test]
    fn holes_and_unaligned_offsets_decode_to_nothing() {
        assert_eq!(decode(0), Some(Target::Card(0)));
        assert_eq!(decode(4 * CARD_WORDS), None);
        assert_eq!(decode(RX_ENGINE + 2), None);
        assert_eq!(decode(RX_ENGINE + 4 * RX_WORDS), None);
        assert_eq!(decode(tx_ring(MAX_PORTS as u8, 0)), None);
        assert_eq!(decode(port(0, 0x80)), None);
        assert_eq!(decode(port(MAX_PORTS as u8, 0)), None);
        assert_eq!(decode(BAR0_BYTES), None);
    }
}

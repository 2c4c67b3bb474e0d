//! The card block at BAR0 offset 0: what the card is (magic, contract version, ports, clocks),
//! card-wide counters of the PCIe boundary, and the block table a host walks to find every other
//! register block.
//!
//! Block table: [`CardReg::Blocks`] entries from word [`BLOCK_TABLE`], one word each:
//! kind ([`BlockKind`]) in bits 31:24, instance (port number) in bits 23:16, the block's BAR0
//! offset in 256-byte units in bits 15:0. The table lists the card block itself, the
//! receive engine, one transmit ring per port and one block per port, in that order.

use crate::bar0;
use crate::pcie::PcieVariant;
use crate::regdef::registers;

/// What [`CardReg::Magic`] reads: "NaNt".
pub const CARD_MAGIC: u32 = 0x4E61_4E74;
/// Contract version in [`CardReg::Version`]: major in bits 31:16 (a host refuses another major),
/// minor in bits 15:0 (additions a host may ignore).
pub const CONTRACT_MAJOR: u16 = 3;
pub const CONTRACT_MINOR: u16 = 2;
/// Word of the block table's first entry.
pub const BLOCK_TABLE: u32 = 0x10;
/// Network clock (the 10G MACs' client clock).
pub const NET_HZ: u64 = 156_250_000;

registers! {
    /// The card block: identification and card-wide counters.
    CardReg at 0; {
        /// Reads `CARD_MAGIC` ("NaNt").
        Magic = 0x00, "magic";
        /// Contract version: major in bits 31:16, minor in bits 15:0.
        Version = 0x01, "version";
        /// Number of 10GbE ports.
        Ports = 0x02, "ports";
        /// Core clock (DMA, event queue, cycle counter) in Hz.
        CoreHz = 0x03, "core_hz";
        /// Network clock (MAC client, offload cores) in Hz.
        NetHz = 0x04, "net_hz";
        /// Entries in the block table (from word `BLOCK_TABLE`).
        Blocks = 0x05, "blocks";
        /// The PCIe variant the card was generated for (`pcie::PcieVariant::word`): the link
        /// generation in bits 7:0, the lanes in bits 15:8, the Hard IP's Avalon-ST beat (the
        /// core datapath) in bytes in bits 23:16; 0x0010_0802 for Gen2 x8 at 128 bits,
        /// 0x0020_0803 for Gen3 x8 at 256 bits. Since contract 3.1 (reads 0 before).
        Pcie = 0x06, "pcie";
        /// Core cycles in which a DMA read request of the transmit engine waited for a tag: all
        /// 32 tags had a read in flight (its completions not yet all handed on). Its share of
        /// the cycles says how much the read tags limit transmit. Since contract 3.2.
        ReadTagWaits = 0x07, "read_tag_waits";
        /// Requests to BAR0 answered with Unsupported Request (not a 1-dword read with all byte
        /// enables, another BAR, I/O, locked); they changed nothing.
        PcieUnsupported = 0x08, "pcie_unsupported";
        /// Posted TLPs dropped (a write that is not 1 dword with all byte enables, messages,
        /// beats outside a TLP); they changed nothing.
        PcieDropped = 0x09, "pcie_dropped";
        /// Register accesses to BAR0 offsets where no register is (reads return 0).
        Unmapped = 0x0A, "unmapped";
        /// Interrupts (MSI) sent.
        Interrupts = 0x0B, "interrupts";
        /// Core cycles in which a TLP of the card waited for the link partner's flow-control
        /// credits (any class). Since contract 1.1.
        CreditWaits = 0x0C, "credit_waits";
        /// Completions the card's DMA reads did not ask for (a tag with no read in flight, a
        /// completion for a read that timed out, the rest of one whose read was handed on while
        /// it came, beats outside a TLP); dropped. Since contract 1.2.
        CplUnexpected = 0x0D, "cpl_unexpected";
        /// DMA reads whose completions did not all arrive within the completion timeout (200 us):
        /// each failed (the transmit engine reports it with `TxError`); a completion for it that
        /// arrives once the failed read was handed on, or is still arriving then, is dropped and
        /// counted in `cpl_unexpected` (one that ends before goes into the failed read). Since
        /// contract 1.2.
        CplTimeouts = 0x0E, "cpl_timeouts";
        /// Receive TLP beats lost because the Hard IP sent them with the card's receive buffer
        /// full (it broke its ready latency: the card has room for 3 cycles of it). Zero on a
        /// working card. Since contract 1.4.
        PcieRxOverflow = 0x0F, "pcie_rx_overflow";
    }
}

impl CardReg {
    /// Whether the word is one of the card-wide counters (the others read constants).
    pub const fn is_counter(self) -> bool {
        !matches!(
            self,
            CardReg::Magic
                | CardReg::Version
                | CardReg::Ports
                | CardReg::CoreHz
                | CardReg::NetHz
                | CardReg::Blocks
                | CardReg::Pcie
        )
    }
}

/// Kinds of register blocks in the block table.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum BlockKind {
    /// This block ([`CardReg`]).
    Card = 1,
    /// The receive engine (`rx::RxReg`, `rx::RxCounter`).
    RxEngine = 2,
    /// A port: offload core, its counters, ARP readout, Multi-Stream (`Reg`, `Counter`,
    /// `offload::ArpRead`, `rx::PortReg`); the instance is the port number.
    Port = 3,
    /// A transmit ring (`tx::TxReg`); the instance is the ring's number, the port it sends
    /// from.
    TxEngine = 4,
}

impl BlockKind {
    pub fn from_code(code: u8) -> Option<Self> {
        [Self::Card, Self::RxEngine, Self::Port, Self::TxEngine]
            .into_iter()
            .find(|k| *k as u8 == code)
    }
}

/// One entry of the block table.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct BlockEntry {
    pub kind: BlockKind,
    pub instance: u8,
    /// BAR0 byte offset of the block.
    pub offset: u64,
}

impl BlockEntry {
    pub const fn word(&self) -> u32 {
        (self.kind as u32) << 24 | (self.instance as u32) << 16 | (self.offset >> 8) as u32
    }

    /// The entry a table word describes, or `None` for an unknown kind.
    pub fn decode(word: u32) -> Option<Self> {
        Some(Self {
            kind: BlockKind::from_code((word >> 24) as u8)?,
            instance: (word >> 16) as u8,
            offset: ((word & 0xFFFF) as u64) << 8,
        })
    }
}

/// The block table of a card with `ports` ports.
pub fn block_table(ports: usize) -> Vec<BlockEntry> {
    let mut t = vec![
        BlockEntry {
            kind: BlockKind::Card,
            instance: 0,
            offset: 0,
        },
        BlockEntry {
            kind: BlockKind::RxEngine,
            instance: 0,
            offset: bar0::RX_ENGINE,
        },
    ];
    t.extend((0..ports as u8).map(|r| BlockEntry {
        kind: BlockKind::TxEngine,
        instance: r,
        offset: bar0::tx_ring(r, 0),
    }));
    t.extend((0..ports as u8).map(|p| BlockEntry {
        kind: BlockKind::Port,
        instance: p,
        offset: bar0::port(p, 0),
    }));
    t
}

/// The constant words of the card block of a card with `ports` ports generated for `pcie`
/// (words `0..BLOCK_TABLE + blocks`): the identification registers and the block table; counters
/// read 0 here.
pub fn constant_words(ports: usize, pcie: PcieVariant) -> Vec<u32> {
    let table = block_table(ports);
    let mut w = vec![0u32; BLOCK_TABLE as usize + table.len()];
    w[CardReg::Magic.index()] = CARD_MAGIC;
    w[CardReg::Version.index()] = (CONTRACT_MAJOR as u32) << 16 | CONTRACT_MINOR as u32;
    w[CardReg::Ports.index()] = ports as u32;
    w[CardReg::CoreHz.index()] = crate::events::CORE_HZ as u32;
    w[CardReg::NetHz.index()] = NET_HZ as u32;
    w[CardReg::Blocks.index()] = table.len() as u32;
    w[CardReg::Pcie.index()] = pcie.word();
    for (i, e) in table.iter().enumerate() {
        w[BLOCK_TABLE as usize + i] = e.word();
    }
    w
}

/// What a card with `ports` ports generated for `pcie` reads at BAR0 offset `offset` if that is
/// one of its constant words (for models of the card).
pub fn constant_word(ports: usize, pcie: PcieVariant, offset: u64) -> Option<u32> {
    let words = constant_words(ports, pcie);
    let w = offset.is_multiple_of(4).then_some(offset / 4)?;
    let is_counter = CardReg::ALL
        .iter()
        .any(|r| r.word() as u64 == w && r.is_counter());
    words.get(w as usize).copied().filter(|_| !is_counter)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_entries_round_trip_and_land_where_bar0_decodes() {
        let words = constant_words(4, PcieVariant::Gen3x8);
        assert_eq!(words[CardReg::Blocks.index()], 10);
        assert_eq!(
            PcieVariant::from_word(words[CardReg::Pcie.index()]),
            Some(PcieVariant::Gen3x8)
        );
        assert_eq!(
            constant_word(1, PcieVariant::Gen2x8, 4 * CardReg::Pcie.word() as u64),
            Some(PcieVariant::Gen2x8.word())
        );
        for (i, e) in block_table(4).iter().enumerate() {
            let word = words[BLOCK_TABLE as usize + i];
            assert_eq!(BlockEntry::decode(word), Some(*e));
            if e.kind == BlockKind::Port {
                assert_eq!(
                    bar0::decode(e.offset),
                    Some(bar0::Target::Port {
                        port: e.instance,
                        word: 0
                    })
                );
            }
            if e.kind == BlockKind::TxEngine {
                assert_eq!(
                    bar0::decode(e.offset),
                    Some(bar0::Target::TxRing {
                        ring: e.instance,
                        word: 0
                    })
                );
            }
        }
        assert!(CardReg::ALL.iter().all(|r| r.word() < BLOCK_TABLE));
        assert_eq!(BlockEntry::decode(0x7F00_0000), None);
    }
}

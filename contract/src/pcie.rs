//! The card's PCIe variant, a generator parameter beside the port count, and everything that
//! follows from it: the link (lanes, rate, encoding) and the Stratix V Hard IP's Avalon-ST beat,
//! which is the core datapath's beat. The board's Hard IP instance (`nanet-board`), the
//! simulator's link and root complex (`nanet-sim`) and the gateware read these figures from here.
//!
//! Sources: the Stratix V Hard IP for PCI Express user guide (Gen2 x8 with the 128-bit
//! interface, Gen3 x8 with the 256-bit one, both at 250 MHz; `empty` counts unused qwords of the
//! last beat) and the PCI Express Base Specification 3.0 (8b/10b at 2.5 and 5 GT/s, 128b/130b at
//! 8 GT/s; section 4.2.2.3 for Gen3's framing tokens).

/// A PCIe link and Hard IP interface the card can be generated for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PcieVariant {
    /// Gen2 x8, 128-bit Avalon-ST at 250 MHz.
    Gen2x8,
    /// Gen3 x8, 256-bit Avalon-ST at 250 MHz (single packet per cycle).
    Gen3x8,
}

impl PcieVariant {
    pub const ALL: [PcieVariant; 2] = [PcieVariant::Gen2x8, PcieVariant::Gen3x8];

    /// The name `make verilog PCIE=..` and the tools take.
    pub const fn name(self) -> &'static str {
        match self {
            PcieVariant::Gen2x8 => "gen2",
            PcieVariant::Gen3x8 => "gen3",
        }
    }

    /// A variant by [`PcieVariant::name`] (or with the lanes: `gen3x8`).
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|v| name == v.name() || name.strip_suffix("x8") == Some(v.name()))
    }

    /// "Gen3 x8, 256-bit Avalon-ST".
    pub fn describe(self) -> String {
        format!(
            "Gen{} x{}, {}-bit Avalon-ST",
            self.generation(),
            self.lanes(),
            self.beat_bits()
        )
    }

    pub const fn generation(self) -> u32 {
        match self {
            PcieVariant::Gen2x8 => 2,
            PcieVariant::Gen3x8 => 3,
        }
    }

    pub const fn lanes(self) -> u32 {
        8
    }

    /// Transfers per second on each lane.
    pub const fn transfers_per_s(self) -> f64 {
        match self {
            PcieVariant::Gen2x8 => 5.0e9,
            PcieVariant::Gen3x8 => 8.0e9,
        }
    }

    /// Data bits per line bit: 8b/10b at Gen2, 128b/130b at Gen3.
    pub const fn encoding(self) -> (u32, u32) {
        match self {
            PcieVariant::Gen2x8 => (8, 10),
            PcieVariant::Gen3x8 => (128, 130),
        }
    }

    /// Bytes per second the link carries in each direction after line encoding.
    pub fn link_bytes_per_s(self) -> f64 {
        let (data, line) = self.encoding();
        self.lanes() as f64 * self.transfers_per_s() * data as f64 / line as f64 / 8.0
    }

    /// Bytes each TLP takes on the link beyond its header and payload. Gen2: STP symbol,
    /// sequence number (2), LCRC (4), END symbol. Gen3: the 4-byte STP token (which carries the
    /// sequence number and the length) and the LCRC (4). Eight at both.
    pub const fn tlp_framing_bytes(self) -> u32 {
        match self {
            PcieVariant::Gen2x8 => 1 + 2 + 4 + 1,
            PcieVariant::Gen3x8 => 4 + 4,
        }
    }

    /// Bytes a DLLP (an Ack, an UpdateFC) takes on the link: its 6 bytes (4 and a 16-bit CRC)
    /// and framing. Gen2: SDP and END symbols. Gen3: the 2-byte SDP token. Eight at both.
    pub const fn dllp_bytes(self) -> u32 {
        match self {
            PcieVariant::Gen2x8 => 1 + 6 + 1,
            PcieVariant::Gen3x8 => 2 + 6,
        }
    }

    /// Width of the Hard IP's Avalon-ST data, and of the core datapath's beat.
    pub const fn beat_bits(self) -> usize {
        match self {
            PcieVariant::Gen2x8 => 128,
            PcieVariant::Gen3x8 => 256,
        }
    }

    pub const fn beat_bytes(self) -> usize {
        self.beat_bits() / 8
    }

    pub const fn beat_dwords(self) -> usize {
        self.beat_bits() / 32
    }

    /// Width of the Hard IP's `rx_st_empty` / `tx_st_empty`: empty qwords of a TLP's last beat
    /// (at 128 bits only bit 0 is used: the upper qword unused).
    pub const fn empty_bits(self) -> usize {
        2
    }

    /// The variant whose Avalon-ST beat (and core datapath) is `bits` wide.
    pub fn with_beat_bits(bits: usize) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.beat_bits() == bits)
    }

    /// What the card's `card::CardReg::Pcie` reads for this variant: the link generation in
    /// bits 7:0, the lanes in bits 15:8, the Avalon-ST beat in bytes in bits 23:16.
    pub const fn word(self) -> u32 {
        self.generation() | self.lanes() << 8 | (self.beat_bytes() as u32) << 16
    }

    /// The variant a card's `card::CardReg::Pcie` word names; `None` for one this library does
    /// not know, and for 0: a card of contract 3.0, which does not say.
    pub fn from_word(word: u32) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.word() == word)
    }

    /// The Hard IP's application clock (`coreclkout_hip`), the core clock.
    pub const fn core_hz(self) -> u64 {
        250_000_000
    }
}

impl std::fmt::Display for PcieVariant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_are_none() {
        for v in PcieVariant::ALL {
            assert_eq!(PcieVariant::from_name(v.name()), Some(v));
            assert_eq!(PcieVariant::from_name(&format!("{v}x8")), Some(v));
        }
        assert_eq!(PcieVariant::from_name("gen4"), None);
        assert_eq!(PcieVariant::from_name("x8"), None);
        assert_eq!(PcieVariant::Gen3x8.describe(), "Gen3 x8, 256-bit Avalon-ST");
    }

    #[test]
    fn the_card_word_and_the_beat_width_name_one_variant_each() {
        assert_eq!(PcieVariant::Gen2x8.word(), 0x0010_0802);
        assert_eq!(PcieVariant::Gen3x8.word(), 0x0020_0803);
        for v in PcieVariant::ALL {
            assert_eq!(PcieVariant::from_word(v.word()), Some(v));
            assert_eq!(PcieVariant::with_beat_bits(v.beat_bits()), Some(v));
        }
        // A card of contract 3.0 reads 0 there; a Gen3 x16 card would be another variant.
        assert_eq!(PcieVariant::from_word(0), None);
        assert_eq!(PcieVariant::from_word(0x0020_1003), None);
        assert_eq!(PcieVariant::with_beat_bits(512), None);
    }

    #[test]
    fn the_link_and_the_beat_carry_what_the_issue_states() {
        // 5 GT/s x 8 x 8/10 = 4.0 GB/s; 8 GT/s x 8 x 128/130 = 7.88 GB/s.
        assert_eq!(PcieVariant::Gen2x8.link_bytes_per_s(), 4.0e9);
        let g3 = PcieVariant::Gen3x8.link_bytes_per_s();
        assert!((g3 - 7.877e9).abs() < 1e6, "{g3}");
        // The beat at 250 MHz carries at least the link: 4.0 and 8.0 GB/s.
        for v in PcieVariant::ALL {
            let beat = v.beat_bytes() as f64 * v.core_hz() as f64;
            assert!(beat >= v.link_bytes_per_s(), "{v}: {beat} < link");
        }
        assert_eq!(PcieVariant::Gen3x8.beat_dwords(), 8);
    }
}

//! Packed words that cross a boundary inside the card, each field a named bit range: the gateware
//! reads the ranges (as constants of its kernels), the simulator and the tests encode and decode
//! with them, so a layout is written down only here.

/// Bits `lsb .. lsb + width` of a packed word.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct BitField {
    pub name: &'static str,
    pub lsb: usize,
    pub width: usize,
    pub doc: &'static str,
}

impl BitField {
    pub const fn new(name: &'static str, lsb: usize, width: usize, doc: &'static str) -> Self {
        Self {
            name,
            lsb,
            width,
            doc,
        }
    }

    /// The highest bit of the field.
    pub const fn msb(&self) -> usize {
        self.lsb + self.width - 1
    }

    /// The field's value, right-aligned, taken from `word`.
    pub const fn get(&self, word: u128) -> u128 {
        (word >> self.lsb) & ((1u128 << self.width) - 1)
    }

    /// `value` (truncated to the field's width) at the field's position, to be or-ed into a word.
    pub const fn put(&self, value: u128) -> u128 {
        (value & ((1u128 << self.width) - 1)) << self.lsb
    }
}

/// The receive meta word: the first 128-bit word of a datagram in a port's clock-crossing FIFO
/// and on the core domain's datagram stream (port packer -> port arbiter -> CLOP engine). The
/// payload follows in network order. Bits 11:0 are zero.
pub mod rx_meta {
    use super::BitField;

    pub const STREAM: BitField = BitField::new("stream", 124, 4, "Multi-Stream entry (0..15)");
    pub const LEN: BitField = BitField::new("len", 108, 16, "UDP payload bytes");
    pub const SRC_IP: BitField = BitField::new("src_ip", 76, 32, "source IPv4 address");
    pub const SRC_PORT: BitField = BitField::new("src_port", 60, 16, "source UDP port");
    pub const SOP_TIME: BitField = BitField::new(
        "sop_time",
        28,
        32,
        "core cycle counter at the frame's SOP at the MAC",
    );
    pub const HDR_DELTA: BitField = BitField::new(
        "hdr_delta",
        12,
        16,
        "core cycles from SOP to the headers parsed",
    );
    /// Every field, most significant first.
    pub const FIELDS: [BitField; 6] = [STREAM, LEN, SRC_IP, SRC_PORT, SOP_TIME, HDR_DELTA];

    /// A meta word's fields.
    #[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
    pub struct RxMeta {
        pub stream: u8,
        pub len: u16,
        pub src_ip: u32,
        pub src_port: u16,
        pub sop_time: u32,
        pub hdr_delta: u16,
    }

    impl RxMeta {
        pub const fn encode(&self) -> u128 {
            STREAM.put(self.stream as u128)
                | LEN.put(self.len as u128)
                | SRC_IP.put(self.src_ip as u128)
                | SRC_PORT.put(self.src_port as u128)
                | SOP_TIME.put(self.sop_time as u128)
                | HDR_DELTA.put(self.hdr_delta as u128)
        }

        pub const fn decode(word: u128) -> Self {
            Self {
                stream: STREAM.get(word) as u8,
                len: LEN.get(word) as u16,
                src_ip: SRC_IP.get(word) as u32,
                src_port: SRC_PORT.get(word) as u16,
                sop_time: SOP_TIME.get(word) as u32,
                hdr_delta: HDR_DELTA.get(word) as u16,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::rx_meta::{self, RxMeta};

    /// The fields of the meta word neither overlap nor leave the word, and round-trip.
    #[test]
    fn the_meta_word_round_trips() {
        let mut used = 0u128;
        for f in rx_meta::FIELDS {
            assert!(f.msb() < 128, "{} leaves the word", f.name);
            let bits = f.put(u128::MAX);
            assert_eq!(used & bits, 0, "{} overlaps another field", f.name);
            used |= bits;
        }
        let m = RxMeta {
            stream: 0xA,
            len: 0x1234,
            src_ip: 0xC0A8_0102,
            src_port: 0xBEEF,
            sop_time: 0xDEAD_BEEF,
            hdr_delta: 7,
        };
        assert_eq!(RxMeta::decode(m.encode()), m);
        assert_eq!(m.encode() & 0xFFF, 0);
    }
}

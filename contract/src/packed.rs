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

/// The CLOP engine's per-CLOP RAM words (`hdl/src/rx/clop/store.rs` packs and unpacks them; the
/// timeout scanner keeps its own copy of the deadline, `deadline`). Only the gateware reads them;
/// they are named here like every other packed word so that a layout is written down once.
pub mod clop_ram {
    /// Configuration, written by a configure or disable command.
    pub mod cfg {
        use crate::packed::BitField;

        pub const SIZE: BitField = BitField::new("size", 0, 24, "bytes per buffer");
        pub const COUNT: BitField = BitField::new("count", 24, 9, "buffers, 1..=256");
        pub const SLOT: BitField = BitField::new("slot", 33, 7, "first TLB slot");
        pub const PAGE: BitField = BitField::new("page", 40, 2, "page size code");
        pub const HEADER: BitField =
            BitField::new("header", 42, 1, "a 16-byte header before each packet");
        pub const SKIP: BitField = BitField::new("skip", 43, 1, "full policy: skip held buffers");
        pub const ENABLED: BitField = BitField::new("enabled", 44, 1, "packets are accepted");
        pub const WIDTH: usize = 45;
        pub const FIELDS: [BitField; 7] = [ENABLED, SKIP, HEADER, PAGE, SLOT, COUNT, SIZE];
    }

    /// Where the next packet goes.
    pub mod pos {
        use crate::packed::BitField;

        pub const BUF_OFF: BitField = BitField::new(
            "buf_off",
            0,
            32,
            "the current buffer's offset in the region",
        );
        pub const OFFSET: BitField =
            BitField::new("offset", 32, 24, "write offset in the current buffer");
        pub const CUR: BitField = BitField::new("cur", 56, 8, "current buffer");
        pub const WIDTH: usize = 64;
        pub const FIELDS: [BitField; 3] = [CUR, OFFSET, BUF_OFF];
    }

    /// The current buffer's contents and the CLOP's sequence.
    pub mod state {
        use crate::packed::BitField;

        pub const SEQ: BitField = BitField::new("seq", 0, 16, "sequence of the next packet");
        pub const FIRST_SEQ: BitField =
            BitField::new("first_seq", 16, 16, "sequence of the buffer's first packet");
        pub const PACKETS: BitField = BitField::new("packets", 32, 16, "packets in the buffer");
        pub const OPEN: BitField = BitField::new("open", 48, 1, "the current buffer is acquired");
        pub const STARVED: BitField = BitField::new(
            "starved",
            49,
            1,
            "a starvation episode is under way (its event is sent)",
        );
        pub const DL_VALID: BitField =
            BitField::new("dl_valid", 50, 1, "the flush deadline is armed");
        pub const DEADLINE: BitField = BitField::new(
            "deadline",
            51,
            32,
            "core cycle at which the buffer is flushed",
        );
        pub const WIDTH: usize = 83;
        pub const FIELDS: [BitField; 7] =
            [DEADLINE, DL_VALID, STARVED, OPEN, PACKETS, FIRST_SEQ, SEQ];
    }

    /// Stage times of the last packet committed into the current buffer (core cycles).
    pub mod stamps {
        use crate::packed::BitField;

        pub const SOP: BitField = BitField::new("sop", 0, 32, "the frame's SOP at the MAC");
        pub const HEADER: BitField = BitField::new("header", 32, 32, "headers parsed");
        pub const FIRST_DMA: BitField = BitField::new("first_dma", 64, 32, "first DMA beat");
        pub const LAST_DMA: BitField = BitField::new("last_dma", 96, 32, "last DMA beat");
        pub const WIDTH: usize = 128;
        pub const FIELDS: [BitField; 4] = [LAST_DMA, FIRST_DMA, HEADER, SOP];
    }

    /// The timeout scanner's copy of the flush deadline.
    pub mod deadline {
        use crate::packed::BitField;

        pub const DEADLINE: BitField = BitField::new("deadline", 0, 32, "as in `state`");
        pub const VALID: BitField = BitField::new("valid", 32, 1, "as `state`'s `dl_valid`");
        pub const WIDTH: usize = 33;
        pub const FIELDS: [BitField; 2] = [VALID, DEADLINE];
    }
}

/// An entry of a port's transmit FIFO (`hdl/src/tx/engine.rs` writes them, the port's feeder
/// reads them): a datagram is a header entry, then its payload in entries of the core datapath's
/// width (16 bytes at 128 bits, 32 at 256; little-endian memory lanes), each entry with an 8-bit
/// tag.
pub mod tx_entry {
    use super::BitField;

    /// The tag's fields.
    pub mod tag {
        use crate::packed::BitField;

        pub const KIND: BitField = BitField::new(
            "kind",
            0,
            2,
            "`HEADER`, `PAYLOAD`, or `LAST` (the datagram's last payload entry)",
        );
        pub const LAST_BYTES_M1: BitField = BitField::new(
            "last_bytes_m1",
            2,
            5,
            "a last entry's payload bytes less one (0..15 at 128 bits, 0..31 at 256)",
        );
        pub const ERROR: BitField = BitField::new(
            "error",
            7,
            1,
            "a last entry's datagram failed (a payload read failed): sent with a MAC error",
        );
        pub const FIELDS: [BitField; 3] = [KIND, LAST_BYTES_M1, ERROR];
        pub const WIDTH: usize = 8;
        pub const HEADER: u8 = 0;
        pub const PAYLOAD: u8 = 2;
        pub const LAST: u8 = 3;
    }

    // A header entry's fields (the rest of the entry is zero).
    pub const DST_PORT: BitField = BitField::new("dst_port", 0, 16, "destination UDP port");
    pub const SRC_PORT: BitField = BitField::new("src_port", 16, 16, "source UDP port");
    pub const DST_IP: BitField = BitField::new(
        "dst_ip",
        32,
        32,
        "destination IPv4 address, network order as a number",
    );
    pub const LEN: BitField = BitField::new("len", 64, 16, "UDP payload bytes (1..1472)");
    pub const HEADER_FIELDS: [BitField; 4] = [DST_PORT, SRC_PORT, DST_IP, LEN];
}

#[cfg(test)]
mod tests {
    use super::rx_meta::{self, RxMeta};
    use super::{clop_ram, tx_entry, BitField};

    /// The fields neither overlap nor leave a word of `width` bits; with `dense`, they fill it.
    fn check_layout(fields: &[BitField], width: usize, dense: bool) {
        let mut used = 0u128;
        for f in fields {
            assert!(f.msb() < width, "{} leaves the word", f.name);
            let bits = f.put(u128::MAX);
            assert_eq!(used & bits, 0, "{} overlaps another field", f.name);
            used |= bits;
        }
        if dense {
            assert_eq!(used.count_ones() as usize, width, "bits of the word unused");
        }
    }

    /// The fields of the meta word neither overlap nor leave the word, and round-trip.
    #[test]
    fn the_meta_word_round_trips() {
        check_layout(&rx_meta::FIELDS, 128, false);
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

    /// Each CLOP RAM word is exactly its fields (the gateware declares the RAMs this wide).
    #[test]
    fn the_clop_ram_words_are_their_fields() {
        check_layout(&clop_ram::cfg::FIELDS, clop_ram::cfg::WIDTH, true);
        check_layout(&clop_ram::pos::FIELDS, clop_ram::pos::WIDTH, true);
        check_layout(&clop_ram::state::FIELDS, clop_ram::state::WIDTH, true);
        check_layout(&clop_ram::stamps::FIELDS, clop_ram::stamps::WIDTH, true);
        check_layout(&clop_ram::deadline::FIELDS, clop_ram::deadline::WIDTH, true);
    }

    /// The transmit FIFO's tag is exactly its fields; the header entry's fit in 16 bytes.
    #[test]
    fn the_transmit_entry_words_are_their_fields() {
        check_layout(&tx_entry::tag::FIELDS, tx_entry::tag::WIDTH, true);
        check_layout(&tx_entry::HEADER_FIELDS, 128, false);
        let kinds = [
            tx_entry::tag::HEADER,
            tx_entry::tag::PAYLOAD,
            tx_entry::tag::LAST,
        ];
        for k in kinds {
            assert_eq!(tx_entry::tag::KIND.get(k as u128), k as u128);
        }
    }
}

//! Event records: what the card writes into the host's event ring (issue [rx-path]).
//!
//! The ring is a power-of-two number of 32-byte records in host memory. The card writes records in
//! order and flips the *phase* bit every time it wraps around the ring, so the host knows a record
//! is new when its phase bit equals the phase it expects (starting at 1 after reset; memory starts
//! zeroed), without reading any card register.
//!
//! The phase is in every 8-byte word of the record (bit 7 of bytes 0, 15, 23 and 31: see
//! [`PHASE_BYTES`]), and a record is there only when all four carry the expected phase: PCIe
//! promises nothing about the order in which the bytes of one write become visible, and root
//! complexes split writes, so a record whose first word landed may still lack the others. What it
//! relies on is that an aligned 8-byte word lands whole (root complexes write memory in at least
//! that unit; the simulator's host memory does, and its `tear` option splits writes only between
//! words).
//! The two timestamps whose top bit carries a phase are 31 bits wide on the card; the decoder
//! gives them back in full from the stamp before them (a packet's stages are microseconds apart,
//! far below the 8.6 s that 31 bits of 250 MHz cycles span).
//!
//! Layout (little-endian, as the host reads it):
//!
//! | bytes | field |
//! | --- | --- |
//! | 0 | bit 7: phase; bits 3:0: [`EventKind`] |
//! | 1 | CLOP id |
//! | 2..3 | buffer index |
//! | 4..7 | bytes written into the buffer (payloads and per-packet headers) |
//! | 8..9 | packets in the buffer |
//! | 10..11 | sequence number of the first packet (per CLOP, wrapping) |
//! | 12..13 | sequence number of the last packet |
//! | 14 | reserved, zero |
//! | 15 | bit 7: phase; bits 6:0 zero |
//! | 16..31 | stage timestamps of the last packet, core cycle counters: SOP at the MAC (32 bits), header parsed (bits 30:0; bit 31 phase), first DMA beat (32 bits), last DMA beat (bits 30:0; bit 31 phase) |

/// Size of one record.
pub const EVENT_BYTES: usize = 32;
/// The bytes whose bit 7 is the record's phase: the first of the first 8-byte word, the last of
/// each other, so every word says whether it belongs to this lap's record.
pub const PHASE_BYTES: [usize; 4] = [0, 15, 23, 31];
/// Bits of the two timestamps that share their word's top byte with a phase bit.
pub const SHORT_STAMP_BITS: u32 = 31;
const SHORT_STAMP_MASK: u32 = (1 << SHORT_STAMP_BITS) - 1;

// One phase bit in each 8-byte word.
const _: () = {
    let mut i = 0;
    while i < 4 {
        assert!(PHASE_BYTES[i] / 8 == i);
        i += 1;
    }
};
/// The card's core clock: the unit of every timestamp and timeout on the card.
pub const CORE_HZ: u64 = 250_000_000;

/// A field of a fixed binary layout (event record, per-packet header): name, byte offset, bytes
/// (little-endian unless `doc` says otherwise) and meaning. The docs and the C header are generated
/// from these tables; tests hold them to `encode`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Field {
    pub name: &'static str,
    pub offset: usize,
    pub bytes: usize,
    pub doc: &'static str,
}

pub(crate) const fn field(
    name: &'static str,
    offset: usize,
    bytes: usize,
    doc: &'static str,
) -> Field {
    Field {
        name,
        offset,
        bytes,
        doc,
    }
}

/// The fields of an event record, by name (byte offsets; the gateware packs records from these).
pub mod field {
    use super::{field, Field};

    pub const KIND_PHASE: Field = field("kind_phase", 0, 1, "bit 7: phase; bits 3:0: event kind");
    pub const CLOP: Field = field("clop", 1, 1, "CLOP id");
    pub const BUFFER: Field = field("buffer", 2, 2, "buffer index");
    pub const BYTES: Field = field(
        "bytes",
        4,
        4,
        "bytes written into the buffer (payloads and per-packet headers)",
    );
    pub const PACKETS: Field = field("packets", 8, 2, "packets in the buffer");
    pub const FIRST_SEQ: Field = field(
        "first_seq",
        10,
        2,
        "sequence number of the first packet (per CLOP, wrapping)",
    );
    pub const LAST_SEQ: Field = field("last_seq", 12, 2, "sequence number of the last packet");
    pub const RESERVED: Field = field("reserved", 14, 1, "zero");
    pub const PHASE_1: Field = field(
        "phase_1",
        15,
        1,
        "bit 7: phase (of the record's second 8 bytes); bits 6:0 zero",
    );
    pub const SOP_AT_MAC: Field = field(
        "sop_at_mac",
        16,
        4,
        "core cycle counter at the last packet's SOP at the MAC",
    );
    pub const HEADER_PARSED: Field = field(
        "header_parsed",
        20,
        4,
        "... when its headers were parsed, bits 30:0 (bit 31: phase)",
    );
    pub const FIRST_DMA_BEAT: Field = field("first_dma_beat", 24, 4, "... at its first DMA beat");
    pub const LAST_DMA_BEAT: Field = field(
        "last_dma_beat",
        28,
        4,
        "... at its last DMA beat, bits 30:0 (bit 31: phase)",
    );
}

/// The fields of an event record, in order.
pub const EVENT_FIELDS: [Field; 13] = [
    field::KIND_PHASE,
    field::CLOP,
    field::BUFFER,
    field::BYTES,
    field::PACKETS,
    field::FIRST_SEQ,
    field::LAST_SEQ,
    field::RESERVED,
    field::PHASE_1,
    field::SOP_AT_MAC,
    field::HEADER_PARSED,
    field::FIRST_DMA_BEAT,
    field::LAST_DMA_BEAT,
];

/// What an event reports.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum EventKind {
    /// A buffer was closed because it is full or the next packet does not fit.
    BufferFull = 1,
    /// A buffer was closed because its flush timeout expired after its first packet.
    TimeoutFlush = 2,
    /// A packet was dropped because the CLOP's next buffer is still held by the host.
    NoFreeBuffer = 3,
    /// A packet was dropped because its buffer's page had no valid translation.
    TlbMiss = 4,
    /// Another error (the record's counts say what was lost).
    Error = 5,
    /// Transmit descriptors done (their datagrams went to their port): `clop` is the ring (the
    /// port it sends from), `buffer` the last one's ring index, `packets` and `bytes` count the
    /// ring's descriptors since its previous transmit event, `first_seq`/`last_seq` their first
    /// and last ring index.
    TxDone = 6,
    /// A transmit descriptor could not be sent (bad fields or a failed read; counted): `clop` is
    /// the ring, `buffer` its ring index; the ring goes on with the next.
    TxError = 7,
}

impl EventKind {
    pub const ALL: [EventKind; 7] = [
        EventKind::BufferFull,
        EventKind::TimeoutFlush,
        EventKind::NoFreeBuffer,
        EventKind::TlbMiss,
        EventKind::Error,
        EventKind::TxDone,
        EventKind::TxError,
    ];

    /// The kind's name in reports and generated docs (`buffer_full`, ...).
    pub const fn name(self) -> &'static str {
        match self {
            EventKind::BufferFull => "buffer_full",
            EventKind::TimeoutFlush => "timeout_flush",
            EventKind::NoFreeBuffer => "no_free_buffer",
            EventKind::TlbMiss => "tlb_miss",
            EventKind::Error => "error",
            EventKind::TxDone => "tx_done",
            EventKind::TxError => "tx_error",
        }
    }

    /// One line on what the event means (the generated docs' table).
    pub const fn doc(self) -> &'static str {
        match self {
            EventKind::BufferFull => "a buffer closed: full, or the next packet did not fit",
            EventKind::TimeoutFlush => "a buffer closed: its flush timeout expired",
            EventKind::NoFreeBuffer => "packets dropped: the next buffer is held by the host",
            EventKind::TlbMiss => "a packet dropped: its page has no valid translation",
            EventKind::Error => "another error (the counts say what was lost)",
            EventKind::TxDone => "transmit descriptors done, up to ring index `buffer`",
            EventKind::TxError => "transmit descriptor `buffer` could not be sent (counted)",
        }
    }

    #[inline]
    pub fn from_code(code: u8) -> Option<Self> {
        Some(match code {
            1 => EventKind::BufferFull,
            2 => EventKind::TimeoutFlush,
            3 => EventKind::NoFreeBuffer,
            4 => EventKind::TlbMiss,
            5 => EventKind::Error,
            6 => EventKind::TxDone,
            7 => EventKind::TxError,
            _ => return None,
        })
    }
}

/// The four pipeline stage timestamps of a packet (core cycle counter, wrapping).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct StageTimes {
    pub sop_at_mac: u32,
    pub header_parsed: u32,
    pub first_dma_beat: u32,
    pub last_dma_beat: u32,
}

/// One event record.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct EventRecord {
    pub phase: bool,
    pub kind: EventKind,
    pub clop: u8,
    pub buffer: u16,
    pub bytes: u32,
    pub packets: u16,
    pub first_seq: u16,
    pub last_seq: u16,
    pub times: StageTimes,
}

/// Why 32 bytes are not a valid record.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum EventDecodeError {
    /// The kind code is none of [`EventKind`].
    UnknownKind(u8),
    /// Reserved bits are not zero.
    ReservedBits,
    /// The words' phase bits differ: part of the record has not landed yet (or the slot holds
    /// parts of two laps' records).
    Torn,
}

/// A 31-bit stamp taken after `before` (and less than 2^31 cycles after it), in full.
#[inline]
fn stamp_after(before: u32, short: u32) -> u32 {
    before.wrapping_add(short.wrapping_sub(before) & SHORT_STAMP_MASK)
}

impl EventRecord {
    /// Whether the event hands a filled buffer to the host.
    pub fn is_buffer(&self) -> bool {
        matches!(self.kind, EventKind::BufferFull | EventKind::TimeoutFlush)
    }

    /// The card's own measurement for the last packet: core cycles from its start of frame at
    /// the MAC to its last byte written into memory.
    pub fn latency_cycles(&self) -> u32 {
        self.times.last_dma_beat.wrapping_sub(self.times.sop_at_mac)
    }

    /// [`EventRecord::latency_cycles`] in nanoseconds.
    pub fn latency_ns(&self) -> f64 {
        self.latency_cycles() as f64 * 1e9 / CORE_HZ as f64
    }

    /// The record's bytes as the card writes them (the two short stamps cut to 31 bits, the
    /// phase in every word).
    pub fn encode(&self) -> [u8; EVENT_BYTES] {
        let mut b = [0u8; EVENT_BYTES];
        b[0] = self.kind as u8;
        b[1] = self.clop;
        b[2..4].copy_from_slice(&self.buffer.to_le_bytes());
        b[4..8].copy_from_slice(&self.bytes.to_le_bytes());
        b[8..10].copy_from_slice(&self.packets.to_le_bytes());
        b[10..12].copy_from_slice(&self.first_seq.to_le_bytes());
        b[12..14].copy_from_slice(&self.last_seq.to_le_bytes());
        let t = &self.times;
        for (i, v) in [
            t.sop_at_mac,
            t.header_parsed & SHORT_STAMP_MASK,
            t.first_dma_beat,
            t.last_dma_beat & SHORT_STAMP_MASK,
        ]
        .into_iter()
        .enumerate()
        {
            b[16 + 4 * i..20 + 4 * i].copy_from_slice(&v.to_le_bytes());
        }
        for at in PHASE_BYTES {
            b[at] |= (self.phase as u8) << 7;
        }
        b
    }

    /// The record in `b`: refused if a reserved bit is set, the kind is unknown, or the words'
    /// phases differ ([`EventDecodeError::Torn`]).
    pub fn decode(b: &[u8; EVENT_BYTES]) -> Result<Self, EventDecodeError> {
        let w: [u64; 4] =
            std::array::from_fn(|i| u64::from_le_bytes(b[8 * i..8 * i + 8].try_into().unwrap()));
        Self::decode_words(&w)
    }

    /// Whether all four words of a record carry phase `phase` (the whole record has landed).
    #[inline]
    pub fn landed(w: &[u64; 4], phase: bool) -> bool {
        (0..4).all(|i| (w[i] >> ((PHASE_BYTES[i] % 8) * 8 + 7)) & 1 == phase as u64)
    }

    /// As [`EventRecord::decode`], from the record's four little-endian 64-bit words (how a host
    /// reads it from the ring: no byte copies).
    #[inline]
    pub fn decode_words(w: &[u64; 4]) -> Result<Self, EventDecodeError> {
        let (a, b) = (w[0], w[1]);
        let phase = a & 0x80 != 0;
        if !Self::landed(w, phase) {
            return Err(EventDecodeError::Torn);
        }
        if a & 0x70 != 0 || (b >> 48) & 0x7FFF != 0 {
            return Err(EventDecodeError::ReservedBits);
        }
        let code = (a & 0x0F) as u8;
        let kind = EventKind::from_code(code).ok_or(EventDecodeError::UnknownKind(code))?;
        let (sop_at_mac, first_dma_beat) = (w[2] as u32, w[3] as u32);
        Ok(Self {
            phase,
            kind,
            clop: (a >> 8) as u8,
            buffer: (a >> 16) as u16,
            bytes: (a >> 32) as u32,
            packets: b as u16,
            first_seq: (b >> 16) as u16,
            last_seq: (b >> 32) as u16,
            times: StageTimes {
                sop_at_mac,
                header_parsed: stamp_after(sop_at_mac, (w[2] >> 32) as u32),
                first_dma_beat,
                last_dma_beat: stamp_after(first_dma_beat, (w[3] >> 32) as u32),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(kind: EventKind, phase: bool) -> EventRecord {
        EventRecord {
            phase,
            kind,
            clop: 63,
            buffer: 0x1234,
            bytes: 0x0001_0000,
            packets: 700,
            first_seq: 0xFFFE,
            last_seq: 0x02BD,
            // Stamps across bit 31 and across the wrap: the short ones come back in full.
            times: StageTimes {
                sop_at_mac: 0x7FFF_FFF0,
                header_parsed: 0x8000_0007,
                first_dma_beat: 0xFFFF_FFF8,
                last_dma_beat: 0x0000_0020,
            },
        }
    }

    #[test]
    fn records_round_trip_for_every_kind_and_phase() {
        for kind in EventKind::ALL {
            for phase in [false, true] {
                let r = sample(kind, phase);
                let b = r.encode();
                assert_eq!(EventRecord::decode(&b), Ok(r));
            }
        }
    }

    #[test]
    fn words_decode_as_bytes_do() {
        for kind in EventKind::ALL {
            let b = sample(kind, true).encode();
            let w: [u64; 4] = std::array::from_fn(|i| {
                u64::from_le_bytes(b[8 * i..8 * i + 8].try_into().unwrap())
            });
            assert_eq!(EventRecord::decode_words(&w), EventRecord::decode(&b));
        }
        let mut w = [0u64; 4];
        w[0] = 0x81;
        w[1] = 1 << 50 | 1 << 63;
        w[2] = 1 << 63;
        w[3] = 1 << 63;
        assert_eq!(
            EventRecord::decode_words(&w),
            Err(EventDecodeError::ReservedBits)
        );
    }

    #[test]
    fn the_layout_is_the_documented_one() {
        let b = sample(EventKind::TlbMiss, true).encode();
        assert_eq!(b[0], 0x84);
        assert_eq!(b[1], 63);
        assert_eq!(&b[2..4], &[0x34, 0x12]);
        assert_eq!(&b[28..32], &[0x20, 0, 0, 0x80]);
        assert_eq!(&b[20..24], &[0x07, 0, 0, 0x80]);
        assert_eq!(&b[14..16], &[0, 0x80]);
        let b = sample(EventKind::TlbMiss, false).encode();
        assert_eq!((b[0], b[15], b[23], b[31]), (0x04, 0, 0, 0));
    }

    /// Any word of the record still holding the previous lap's phase (not landed yet) makes it
    /// torn: never read as a record.
    #[test]
    fn a_record_with_any_word_not_landed_is_torn() {
        for phase in [false, true] {
            let whole = sample(EventKind::BufferFull, phase).encode();
            for at in PHASE_BYTES {
                let mut b = whole;
                b[at] ^= 0x80;
                assert_eq!(
                    EventRecord::decode(&b),
                    Err(EventDecodeError::Torn),
                    "byte {at}"
                );
                let w: [u64; 4] = std::array::from_fn(|i| {
                    u64::from_le_bytes(b[8 * i..8 * i + 8].try_into().unwrap())
                });
                assert!(!EventRecord::landed(&w, phase) && !EventRecord::landed(&w, !phase));
            }
        }
    }

    #[test]
    fn the_field_table_is_the_layout() {
        let r = sample(EventKind::BufferFull, true);
        let b = r.encode();
        let t = r.times;
        let phase31 = 1u64 << 31;
        let short = |v: u32| (v & SHORT_STAMP_MASK) as u64 | phase31;
        let values: [u64; 13] = [
            0x81,
            r.clop as u64,
            r.buffer as u64,
            r.bytes as u64,
            r.packets as u64,
            r.first_seq as u64,
            r.last_seq as u64,
            0,
            0x80,
            t.sop_at_mac as u64,
            short(t.header_parsed),
            t.first_dma_beat as u64,
            short(t.last_dma_beat),
        ];
        let mut end = 0;
        for (f, v) in EVENT_FIELDS.iter().zip(values) {
            assert_eq!(f.offset, end, "{} follows the previous field", f.name);
            let mut le = [0u8; 8];
            le[..f.bytes].copy_from_slice(&b[f.offset..f.offset + f.bytes]);
            assert_eq!(u64::from_le_bytes(le), v, "{}", f.name);
            end = f.offset + f.bytes;
        }
        assert_eq!(end, EVENT_BYTES);
    }

    #[test]
    fn garbage_is_refused_not_misread() {
        let mut b = sample(EventKind::Error, false).encode();
        b[0] = 0x0F;
        assert_eq!(
            EventRecord::decode(&b),
            Err(EventDecodeError::UnknownKind(15))
        );
        for at in [14, 15] {
            let mut b = sample(EventKind::Error, false).encode();
            b[at] = 1;
            assert_eq!(EventRecord::decode(&b), Err(EventDecodeError::ReservedBits));
        }
        // A zeroed ring slot (never written) is not a record.
        assert!(EventRecord::decode(&[0; EVENT_BYTES]).is_err());
    }
}

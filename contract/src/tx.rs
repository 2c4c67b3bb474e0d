//! The transmit rings: one per port, each a ring of descriptors in host memory that the card
//! reads by DMA, each descriptor naming a payload buffer and where its datagram goes.
//!
//! Ring `r` sends from port `r` and has its own block of [`TxReg`] registers at
//! `bar0::tx_ring(r, word)`; the rings run independently (a port whose link is stalled holds up
//! only its own ring) and share the card's DMA reads. A descriptor naming another port than its
//! ring's is refused ([`TxReg::BadDescriptor`]).
//!
//! A ring is `2^size_log2` descriptors of [`TX_DESC_BYTES`] at bus address `base` (from
//! [`TxReg::RingBaseLo`]/[`TxReg::RingBaseHi`], 4 KiB aligned). The host writes descriptors at
//! its producer index and then the index, modulo 2^16, into [`TxReg::Tail`] (the doorbell); the
//! card reads descriptor `head % 2^size_log2` while `head != tail`, reads its payload, hands the
//! datagram to the port's UDP transmitter and advances [`TxReg::Head`]. A slot may be reused once
//! `head` has passed it. Descriptors with [`TX_DESC_EVENT`] set raise a `TxDone` event record in
//! the event queue when done (its `clop` field is the ring's number); a descriptor that cannot be
//! sent raises `TxError` and is counted.
//!
//! A payload buffer is 16-byte aligned and holds the UDP payload only: the card builds the
//! Ethernet, IPv4 and UDP headers (from the port's addresses, the ARP cache and the descriptor).

use crate::events::Field;
use crate::regdef::registers;

/// Bytes of a descriptor.
pub const TX_DESC_BYTES: usize = 32;
/// Flag bit of a descriptor: a `TxDone` event when it is done.
pub const TX_DESC_EVENT: u8 = 1 << 0;
/// Bit of [`TxReg::RingSize`]: the engine runs. Cleared, it stops fetching, `Head` and `Tail` are
/// held at 0, and what it holds of the ring drains: descriptors fetched but not yet started are
/// discarded (counted in [`TxReg::Discarded`]), datagrams whose payload reads were issued are
/// still sent (without events). Until [`TxReg::Status`] shows [`TX_STATUS_IDLE`] the engine may
/// still read the ring and those payloads: only then may the host free or reuse their memory. A
/// ring enabled again before that starts fetching once the old one has drained.
pub const TX_RING_ENABLE: u32 = 1 << 31;
/// Bit of [`TxReg::Status`]: no descriptor or payload read outstanding, nothing queued or being
/// sent, and nothing left of a disabled ring.
pub const TX_STATUS_IDLE: u32 = 1 << 0;
/// Bit of [`TxReg::Status`]: a disabled ring is still draining.
pub const TX_STATUS_DRAINING: u32 = 1 << 1;
/// Ring sizes, log2 of the descriptor count.
pub const TX_RING_MIN_LOG2: u32 = 4;
pub const TX_RING_MAX_LOG2: u32 = 12;
/// Largest payload of one descriptor.
pub const TX_MAX_PAYLOAD: usize = 1472;
/// Payload buffers are aligned to this.
pub const TX_BUFFER_ALIGN: u64 = 16;

registers! {
    /// Registers of a transmit ring (ring `r`'s BAR0 block at `bar0::tx_ring(r, 0)`).
    TxReg at 0; {
        /// Bus address of the descriptor ring, bits 31:0 (4 KiB aligned: bits 11:0 read as 0, whatever was written).
        RingBaseLo = 0x00, "tx_ring_base_lo";
        /// Bus address of the ring, bits 63:32.
        RingBaseHi = 0x01, "tx_ring_base_hi";
        /// Log2 of the descriptor count in bits 3:0 (`TX_RING_MIN_LOG2` to `TX_RING_MAX_LOG2`),
        /// `TX_RING_ENABLE` in bit 31.
        RingSize = 0x02, "tx_ring_size";
        /// The doorbell: the host's producer index (16 bits, wrapping).
        Tail = 0x03, "tx_tail";
        /// Read: the card's consumer index: descriptors done (16 bits, wrapping).
        Head = 0x04, "tx_head";
        /// Read: `TX_STATUS_IDLE` (bit 0), `TX_STATUS_DRAINING` (bit 1).
        Status = 0x05, "tx_status";
        /// Counter: datagrams handed to their port's transmitter.
        Sent = 0x10, "tx_sent";
        /// Counter: descriptors refused (length 0 or over `TX_MAX_PAYLOAD`, a port other than the
        /// ring's, buffer not 16-byte aligned).
        BadDescriptor = 0x11, "tx_bad_descriptor";
        /// Counter: descriptors lost to a failed read of the descriptor or its payload.
        ReadError = 0x12, "tx_read_error";
        /// Counter: doorbell writes refused, the tail kept: a tail more than the ring's size ahead
        /// of `Head` (slots the host has not written), or behind the tail before (descriptors
        /// taken back).
        BadTail = 0x13, "tx_bad_tail";
        /// Counter: descriptors fetched but never sent because their ring was disabled first.
        Discarded = 0x14, "tx_discarded";
    }
}

/// The fields of [`TxDescriptor`] by name (byte offsets, little-endian; the gateware unpacks
/// descriptors from these).
pub mod field {
    use crate::events::{field, Field};

    pub const BUFFER: Field = field(
        "buffer",
        0,
        8,
        "bus address of the payload (16-byte aligned)",
    );
    pub const LEN: Field = field("len", 8, 2, "payload bytes, 1 to 1472");
    pub const PORT: Field = field("port", 10, 1, "the port that sends it: the ring's number");
    pub const FLAGS: Field = field(
        "flags",
        11,
        1,
        "bit 0 (`TX_DESC_EVENT`): a `TxDone` event when done",
    );
    pub const DST_IP: Field = field(
        "dst_ip",
        12,
        4,
        "destination IPv4 address, network order (a.b.c.d is bytes a, b, c, d)",
    );
    pub const SRC_PORT: Field = field("src_port", 16, 2, "source UDP port");
    pub const DST_PORT: Field = field("dst_port", 18, 2, "destination UDP port");
    pub const RESERVED: Field = field("reserved", 20, 12, "zero");
}

/// The fields of [`TxDescriptor`] (little-endian), in order.
pub const TX_DESC_FIELDS: [Field; 8] = [
    field::BUFFER,
    field::LEN,
    field::PORT,
    field::FLAGS,
    field::DST_IP,
    field::SRC_PORT,
    field::DST_PORT,
    field::RESERVED,
];

/// One transmit descriptor.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct TxDescriptor {
    pub buffer: u64,
    pub len: u16,
    pub port: u8,
    pub flags: u8,
    pub dst_ip: [u8; 4],
    pub src_port: u16,
    pub dst_port: u16,
}

impl TxDescriptor {
    pub fn encode(&self) -> [u8; TX_DESC_BYTES] {
        let mut b = [0u8; TX_DESC_BYTES];
        b[0..8].copy_from_slice(&self.buffer.to_le_bytes());
        b[8..10].copy_from_slice(&self.len.to_le_bytes());
        b[10] = self.port;
        b[11] = self.flags;
        b[12..16].copy_from_slice(&self.dst_ip);
        b[16..18].copy_from_slice(&self.src_port.to_le_bytes());
        b[18..20].copy_from_slice(&self.dst_port.to_le_bytes());
        b
    }

    pub fn decode(b: &[u8; TX_DESC_BYTES]) -> Self {
        Self {
            buffer: u64::from_le_bytes(b[0..8].try_into().unwrap()),
            len: u16::from_le_bytes([b[8], b[9]]),
            port: b[10],
            flags: b[11],
            dst_ip: [b[12], b[13], b[14], b[15]],
            src_port: u16::from_le_bytes([b[16], b[17]]),
            dst_port: u16::from_le_bytes([b[18], b[19]]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptors_round_trip_and_fields_tile_the_layout() {
        let d = TxDescriptor {
            buffer: 0x1_2345_6780,
            len: 1472,
            port: 3,
            flags: TX_DESC_EVENT,
            dst_ip: [10, 0, 0, 99],
            src_port: 4000,
            dst_port: 5000,
        };
        assert_eq!(TxDescriptor::decode(&d.encode()), d);
        let mut at = 0;
        for f in TX_DESC_FIELDS {
            assert_eq!(f.offset, at, "{}", f.name);
            at += f.bytes;
        }
        assert_eq!(at, TX_DESC_BYTES);
    }
}

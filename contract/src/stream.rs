//! Byte order of the card's 64-bit packet streams (the one place it is defined).
//!
//! Every packet stream inside the card, and the Altera 10G MAC client interface at its edge, carries
//! eight bytes per beat in **network order**: the first byte on the wire is the most significant byte
//! of the beat, `data[63:56]`, the eighth is `data[7:0]`. A multi-byte protocol field therefore reads
//! as one contiguous big-endian bit range (the EtherType at frame bytes 12..13 is `beat1[31:16]`).
//!
//! `keep` has one bit per byte with the same order: `keep[7]` qualifies `data[63:56]`. Only the last
//! beat of a packet may have bytes missing, and they are always at the end: `keep` is `0xFF` shifted
//! left by the number of missing bytes (`0xFF`, `0xFE`, `0xFC`, ... `0x80`). The Avalon-ST `empty`
//! count of the MAC client interface is exactly that number of missing bytes.
//!
//! A packet with no bytes at all (a UDP datagram with an empty payload) is one beat with `keep == 0`
//! and `last` set.

/// Bytes per stream beat.
pub const BEAT_BYTES: usize = 8;

/// Packs up to eight bytes into one beat in network order; returns `(data, keep)`.
pub fn pack_beat(bytes: &[u8]) -> (u64, u8) {
    assert!(
        bytes.len() <= BEAT_BYTES,
        "a beat holds at most {BEAT_BYTES} bytes"
    );
    let mut data = 0u64;
    for (i, b) in bytes.iter().enumerate() {
        data |= (*b as u64) << (56 - 8 * i);
    }
    (data, keep_for_len(bytes.len()))
}

/// The bytes a beat carries, in wire order.
pub fn unpack_beat(data: u64, keep: u8) -> Vec<u8> {
    (0..BEAT_BYTES)
        .filter(|i| keep & (0x80 >> i) != 0)
        .map(|i| (data >> (56 - 8 * i)) as u8)
        .collect()
}

/// `keep` for a beat holding the first `len` bytes.
pub fn keep_for_len(len: usize) -> u8 {
    assert!(len <= BEAT_BYTES);
    (0xFF00u16 >> len) as u8
}

/// Splits a packet into beats `(data, keep, last)`.
pub fn packet_to_beats(bytes: &[u8]) -> Vec<(u64, u8, bool)> {
    if bytes.is_empty() {
        return vec![(0, 0, true)];
    }
    let n = bytes.len().div_ceil(BEAT_BYTES);
    bytes
        .chunks(BEAT_BYTES)
        .enumerate()
        .map(|(i, c)| {
            let (d, k) = pack_beat(c);
            (d, k, i + 1 == n)
        })
        .collect()
}

/// Avalon-ST `empty` (bytes missing at the end of the beat) for a `keep` mask.
pub fn empty_for_keep(keep: u8) -> u8 {
    8 - keep.count_ones() as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_wire_byte_is_most_significant() {
        let (d, k) = pack_beat(&[0x01, 0x02, 0x03]);
        assert_eq!(d, 0x0102_0300_0000_0000);
        assert_eq!(k, 0b1110_0000);
        assert_eq!(unpack_beat(d, k), vec![1, 2, 3]);
        assert_eq!(empty_for_keep(k), 5);
    }

    #[test]
    fn packets_round_trip_through_beats() {
        for len in 0..40usize {
            let pkt: Vec<u8> = (0..len as u8).collect();
            let beats = packet_to_beats(&pkt);
            assert!(beats.last().unwrap().2);
            assert_eq!(beats.iter().filter(|b| b.2).count(), 1);
            let back: Vec<u8> = beats
                .iter()
                .flat_map(|(d, k, _)| unpack_beat(*d, *k))
                .collect();
            assert_eq!(back, pkt);
        }
    }
}

//! PCIe transaction layer packets as the root complex side sees them, and their mapping onto the
//! Stratix V Hard IP's 128-bit Avalon-ST interface (the same on receive and transmit):
//! - header dword `n` of the first beat in bits `32n+31:32n`, written as the PCIe spec numbers
//!   its bytes (byte 0 in bits 31:24);
//! - payload dwords little-endian (byte 0 in bits 7:0), qword aligned: after a 3-dword header the
//!   first payload dword sits in slot 3 of the header beat when address bit 2 is set (for
//!   completions: lower address bit 2), else in slot 0 of the next beat; after a 4-dword header it
//!   starts in slot 1 of the next beat when address bit 2 is set, else slot 0;
//! - `empty` in the last beat: the upper qword (slots 2 and 3) is unused.

/// One 128-bit beat.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Beat {
    pub data: u128,
    pub sop: bool,
    pub eop: bool,
    pub empty: bool,
}

/// Completion status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CplStatus {
    Success = 0,
    Unsupported = 1,
    Abort = 4,
}

/// The TLPs the models speak.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Tlp {
    MemRead {
        requester: u16,
        tag: u8,
        addr: u64,
        len_dw: u16,
        first_be: u8,
        last_be: u8,
    },
    MemWrite {
        requester: u16,
        tag: u8,
        addr: u64,
        first_be: u8,
        last_be: u8,
        data: Vec<u32>,
    },
    Completion {
        completer: u16,
        status: CplStatus,
        byte_count: u16,
        requester: u16,
        tag: u8,
        lower_addr: u8,
        data: Vec<u32>,
    },
    /// Any other header (hostile or unsupported traffic), with its payload.
    Other { header: Vec<u32>, data: Vec<u32> },
}

/// Whether a header is 4 dwords (fmt bit 0).
fn four_dw(h0: u32) -> bool {
    h0 & (1 << 29) != 0
}

fn has_data(h0: u32) -> bool {
    h0 & (1 << 30) != 0
}

impl Tlp {
    /// Header dwords and payload.
    pub fn encode(&self) -> (Vec<u32>, Vec<u32>) {
        match self {
            Tlp::MemRead {
                requester,
                tag,
                addr,
                len_dw,
                first_be,
                last_be,
            } => (
                mem_header(false, *addr, *len_dw, *requester, *tag, *first_be, *last_be),
                vec![],
            ),
            Tlp::MemWrite {
                requester,
                tag,
                addr,
                first_be,
                last_be,
                data,
            } => (
                mem_header(
                    true,
                    *addr,
                    data.len() as u16,
                    *requester,
                    *tag,
                    *first_be,
                    *last_be,
                ),
                data.clone(),
            ),
            Tlp::Completion {
                completer,
                status,
                byte_count,
                requester,
                tag,
                lower_addr,
                data,
            } => {
                let fmt = if data.is_empty() { 0 } else { 2 };
                let dw0 = fmt << 29 | 0x0A << 24 | (data.len() as u32 & 0x3FF);
                let dw1 = (*completer as u32) << 16
                    | (*status as u32) << 13
                    | (*byte_count as u32 & 0xFFF);
                let dw2 =
                    (*requester as u32) << 16 | (*tag as u32) << 8 | (*lower_addr as u32 & 0x7F);
                (vec![dw0, dw1, dw2], data.clone())
            }
            Tlp::Other { header, data } => (header.clone(), data.clone()),
        }
    }

    /// Reads header dwords and payload back (the inverse of [`Tlp::encode`]).
    pub fn decode(header: &[u32], data: &[u32]) -> Tlp {
        let h0 = header[0];
        let (fmt, kind) = (h0 >> 29, (h0 >> 24) & 0x1F);
        let len = (h0 & 0x3FF) as u16;
        let other = || Tlp::Other {
            header: header.to_vec(),
            data: data.to_vec(),
        };
        match (fmt, kind) {
            (0 | 1 | 2 | 3, 0) => {
                let requester = (header[1] >> 16) as u16;
                let tag = (header[1] >> 8) as u8;
                let (first_be, last_be) = ((header[1] & 0xF) as u8, ((header[1] >> 4) & 0xF) as u8);
                let addr = if four_dw(h0) {
                    (header[2] as u64) << 32 | (header[3] & !3) as u64
                } else {
                    (header[2] & !3) as u64
                };
                if has_data(h0) {
                    Tlp::MemWrite {
                        requester,
                        tag,
                        addr,
                        first_be,
                        last_be,
                        data: data.to_vec(),
                    }
                } else {
                    Tlp::MemRead {
                        requester,
                        tag,
                        addr,
                        len_dw: len,
                        first_be,
                        last_be,
                    }
                }
            }
            (0 | 2, 0x0A) => {
                let status = match (header[1] >> 13) & 7 {
                    0 => CplStatus::Success,
                    1 => CplStatus::Unsupported,
                    4 => CplStatus::Abort,
                    _ => return other(),
                };
                Tlp::Completion {
                    completer: (header[1] >> 16) as u16,
                    status,
                    byte_count: (header[1] & 0xFFF) as u16,
                    requester: (header[2] >> 16) as u16,
                    tag: (header[2] >> 8) as u8,
                    lower_addr: (header[2] & 0x7F) as u8,
                    data: data.to_vec(),
                }
            }
            _ => other(),
        }
    }

    /// What a memory write puts in memory: its dword-aligned address and, for every payload byte,
    /// the byte and whether its byte enable is set. `None` for other TLPs.
    pub fn write_strobes(&self) -> Option<(u64, Vec<u8>, Vec<bool>)> {
        let Tlp::MemWrite {
            addr,
            first_be,
            last_be,
            data,
            ..
        } = self
        else {
            return None;
        };
        let mut bytes = vec![];
        let mut strobes = vec![];
        for (i, dw) in data.iter().enumerate() {
            let be = match i {
                0 => *first_be,
                i if i == data.len() - 1 => *last_be,
                _ => 0xF,
            };
            for (k, byte) in dw.to_le_bytes().into_iter().enumerate() {
                bytes.push(byte);
                strobes.push(be & (1 << k) != 0);
            }
        }
        Some((*addr, bytes, strobes))
    }

    /// The Avalon-ST beats of this TLP.
    pub fn to_beats(&self) -> Vec<Beat> {
        let (h, d) = self.encode();
        to_beats(&h, &d)
    }
}

fn mem_header(
    write: bool,
    addr: u64,
    len_dw: u16,
    requester: u16,
    tag: u8,
    first_be: u8,
    last_be: u8,
) -> Vec<u32> {
    let wide = addr >> 32 != 0;
    let fmt = (write as u32) << 1 | wide as u32;
    let dw0 = fmt << 29 | (len_dw as u32 & 0x3FF);
    let dw1 = (requester as u32) << 16
        | (tag as u32) << 8
        | ((last_be & 0xF) as u32) << 4
        | (first_be & 0xF) as u32;
    if wide {
        vec![dw0, dw1, (addr >> 32) as u32, addr as u32 & !3]
    } else {
        vec![dw0, dw1, addr as u32 & !3]
    }
}

/// Address bit 2 of a header (lower address bit 2 for completions): where the payload starts.
fn odd_dword(header: &[u32]) -> bool {
    let h0 = header[0];
    let kind = (h0 >> 24) & 0x1F;
    let at = if kind == 0x0A {
        header[2]
    } else if four_dw(h0) {
        header[3]
    } else {
        header.get(2).copied().unwrap_or(0)
    };
    at & 4 != 0
}

/// Lays out header and payload dwords in beats.
pub fn to_beats(header: &[u32], data: &[u32]) -> Vec<Beat> {
    let mut slots: Vec<Option<u32>> = header.iter().map(|d| Some(*d)).collect();
    if !data.is_empty() {
        if header.len() == 3 && !odd_dword(header) {
            slots.push(None);
        }
        if header.len() == 4 && odd_dword(header) {
            slots.push(None);
        }
        slots.extend(data.iter().map(|d| Some(*d)));
    }
    let n = slots.len().div_ceil(4);
    (0..n)
        .map(|b| {
            let mut data = 0u128;
            for s in 0..4 {
                if let Some(Some(d)) = slots.get(4 * b + s) {
                    data |= (*d as u128) << (32 * s);
                }
            }
            let used = slots.len() - 4 * b;
            Beat {
                data,
                sop: b == 0,
                eop: b == n - 1,
                empty: b == n - 1 && used <= 2,
            }
        })
        .collect()
}

/// Reads a TLP's header and payload dwords back from its beats.
pub fn from_beats(beats: &[Beat]) -> (Vec<u32>, Vec<u32>) {
    let dw = |i: usize| (beats[i / 4].data >> (32 * (i % 4))) as u32;
    let h0 = dw(0);
    let hlen = if four_dw(h0) { 4 } else { 3 };
    let header: Vec<u32> = (0..hlen).map(dw).collect();
    if !has_data(h0) {
        return (header, vec![]);
    }
    let len = match h0 & 0x3FF {
        0 => 1024,
        n => n as usize,
    };
    let skip = (hlen == 3 && !odd_dword(&header)) || (hlen == 4 && odd_dword(&header));
    let start = hlen + skip as usize;
    let total = 4 * beats.len();
    let data = (start..(start + len).min(total)).map(dw).collect();
    (header, data)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one_dword_write(addr: u64) -> Tlp {
        Tlp::MemWrite {
            requester: 0x0100,
            tag: 7,
            addr,
            first_be: 0xF,
            last_be: 0,
            data: vec![0xDEAD_BEEF],
        }
    }

    #[test]
    fn three_dword_writes_put_odd_dwords_in_the_header_beat() {
        let odd = one_dword_write(0x1004);
        let b = odd.to_beats();
        assert_eq!(b.len(), 1);
        assert_eq!((b[0].data >> 96) as u32, 0xDEAD_BEEF);
        assert!(b[0].sop && b[0].eop && !b[0].empty);
        let even = one_dword_write(0x1008);
        let b = even.to_beats();
        assert_eq!(b.len(), 2);
        assert_eq!(b[1].data as u32, 0xDEAD_BEEF);
        assert!(b[1].eop && b[1].empty);
        for t in [odd, even] {
            let (h, d) = from_beats(&t.to_beats());
            assert_eq!(Tlp::decode(&h, &d), t);
        }
    }

    #[test]
    fn every_kind_round_trips_through_beats() {
        let tlps = [
            Tlp::MemRead {
                requester: 1,
                tag: 2,
                addr: 0x1_2345_6788,
                len_dw: 1,
                first_be: 0xF,
                last_be: 0,
            },
            Tlp::MemWrite {
                requester: 3,
                tag: 4,
                addr: 0x2_0000_0004,
                first_be: 0xF,
                last_be: 0xF,
                data: (0..9).collect(),
            },
            Tlp::Completion {
                completer: 0x0300,
                status: CplStatus::Success,
                byte_count: 4,
                requester: 0,
                tag: 9,
                lower_addr: 0x44,
                data: vec![0x1234_5678],
            },
            Tlp::Completion {
                completer: 0x0300,
                status: CplStatus::Unsupported,
                byte_count: 4,
                requester: 0,
                tag: 10,
                lower_addr: 0,
                data: vec![],
            },
        ];
        for t in tlps {
            let (h, d) = from_beats(&t.to_beats());
            assert_eq!(Tlp::decode(&h, &d), t);
        }
    }
}

//! The card's DMA write-request interface as host memory sees it: beats of 128 bits, little-endian
//! lanes with byte enables, `sop` carrying the request's address and length, `eop` on its last
//! beat (see `nanet_hdl::rx::dma_writer`). [`WriteRequestSink`] assembles the beats into [`DmaWrite`]s,
//! checks the protocol on every beat, and hands each request to a [`MemoryPort`], which checks
//! where it lands.

use thiserror::Error;

use crate::world::host_mem::{DmaWrite, MemoryPort};

/// A payload as the DMA side takes it: 128-bit words in network order (first byte in bits
/// 127:120), the last one zero-padded.
pub fn payload_words(payload: &[u8]) -> Vec<u128> {
    payload
        .chunks(16)
        .map(|c| {
            let mut b = [0u8; 16];
            b[..c.len()].copy_from_slice(c);
            u128::from_be_bytes(b)
        })
        .collect()
}

/// A datagram's payload words as the port's packer makes them (`nanet_hdl::port::rx_packer`):
/// [`payload_words`], and for an empty payload one placeholder word of zeros, which carries the
/// datagram's `last` and `error`.
pub fn datagram_words(payload: &[u8]) -> Vec<u128> {
    if payload.is_empty() {
        vec![0]
    } else {
        payload_words(payload)
    }
}

/// One beat on the write-request interface.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WriteBeat {
    pub sop: bool,
    pub eop: bool,
    pub addr: u64,
    pub len: u16,
    pub data: u128,
    pub be: u16,
}

/// A broken write request (a gateware bug, never an input error).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ProtocolError {
    #[error("beat without sop outside a request (addr {addr:#x})")]
    NoSop { addr: u64 },
    #[error("sop inside the request at {open:#x}")]
    SopInRequest { open: u64 },
    #[error("request at {addr:#x}: zero length")]
    ZeroLength { addr: u64 },
    #[error("request at {addr:#x}: beat address {beat:#x}, expected {expected:#x}")]
    BeatAddress { addr: u64, beat: u64, expected: u64 },
    #[error("request at {addr:#x}: byte enables {be:#06x} not contiguous from lane {lane}")]
    ByteEnables { addr: u64, be: u16, lane: u64 },
    #[error("request at {addr:#x}: {got} bytes, length says {len}")]
    Length { addr: u64, got: usize, len: u16 },
}

/// Collects beats into requests for a [`MemoryPort`].
#[derive(Default)]
pub struct WriteRequestSink {
    open: Option<(DmaWrite, u16)>,
    pub errors: Vec<ProtocolError>,
}

impl WriteRequestSink {
    /// Takes a beat the interface transferred (valid and ready) in this cycle.
    pub fn beat(&mut self, b: &WriteBeat, port: &mut MemoryPort) {
        port.accept_beat();
        if let Err(e) = self.check(b, port) {
            self.errors.push(e);
            self.open = None;
        }
    }

    fn check(&mut self, b: &WriteBeat, port: &mut MemoryPort) -> Result<(), ProtocolError> {
        match (&self.open, b.sop) {
            (None, false) => return Err(ProtocolError::NoSop { addr: b.addr }),
            (Some((w, _)), true) => return Err(ProtocolError::SopInRequest { open: w.addr }),
            (None, true) => {
                if b.len == 0 {
                    return Err(ProtocolError::ZeroLength { addr: b.addr });
                }
                self.open = Some((
                    DmaWrite {
                        addr: b.addr,
                        data: vec![],
                        strobes: vec![],
                    },
                    b.len,
                ));
            }
            (Some(_), false) => {}
        }
        let (w, len) = self.open.as_mut().expect("opened above");
        let expected = w.addr + w.data.len() as u64;
        if b.addr != expected {
            return Err(ProtocolError::BeatAddress {
                addr: w.addr,
                beat: b.addr,
                expected,
            });
        }
        // The enabled lanes run from the address's lane up, without holes.
        let lane = b.addr % 16;
        let run = (b.be >> lane).trailing_ones() as u64;
        if run == 0 || (b.be as u32) >> (lane + run) != 0 || b.be & ((1 << lane) - 1) != 0 {
            return Err(ProtocolError::ByteEnables {
                addr: w.addr,
                be: b.be,
                lane,
            });
        }
        let bytes = b.data.to_le_bytes();
        for l in lane..lane + run {
            w.data.push(bytes[l as usize]);
            w.strobes.push(true);
        }
        // Only the last beat of a request may end before lane 15.
        if !b.eop && lane + run != 16 {
            return Err(ProtocolError::ByteEnables {
                addr: w.addr,
                be: b.be,
                lane,
            });
        }
        if b.eop {
            let (w, len) = self.open.take().expect("open");
            if w.data.len() != len as usize {
                return Err(ProtocolError::Length {
                    addr: w.addr,
                    got: w.data.len(),
                    len,
                });
            }
            port.accept_write(w);
        } else if w.data.len() > *len as usize {
            return Err(ProtocolError::Length {
                addr: w.addr,
                got: w.data.len(),
                len: *len,
            });
        }
        Ok(())
    }

    /// Panics with the first protocol error, if any.
    pub fn assert_clean(&self) {
        if let Some(e) = self.errors.first() {
            panic!("write requests: {e} ({} errors in all)", self.errors.len());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::world::host_mem::MemoryPreset;

    fn port() -> MemoryPort {
        let mut p = MemoryPort::new(MemoryPreset::ideal(), 0.0, 1);
        p.memory.register(0x1000, 0x1000, "page").unwrap();
        p
    }

    #[test]
    fn a_request_across_beats_lands_byte_exact() {
        let mut p = port();
        let mut s = WriteRequestSink::default();
        // 20 bytes at 0x100C: lanes 12..15, then 16 bytes.
        let mut d0 = [0u8; 16];
        d0[12..].copy_from_slice(&[1, 2, 3, 4]);
        let d1: [u8; 16] = core::array::from_fn(|i| 5 + i as u8);
        s.beat(
            &WriteBeat {
                sop: true,
                eop: false,
                addr: 0x100C,
                len: 20,
                data: u128::from_le_bytes(d0),
                be: 0xF000,
            },
            &mut p,
        );
        s.beat(
            &WriteBeat {
                sop: false,
                eop: true,
                addr: 0x1010,
                len: 0,
                data: u128::from_le_bytes(d1),
                be: 0xFFFF,
            },
            &mut p,
        );
        s.assert_clean();
        for _ in 0..p.preset.latency_cycles + 1 {
            p.tick();
        }
        let expected: Vec<u8> = (1..=20).collect();
        assert_eq!(p.memory.read(0x100C, 20), expected);
    }

    #[test]
    fn holes_in_byte_enables_and_wrong_lengths_are_reported() {
        let mut p = port();
        let mut s = WriteRequestSink::default();
        let beat = WriteBeat {
            sop: true,
            eop: true,
            addr: 0x1000,
            len: 16,
            data: 0,
            be: 0xFF0F,
        };
        s.beat(&beat, &mut p);
        assert!(matches!(s.errors[0], ProtocolError::ByteEnables { .. }));
        s.beat(&WriteBeat { be: 0x00FF, ..beat }, &mut p);
        assert!(matches!(s.errors[1], ProtocolError::Length { got: 8, .. }));
        s.beat(&WriteBeat { sop: false, ..beat }, &mut p);
        assert!(matches!(s.errors[2], ProtocolError::NoSop { .. }));
    }
}

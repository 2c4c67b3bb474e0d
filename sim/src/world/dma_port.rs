//! The card's DMA write-request interface as host memory sees it: beats of 128 or 256 bits, little-endian
//! lanes, `sop` carrying the request's address and length, `eop` on its last beat; a beat's bytes
//! run from its address's lane to the last lane or the request's last byte (see
//! `nanet_hdl::pcie::write_request`). [`WriteRequestSink`] assembles the beats into [`DmaWrite`]s,
//! checks the protocol on every beat, and hands each request to a [`MemoryPort`], which checks
//! where it lands.

use thiserror::Error;

use crate::world::host_mem::{DmaWrite, MemoryPort};
use crate::world::tlp::BeatData;

/// A payload as the DMA side takes it: beats in network order (first byte in the top byte: bits
/// 127:120 of a `u128`), the last one zero-padded.
pub fn payload_words<T: BeatData>(payload: &[u8]) -> Vec<T> {
    payload
        .chunks(T::VARIANT.beat_bytes())
        .map(T::from_network_bytes)
        .collect()
}

/// A datagram's payload words as the port's packer makes them (`nanet_hdl::port::rx_packer`):
/// [`payload_words`], and for an empty payload one placeholder word of zeros, which carries the
/// datagram's `last` and `error`.
pub fn datagram_words<T: BeatData + Default>(payload: &[u8]) -> Vec<T> {
    if payload.is_empty() {
        vec![T::default()]
    } else {
        payload_words(payload)
    }
}

/// One beat on the write-request interface; `T` its data (`u128` at 128 bits, `[u64; 4]` at
/// 256: [`crate::world::tlp::BeatData`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WriteBeat<T = u128> {
    pub sop: bool,
    pub eop: bool,
    pub addr: u64,
    pub len: u16,
    pub data: T,
}

/// A broken write request (a gateware bug, never an input error).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ProtocolError {
    #[error("beat without sop outside a request (addr {addr:#x})")]
    NoSop { addr: u64 },
    #[error("sop inside the request at {open:#x}")]
    SopInRequest { open: u64 },
    #[error("request at {addr:#x}: {len} bytes (1 to 256)")]
    BadLength { addr: u64, len: u16 },
    #[error("request at {addr:#x}: beat address {beat:#x}, expected {expected:#x}")]
    BeatAddress { addr: u64, beat: u64, expected: u64 },
    #[error("request at {addr:#x} ({len} bytes): {got} bytes at eop")]
    EarlyEop { addr: u64, got: usize, len: u16 },
    #[error("request at {addr:#x} ({len} bytes): its last byte at {last:#x} without eop")]
    NoEop { addr: u64, last: u64, len: u16 },
}

/// Collects beats into requests for a [`MemoryPort`].
#[derive(Default)]
pub struct WriteRequestSink {
    open: Option<(DmaWrite, u16)>,
    pub errors: Vec<ProtocolError>,
}

impl WriteRequestSink {
    /// Takes a beat the interface transferred (valid and ready) in this cycle.
    pub fn beat<T: BeatData>(&mut self, b: &WriteBeat<T>, port: &mut MemoryPort) {
        assert_eq!(
            port.beat_bytes,
            T::VARIANT.beat_bytes(),
            "the memory port charges beats of another width (MemoryPort::for_variant)"
        );
        port.accept_beat();
        if let Err(e) = self.check(b, port) {
            self.errors.push(e);
            self.open = None;
        }
    }

    fn check<T: BeatData>(
        &mut self,
        b: &WriteBeat<T>,
        port: &mut MemoryPort,
    ) -> Result<(), ProtocolError> {
        match (&self.open, b.sop) {
            (None, false) => return Err(ProtocolError::NoSop { addr: b.addr }),
            (Some((w, _)), true) => return Err(ProtocolError::SopInRequest { open: w.addr }),
            (None, true) => {
                if b.len == 0 || b.len > 256 {
                    return Err(ProtocolError::BadLength {
                        addr: b.addr,
                        len: b.len,
                    });
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
        // The beat's bytes: from the address's lane to the last lane, or to the request's last
        // byte, which only its last beat carries.
        let lanes = T::VARIANT.beat_bytes();
        let lane = (b.addr % lanes as u64) as usize;
        let left = *len as usize - w.data.len();
        let run = (lanes - lane).min(left);
        let bytes = b.data.to_le_bytes();
        w.data.extend_from_slice(&bytes[lane..lane + run]);
        w.strobes.extend(std::iter::repeat_n(true, run));
        match (b.eop, run == left) {
            (true, true) => {
                let (w, _) = self.open.take().expect("open");
                port.accept_write(w);
            }
            (true, false) => {
                let (w, len) = self.open.take().expect("open");
                return Err(ProtocolError::EarlyEop {
                    addr: w.addr,
                    got: w.data.len(),
                    len,
                });
            }
            (false, true) => {
                return Err(ProtocolError::NoEop {
                    addr: w.addr,
                    last: b.addr + run as u64 - 1,
                    len: *len,
                })
            }
            (false, false) => {}
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
    fn beats_of_256_bits_carry_32_lanes() {
        let mut p = port().for_variant(nanet_contract::pcie::PcieVariant::Gen3x8);
        let mut s = WriteRequestSink::default();
        // 40 bytes at 0x1018: lanes 24..31, then 32 bytes.
        let payload: Vec<u8> = (1..=40).collect();
        let mut d0 = [0u8; 32];
        d0[24..].copy_from_slice(&payload[..8]);
        for (k, (addr, data)) in [(0x1018, &d0[..]), (0x1020, &payload[8..])]
            .into_iter()
            .enumerate()
        {
            s.beat(
                &WriteBeat {
                    sop: k == 0,
                    eop: k == 1,
                    addr,
                    len: if k == 0 { 40 } else { 0 },
                    data: <[u64; 4]>::from_le_bytes(data),
                },
                &mut p,
            );
        }
        s.assert_clean();
        for _ in 0..p.preset.latency_cycles + 1 {
            p.tick();
        }
        assert_eq!(p.memory.read(0x1018, 40), payload);
    }

    #[test]
    fn early_and_missing_ends_are_reported() {
        let mut p = port();
        let mut s = WriteRequestSink::default();
        // 20 bytes from lane 8: 8 in the first beat, so eop there ends it short.
        let beat = WriteBeat {
            sop: true,
            eop: true,
            addr: 0x1008,
            len: 20,
            data: 0,
        };
        s.beat(&beat, &mut p);
        assert!(matches!(
            s.errors[0],
            ProtocolError::EarlyEop { got: 8, .. }
        ));
        // 8 bytes from lane 8 end in the first beat: no eop there is an error.
        s.beat(
            &WriteBeat {
                eop: false,
                len: 8,
                ..beat
            },
            &mut p,
        );
        assert!(matches!(
            s.errors[1],
            ProtocolError::NoEop { last: 0x100F, .. }
        ));
        s.beat(&WriteBeat { sop: false, ..beat }, &mut p);
        assert!(matches!(s.errors[2], ProtocolError::NoSop { .. }));
        s.beat(&WriteBeat { len: 0, ..beat }, &mut p);
        assert!(matches!(
            s.errors[3],
            ProtocolError::BadLength { len: 0, .. }
        ));
        s.beat(&WriteBeat { len: 257, ..beat }, &mut p);
        assert!(matches!(
            s.errors[4],
            ProtocolError::BadLength { len: 257, .. }
        ));
        // A request whose eop comes with its last byte lands whole.
        let data = u128::from_le_bytes(core::array::from_fn(|i| i as u8));
        s.beat(
            &WriteBeat {
                len: 8,
                data,
                ..beat
            },
            &mut p,
        );
        assert_eq!(s.errors.len(), 5);
        for _ in 0..p.preset.latency_cycles + 1 {
            p.tick();
        }
        assert_eq!(p.memory.read(0x1008, 8), (8..16).collect::<Vec<u8>>());
    }
}

//! Sending UDP datagrams through the card's transmit ring (`nanet_contract::tx`): the library
//! keeps a ring of descriptors and a 2 KiB payload slot per descriptor in DMA memory; `send`
//! copies the payload into the next free slot, writes its descriptor and rings the doorbell. A
//! slot is free again once the card's consumer index (`TxReg::Head`, read from BAR0 only when
//! the ring looks full) has passed it: the card has then read the payload.

use nanet_contract::bar0;
use nanet_contract::tx::{TxDescriptor, TxReg, TX_DESC_BYTES, TX_MAX_PAYLOAD};

use crate::device::Device;
use crate::error::{Error, Result};
use crate::tx_ring::{SLOT_BYTES, TX_RING_LOG2};

/// How long `send` waits for a slot, in the card's own time, before it reports the card stuck.
const SEND_TIMEOUT_US: u64 = 2_000_000;

/// Where a datagram goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SendTo {
    pub dst_ip: [u8; 4],
    pub dst_port: u16,
    pub src_port: u16,
}

impl Device {
    /// Sends `payload` (1 to 1472 bytes) as one UDP datagram from port `port`: the card builds
    /// the headers from the port's addresses and resolves the next hop by ARP. Returns once the
    /// datagram is queued (the payload is copied); waits while the ring is full.
    pub fn send(&self, port: u8, to: SendTo, payload: &[u8]) -> Result<()> {
        self.check_port(port)?;
        if payload.is_empty() || payload.len() > TX_MAX_PAYLOAD {
            return Err(Error::InvalidSend(format!(
                "a payload of {} bytes: a datagram carries 1 to {TX_MAX_PAYLOAD}",
                payload.len()
            )));
        }
        let backend = &self.inner.backend;
        let mut q = self.inner.tx.lock().unwrap();
        let n = 1u16 << TX_RING_LOG2;
        if q.tail.wrapping_sub(q.head) >= n {
            self.wait_card_until("a free slot in the transmit ring", SEND_TIMEOUT_US, || {
                let head = backend.read32(bar0::tx_engine(TxReg::Head.word()))?;
                if head == u32::MAX {
                    // A 16-bit index: all ones is a failed read, never a head.
                    return Err(Error::Card(format!(
                        "{}: the transmit ring's head reads all ones (the read failed, or the \
                         card is gone)",
                        backend.describe()
                    )));
                }
                q.head = head as u16;
                Ok(q.tail.wrapping_sub(q.head) < n)
            })?;
        }
        let slot = (q.tail % n) as usize;
        let buffer = q.slots.iova() + (slot * SLOT_BYTES) as u64;
        q.slots.store(slot * SLOT_BYTES, payload);
        let d = TxDescriptor {
            buffer,
            len: payload.len() as u16,
            port,
            flags: 0,
            dst_ip: to.dst_ip,
            src_port: to.src_port,
            dst_port: to.dst_port,
        };
        q.ring.store(slot * TX_DESC_BYTES, &d.encode());
        q.tail = q.tail.wrapping_add(1);
        // The descriptor and payload are in memory before the card hears of them.
        crate::barrier::stores_before_doorbell();
        backend.write32(bar0::tx_engine(TxReg::Tail.word()), q.tail as u32)
    }

    /// Datagrams the card has taken from the ring so far (its consumer index), and those the
    /// library has posted.
    pub fn tx_progress(&self) -> Result<(u16, u16)> {
        let mut q = self.inner.tx.lock().unwrap();
        q.head = self
            .inner
            .backend
            .read32(bar0::tx_engine(TxReg::Head.word()))? as u16;
        Ok((q.head, q.tail))
    }

    /// The transmit engine's counters.
    pub fn tx_counters(&self) -> Result<Vec<(&'static str, u32)>> {
        [
            TxReg::Sent,
            TxReg::BadDescriptor,
            TxReg::ReadError,
            TxReg::BadTail,
            TxReg::Discarded,
        ]
        .iter()
        .map(|r| Ok((r.name(), self.read_register(bar0::tx_engine(r.word()))?)))
        .collect()
    }
}

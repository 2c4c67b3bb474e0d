//! Sending UDP datagrams through the card's transmit ring (`nanet_contract::tx`): the library
//! keeps a ring of descriptors and a 2 KiB payload slot per descriptor in DMA memory; `send`
//! copies the payload into the next free slot, writes its descriptor and rings the doorbell
//! (`send_batch`: one doorbell for many datagrams). A slot is free again once the card's
//! consumer index (`TxReg::Head`, read from BAR0 only when the ring looks full) has passed it:
//! the card has then read the payload.

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

/// One datagram of a [`Device::send_batch`].
#[derive(Clone, Copy, Debug)]
pub struct Datagram<'a> {
    /// The port it leaves from.
    pub port: u8,
    pub to: SendTo,
    /// 1 to 1472 bytes.
    pub payload: &'a [u8],
}

impl Device {
    /// Sends `payload` (1 to 1472 bytes) as one UDP datagram from port `port`: the card builds
    /// the headers from the port's addresses and resolves the next hop by ARP. Returns once the
    /// datagram is queued (the payload is copied); waits while the ring is full.
    pub fn send(&self, port: u8, to: SendTo, payload: &[u8]) -> Result<()> {
        self.send_batch(&[Datagram { port, to, payload }])
    }

    /// Sends the datagrams in order, as [`Device::send`] each, with one doorbell for the batch
    /// (and one before each wait for a free slot): a doorbell is a register write the card
    /// takes cycles over, so small datagrams go out faster in batches. Every datagram is checked
    /// before any is queued: one bad datagram refuses the whole batch. A card error, or a wait
    /// for a slot that times out, may come after some were queued (and rung for): the transmit
    /// ring's progress (`tx_progress`) says how many.
    pub fn send_batch(&self, batch: &[Datagram<'_>]) -> Result<()> {
        for (i, d) in batch.iter().enumerate() {
            self.check_port(d.port)?;
            if d.payload.is_empty() || d.payload.len() > TX_MAX_PAYLOAD {
                let which = if batch.len() > 1 {
                    format!("datagram {i} of the batch of {}: ", batch.len())
                } else {
                    String::new()
                };
                return Err(Error::InvalidSend(format!(
                    "{which}a payload of {} bytes: a datagram carries 1 to {TX_MAX_PAYLOAD}",
                    d.payload.len()
                )));
            }
        }
        let backend = &self.inner.backend;
        let mut q = self.inner.tx.lock().unwrap();
        let n = 1u16 << TX_RING_LOG2;
        // The tail the card has been told of.
        let mut told = q.tail;
        let doorbell = |tail: u16| {
            // The descriptors and payloads are in memory before the card hears of them.
            crate::barrier::stores_before_doorbell();
            backend.write32(bar0::tx_engine(TxReg::Tail.word()), tail as u32)
        };
        for d in batch {
            if q.tail.wrapping_sub(q.head) >= n {
                if told != q.tail {
                    told = q.tail;
                    doorbell(told)?;
                }
                self.wait_card_until("a free slot in the transmit ring", SEND_TIMEOUT_US, || {
                    let head = backend.read32(bar0::tx_engine(TxReg::Head.word()))?;
                    if head == u32::MAX {
                        // A 16-bit index: all ones is a failed read, never a head.
                        return Err(Error::Card(format!(
                            "{}: the transmit ring's head reads all ones (the read failed, or \
                             the card is gone)",
                            backend.describe()
                        )));
                    }
                    q.head = head as u16;
                    Ok(q.tail.wrapping_sub(q.head) < n)
                })?;
            }
            let slot = (q.tail % n) as usize;
            let buffer = q.slots.iova() + (slot * SLOT_BYTES) as u64;
            q.slots.store(slot * SLOT_BYTES, d.payload);
            let desc = TxDescriptor {
                buffer,
                len: d.payload.len() as u16,
                port: d.port,
                flags: 0,
                dst_ip: d.to.dst_ip,
                src_port: d.to.src_port,
                dst_port: d.to.dst_port,
            };
            q.ring.store(slot * TX_DESC_BYTES, &desc.encode());
            q.tail = q.tail.wrapping_add(1);
        }
        if told != q.tail {
            doorbell(q.tail)?;
        }
        Ok(())
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

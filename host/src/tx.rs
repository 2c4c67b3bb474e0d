//! Sending UDP datagrams through the card's transmit rings (`nanet_contract::tx`), one per port:
//! ring `p` sends from port `p`, and the rings run independently on the card. The library keeps
//! each ring's descriptors and a 2 KiB payload slot per descriptor in DMA memory; `send` copies
//! the payload into the next free slot of its port's ring, writes its descriptor and rings that
//! ring's doorbell (`send_batch`: one doorbell per ring for many datagrams). A slot is free again
//! once the ring's consumer index (`TxReg::Head`, read from BAR0 only when the ring looks full)
//! has passed it: the card has then read the payload.

use nanet_contract::bar0;
use nanet_contract::tx::{TxDescriptor, TxReg, TX_DESC_BYTES, TX_MAX_PAYLOAD};

use crate::device::Device;
use crate::error::{Error, Result};
use crate::tx_ring::{SLOT_BYTES, TX_RING_LOG2};

/// How long `send` waits for a slot, in the card's own time, before it reports the card stuck.
const SEND_TIMEOUT_US: u64 = 2_000_000;

/// The counters of a transmit ring.
const COUNTERS: [TxReg; 5] = [
    TxReg::Sent,
    TxReg::BadDescriptor,
    TxReg::ReadError,
    TxReg::BadTail,
    TxReg::Discarded,
];

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
    /// The port it leaves from (through that port's transmit ring).
    pub port: u8,
    pub to: SendTo,
    /// 1 to 1472 bytes.
    pub payload: &'a [u8],
}

impl Device {
    /// Sends `payload` (1 to 1472 bytes) as one UDP datagram from port `port`: the card builds
    /// the headers from the port's addresses and resolves the next hop by ARP. Returns once the
    /// datagram is queued in the port's transmit ring (the payload is copied); waits while that
    /// ring is full.
    pub fn send(&self, port: u8, to: SendTo, payload: &[u8]) -> Result<()> {
        self.send_batch(&[Datagram { port, to, payload }])
    }

    /// Sends the datagrams as [`Device::send`] each, each into its port's ring, in order within
    /// a port, with one doorbell per ring the batch touches (and one before each wait for a free
    /// slot): a doorbell is a register write the card takes cycles over, so small datagrams go
    /// out faster in batches. The rings are independent: datagrams of different ports keep no
    /// order between them. Every datagram is checked before any is queued: one bad datagram
    /// refuses the whole batch. The rings are filled in port order; a card error, or a wait for
    /// a slot that times out, may come after some were queued (and rung for): each ring's
    /// progress (`tx_progress(port)`) says how many.
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
        // One pass over the batch per port (4 at most): cheaper than sorting or allocating.
        for port in 0..self.ports() as u8 {
            if batch.iter().any(|d| d.port == port) {
                self.post(port, batch)?;
            }
        }
        Ok(())
    }

    /// Posts the datagrams of `batch` that leave from `port` into its ring, in order, and rings
    /// the ring's doorbell once at the end, and once before each wait for a free slot (so that
    /// the card has what was posted).
    fn post(&self, port: u8, batch: &[Datagram<'_>]) -> Result<()> {
        let backend = &self.inner.backend;
        let mut q = self.inner.tx[port as usize].lock().unwrap();
        let (tail_reg, head_reg) = (q.register(TxReg::Tail), q.register(TxReg::Head));
        let n = 1u16 << TX_RING_LOG2;
        // The tail the card has been told of.
        let mut told = q.tail;
        let doorbell = |tail: u16| {
            // The descriptors and payloads are in memory before the card hears of them.
            crate::barrier::stores_before_doorbell();
            backend.write32(tail_reg, tail as u32)
        };
        for d in batch.iter().filter(|d| d.port == port) {
            if q.tail.wrapping_sub(q.head) >= n {
                if told != q.tail {
                    told = q.tail;
                    doorbell(told)?;
                }
                let what = format!("a free slot in transmit ring {port}");
                self.wait_card_until(&what, SEND_TIMEOUT_US, || {
                    let head = backend.read32(head_reg)?;
                    if head == u32::MAX {
                        // A 16-bit index: all ones is a failed read, never a head.
                        return Err(Error::Card(format!(
                            "{}: transmit ring {port}'s head reads all ones (the read failed, or \
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
                port,
                flags: 0,
                dst_ip: d.to.dst_ip,
                src_port: d.to.src_port,
                dst_port: d.to.dst_port,
            };
            q.descriptors.store(slot * TX_DESC_BYTES, &desc.encode());
            q.tail = q.tail.wrapping_add(1);
        }
        if told != q.tail {
            doorbell(q.tail)?;
        }
        Ok(())
    }

    /// Port `port`'s transmit ring: datagrams the card has taken from it so far (its consumer
    /// index), and those the library has posted (both 16 bits, wrapping).
    pub fn tx_progress(&self, port: u8) -> Result<(u16, u16)> {
        self.check_port(port)?;
        let mut q = self.inner.tx[port as usize].lock().unwrap();
        q.head = self.inner.backend.read32(q.register(TxReg::Head))? as u16;
        Ok((q.head, q.tail))
    }

    /// The transmit rings' counters, each summed over the card's rings (wrapping, as the
    /// counters do); one ring's: [`Device::tx_ring_counters`].
    pub fn tx_counters(&self) -> Result<Vec<(&'static str, u32)>> {
        let mut sum: Vec<(&'static str, u32)> = COUNTERS.iter().map(|r| (r.name(), 0)).collect();
        for port in 0..self.ports() as u8 {
            for (total, (_, v)) in sum.iter_mut().zip(self.tx_ring_counters(port)?) {
                total.1 = total.1.wrapping_add(v);
            }
        }
        Ok(sum)
    }

    /// The counters of port `port`'s transmit ring.
    pub fn tx_ring_counters(&self, port: u8) -> Result<Vec<(&'static str, u32)>> {
        self.check_port(port)?;
        // Without the ring's lock: a sender waiting for a slot holds it.
        COUNTERS
            .iter()
            .map(|r| Ok((r.name(), self.read_register(bar0::tx_ring(port, r.word()))?)))
            .collect()
    }
}

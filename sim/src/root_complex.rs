//! The PCIe root complex as the card's Hard IP sees it, at TLP level: host memory behind it (the
//! memory model of `host_mem.rs`, with its bandwidth, latency and registered regions), and the
//! host's register accesses to BAR0 as memory reads and writes with their completions.
//!
//! Cycle by cycle, on the card's 128-bit Avalon-ST boundary (`tlp.rs` for the layout):
//! - receive side (to the card): [`RootComplex::drive_rx`] offers the next beat of the host's
//!   requests only where the card's `rx_ready` was high two cycles earlier (the Hard IP's ready
//!   latency);
//! - transmit side (from the card): [`RootComplex::tx_ready`] says whether the link takes a beat
//!   (the memory model's credit), and [`RootComplex::take_tx`] collects the card's beats; each
//!   whole TLP is checked and carried out: memory writes go to host memory (refused and recorded
//!   outside every region, over the max payload size or across 4 KiB), completions answer the
//!   host's reads by tag, anything else is a violation.

use std::collections::{HashMap, VecDeque};

use crate::host_mem::{DmaWrite, MemoryPort};
use crate::tlp::{from_beats, Beat, CplStatus, Tlp};

/// The host's requester ID.
pub const HOST_ID: u16 = 0x0000;

pub struct RootComplex {
    pub memory: MemoryPort,
    /// Where the card's BAR0 is on the bus.
    pub bar0: u64,
    /// Beats of the host's requests to the card, with the BAR they hit (one-hot).
    rx_queue: VecDeque<(Beat, u8)>,
    /// The card's `rx_ready` one and two cycles ago.
    rx_ready_hist: [bool; 2],
    /// `tx_ready` given one and two cycles ago.
    tx_ready_hist: [bool; 2],
    tx_partial: Vec<Beat>,
    next_tag: u8,
    /// Host reads waiting for their completion: tag -> BAR0 offset.
    pending_reads: HashMap<u8, u64>,
    /// Completed host reads: (tag, value or the completion status).
    pub completions: VecDeque<(u8, Result<u32, CplStatus>)>,
    /// What the card did wrong, in order.
    pub violations: Vec<String>,
}

impl RootComplex {
    pub fn new(memory: MemoryPort, bar0: u64) -> Self {
        Self {
            memory,
            bar0,
            rx_queue: VecDeque::new(),
            rx_ready_hist: [false; 2],
            tx_ready_hist: [false; 2],
            tx_partial: vec![],
            next_tag: 0,
            pending_reads: HashMap::new(),
            completions: VecDeque::new(),
            violations: vec![],
        }
    }

    fn queue(&mut self, t: &Tlp) {
        self.rx_queue
            .extend(t.to_beats().into_iter().map(|b| (b, 1u8)));
    }

    /// Queues a host write of one register (dword) at BAR0 offset `offset`.
    pub fn bar0_write(&mut self, offset: u64, value: u32) {
        let t = Tlp::MemWrite {
            requester: HOST_ID,
            tag: 0,
            addr: self.bar0 + offset,
            first_be: 0xF,
            last_be: 0,
            data: vec![value],
        };
        self.queue(&t);
    }

    /// Queues a host read of one register at BAR0 offset `offset`; returns its tag (the answer
    /// arrives in [`RootComplex::completions`]).
    pub fn bar0_read(&mut self, offset: u64) -> u8 {
        let tag = self.next_tag;
        self.next_tag = self.next_tag.wrapping_add(1);
        let t = Tlp::MemRead {
            requester: HOST_ID,
            tag,
            addr: self.bar0 + offset,
            len_dw: 1,
            first_be: 0xF,
            last_be: 0,
        };
        self.queue(&t);
        self.pending_reads.insert(tag, offset);
        tag
    }

    /// Host requests not yet handed to the card, in beats.
    pub fn rx_backlog(&self) -> usize {
        self.rx_queue.len()
    }

    /// The beat (and BAR hit) to present to the card in this cycle, given its `rx_ready` in this
    /// cycle; a beat is offered only where `rx_ready` was high two cycles earlier, and it moves.
    pub fn drive_rx(&mut self, card_rx_ready: bool) -> Option<(Beat, u8)> {
        let beat = if self.rx_ready_hist[1] {
            self.rx_queue.pop_front()
        } else {
            None
        };
        self.rx_ready_hist = [card_rx_ready, self.rx_ready_hist[0]];
        beat
    }

    /// Whether the link takes a beat from the card two cycles from now (the value for the card's
    /// `tx_ready` in this cycle).
    pub fn tx_ready(&mut self) -> bool {
        let r = self.memory.ready();
        self.tx_ready_hist = [r, self.tx_ready_hist[0]];
        r
    }

    /// The card's transmit beat of this cycle, if it sent one.
    pub fn take_tx(&mut self, beat: Option<Beat>) {
        let Some(b) = beat else {
            if !self.tx_partial.is_empty() && self.tx_ready_hist[1] {
                self.violations
                    .push("a gap inside a TLP on a ready cycle".to_string());
            }
            return;
        };
        if !self.tx_ready_hist[1] {
            self.violations
                .push("a beat without tx_ready two cycles earlier".to_string());
        }
        if b.sop != self.tx_partial.is_empty() {
            self.violations.push(format!(
                "sop {} inside or outside a TLP",
                if b.sop { "set" } else { "missing" }
            ));
        }
        self.memory.accept_beat();
        self.tx_partial.push(b);
        if b.eop {
            let beats = std::mem::take(&mut self.tx_partial);
            let (h, d) = from_beats(&beats);
            self.carry_out(Tlp::decode(&h, &d));
        }
    }

    fn carry_out(&mut self, t: Tlp) {
        match &t {
            Tlp::MemWrite { .. } => {
                let (addr, data, strobes) = t.write_strobes().expect("a memory write");
                self.memory.accept_write(DmaWrite {
                    addr,
                    data,
                    strobes,
                });
            }
            Tlp::Completion {
                tag, status, data, ..
            } => match self.pending_reads.remove(tag) {
                Some(_) => {
                    let r = match (status, data.first()) {
                        (CplStatus::Success, Some(v)) => Ok(*v),
                        (s, _) => Err(*s),
                    };
                    self.completions.push_back((*tag, r));
                }
                None => self.violations.push(format!(
                    "a completion for tag {tag}, which no read is waiting for"
                )),
            },
            other => self
                .violations
                .push(format!("a TLP the root complex does not take: {other:?}")),
        }
    }

    /// Ends a cycle of the memory model.
    pub fn end_cycle(&mut self) {
        self.memory.tick();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host_mem::MemoryPreset;

    fn rc() -> RootComplex {
        let mut m = MemoryPort::new(MemoryPreset::ideal(), 0.0, 1);
        m.memory
            .register(0x1_0000_0000, 0x10000, "buffers")
            .unwrap();
        RootComplex::new(m, 0xF7A0_0000)
    }

    /// Runs the link for two cycles, as a running link would have, so beats may go at once.
    fn warm(rc: &mut RootComplex) {
        for _ in 0..2 {
            rc.tx_ready();
            rc.end_cycle();
        }
    }

    /// Feeds a TLP from the card, beat by beat, with the link always ready.
    fn send(rc: &mut RootComplex, t: &Tlp) {
        for b in t.to_beats() {
            rc.tx_ready();
            rc.take_tx(Some(b));
            rc.end_cycle();
        }
        for _ in 0..4 {
            rc.tx_ready();
            rc.take_tx(None);
            rc.end_cycle();
        }
    }

    #[test]
    fn card_writes_land_in_host_memory_byte_exact() {
        let mut rc = rc();
        warm(&mut rc);
        let t = Tlp::MemWrite {
            requester: 0x0300,
            tag: 0,
            addr: 0x1_0000_0104,
            first_be: 0xC,
            last_be: 0x3,
            data: vec![0x4433_2211, 0x8877_6655, 0xCCBB_AA99],
        };
        send(&mut rc, &t);
        assert!(rc.violations.is_empty(), "{:?}", rc.violations);
        rc.memory.assert_clean();
        assert_eq!(
            rc.memory.memory.read(0x1_0000_0104, 12),
            [0, 0, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xAA, 0, 0]
        );
    }

    #[test]
    fn a_write_outside_the_regions_is_refused_and_a_stray_completion_reported() {
        let mut rc = rc();
        warm(&mut rc);
        let t = Tlp::MemWrite {
            requester: 0x0300,
            tag: 0,
            addr: 0x2_0000_0000,
            first_be: 0xF,
            last_be: 0,
            data: vec![1],
        };
        send(&mut rc, &t);
        assert_eq!(rc.memory.violations.len(), 1);
        let cpl = Tlp::Completion {
            completer: 0x0300,
            status: CplStatus::Success,
            byte_count: 4,
            requester: HOST_ID,
            tag: 9,
            lower_addr: 0,
            data: vec![5],
        };
        send(&mut rc, &cpl);
        assert!(rc.violations[0].contains("tag 9"), "{:?}", rc.violations);
    }

    #[test]
    fn host_reads_go_out_under_the_ready_latency_and_complete_by_tag() {
        let mut rc = rc();
        let tag = rc.bar0_read(0x1004);
        rc.bar0_write(0x2000, 7);
        let mut ready = [false; 2];
        let mut beats = vec![];
        for cycle in 0..40 {
            let r = cycle % 3 != 0;
            if let Some((b, bar)) = rc.drive_rx(r) {
                assert!(ready[1], "beat without rx_ready two cycles earlier");
                assert_eq!(bar, 1);
                beats.push(b);
            }
            ready = [r, ready[0]];
        }
        assert_eq!(rc.rx_backlog(), 0);
        let (h, d) = from_beats(&beats[..1]);
        assert!(matches!(
            Tlp::decode(&h, &d),
            Tlp::MemRead { addr: 0xF7A0_1004, tag: t, .. } if t == tag
        ));
        warm(&mut rc);
        let cpl = Tlp::Completion {
            completer: 0x0300,
            status: CplStatus::Success,
            byte_count: 4,
            requester: HOST_ID,
            tag,
            lower_addr: 4,
            data: vec![0xABCD],
        };
        send(&mut rc, &cpl);
        assert_eq!(rc.completions.pop_front(), Some((tag, Ok(0xABCD))));
        assert!(rc.violations.is_empty(), "{:?}", rc.violations);
    }
}

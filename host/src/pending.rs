//! Records read from the event ring before anyone asked for them: one thread's poll reads the
//! ring up to the record it wants, and parks the others' here, each CLOP in its own bounded queue.
//!
//! Per-CLOP queues keep a CLOP's poll at one look however many records others left behind, and
//! a bound per CLOP keeps a CLOP whose reader stopped from growing the library's memory and every
//! other reader's work without limit: past its bound a CLOP's new records are dropped, counted
//! (`Clop::events_dropped`), and the buffers they reported go back to the card.

use std::collections::VecDeque;

use nanet_contract::rx::CLOPS;

use crate::events::Event;

pub(crate) struct Pending {
    /// Per CLOP: (arrival number, record), oldest first.
    queues: Vec<VecDeque<(u64, Event)>>,
    /// Per CLOP: how many records its queue holds at most.
    limits: [usize; CLOPS],
    /// Records parked in all queues.
    total: usize,
    /// Arrival number of the next record parked (orders records across queues).
    arrivals: u64,
}

impl Pending {
    pub(crate) fn new() -> Self {
        Self {
            queues: (0..CLOPS).map(|_| VecDeque::new()).collect(),
            limits: [0; CLOPS],
            total: 0,
            arrivals: 0,
        }
    }

    /// A CLOP registered: its queue takes up to `limit` records.
    pub(crate) fn open(&mut self, clop: u8, limit: usize) {
        self.clear(clop);
        self.limits[clop as usize] = limit;
    }

    /// Parks `e` for its CLOP; gives it back when the CLOP's queue is full.
    pub(crate) fn push(&mut self, e: Event) -> Result<(), Event> {
        let q = &mut self.queues[e.clop as usize];
        if q.len() >= self.limits[e.clop as usize] {
            return Err(e);
        }
        q.push_back((self.arrivals, e));
        self.arrivals += 1;
        self.total += 1;
        Ok(())
    }

    /// The oldest record of `clop`.
    #[inline]
    pub(crate) fn pop(&mut self, clop: u8) -> Option<Event> {
        let (_, e) = self.queues[clop as usize].pop_front()?;
        self.total -= 1;
        Some(e)
    }

    /// The oldest record of any CLOP (records come out in the order the card wrote them).
    #[inline]
    pub(crate) fn pop_oldest(&mut self) -> Option<Event> {
        if self.total == 0 {
            return None;
        }
        let clop = (0..CLOPS)
            .filter_map(|c| self.queues[c].front().map(|(n, _)| (*n, c)))
            .min()?
            .1;
        self.pop(clop as u8)
    }

    /// Drops every record of `clop` (deregistered): returns them.
    pub(crate) fn clear(&mut self, clop: u8) -> Vec<Event> {
        let q = std::mem::take(&mut self.queues[clop as usize]);
        self.total -= q.len();
        q.into_iter().map(|(_, e)| e).collect()
    }

    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// Records parked for `clop`.
    pub(crate) fn len(&self, clop: u8) -> usize {
        self.queues[clop as usize].len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nanet_contract::events::{EventKind, EventRecord, StageTimes};

    fn event(clop: u8, buffer: u16) -> Event {
        EventRecord {
            phase: true,
            kind: EventKind::BufferFull,
            clop,
            buffer,
            bytes: 16,
            packets: 1,
            first_seq: 0,
            last_seq: 0,
            times: StageTimes::default(),
        }
    }

    #[test]
    fn records_come_out_in_ring_order_and_each_queue_stops_at_its_limit() {
        let mut p = Pending::new();
        p.open(1, 2);
        p.open(5, 8);
        for (clop, buffer) in [(5, 0), (1, 0), (5, 1), (1, 1), (5, 2)] {
            p.push(event(clop, buffer)).unwrap();
        }
        // CLOP 1 is full: its third record is given back, CLOP 5 still takes records.
        assert_eq!(p.push(event(1, 2)).unwrap_err().buffer, 2);
        p.push(event(5, 3)).unwrap();
        assert_eq!(p.pop(1).map(|e| e.buffer), Some(0));
        let order: Vec<_> = std::iter::from_fn(|| p.pop_oldest())
            .map(|e| (e.clop, e.buffer))
            .collect();
        assert_eq!(order, [(5, 0), (5, 1), (1, 1), (5, 2), (5, 3)]);
        assert!(p.is_empty());
        // A CLOP never opened takes nothing.
        assert!(p.push(event(9, 0)).is_err());
    }

    #[test]
    fn clearing_a_clop_leaves_the_others() {
        let mut p = Pending::new();
        p.open(2, 4);
        p.open(3, 4);
        p.push(event(2, 0)).unwrap();
        p.push(event(3, 0)).unwrap();
        assert_eq!(p.clear(2).len(), 1);
        assert_eq!((p.len(2), p.len(3)), (0, 1));
        assert_eq!(p.pop_oldest().map(|e| e.clop), Some(3));
        assert!(p.is_empty());
    }
}

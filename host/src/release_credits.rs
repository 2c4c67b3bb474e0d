//! Flow control of buffer releases without the device lock: the library never has more releases
//! written beyond the card's `releases_taken` than the card's release queue holds (one more would
//! be lost, its buffer never filled again). A release takes a credit here with one
//! compare-and-swap; only when the count says the queue is full does it go the slow way (the
//! device's backlog, a read of `releases_taken`; see `Device::release`).

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering::Relaxed};

use nanet_contract::rx::RELEASE_QUEUE_ENTRIES;

pub(crate) struct ReleaseCredits {
    /// Releases written to the card or about to be (a credit taken), wrapping.
    sent: AtomicU32,
    /// The card's `releases_taken` as last read: stored only under the device's state lock.
    taken: AtomicU32,
    /// Releases wait in the device's backlog: a new one queues behind them.
    backlogged: AtomicBool,
}

impl ReleaseCredits {
    /// `taken`: the card's `releases_taken` now (nothing in its queue is ours).
    pub(crate) fn new(taken: u32) -> Self {
        Self {
            sent: AtomicU32::new(taken),
            taken: AtomicU32::new(taken),
            backlogged: AtomicBool::new(false),
        }
    }

    /// Takes room for one release in the card's queue by the library's count: `true` if there
    /// was room (the caller writes the release), `false` if the count says the queue is full.
    #[inline]
    pub(crate) fn take(&self) -> bool {
        let mut sent = self.sent.load(Relaxed);
        loop {
            let taken = self.taken.load(Relaxed);
            // Signed: the card's count may be ahead (releases another process wrote since the
            // count was read), and then none of ours is queued.
            let queued = sent.wrapping_sub(taken) as i32;
            if queued >= RELEASE_QUEUE_ENTRIES as i32 {
                return false;
            }
            let next = if queued < 0 { taken } else { sent }.wrapping_add(1);
            match self
                .sent
                .compare_exchange_weak(sent, next, Relaxed, Relaxed)
            {
                Ok(_) => return true,
                Err(now) => sent = now,
            }
        }
    }

    /// Gives back a credit [`ReleaseCredits::take`] gave, for a release that was not written
    /// (its register write failed).
    pub(crate) fn give_back(&self) {
        self.sent.fetch_sub(1, Relaxed);
    }

    /// The card's `releases_taken`, just read (under the device's state lock): whether the card
    /// took any since the last reading (so there may be room again).
    pub(crate) fn card_took(&self, taken: u32) -> bool {
        self.taken.swap(taken, Relaxed) != taken
    }

    /// Whether releases wait in the backlog (a hint read without the lock: a release racing
    /// with the backlog's first entry may overtake it, as any two releases of two threads may).
    #[inline]
    pub(crate) fn backlogged(&self) -> bool {
        self.backlogged.load(Relaxed)
    }

    /// Set under the device's state lock as the backlog fills and empties.
    pub(crate) fn set_backlogged(&self, waiting: bool) {
        self.backlogged.store(waiting, Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const Q: u32 = RELEASE_QUEUE_ENTRIES as u32;

    #[test]
    fn credits_run_out_at_the_queue_size_and_come_back_with_what_the_card_took() {
        let c = ReleaseCredits::new(1000);
        assert!((0..Q).all(|_| c.take()));
        assert!(!c.take(), "a release beyond the card's queue");
        assert!(!c.card_took(1000), "the card took nothing");
        assert!(!c.take());
        assert!(c.card_took(1003));
        assert!((0..3).all(|_| c.take()));
        assert!(!c.take());
    }

    #[test]
    fn the_count_wraps_and_a_card_ahead_of_the_library_leaves_the_whole_queue() {
        let c = ReleaseCredits::new(u32::MAX - 4);
        assert!((0..Q).all(|_| c.take()));
        assert!(!c.take());
        // The card's count jumped ahead (a reset, releases of an earlier process).
        assert!(c.card_took(500));
        assert!((0..Q).all(|_| c.take()));
        assert!(!c.take());
    }

    #[test]
    fn a_credit_given_back_can_be_taken_again() {
        let c = ReleaseCredits::new(0);
        assert!((0..Q).all(|_| c.take()));
        c.give_back();
        assert!(c.take());
        assert!(!c.take());
    }

    #[test]
    fn threads_racing_for_credits_take_exactly_the_queue() {
        let c = ReleaseCredits::new(7);
        let won: u32 = std::thread::scope(|s| {
            let hs: Vec<_> = (0..4)
                .map(|_| s.spawn(|| (0..Q).filter(|_| c.take()).count() as u32))
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).sum()
        });
        assert_eq!(won, Q);
    }
}

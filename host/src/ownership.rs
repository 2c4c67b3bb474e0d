//! Who owns each buffer of a registered CLOP, the card or the application, shared by the event
//! reader (the device, which hands closed buffers over) and the application's CLOP handles (which
//! give them back). Kept apart from `clop` and `device` so that neither has to import the other's
//! internals.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

use crate::events::Event;

/// Who may touch a buffer.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Owner {
    /// The card may write it.
    Card,
    /// Reported closed; the application holds it.
    Held,
    /// Held, and lent out as a [`crate::FilledBuffer`].
    Lent,
    /// Held, and lent out by [`crate::Clop::take_raw`] (released by [`crate::Clop::release`]).
    LentRaw,
}

/// The owner of each buffer of a CLOP, changed by atomic compare-and-swap: the event reader
/// passes buffers to the application, the application's handles pass them back, without a lock.
pub(crate) struct Owners(Box<[AtomicU8]>);

impl Owners {
    pub(crate) fn new(buffers: usize) -> Self {
        Self(
            (0..buffers)
                .map(|_| AtomicU8::new(Owner::Card as u8))
                .collect(),
        )
    }

    /// Moves `buffer` from `from` to `to`; false if it does not exist or is not `from`'s.
    #[inline]
    pub(crate) fn swap(&self, buffer: u16, from: Owner, to: Owner) -> bool {
        self.0.get(buffer as usize).is_some_and(|o| {
            o.compare_exchange(from as u8, to as u8, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
        })
    }

    /// As [`Owners::swap`], for a transition only one party can make (the event reader's
    /// Card -> Held, the borrower's Lent -> Card): a load and a store, no read-modify-write.
    #[inline]
    pub(crate) fn hand_over(&self, buffer: u16, from: Owner, to: Owner) -> bool {
        match self.0.get(buffer as usize) {
            Some(o) if o.load(Ordering::Acquire) == from as u8 => {
                o.store(to as u8, Ordering::Release);
                true
            }
            _ => false,
        }
    }

    /// Buffers `who` owns.
    pub(crate) fn count(&self, who: Owner) -> usize {
        self.0
            .iter()
            .filter(|o| o.load(Ordering::Acquire) == who as u8)
            .count()
    }

    pub(crate) fn not_card(&self) -> usize {
        self.0
            .iter()
            .filter(|o| o.load(Ordering::Acquire) != Owner::Card as u8)
            .count()
    }
}

/// Per registered CLOP, the library's shared state.
pub(crate) struct ClopState {
    pub(crate) id: u8,
    pub(crate) owners: Arc<Owners>,
    /// Provided memory (start, length), to refuse overlapping registrations.
    pub(crate) provided: Option<(u64, u64)>,
    /// Who provided the memory: told before one of its buffers is handed out
    /// ([`crate::MemoryProvider::card_writes_landed`]).
    pub(crate) provider: Option<Arc<dyn crate::MemoryProvider>>,
    /// Records dropped because the CLOP had its limit of unread records waiting.
    pub(crate) dropped: u64,
}

impl ClopState {
    /// An event from the ring for this CLOP: a closed buffer passes to the application.
    #[inline]
    pub(crate) fn on_event(&mut self, e: &Event) -> std::result::Result<(), String> {
        if !e.is_buffer() || self.owners.hand_over(e.buffer, Owner::Card, Owner::Held) {
            return Ok(());
        }
        if (e.buffer as usize) < self.owners.0.len() {
            Err(format!(
                "the card reported buffer {} of CLOP {} closed while the application held it",
                e.buffer, e.clop
            ))
        } else {
            Err(format!(
                "buffer {} of CLOP {} does not exist",
                e.buffer, e.clop
            ))
        }
    }
}

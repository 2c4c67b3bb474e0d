//! The ports' CLOP engines' event records (each through its register slice) onto one record
//! stream into the event multiplexer, round robin, a record at a time: after a record of source
//! `s` is taken, the next source after `s` with a record on offer goes next.
//!
//! The selection is a register: the selected source's record passes straight through, and a
//! source that starts offering while another is selected and idle is selected the next cycle. A
//! record on offer stays selected until taken (the multiplexer downstream holds its choice while
//! a record waits). With one source this is wiring only.

use array_init::array_init;
use rust_hdl::prelude::*;

use crate::common::round_robin::RoundRobinPick;

/// An event record on offer: bytes 0..15 in `lo`, 16..31 in `hi`.
#[derive(LogicInterface, Default)]
#[join = "EventRecordSink"]
pub struct EventRecordSource {
    pub valid: Signal<Out, Bit>,
    pub ready: Signal<In, Bit>,
    pub lo: Signal<Out, Bits<128>>,
    pub hi: Signal<Out, Bits<128>>,
}

/// The taking end of [`EventRecordSource`].
#[derive(LogicInterface, Default)]
#[join = "EventRecordSource"]
pub struct EventRecordSink {
    pub valid: Signal<In, Bit>,
    pub ready: Signal<Out, Bit>,
    pub lo: Signal<In, Bits<128>>,
    pub hi: Signal<In, Bits<128>>,
}

#[derive(LogicBlock)]
pub struct EventArbiter<const P: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub inp: [EventRecordSink; P],
    pub out: EventRecordSource,

    sel: DFF<Bits<2>>,
    valids: Signal<Local, Bits<4>>,
    offer: Signal<Local, Bit>,
    /// The next source after the selected one.
    next: RoundRobinPick,
    source_ids: [Constant<Bits<2>>; P],
}

impl<const P: usize> Default for EventArbiter<P> {
    fn default() -> Self {
        assert!((1..=4).contains(&P), "1 to 4 record sources");
        Self {
            clock: Default::default(),
            reset: Default::default(),
            inp: array_init(|_| Default::default()),
            out: Default::default(),
            sel: Default::default(),
            valids: Default::default(),
            offer: Default::default(),
            next: Default::default(),
            source_ids: array_init(|i| Constant::new((i as u64).into())),
        }
    }
}

impl<const P: usize> Logic for EventArbiter<P> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, sel);
        // The selected source's record, straight to the outputs from the inputs and the
        // selection register only (the control reads its own copy: see `WriteArbiter`).
        self.out.valid.next = false;
        self.out.lo.next = 0.into();
        self.out.hi.next = 0.into();
        for i in 0..P {
            if self.sel.q.val() == self.source_ids[i].val() {
                self.out.valid.next = self.inp[i].valid.val();
                self.out.lo.next = self.inp[i].lo.val();
                self.out.hi.next = self.inp[i].hi.val();
            }
            self.inp[i].ready.next =
                self.out.ready.val() & (self.sel.q.val() == self.source_ids[i].val());
        }
        self.valids.next = 0.into();
        self.offer.next = false;
        for i in 0..P {
            if self.inp[i].valid.val() {
                self.valids.next = self.valids.val() | (1 << i);
            }
            if self.sel.q.val() == self.source_ids[i].val() {
                self.offer.next = self.inp[i].valid.val();
            }
        }
        self.next.valid.next = self.valids.val();
        self.next.after.next = self.sel.q.val();
        if self.offer.val() & self.out.ready.val() {
            if self.next.found_other.val() {
                self.sel.d.next = self.next.pick.val();
            }
        } else if !self.offer.val() & self.next.found.val() {
            self.sel.d.next = self.next.pick.val();
        }
        if self.reset.val() {
            self.sel.d.next = 0.into();
        }
    }
}

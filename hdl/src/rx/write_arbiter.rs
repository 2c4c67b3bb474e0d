//! The ports' DMA writers onto one write-request stream (into the write mux's port A), a whole
//! request at a time, round robin: after a request of source `s` ends, the next source after `s`
//! that has a request on offer goes next. A request is at most one TLP (the DMA writer splits at
//! the max payload size), so four ports' datagrams reach the link interleaved by TLP, each port's
//! written as it arrives, and none waits for another's whole datagram.
//!
//! The offered beat passes straight through from the selected source (every source offers from
//! its own output slice); the selection is a register, so no source's `valid` reaches another's
//! `ready`. A source that starts offering while another is selected and idle is selected the next
//! cycle. A void beat (`inp_void`, a DMA write whose translation missed) passes with its mark and
//! never starts a request, as at the write mux. With one source this is wiring only.
//!
//! `behind[s]`: beats of source `s` may still wait in the next stage's two-entry slice (`down_*`),
//! so the source's writer reports them as held (`DmaWriter::wr_behind`): a beat that goes in
//! leaves after at most two beats have left the slice, or when the slice is empty.

use array_init::array_init;
use rust_hdl::prelude::*;

use crate::common::round_robin::RoundRobinPick;
use crate::pcie::write_request::{WriteRequestSink, WriteRequestSource};

#[derive(LogicBlock)]
pub struct WriteArbiter<const P: usize, const W: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub inp: [WriteRequestSink<W>; P],
    pub inp_void: [Signal<In, Bit>; P],
    pub behind: [Signal<Out, Bit>; P],

    pub out: WriteRequestSource<W>,
    pub out_void: Signal<Out, Bit>,
    /// The next stage's slice: a beat left it in this cycle; a beat is inside.
    pub down_moved: Signal<In, Bit>,
    pub down_holds: Signal<In, Bit>,

    /// The source on offer, and whether it is inside a request.
    sel: DFF<Bits<2>>,
    locked: DFF<Bit>,
    /// Per source: beats that must still leave the next stage's slice before its last one has.
    left: [DFF<Bits<2>>; P],
    /// The sources with a beat on offer.
    valids: Signal<Local, Bits<4>>,
    offer: Signal<Local, Bit>,
    offer_void: Signal<Local, Bit>,
    offer_eop: Signal<Local, Bit>,
    taken: Signal<Local, Bit>,
    /// The next source after the selected one.
    next: RoundRobinPick,
    source_ids: [Constant<Bits<2>>; P],
}

impl<const P: usize, const W: usize> Default for WriteArbiter<P, W> {
    fn default() -> Self {
        assert!((1..=4).contains(&P), "1 to 4 write sources");
        Self {
            clock: Default::default(),
            reset: Default::default(),
            inp: array_init(|_| Default::default()),
            inp_void: array_init(|_| Default::default()),
            behind: array_init(|_| Default::default()),
            out: Default::default(),
            out_void: Default::default(),
            down_moved: Default::default(),
            down_holds: Default::default(),
            sel: Default::default(),
            locked: Default::default(),
            left: array_init(|_| Default::default()),
            valids: Default::default(),
            offer: Default::default(),
            offer_void: Default::default(),
            offer_eop: Default::default(),
            taken: Default::default(),
            next: Default::default(),
            source_ids: array_init(|i| Constant::new((i as u64).into())),
        }
    }
}

impl<const P: usize, const W: usize> Logic for WriteArbiter<P, W> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, sel, locked);
        // The selected source's beat, straight to the outputs: written from the inputs and the
        // selection register only, and read back nowhere (the control below reads its own copy),
        // so that Verilator orders the outputs apart from the statements that read the next
        // stage's `ready` (otherwise a loop through the write mux, UNOPTFLAT).
        self.out.valid.next = false;
        self.out.sop.next = false;
        self.out.eop.next = false;
        self.out.addr.next = 0.into();
        self.out.len.next = 0.into();
        self.out.data.next = 0.into();
        self.out_void.next = false;
        for i in 0..P {
            if self.sel.q.val() == self.source_ids[i].val() {
                self.out.valid.next = self.inp[i].valid.val();
                self.out.sop.next = self.inp[i].sop.val();
                self.out.eop.next = self.inp[i].eop.val();
                self.out.addr.next = self.inp[i].addr.val();
                self.out.len.next = self.inp[i].len.val();
                self.out.data.next = self.inp[i].data.val();
                self.out_void.next = self.inp_void[i].val();
            }
            self.inp[i].ready.next =
                self.out.ready.val() & (self.sel.q.val() == self.source_ids[i].val());
        }

        // The control's copy: the sources on offer, and the selected one's beat.
        self.valids.next = 0.into();
        self.offer.next = false;
        self.offer_void.next = false;
        self.offer_eop.next = false;
        for i in 0..P {
            self.left[i].clock.next = self.clock.val();
            self.left[i].d.next = self.left[i].q.val();
            if self.inp[i].valid.val() {
                self.valids.next = self.valids.val() | (1 << i);
            }
            if self.sel.q.val() == self.source_ids[i].val() {
                self.offer.next = self.inp[i].valid.val();
                self.offer_void.next = self.inp_void[i].val();
                self.offer_eop.next = self.inp[i].eop.val() | self.inp_void[i].val();
            }
        }
        self.taken.next = self.offer.val() & self.out.ready.val();

        self.next.valid.next = self.valids.val();
        self.next.after.next = self.sel.q.val();
        // Inside a request the source stays; at its end the next waiting one (if any) goes; an
        // idle source gives way to the next waiting one.
        if self.taken.val() {
            self.locked.d.next = !self.offer_eop.val();
            if self.offer_eop.val() & self.next.found_other.val() {
                self.sel.d.next = self.next.pick.val();
            }
        } else if !self.locked.q.val() & !self.offer.val() & self.next.found.val() {
            self.sel.d.next = self.next.pick.val();
        }

        for i in 0..P {
            if self.down_moved.val() & (self.left[i].q.val() != 0) {
                self.left[i].d.next = self.left[i].q.val() - 1;
            }
            if !self.down_holds.val() {
                self.left[i].d.next = 0.into();
            }
            if self.taken.val()
                & !self.offer_void.val()
                & (self.sel.q.val() == self.source_ids[i].val())
            {
                self.left[i].d.next = 2.into();
            }
            if self.reset.val() {
                self.left[i].d.next = 0.into();
            }
            self.behind[i].next = (self.left[i].q.val() != 0) & self.down_holds.val();
        }
        if self.reset.val() {
            self.sel.d.next = 0.into();
            self.locked.d.next = false;
        }
    }
}

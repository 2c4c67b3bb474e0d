//! Single-clock FIFO of `W`-bit words, `2^A` deep (`AP1 = A + 1`), first-word fall-through from a
//! synchronous-read RAM, with a synchronous reset (rust-hdl's own FIFO has none).
//!
//! Timing: the RAM reads the entry at the read pointer (a register) every cycle and its output
//! goes into a three-register output stage (`FifoOutput`), so `out_ready` never reaches the RAM's
//! address and `out_data`/`out_valid` are flip-flops; `in_ready` and `used` come from a count
//! register. A word written in cycle `t` is on the output from `t + 3`.

use rust_hdl::prelude::*;

use crate::common::fifo_output::FifoOutput;

#[derive(LogicBlock)]
pub struct SyncFifo<const W: usize, const A: usize, const AP1: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub in_data: Signal<In, Bits<W>>,
    pub in_valid: Signal<In, Bit>,
    pub in_ready: Signal<Out, Bit>,
    /// Pulses when a write is refused (`in_valid` while full).
    pub overflow: Signal<Out, Bit>,
    pub out_data: Signal<Out, Bits<W>>,
    pub out_valid: Signal<Out, Bit>,
    pub out_ready: Signal<In, Bit>,
    /// Entries in the FIFO (those in the output stage included).
    pub used: Signal<Out, Bits<AP1>>,

    ram: RAM<Bits<W>, A>,
    out: FifoOutput<W>,
    /// Next entry to write, next entry to fetch into the output stage.
    wptr: DFF<Bits<AP1>>,
    rptr: DFF<Bits<AP1>>,
    /// Entries in the FIFO, those in the output stage included (kept in a register, so that
    /// `full` and `in_ready` are one LUT from flip-flops).
    count: DFF<Bits<AP1>>,
    /// `2^A`: the occupancy when full.
    depth: Constant<Bits<AP1>>,
    full: Signal<Local, Bit>,
    push: Signal<Local, Bit>,
    fetch: Signal<Local, Bit>,
}

impl<const W: usize, const A: usize, const AP1: usize> Default for SyncFifo<W, A, AP1> {
    fn default() -> Self {
        assert_eq!(AP1, A + 1, "SyncFifo: AP1 must be A + 1");
        Self {
            clock: Default::default(),
            reset: Default::default(),
            in_data: Default::default(),
            in_valid: Default::default(),
            in_ready: Default::default(),
            overflow: Default::default(),
            out_data: Default::default(),
            out_valid: Default::default(),
            out_ready: Default::default(),
            used: Default::default(),
            ram: Default::default(),
            out: Default::default(),
            wptr: Default::default(),
            rptr: Default::default(),
            count: Default::default(),
            depth: Constant::new((1u64 << A).into()),
            full: Default::default(),
            push: Default::default(),
            fetch: Default::default(),
        }
    }
}

impl<const W: usize, const A: usize, const AP1: usize> Logic for SyncFifo<W, A, AP1> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, wptr, rptr, count);
        self.ram.read_clock.next = self.clock.val();
        self.ram.write_clock.next = self.clock.val();
        self.out.clock.next = self.clock.val();
        self.out.reset.next = self.reset.val();

        self.full.next = self.count.q.val() == self.depth.val();
        self.used.next = self.count.q.val();
        // Not from `full`: a local shared with `push` (which reads `in_valid`) would tie
        // `in_ready` to `in_valid` in Verilator's ordering, a loop with a writer that reads
        // `in_ready` and drives `in_valid` in one block (UNOPTFLAT).
        self.in_ready.next = self.count.q.val() != self.depth.val();
        self.overflow.next = self.in_valid.val() & self.full.val();
        self.push.next = self.in_valid.val() & !self.full.val();
        self.ram.write_address.next = self.wptr.q.val().get_bits::<A>(0);
        self.ram.write_data.next = self.in_data.val();
        self.ram.write_enable.next = self.push.val();
        if self.push.val() {
            self.wptr.d.next = self.wptr.q.val() + 1;
        }
        if self.push.val() & !self.out.take.val() {
            self.count.d.next = self.count.q.val() + 1;
        }
        if self.out.take.val() & !self.push.val() {
            self.count.d.next = self.count.q.val() - 1;
        }

        self.ram.read_address.next = self.rptr.q.val().get_bits::<A>(0);
        self.fetch.next = (self.rptr.q.val() != self.wptr.q.val()) & self.out.room.val();
        self.out.fetch.next = self.fetch.val();
        self.out.ram_data.next = self.ram.read_data.val();
        self.out.out_ready.next = self.out_ready.val();
        self.out_data.next = self.out.out_data.val();
        self.out_valid.next = self.out.out_valid.val();
        if self.fetch.val() {
            self.rptr.d.next = self.rptr.q.val() + 1;
        }
        if self.reset.val() {
            self.wptr.d.next = 0.into();
            self.rptr.d.next = 0.into();
            self.count.d.next = 0.into();
        }
    }
}

//! A counter of one clock domain seen from another (the core cycle counter for the ports'
//! timestamps; the count of whole datagrams in a port's transmit FIFO): Gray-coded in the source
//! domain, two flip-flops in the destination, back to binary there. The counter must change by at
//! most one per source cycle; every sample is then a value the counter had (a Gray code changes
//! one bit per count), at most a few source cycles old.
//!
//! Timing: the conversion back to binary is registered twice (each bit the XOR of eight
//! synchronized bits, then of four partial results): `dst_now` comes from a flip-flop, two
//! destination cycles after the second synchronizer stage.

use rust_hdl::prelude::*;

#[derive(LogicBlock, Default)]
pub struct TimeSync {
    pub src_clock: Signal<In, Clock>,
    pub src_now: Signal<In, Bits<32>>,
    pub dst_clock: Signal<In, Clock>,
    pub dst_now: Signal<Out, Bits<32>>,

    gray: DFF<Bits<32>>,
    s1: DFF<Bits<32>>,
    s2: DFF<Bits<32>>,
    /// Each bit the XOR of itself and the seven bits above it.
    x4: DFF<Bits<32>>,
    now: DFF<Bits<32>>,
    x1: Signal<Local, Bits<32>>,
    x2: Signal<Local, Bits<32>>,
    x8: Signal<Local, Bits<32>>,
}

impl Logic for TimeSync {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, src_clock, gray);
        dff_setup!(self, dst_clock, s1, s2, x4, now);
        self.gray.d.next = self.src_now.val() ^ (self.src_now.val() >> 1);
        self.s1.d.next = self.gray.q.val();
        self.s2.d.next = self.s1.q.val();
        // Gray to binary: every bit is the XOR of itself and all bits above it (prefix XOR in five
        // doubling steps, three before the register, two after).
        self.x1.next = self.s2.q.val() ^ (self.s2.q.val() >> 1);
        self.x2.next = self.x1.val() ^ (self.x1.val() >> 2);
        self.x4.d.next = self.x2.val() ^ (self.x2.val() >> 4);
        self.x8.next = self.x4.q.val() ^ (self.x4.q.val() >> 8);
        self.now.d.next = self.x8.val() ^ (self.x8.val() >> 16);
        self.dst_now.next = self.now.q.val();
    }
}

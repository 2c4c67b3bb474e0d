//! Round-robin arbiter of the ports' clock-crossing FIFOs into the receive engine, a whole datagram
//! (meta word to last word) at a time: after a port's datagram the next waiting port after it goes
//! first, so no port can starve another. `P` ports, 1 to 4 (port numbers are 2 bits).

use rust_hdl::prelude::*;

use crate::rx::words::RxWordsSource;

/// The read side of one port's FIFO (a word: `hi`, and `{meta, last, error, lo}` in `meta`).
#[derive(LogicInterface, Default)]
pub struct FifoWordSink {
    pub hi: Signal<In, Bits<64>>,
    pub meta: Signal<In, Bits<67>>,
    pub valid: Signal<In, Bit>,
    pub ready: Signal<Out, Bit>,
}

#[derive(LogicBlock)]
pub struct RxArbiter<const P: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub inp: [FifoWordSink; P],
    pub out: RxWordsSource,

    /// The number of ports and the last port's number (generated Verilog has no parameters).
    ports: Constant<Bits<3>>,
    last_port: Constant<Bits<2>>,
    locked: DFF<Bit>,
    cur: DFF<Bits<2>>,
    /// The port granted last.
    granted: DFF<Bits<2>>,
    waiting: Signal<Local, Bits<8>>,
    rotated: Signal<Local, Bits<8>>,
    first: Signal<Local, Bits<3>>,
    pick: Signal<Local, Bits<3>>,
    sel: Signal<Local, Bits<2>>,
    hi: Signal<Local, Bits<64>>,
    meta: Signal<Local, Bits<67>>,
    valid: Signal<Local, Bit>,
}

impl<const P: usize> Default for RxArbiter<P> {
    fn default() -> Self {
        assert!((1..=4).contains(&P), "1 to 4 ports");
        Self {
            clock: Default::default(),
            reset: Default::default(),
            inp: array_init::array_init(|_| Default::default()),
            out: Default::default(),
            ports: Constant::new((P as u64).into()),
            last_port: Constant::new((P as u64 - 1).into()),
            locked: Default::default(),
            cur: Default::default(),
            granted: Default::default(),
            waiting: Default::default(),
            rotated: Default::default(),
            first: Default::default(),
            pick: Default::default(),
            sel: Default::default(),
            hi: Default::default(),
            meta: Default::default(),
            valid: Default::default(),
        }
    }
}

impl<const P: usize> Logic for RxArbiter<P> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, locked, cur, granted);
        // Waiting ports, twice over (bits p and p + P), rotated so that bit 0 is the port after
        // the last grant; the first waiting one from there wins.
        self.waiting.next = 0.into();
        for i in 0..P {
            if self.inp[i].valid.val() {
                self.waiting.next = self.waiting.val() | (1 << i);
            }
        }
        self.waiting.next =
            self.waiting.val() | (self.waiting.val() << bit_cast::<8, 3>(self.ports.val()));
        self.rotated.next = self.waiting.val() >> (bit_cast::<8, 2>(self.granted.q.val()) + 1);
        self.first.next = 3.into();
        if self.rotated.val().get_bit(2) {
            self.first.next = 2.into();
        }
        if self.rotated.val().get_bit(1) {
            self.first.next = 1.into();
        }
        if self.rotated.val().get_bit(0) {
            self.first.next = 0.into();
        }
        self.pick.next = bit_cast::<3, 2>(self.granted.q.val()) + 1 + self.first.val();
        if self.pick.val() >= self.ports.val() {
            self.pick.next = self.pick.val() - self.ports.val();
        }
        self.sel.next = self.pick.val().get_bits::<2>(0);
        if self.locked.q.val() {
            self.sel.next = self.cur.q.val();
        }

        self.hi.next = 0.into();
        self.meta.next = 0.into();
        self.valid.next = false;
        for i in 0..P {
            self.inp[i].ready.next = false;
            if self.sel.val().index() == i {
                self.hi.next = self.inp[i].hi.val();
                self.meta.next = self.inp[i].meta.val();
                self.valid.next = self.inp[i].valid.val();
                self.inp[i].ready.next = self.out.ready.val();
            }
        }
        self.out.data.next = (bit_cast::<128, 64>(self.hi.val()) << 64)
            | bit_cast::<128, 64>(self.meta.val().get_bits::<64>(0));
        self.out.meta.next = self.meta.val().get_bit(66);
        self.out.last.next = self.meta.val().get_bit(65);
        self.out.error.next = self.meta.val().get_bit(64);
        self.out.port.next = self.sel.val();
        self.out.valid.next = self.valid.val();
        if self.valid.val() & self.out.ready.val() {
            self.locked.d.next = !self.meta.val().get_bit(65);
            self.cur.d.next = self.sel.val();
            if !self.locked.q.val() {
                self.granted.d.next = self.sel.val();
            }
        }
        if self.reset.val() {
            self.locked.d.next = false;
            self.granted.d.next = self.last_port.val();
        }
    }
}

//! Round-robin arbiter of the ports' clock-crossing FIFOs into the receive engine, a whole datagram
//! (meta word to last word) at a time: after a port's datagram the next waiting port after it goes
//! first, so no port can starve another. `P` ports, 1 to 4 (port numbers are 2 bits); words of `W`
//! bits, the core datapath's (128 or 256).
//!
//! The choice is made a cycle ahead, into a register (`sel`): every cycle, for each port that may
//! have been granted last, the first waiting port after it is worked out, and the one after the
//! port granted (or after the port whose datagram ends in this cycle) is what `sel` selects next.
//! A port that starts waiting on an idle arbiter is therefore selected one cycle later (4 ns); a
//! port chosen from one-cycle-old waiting bits that has since gone empty is simply not valid, and
//! the choice is made again next cycle. The select reaching the FIFOs' read side and the output
//! multiplexer is a flip-flop (for timing): the rotate, priority and wrap-around add stay before
//! it.
//!
//! The promise: once a datagram of two words or more is under way (from the cycle its meta word
//! is taken) and another port is waiting, the arbiter fixes the port that goes next (`nx_port`,
//! the next waiting port after the current one at that cycle) and keeps to it: selected at the
//! datagram's end and held (`owed`) until its meta word is taken. From the next word on it shows
//! that port and its meta word's stream and length, read at its FIFO's head (only the arbiter
//! reads a FIFO, and an unread FIFO keeps its head), as the stream's `next_*` fields: the CLOP
//! engine reads that CLOP's state while the current payload streams. A port that starts waiting
//! after the promise can be passed over where round robin at the datagram's end would have
//! chosen it: the promised port goes first, and the next promise (made as that datagram starts)
//! goes on round from there, with that port in it. So it still waits for at most one datagram
//! of each other port, as with round robin alone (the module test checks that bound); with
//! every port backlogged the order is plain round robin.

use rust_hdl::prelude::*;

use nanet_contract::packed::rx_meta;

use crate::rx::words::{RxMetaUnpack, RxWordsSource};

// The promise reads the stream and length from bits 127:64 of a meta word (`nx_hi`).
const _: () = assert!(
    rx_meta::STREAM.lsb >= 64
        && rx_meta::STREAM.lsb + rx_meta::STREAM.width <= 128
        && rx_meta::LEN.lsb >= 64
        && rx_meta::LEN.lsb + rx_meta::LEN.width <= 128
);

/// The read side of one port's FIFO: a `W`-bit word and its flags `{meta, last, error}`.
#[derive(LogicInterface, Default)]
pub struct FifoWordSink<const W: usize> {
    pub data: Signal<In, Bits<W>>,
    pub flags: Signal<In, Bits<3>>,
    pub valid: Signal<In, Bit>,
    pub ready: Signal<Out, Bit>,
}

#[derive(LogicBlock)]
pub struct RxArbiter<const P: usize, const W: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub inp: [FifoWordSink<W>; P],
    pub out: RxWordsSource<W>,

    /// The number of ports and the last port's number (generated Verilog has no parameters).
    ports: Constant<Bits<3>>,
    last_port: Constant<Bits<2>>,
    locked: DFF<Bit>,
    /// The port read now (while `locked`, the one whose datagram is under way).
    sel: DFF<Bits<2>>,
    /// The port granted last.
    granted: DFF<Bits<2>>,
    /// For each port `g`, the first port waiting after `g`, wrapping round to `g`.
    pick_after: [Signal<Local, Bits<2>>; P],
    after_granted: Signal<Local, Bits<2>>,
    after_sel: Signal<Local, Bits<2>>,
    port_ids: [Constant<Bits<2>>; P],
    /// Some port was waiting a cycle ago (the choice in `sel` means something).
    chosen: DFF<Bit>,
    /// A datagram is under way or a choice was made: the selected port may be read.
    go: Signal<Local, Bit>,
    /// `g + 1` for each port `g`: where the search after `g` starts.
    starts: [Constant<Bits<3>>; P],
    waiting: Signal<Local, Bits<8>>,
    rotated: Signal<Local, Bits<8>>,
    first: Signal<Local, Bits<3>>,
    pick: Signal<Local, Bits<3>>,
    data: Signal<Local, Bits<W>>,
    flags: Signal<Local, Bits<3>>,
    valid: Signal<Local, Bit>,
    /// The promise: the port whose datagram goes after the current one.
    nx_valid: DFF<Bit>,
    nx_port: DFF<Bits<2>>,
    /// The promised port is selected and its meta word not yet taken.
    owed: DFF<Bit>,
    /// A datagram's first word is taken in this cycle, and it is not its last.
    begins: Signal<Local, Bit>,
    /// The promised port's head word (its meta word; stream and length are in bits 127:64),
    /// unpacked.
    nx_hi: Signal<Local, Bits<64>>,
    nx_head: RxMetaUnpack,
    /// For each port `g`, the ports other than `g` (the low `P` bits of `waiting`).
    others: [Constant<Bits<8>>; P],
    /// Some port other than the selected one is waiting.
    others_waiting: Signal<Local, Bit>,
}

impl<const P: usize, const W: usize> Default for RxArbiter<P, W> {
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
            sel: Default::default(),
            granted: Default::default(),
            pick_after: array_init::array_init(|_| Default::default()),
            chosen: Default::default(),
            go: Default::default(),
            port_ids: array_init::array_init(|g| Constant::new((g as u64).into())),
            starts: array_init::array_init(|g| Constant::new((g as u64 + 1).into())),
            waiting: Default::default(),
            rotated: Default::default(),
            first: Default::default(),
            pick: Default::default(),
            after_granted: Default::default(),
            after_sel: Default::default(),
            data: Default::default(),
            flags: Default::default(),
            valid: Default::default(),
            nx_valid: Default::default(),
            nx_port: Default::default(),
            owed: Default::default(),
            begins: Default::default(),
            nx_hi: Default::default(),
            nx_head: Default::default(),
            others: array_init::array_init(|g| {
                Constant::new((((1u64 << P) - 1) & !(1u64 << g)).into())
            }),
            others_waiting: Default::default(),
        }
    }
}

impl<const P: usize, const W: usize> Logic for RxArbiter<P, W> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, locked, sel, granted, chosen, nx_valid, nx_port, owed);
        // Waiting ports, twice over (bits p and p + P); for each port g, rotated so that bit 0 is
        // the port after g, the first waiting one from there is g's successor.
        self.waiting.next = 0.into();
        for i in 0..P {
            if self.inp[i].valid.val() {
                self.waiting.next = self.waiting.val() | (1 << i);
            }
        }
        self.waiting.next =
            self.waiting.val() | (self.waiting.val() << bit_cast::<8, 3>(self.ports.val()));
        for g in 0..P {
            self.rotated.next = self.waiting.val() >> self.starts[g].val();
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
            self.pick.next = self.starts[g].val() + self.first.val();
            if self.pick.val() >= self.ports.val() {
                self.pick.next = self.pick.val() - self.ports.val();
            }
            self.pick_after[g].next = self.pick.val().get_bits::<2>(0);
        }
        self.after_granted.next = 0.into();
        self.after_sel.next = 0.into();
        self.others_waiting.next = false;
        for g in 0..P {
            if self.granted.q.val() == self.port_ids[g].val() {
                self.after_granted.next = self.pick_after[g].val();
            }
            if self.sel.q.val() == self.port_ids[g].val() {
                self.after_sel.next = self.pick_after[g].val();
                self.others_waiting.next = (self.waiting.val() & self.others[g].val()) != 0;
            }
        }
        // The promised port's meta word, at its FIFO's head.
        self.nx_hi.next = 0.into();
        for i in 0..P {
            if self.nx_port.q.val().index() == i {
                self.nx_hi.next = self.inp[i].data.val().get_bits::<64>(64);
            }
        }
        self.nx_head.word.next = bit_cast::<128, 64>(self.nx_hi.val()) << 64;
        self.chosen.d.next = self.waiting.val() != 0;
        self.go.next = self.locked.q.val() | self.chosen.q.val();
        if !self.locked.q.val() & !self.owed.q.val() {
            self.sel.d.next = self.after_granted.val();
        }

        self.data.next = 0.into();
        self.flags.next = 0.into();
        self.valid.next = false;
        for i in 0..P {
            self.inp[i].ready.next = false;
            if self.sel.q.val().index() == i {
                self.data.next = self.inp[i].data.val();
                self.flags.next = self.inp[i].flags.val();
                self.valid.next = self.inp[i].valid.val() & self.go.val();
                self.inp[i].ready.next = self.out.ready.val() & self.go.val();
            }
        }
        self.out.data.next = self.data.val();
        self.out.meta.next = self.flags.val().get_bit(2);
        self.out.last.next = self.flags.val().get_bit(1);
        self.out.error.next = self.flags.val().get_bit(0);
        self.out.port.next = self.sel.q.val();
        self.out.next_valid.next = self.nx_valid.q.val();
        self.out.next_port.next = self.nx_port.q.val();
        self.out.next_stream.next = self.nx_head.stream.val();
        self.out.next_len.next = self.nx_head.len.val();
        self.out.valid.next = self.valid.val();
        // The promise, made once per datagram (then `after_sel` is a waiting port other than the
        // selected one).
        self.begins.next = self.valid.val()
            & self.out.ready.val()
            & !self.locked.q.val()
            & !self.flags.val().get_bit(1);
        if (self.locked.q.val() | self.begins.val())
            & !self.nx_valid.q.val()
            & self.others_waiting.val()
        {
            self.nx_valid.d.next = true;
            self.nx_port.d.next = self.after_sel.val();
        }
        if self.valid.val() & self.out.ready.val() {
            // A datagram's word taken: the port stays selected to its last word, after which the
            // promised port is (until its first word is taken), or (no promise) the next waiting
            // port after it.
            self.locked.d.next = !self.flags.val().get_bit(1);
            self.granted.d.next = self.sel.q.val();
            self.sel.d.next = self.sel.q.val();
            self.owed.d.next = false;
            if self.flags.val().get_bit(1) {
                self.sel.d.next = self.after_sel.val();
                if self.nx_valid.q.val() {
                    self.sel.d.next = self.nx_port.q.val();
                    self.owed.d.next = true;
                }
                self.nx_valid.d.next = false;
            }
        }
        if self.reset.val() {
            self.nx_valid.d.next = false;
            self.owed.d.next = false;
            self.locked.d.next = false;
            self.granted.d.next = self.last_port.val();
            self.chosen.d.next = false;
        }
    }
}

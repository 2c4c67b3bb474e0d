//! The transmit rings of the core domain: one [`TxEngine`] per port (ring `r` sends from port
//! `r`, `nanet_contract::tx`), sharing the DMA read engine and the event queue's transmit input.
//!
//! Each engine reserves room in its own port's FIFO before it reads a payload, and takes every
//! beat of the reads it issued as it comes (unless it waits to hand the event queue a record: a
//! full event queue holds up every ring whose read data are behind that engine's), so a port
//! whose link is stalled holds up only its own ring: the others go on fetching, reading and
//! writing.
//!
//! - **Registers**: ring `r`'s words are `reg_addr` bits 7:6 = `r` (`bar0::tx_ring`); a write
//!   goes to that engine only, a read shows that engine's data (two cycles after the address, as
//!   each engine's; the address is held meanwhile).
//! - **Reads**: round robin. The ring whose request may go (`rq_turn`) is chosen a cycle ahead,
//!   from registers: the first ring asking after the one served last (`served`), wrapping round
//!   ([`RoundRobinPick`]). `served` follows a grant a cycle late, so the ring granted is usually
//!   chosen once more for the next cycle, which it wastes (an engine asks again two cycles after a
//!   read at the earliest): the rings together issue a read every two cycles at most, more than
//!   four ports need (about one per four cycles at 16 bytes). The ring of every read accepted goes
//!   into `route`, in order.
//! - **Read data** comes back in the order of the reads (`pcie/read.rs`), through a register
//!   slice (for timing: the engines' ready is an OR of theirs), to the ring at `route`'s head;
//!   its read's last beat pops it. `route` holds 64 reads: more than can be outstanding (32 tags,
//!   the read engine's queues), and a request waits while it is full.
//! - **Events**: the rings take turns, one cycle each (`ev_turn`), at the event queue's transmit
//!   input, whether they have a record or not (a ring waits up to `P - 1` cycles).

use rust_hdl::prelude::*;

use crate::common::round_robin::RoundRobinPick;
use crate::common::skid_buffer::SkidBuffer;
use crate::common::sync_fifo::SyncFifo;
use crate::tx::engine::TxEngine;

/// One ring's writes into its port's transmit FIFO, the ring's end: entry, tag, a strobe (never
/// refused: the engine reserves room first), and the entries the FIFO holds as its write side
/// sees them.
#[derive(LogicInterface, Default)]
#[join = "TxEntrySink"]
pub struct TxEntrySource<const W: usize> {
    pub data: Signal<Out, Bits<W>>,
    pub tag: Signal<Out, Bits<8>>,
    pub valid: Signal<Out, Bit>,
    pub used: Signal<In, Bits<9>>,
}

/// The port FIFO's end of [`TxEntrySource`].
#[derive(LogicInterface, Default)]
#[join = "TxEntrySource"]
pub struct TxEntrySink<const W: usize> {
    pub data: Signal<In, Bits<W>>,
    pub tag: Signal<In, Bits<8>>,
    pub valid: Signal<In, Bit>,
    pub used: Signal<Out, Bits<9>>,
}

#[derive(LogicBlock)]
pub struct TxRings<const P: usize, const W: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub now: Signal<In, Bits<32>>,

    /// Register bus: ring in bits 7:6, `nanet_contract::tx::TxReg` word in bits 5:0; read data
    /// two cycles after the address.
    pub reg_addr: Signal<In, Bits<8>>,
    pub reg_wdata: Signal<In, Bits<32>>,
    pub reg_write: Signal<In, Bit>,
    pub reg_rdata: Signal<Out, Bits<32>>,

    /// Reads (`pcie/read.rs`).
    pub rq_valid: Signal<Out, Bit>,
    pub rq_ready: Signal<In, Bit>,
    pub rq_addr: Signal<Out, Bits<64>>,
    pub rq_len: Signal<Out, Bits<9>>,
    pub rd_data: Signal<In, Bits<W>>,
    pub rd_last: Signal<In, Bit>,
    pub rd_error: Signal<In, Bit>,
    pub rd_valid: Signal<In, Bit>,
    pub rd_ready: Signal<Out, Bit>,

    /// Port `r`'s FIFO, written by ring `r`.
    pub fifo: [TxEntrySource<W>; P],

    /// Event records to the event queue.
    pub ev_valid: Signal<Out, Bit>,
    pub ev_lo: Signal<Out, Bits<128>>,
    pub ev_hi: Signal<Out, Bits<128>>,
    pub ev_ready: Signal<In, Bit>,

    engines: [TxEngine<W>; P],
    ring_ids: [Constant<Bits<2>>; P],
    last_ring: Constant<Bits<2>>,
    /// The ring a register read shows.
    read_ring: DFF<Bits<2>>,
    /// The ring whose read request, and whose event record, may go in this cycle.
    rq_turn: DFF<Bits<2>>,
    ev_turn: DFF<Bits<2>>,
    /// The ring whose read request went last.
    served: DFF<Bits<2>>,
    /// The rings asking to read (bit `r` for ring `r`), and the next `rq_turn` among them.
    asking: Signal<Local, Bits<4>>,
    next_turn: RoundRobinPick,
    /// The ring of each read the read engine took, in order.
    route: SyncFifo<2, 6, 7>,
    /// Read data, registered: the beat and its `{error, last}`, side by side (one handshake).
    rd_slice: SkidBuffer<W>,
    rd_flags: SkidBuffer<2>,
    /// The request taken in this cycle, and the beat.
    rq_taken: Signal<Local, Bit>,
    beat_taken: Signal<Local, Bit>,
}

impl<const P: usize, const W: usize> Default for TxRings<P, W> {
    fn default() -> Self {
        assert!((1..=4).contains(&P), "1 to 4 rings");
        Self {
            clock: Default::default(),
            reset: Default::default(),
            now: Default::default(),
            reg_addr: Default::default(),
            reg_wdata: Default::default(),
            reg_write: Default::default(),
            reg_rdata: Default::default(),
            rq_valid: Default::default(),
            rq_ready: Default::default(),
            rq_addr: Default::default(),
            rq_len: Default::default(),
            rd_data: Default::default(),
            rd_last: Default::default(),
            rd_error: Default::default(),
            rd_valid: Default::default(),
            rd_ready: Default::default(),
            fifo: array_init::array_init(|_| Default::default()),
            ev_valid: Default::default(),
            ev_lo: Default::default(),
            ev_hi: Default::default(),
            ev_ready: Default::default(),
            engines: array_init::array_init(|_| Default::default()),
            ring_ids: array_init::array_init(|r| Constant::new((r as u64).into())),
            last_ring: Constant::new((P as u64 - 1).into()),
            read_ring: Default::default(),
            rq_turn: Default::default(),
            served: Default::default(),
            asking: Default::default(),
            next_turn: Default::default(),
            ev_turn: Default::default(),
            route: Default::default(),
            rd_slice: Default::default(),
            rd_flags: Default::default(),
            rq_taken: Default::default(),
            beat_taken: Default::default(),
        }
    }
}

impl<const P: usize, const W: usize> Logic for TxRings<P, W> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, read_ring, rq_turn, ev_turn, served);
        self.route.clock.next = self.clock.val();
        self.route.reset.next = self.reset.val();
        self.rd_slice.clock.next = self.clock.val();
        self.rd_slice.reset.next = self.reset.val();
        self.rd_flags.clock.next = self.clock.val();
        self.rd_flags.reset.next = self.reset.val();

        // ---- turns ------------------------------------------------------------------------------
        self.asking.next = 0.into();
        for r in 0..P {
            if self.engines[r].rq_valid.val() {
                self.asking.next = self.asking.val() | (1 << r);
            }
        }
        self.next_turn.valid.next = self.asking.val();
        self.next_turn.after.next = self.served.q.val();
        if self.next_turn.found.val() {
            self.rq_turn.d.next = self.next_turn.pick.val();
        }
        self.ev_turn.d.next = self.ev_turn.q.val() + 1;
        if self.ev_turn.q.val() == self.last_ring.val() {
            self.ev_turn.d.next = 0.into();
        }
        self.read_ring.d.next = self.reg_addr.val().get_bits::<2>(6);

        // ---- read data: the slice, then the ring at the route's head ----------------------------
        self.rd_slice.in_data.next = self.rd_data.val();
        self.rd_flags.in_data.next = (bit_cast::<2, 1>(self.rd_error.val().into()) << 1)
            | bit_cast::<2, 1>(self.rd_last.val().into());
        self.rd_slice.in_valid.next = self.rd_valid.val();
        self.rd_flags.in_valid.next = self.rd_valid.val();
        self.rd_slice.in_cancel.next = false;
        self.rd_flags.in_cancel.next = false;
        self.rd_ready.next = self.rd_slice.in_ready.val();

        self.rq_valid.next = false;
        self.rq_addr.next = 0.into();
        self.rq_len.next = 0.into();
        self.reg_rdata.next = 0.into();
        self.ev_valid.next = false;
        self.ev_lo.next = 0.into();
        self.ev_hi.next = 0.into();
        self.rd_slice.out_ready.next = false;
        for r in 0..P {
            self.engines[r].clock.next = self.clock.val();
            self.engines[r].reset.next = self.reset.val();
            self.engines[r].now.next = self.now.val();
            self.engines[r].ring.next = self.ring_ids[r].val();
            self.engines[r].reg_addr.next = self.reg_addr.val().get_bits::<6>(0);
            self.engines[r].reg_wdata.next = self.reg_wdata.val();
            self.engines[r].reg_write.next = self.reg_write.val()
                & (self.reg_addr.val().get_bits::<2>(6) == self.ring_ids[r].val());
            if self.read_ring.q.val() == self.ring_ids[r].val() {
                self.reg_rdata.next = self.engines[r].reg_rdata.val();
            }

            // A request goes in its ring's turn, while the route has room for it.
            self.engines[r].rq_ready.next = self.rq_ready.val()
                & self.route.in_ready.val()
                & (self.rq_turn.q.val() == self.ring_ids[r].val());
            if self.rq_turn.q.val() == self.ring_ids[r].val() {
                self.rq_valid.next = self.engines[r].rq_valid.val() & self.route.in_ready.val();
                self.rq_addr.next = self.engines[r].rq_addr.val();
                self.rq_len.next = self.engines[r].rq_len.val();
            }

            self.engines[r].rd_data.next = self.rd_slice.out_data.val();
            self.engines[r].rd_last.next = self.rd_flags.out_data.val().get_bit(0);
            self.engines[r].rd_error.next = self.rd_flags.out_data.val().get_bit(1);
            self.engines[r].rd_valid.next = self.rd_slice.out_valid.val()
                & self.route.out_valid.val()
                & (self.route.out_data.val() == self.ring_ids[r].val());
            if self.engines[r].rd_ready.val() {
                self.rd_slice.out_ready.next = true;
            }

            self.fifo[r].data.next = self.engines[r].out_data.val();
            self.fifo[r].tag.next = self.engines[r].out_tag.val();
            self.fifo[r].valid.next = self.engines[r].out_valid.val();
            self.engines[r].port_used.next = self.fifo[r].used.val();

            self.engines[r].ev_ready.next =
                self.ev_ready.val() & (self.ev_turn.q.val() == self.ring_ids[r].val());
            if self.ev_turn.q.val() == self.ring_ids[r].val() {
                self.ev_valid.next = self.engines[r].ev_valid.val();
                self.ev_lo.next = self.engines[r].ev_lo.val();
                self.ev_hi.next = self.engines[r].ev_hi.val();
            }
        }
        self.rd_flags.out_ready.next = self.rd_slice.out_ready.val();

        self.rq_taken.next = self.rq_valid.val() & self.rq_ready.val();
        self.route.in_valid.next = self.rq_taken.val();
        self.route.in_data.next = self.rq_turn.q.val();
        if self.rq_taken.val() {
            self.served.d.next = self.rq_turn.q.val();
        }
        self.beat_taken.next = self.rd_slice.out_valid.val() & self.rd_slice.out_ready.val();
        self.route.out_ready.next = self.beat_taken.val() & self.rd_flags.out_data.val().get_bit(0);

        if self.reset.val() {
            self.rq_turn.d.next = 0.into();
            self.served.d.next = self.last_ring.val();
            self.ev_turn.d.next = 0.into();
        }
    }
}

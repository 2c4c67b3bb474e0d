//! The CLOP engine's flush-timeout scanner: walks a copy of every CLOP's flush deadline, one CLOP
//! per cycle, and asks the engine to flush the first one found due (`flush_valid`, `flush_clop`);
//! it waits, paused, until the engine says it has handled the request (`flush_done`). The engine
//! checks the buffer's own deadline before it closes anything, so a stale copy here costs a wasted
//! request, never a wrong flush.
//!
//! The copy (`nanet_contract::packed::clop_ram::deadline`) is written with the engine's state
//! (`wr`): armed at a buffer's first packet, disarmed when the buffer closes.

use nanet_contract::packed::clop_ram::deadline;
use rust_hdl::prelude::*;

use crate::common::position::bit_position;

const _: () =
    assert!(deadline::WIDTH == 33 && deadline::DEADLINE.width == 32 && deadline::VALID.width == 1);

#[derive(LogicBlock)]
pub struct ClopTimeoutScan {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// Core cycle counter.
    pub now: Signal<In, Bits<32>>,
    /// Write CLOP `wr_clop`'s deadline copy.
    pub wr: Signal<In, Bit>,
    pub wr_clop: Signal<In, Bits<6>>,
    pub wr_valid: Signal<In, Bit>,
    pub wr_deadline: Signal<In, Bits<32>>,
    /// A flush request, held (from a register) until `flush_done`.
    pub flush_valid: Signal<Out, Bit>,
    pub flush_clop: Signal<Out, Bits<6>>,
    pub flush_done: Signal<In, Bit>,

    /// `{valid, deadline}` per CLOP.
    dl_ram: RAM<Bits<33>, 6>,
    /// The CLOP read this cycle, and the one whose copy is on the RAM's output.
    scan: DFF<Bits<6>>,
    scan_prev: DFF<Bits<6>>,
    pending: DFF<Bit>,
    pending_clop: DFF<Bits<6>>,
    now_inv: Signal<Local, Bits<32>>,
    left_m1: Signal<Local, Bits<32>>,
    at_deadline: Constant<Bits<8>>,
    at_valid: Constant<Bits<8>>,
}

impl Default for ClopTimeoutScan {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            reset: Default::default(),
            now: Default::default(),
            wr: Default::default(),
            wr_clop: Default::default(),
            wr_valid: Default::default(),
            wr_deadline: Default::default(),
            flush_valid: Default::default(),
            flush_clop: Default::default(),
            flush_done: Default::default(),
            dl_ram: Default::default(),
            scan: Default::default(),
            scan_prev: Default::default(),
            pending: Default::default(),
            pending_clop: Default::default(),
            now_inv: Default::default(),
            left_m1: Default::default(),
            at_deadline: bit_position(deadline::DEADLINE.lsb),
            at_valid: bit_position(deadline::VALID.lsb),
        }
    }
}

impl Logic for ClopTimeoutScan {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, scan, scan_prev, pending, pending_clop);
        self.dl_ram.read_clock.next = self.clock.val();
        self.dl_ram.write_clock.next = self.clock.val();
        self.dl_ram.write_enable.next = self.wr.val();
        self.dl_ram.write_address.next = self.wr_clop.val();
        self.dl_ram.write_data.next = (bit_cast::<33, 1>(self.wr_valid.val().into())
            << self.at_valid.val())
            | (bit_cast::<33, 32>(self.wr_deadline.val()) << self.at_deadline.val());

        self.dl_ram.read_address.next = self.scan.q.val();
        // Expired: the deadline is not in the future (wrapping compare: `deadline - now <= 0`,
        // i.e. `deadline - now - 1 = deadline + !now` negative: one carry chain).
        self.now_inv.next = !self.now.val();
        self.left_m1.next = self
            .dl_ram
            .read_data
            .val()
            .get_bits::<32>(self.at_deadline.val().index())
            + self.now_inv.val();
        if !self.pending.q.val() {
            self.scan.d.next = self.scan.q.val() + 1;
            self.scan_prev.d.next = self.scan.q.val();
            if self
                .dl_ram
                .read_data
                .val()
                .get_bit(self.at_valid.val().index())
                & self.left_m1.val().get_bit(31)
            {
                self.pending.d.next = true;
                self.pending_clop.d.next = self.scan_prev.q.val();
                self.scan.d.next = self.scan.q.val();
            }
        }
        if self.flush_done.val() {
            self.pending.d.next = false;
        }
        self.flush_valid.next = self.pending.q.val();
        self.flush_clop.next = self.pending_clop.q.val();

        if self.reset.val() {
            self.pending.d.next = false;
            self.scan.d.next = 0.into();
        }
    }
}

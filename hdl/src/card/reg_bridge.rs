//! Register access from the core domain (250 MHz, where the BAR0 target is) to the ports' register
//! bus in the network domain (156.25 MHz), one access at a time, by a toggle handshake.
//!
//! The core side latches the access (port, word, data, write or read) and flips `req`; the network
//! side sees the flip through two flip-flops, drives the port bus (a one-cycle write strobe for a
//! write), waits for the bus's read data to settle, keeps it in `rdata_hold` and flips `ack`; the
//! core side sees that flip through two flip-flops, takes the read data into a register of its own
//! and pulses `done`. The latched access and `rdata_hold` cross without synchronizers: each is
//! stable from before the flip that announces it until after the flip that answers it, and each is
//! taken straight into a register of the receiving side (the port bus's registers on the network
//! side, `rdata` on the core side) when the flip is seen, so no logic lies on the crossing. An
//! access takes about 13 core cycles.

use rust_hdl::prelude::*;

#[derive(LogicBlock, Default)]
pub struct RegBridge {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// Starts an access (only while `busy` is low).
    pub start: Signal<In, Bit>,
    pub write: Signal<In, Bit>,
    pub port: Signal<In, Bits<2>>,
    pub word: Signal<In, Bits<7>>,
    pub wdata: Signal<In, Bits<32>>,
    /// An access is under way (from the cycle after `start` until `done`).
    pub busy: Signal<Out, Bit>,
    /// Pulses when the access is done; `rdata` then holds a read's value.
    pub done: Signal<Out, Bit>,
    pub rdata: Signal<Out, Bits<32>>,

    pub net_clock: Signal<In, Clock>,
    pub net_reset: Signal<In, Bit>,
    /// The ports' register bus (network domain).
    pub bus_port: Signal<Out, Bits<2>>,
    pub bus_addr: Signal<Out, Bits<7>>,
    pub bus_wdata: Signal<Out, Bits<32>>,
    pub bus_write: Signal<Out, Bit>,
    pub bus_rdata: Signal<In, Bits<32>>,

    // core domain
    req: DFF<Bit>,
    ack_1: DFF<Bit>,
    ack_2: DFF<Bit>,
    ack_3: DFF<Bit>,
    ack_4: DFF<Bit>,
    rdata_q: DFF<Bits<32>>,
    held_write: DFF<Bit>,
    held_port: DFF<Bits<2>>,
    held_word: DFF<Bits<7>>,
    held_wdata: DFF<Bits<32>>,
    // network domain
    req_1: DFF<Bit>,
    req_2: DFF<Bit>,
    req_3: DFF<Bit>,
    ack: DFF<Bit>,
    strobe: DFF<Bit>,
    port_q: DFF<Bits<2>>,
    word_q: DFF<Bits<7>>,
    wdata_q: DFF<Bits<32>>,
    /// Network cycles until the read data is taken (0: none pending).
    settle: DFF<Bits<2>>,
    rdata_hold: DFF<Bits<32>>,
}

impl Logic for RegBridge {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, req, ack_1, ack_2, ack_3, ack_4, rdata_q, held_write, held_port,
            held_word, held_wdata
        );
        dff_setup!(
            self, net_clock, req_1, req_2, req_3, ack, strobe, port_q, word_q, wdata_q, settle,
            rdata_hold
        );

        // ---- core side ----------------------------------------------------------------------
        self.ack_1.d.next = self.ack.q.val();
        self.ack_2.d.next = self.ack_1.q.val();
        self.ack_3.d.next = self.ack_2.q.val();
        self.ack_4.d.next = self.ack_3.q.val();
        // Busy until the cycle `done` pulses (the read data is in `rdata_q` by then).
        self.busy.next = self.req.q.val() != self.ack_3.q.val();
        if self.ack_2.q.val() != self.ack_3.q.val() {
            self.rdata_q.d.next = self.rdata_hold.q.val();
        }
        self.done.next = self.ack_3.q.val() != self.ack_4.q.val();
        self.rdata.next = self.rdata_q.q.val();
        // (Not `!busy`: a kernel reading its own output is a combinational loop to the linter.)
        if self.start.val() & (self.req.q.val() == self.ack_3.q.val()) {
            self.req.d.next = !self.req.q.val();
            self.held_write.d.next = self.write.val();
            self.held_port.d.next = self.port.val();
            self.held_word.d.next = self.word.val();
            self.held_wdata.d.next = self.wdata.val();
        }
        if self.reset.val() {
            self.req.d.next = false;
            self.ack_1.d.next = false;
            self.ack_2.d.next = false;
            self.ack_3.d.next = false;
            self.ack_4.d.next = false;
        }

        // ---- network side -------------------------------------------------------------------
        self.req_1.d.next = self.req.q.val();
        self.req_2.d.next = self.req_1.q.val();
        self.req_3.d.next = self.req_2.q.val();
        self.bus_port.next = self.port_q.q.val();
        self.bus_addr.next = self.word_q.q.val();
        self.bus_wdata.next = self.wdata_q.q.val();
        self.bus_write.next = self.strobe.q.val();
        self.strobe.d.next = false;
        if self.req_2.q.val() != self.req_3.q.val() {
            self.port_q.d.next = self.held_port.q.val();
            self.word_q.d.next = self.held_word.q.val();
            self.wdata_q.d.next = self.held_wdata.q.val();
            self.strobe.d.next = self.held_write.q.val();
            self.settle.d.next = 3.into();
        } else if self.settle.q.val() != 0 {
            self.settle.d.next = self.settle.q.val() - 1;
            if self.settle.q.val() == 1 {
                self.rdata_hold.d.next = self.bus_rdata.val();
                self.ack.d.next = !self.ack.q.val();
            }
        }
        if self.net_reset.val() {
            self.req_1.d.next = false;
            self.req_2.d.next = false;
            self.req_3.d.next = false;
            self.ack.d.next = false;
            self.strobe.d.next = false;
            self.settle.d.next = 0.into();
        }
    }
}

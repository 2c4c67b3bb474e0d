//! Frame arbiter in front of the MAC: the core's three senders (ARP, ICMP echo replies, UDP) share
//! one transmit stream. Whole frames are granted in round-robin order, so no sender can starve
//! another; a grant lasts until the frame's last beat.

use rust_hdl::prelude::*;

use crate::common::stream::{StreamSink, StreamSource};

#[derive(LogicBlock, Default)]
pub struct TxArbiter {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub arp: StreamSink,
    pub icmp: StreamSink,
    pub udp: StreamSink,
    pub out: StreamSource,

    /// Granted input: 0 ARP, 1 ICMP, 2 UDP; `busy` while a frame is in flight.
    grant: DFF<Bits<2>>,
    busy: DFF<Bit>,
    pick: Signal<Local, Bits<2>>,
    sel: Signal<Local, Bits<2>>,
}

impl Logic for TxArbiter {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, grant, busy);
        // Round robin: look first at the input after the last one granted.
        self.pick.next = self.grant.q.val();
        match self.grant.q.val().index() {
            0 => {
                if self.icmp.valid.val() {
                    self.pick.next = 1.into();
                } else if self.udp.valid.val() {
                    self.pick.next = 2.into();
                } else {
                    self.pick.next = 0.into();
                }
            }
            1 => {
                if self.udp.valid.val() {
                    self.pick.next = 2.into();
                } else if self.arp.valid.val() {
                    self.pick.next = 0.into();
                } else {
                    self.pick.next = 1.into();
                }
            }
            _ => {
                if self.arp.valid.val() {
                    self.pick.next = 0.into();
                } else if self.icmp.valid.val() {
                    self.pick.next = 1.into();
                } else {
                    self.pick.next = 2.into();
                }
            }
        }
        self.sel.next = self.grant.q.val();
        if !self.busy.q.val() {
            self.sel.next = self.pick.val();
        }
        self.arp.ready.next = false;
        self.icmp.ready.next = false;
        self.udp.ready.next = false;
        self.out.valid.next = false;
        self.out.data.next = self.udp.data.val();
        self.out.keep.next = self.udp.keep.val();
        self.out.last.next = self.udp.last.val();
        self.out.error.next = self.udp.error.val();
        match self.sel.val().index() {
            0 => {
                self.out.valid.next = self.arp.valid.val();
                self.out.data.next = self.arp.data.val();
                self.out.keep.next = self.arp.keep.val();
                self.out.last.next = self.arp.last.val();
                self.out.error.next = self.arp.error.val();
                self.arp.ready.next = self.out.ready.val();
            }
            1 => {
                self.out.valid.next = self.icmp.valid.val();
                self.out.data.next = self.icmp.data.val();
                self.out.keep.next = self.icmp.keep.val();
                self.out.last.next = self.icmp.last.val();
                self.out.error.next = self.icmp.error.val();
                self.icmp.ready.next = self.out.ready.val();
            }
            _ => {
                self.out.valid.next = self.udp.valid.val();
                self.udp.ready.next = self.out.ready.val();
            }
        }
        if self.out.valid.val() & self.out.ready.val() {
            self.grant.d.next = self.sel.val();
            self.busy.d.next = !self.out.last.val();
        }
        if self.reset.val() {
            self.busy.d.next = false;
            self.grant.d.next = 2.into();
        }
    }
}

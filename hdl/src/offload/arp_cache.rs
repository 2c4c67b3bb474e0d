//! ARP cache: 256 entries, direct mapped on the low byte of the IPv4 address, so a lookup is one
//! RAM read (no search). On a /24 (or smaller) subnet every host has its own entry; a collision
//! replaces the older entry. An entry is `{valid, ip, mac}` and a lookup hits only when the stored
//! address equals the one looked up.
//!
//! Readout (for the host's ARP table): `read_start` latches `read_index`; the entry is read in the
//! first cycle the lookup port is free (`port_busy` low: the resolver is not reading) and no flush
//! is sweeping, and `read_done` rises with the entry in `read_valid`/`read_ip`/`read_mac`.
//!
//! Writes, in priority order: the flush sweep (256 cycles, lookups miss meanwhile), a static entry
//! from the registers, an entry learned from received ARP. A learn that collides with a static
//! write in the same cycle is skipped (the peer's next ARP packet teaches it again).

use rust_hdl::prelude::*;

#[derive(LogicBlock, Default)]
pub struct ArpCache {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// Address to look up; `hit`/`mac` answer for the address presented one cycle earlier.
    pub lookup_ip: Signal<In, Bits<32>>,
    pub hit: Signal<Out, Bit>,
    pub mac: Signal<Out, Bits<48>>,
    pub learn: Signal<In, Bit>,
    pub learn_ip: Signal<In, Bits<32>>,
    pub learn_mac: Signal<In, Bits<48>>,
    pub add_static: Signal<In, Bit>,
    pub static_ip: Signal<In, Bits<32>>,
    pub static_mac: Signal<In, Bits<48>>,
    pub flush: Signal<In, Bit>,
    pub flushing: Signal<Out, Bit>,
    pub read_start: Signal<In, Bit>,
    pub read_index: Signal<In, Bits<8>>,
    /// The lookup port is in use this cycle (a readout waits).
    pub port_busy: Signal<In, Bit>,
    pub read_done: Signal<Out, Bit>,
    pub read_valid: Signal<Out, Bit>,
    pub read_ip: Signal<Out, Bits<32>>,
    pub read_mac: Signal<Out, Bits<48>>,

    /// `{valid[32], ip[31:0]}` and the MAC, in two RAMs so no word is wider than 64 bits (wide
    /// words are slow in Verilator).
    tags: RAM<Bits<33>, 8>,
    macs: RAM<Bits<48>, 8>,
    looked_up: DFF<Bits<32>>,
    sweeping: DFF<Bit>,
    sweep_addr: DFF<Bits<8>>,
    rd_pending: DFF<Bit>,
    rd_index: DFF<Bits<8>>,
    /// The readout's RAM read was issued last cycle.
    rd_issued: DFF<Bit>,
    rd_done: DFF<Bit>,
    rd_tag: DFF<Bits<33>>,
    rd_mac: DFF<Bits<48>>,
}

impl Logic for ArpCache {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, looked_up, sweeping, sweep_addr, rd_pending, rd_index, rd_issued, rd_done,
            rd_tag, rd_mac
        );
        self.tags.read_clock.next = self.clock.val();
        self.tags.write_clock.next = self.clock.val();
        self.macs.read_clock.next = self.clock.val();
        self.macs.write_clock.next = self.clock.val();
        self.tags.read_address.next = self.lookup_ip.val().get_bits::<8>(0);
        self.macs.read_address.next = self.lookup_ip.val().get_bits::<8>(0);
        self.looked_up.d.next = self.lookup_ip.val();
        self.hit.next = self.tags.read_data.val().get_bit(32)
            & (self.tags.read_data.val().get_bits::<32>(0) == self.looked_up.q.val())
            & !self.sweeping.q.val();
        self.mac.next = self.macs.read_data.val();
        self.flushing.next = self.sweeping.q.val();

        // Readout: borrows the read port in a cycle the lookup does not need it.
        self.rd_issued.d.next = false;
        if self.rd_pending.q.val() & !self.port_busy.val() & !self.sweeping.q.val() {
            self.tags.read_address.next = self.rd_index.q.val();
            self.macs.read_address.next = self.rd_index.q.val();
            self.rd_issued.d.next = true;
            self.rd_pending.d.next = false;
        }
        if self.rd_issued.q.val() {
            self.rd_tag.d.next = self.tags.read_data.val();
            self.rd_mac.d.next = self.macs.read_data.val();
            self.rd_done.d.next = true;
        }
        if self.read_start.val() {
            self.rd_pending.d.next = true;
            self.rd_index.d.next = self.read_index.val();
            self.rd_done.d.next = false;
        }
        self.read_done.next = self.rd_done.q.val();
        self.read_valid.next = self.rd_tag.q.val().get_bit(32);
        self.read_ip.next = self.rd_tag.q.val().get_bits::<32>(0);
        self.read_mac.next = self.rd_mac.q.val();

        self.tags.write_enable.next = false;
        self.tags.write_address.next = self.learn_ip.val().get_bits::<8>(0);
        self.tags.write_data.next =
            (bit_cast::<33, 1>(true.into()) << 32) | bit_cast::<33, 32>(self.learn_ip.val());
        self.macs.write_enable.next = false;
        self.macs.write_address.next = self.learn_ip.val().get_bits::<8>(0);
        self.macs.write_data.next = self.learn_mac.val();
        if self.sweeping.q.val() {
            // Only the tags need clearing: an invalid tag never hits.
            self.tags.write_enable.next = true;
            self.tags.write_address.next = self.sweep_addr.q.val();
            self.tags.write_data.next = 0.into();
            self.sweep_addr.d.next = self.sweep_addr.q.val() + 1;
            if self.sweep_addr.q.val() == 255 {
                self.sweeping.d.next = false;
            }
        } else if self.add_static.val() {
            self.tags.write_enable.next = true;
            self.tags.write_address.next = self.static_ip.val().get_bits::<8>(0);
            self.tags.write_data.next =
                (bit_cast::<33, 1>(true.into()) << 32) | bit_cast::<33, 32>(self.static_ip.val());
            self.macs.write_enable.next = true;
            self.macs.write_address.next = self.static_ip.val().get_bits::<8>(0);
            self.macs.write_data.next = self.static_mac.val();
        } else if self.learn.val() {
            self.tags.write_enable.next = true;
            self.macs.write_enable.next = true;
        }
        if self.flush.val() | self.reset.val() {
            // Reset sweeps too: the RAM has no reset of its own.
            self.sweeping.d.next = true;
            self.sweep_addr.d.next = 0.into();
        }
        if self.reset.val() {
            self.rd_pending.d.next = false;
            self.rd_issued.d.next = false;
            self.rd_done.d.next = false;
        }
    }
}

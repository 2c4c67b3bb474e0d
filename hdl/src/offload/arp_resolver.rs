//! Next-hop resolution for transmitted datagrams.
//!
//! The next hop is the destination when it is inside our subnet (`netmask`), else the gateway; the
//! limited broadcast 255.255.255.255 goes to the broadcast MAC without a lookup. On a cache miss the
//! datagram is held (its request and payload wait upstream), an ARP request is sent, and the cache is
//! looked up again when an entry is learned or `retry_interval` cycles have passed; after `retries`
//! requests without an answer the datagram is dropped (its payload drained) and `timeout_drop`
//! pulses. The longest a datagram can block the transmitter is therefore
//! `retries * retry_interval` cycles (3 ms at the reset values), never seconds.
//!
//! A request for more than 1472 payload bytes (more than fits a 1500-byte MTU frame) is dropped the
//! same way and `length_drop` pulses.

use rust_hdl::prelude::*;

use crate::common::stream::{StreamSink, StreamSource};

#[derive(Copy, Clone, Debug, PartialEq, LogicState)]
enum ResolverState {
    Idle,
    Lookup,
    Check,
    Wait,
    Send,
    Drop,
}

#[derive(LogicBlock, Default)]
pub struct ArpResolver {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub our_ip: Signal<In, Bits<32>>,
    pub netmask: Signal<In, Bits<32>>,
    pub gateway: Signal<In, Bits<32>>,
    pub retry_interval: Signal<In, Bits<32>>,
    pub retries: Signal<In, Bits<8>>,
    /// Upstream request (its other fields go straight to the UDP transmitter).
    pub req_valid: Signal<In, Bit>,
    pub req_ready: Signal<Out, Bit>,
    pub req_dst_ip: Signal<In, Bits<32>>,
    pub req_len: Signal<In, Bits<16>>,
    pub payload_in: StreamSink,
    pub payload_out: StreamSource,
    /// Cache port.
    pub lookup_ip: Signal<Out, Bits<32>>,
    /// The lookup read in this cycle matters (the cache's readout must not take the port).
    pub reading: Signal<Out, Bit>,
    pub cache_hit: Signal<In, Bit>,
    pub cache_mac: Signal<In, Bits<48>>,
    pub learned: Signal<In, Bit>,
    /// ARP request to send.
    pub arp_request: Signal<Out, Bit>,
    pub arp_request_ip: Signal<Out, Bits<32>>,
    /// UDP transmitter start.
    pub send: Signal<Out, Bit>,
    pub send_ready: Signal<In, Bit>,
    pub dst_mac: Signal<Out, Bits<48>>,
    pub timeout_drop: Signal<Out, Bit>,
    pub length_drop: Signal<Out, Bit>,

    state: DFF<ResolverState>,
    hop: DFF<Bits<32>>,
    mac: DFF<Bits<48>>,
    tries: DFF<Bits<8>>,
    timer: DFF<Bits<32>>,
    too_long: DFF<Bit>,
    acked: DFF<Bit>,
    /// The cache was written since the last read was issued: a miss must be read again.
    written: DFF<Bit>,
    next_hop: Signal<Local, Bits<32>>,
}

impl Logic for ArpResolver {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, state, hop, mac, tries, timer, too_long, acked, written);
        self.next_hop.next = self.gateway.val();
        if ((self.req_dst_ip.val() ^ self.our_ip.val()) & self.netmask.val()) == 0 {
            self.next_hop.next = self.req_dst_ip.val();
        }
        self.lookup_ip.next = self.hop.q.val();
        self.reading.next = false;
        self.arp_request.next = false;
        self.arp_request_ip.next = self.hop.q.val();
        self.send.next = false;
        self.dst_mac.next = self.mac.q.val();
        self.req_ready.next = false;
        self.timeout_drop.next = false;
        self.length_drop.next = false;
        // Payload passes through, except while a dropped datagram's payload is drained.
        self.payload_out.data.next = self.payload_in.data.val();
        self.payload_out.keep.next = self.payload_in.keep.val();
        self.payload_out.last.next = self.payload_in.last.val();
        self.payload_out.error.next = self.payload_in.error.val();
        self.payload_out.valid.next = self.payload_in.valid.val();
        self.payload_in.ready.next = self.payload_out.ready.val();

        if self.learned.val() {
            self.written.d.next = true;
        }
        match self.state.q.val() {
            ResolverState::Idle => {
                // A read is issued now; only a write in this very cycle can make it stale.
                self.written.d.next = self.learned.val();
                self.lookup_ip.next = self.next_hop.val();
                if self.req_valid.val() {
                    self.reading.next = true;
                    self.hop.d.next = self.next_hop.val();
                    self.tries.d.next = 0.into();
                    self.too_long.d.next = self.req_len.val() > 1472;
                    self.acked.d.next = false;
                    if self.req_len.val() > 1472 {
                        self.state.d.next = ResolverState::Drop;
                    } else if self.req_dst_ip.val() == 0xFFFF_FFFFu64 {
                        self.mac.d.next = 0xFFFF_FFFF_FFFFu64.into();
                        self.state.d.next = ResolverState::Send;
                    } else {
                        self.state.d.next = ResolverState::Check;
                    }
                }
            }
            ResolverState::Lookup => {
                // One cycle for the cache RAM to read the entry.
                self.reading.next = true;
                self.written.d.next = self.learned.val();
                self.state.d.next = ResolverState::Check;
            }
            ResolverState::Check => {
                if self.cache_hit.val() {
                    // Send right away; if the transmitter is busy, wait in Send.
                    self.mac.d.next = self.cache_mac.val();
                    self.send.next = true;
                    self.dst_mac.next = self.cache_mac.val();
                    if self.send_ready.val() {
                        self.req_ready.next = true;
                        self.state.d.next = ResolverState::Idle;
                    } else {
                        self.state.d.next = ResolverState::Send;
                    }
                } else if self.written.q.val() | self.learned.val() {
                    // The entry may have been written after it was read: read it again.
                    self.state.d.next = ResolverState::Lookup;
                } else if self.tries.q.val() == self.retries.val() {
                    self.acked.d.next = false;
                    self.state.d.next = ResolverState::Drop;
                } else {
                    self.arp_request.next = true;
                    self.tries.d.next = self.tries.q.val() + 1;
                    self.timer.d.next = self.retry_interval.val();
                    self.state.d.next = ResolverState::Wait;
                }
            }
            ResolverState::Wait => {
                self.timer.d.next = self.timer.q.val() - 1;
                if self.learned.val() | (self.timer.q.val() <= 1) {
                    self.state.d.next = ResolverState::Lookup;
                }
            }
            ResolverState::Send => {
                self.send.next = true;
                if self.send_ready.val() {
                    self.req_ready.next = true;
                    self.state.d.next = ResolverState::Idle;
                }
            }
            ResolverState::Drop => {
                // Acknowledge first (upstream may release the payload only then), then drain.
                self.req_ready.next = !self.acked.q.val();
                self.acked.d.next = true;
                self.payload_out.valid.next = false;
                self.payload_in.ready.next = true;
                if self.payload_in.valid.val() & self.payload_in.last.val() {
                    self.timeout_drop.next = !self.too_long.q.val();
                    self.length_drop.next = self.too_long.q.val();
                    self.state.d.next = ResolverState::Idle;
                }
            }
            _ => {
                self.state.d.next = ResolverState::Idle;
            }
        }
        if self.reset.val() {
            self.state.d.next = ResolverState::Idle;
        }
    }
}

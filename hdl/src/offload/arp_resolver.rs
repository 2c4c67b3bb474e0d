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
//!
//! Timing: every decision reads registers only. The request's next hop, length check and
//! broadcast check are registered in the cycle before it is taken (from `early_valid`: the request
//! is presented before the checksum stage lets it through, which it does only once the previous
//! payload has passed), the cache is read from them (Idle), the hit judged and the MAC registered
//! (Check), and the transmitter started from the state (Send). On a hit the transmitter sees
//! `send` two cycles after the request came through (one before, with the subnet compare, the tag
//! compare and the request's logic running on into the transmitter's start and the upstream
//! handshake).

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
    /// The request is presented upstream (before the checksum stage lets it through):
    /// `req_dst_ip` and `req_len` hold from then until `req_ready`, so they are judged into
    /// registers a cycle ahead.
    pub early_valid: Signal<In, Bit>,
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
    /// An ARP request for `hop` goes out next cycle (registered: the miss is decided late).
    request_now: DFF<Bit>,
    /// The presented request judged a cycle ahead: its next hop, too long, broadcast; `pre_ok`:
    /// these describe the request presented now (it was presented, and not taken, last cycle).
    pre_hop: DFF<Bits<32>>,
    pre_long: DFF<Bit>,
    pre_bcast: DFF<Bit>,
    pre_ok: DFF<Bit>,
    next_hop: Signal<Local, Bits<32>>,
}

impl Logic for ArpResolver {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            state,
            hop,
            mac,
            tries,
            timer,
            too_long,
            acked,
            written,
            request_now,
            pre_hop,
            pre_long,
            pre_bcast,
            pre_ok
        );
        self.next_hop.next = self.gateway.val();
        if ((self.req_dst_ip.val() ^ self.our_ip.val()) & self.netmask.val()) == 0 {
            self.next_hop.next = self.req_dst_ip.val();
        }
        self.pre_hop.d.next = self.next_hop.val();
        self.pre_long.d.next = self.req_len.val() > 1472;
        self.pre_bcast.d.next = self.req_dst_ip.val() == 0xFFFF_FFFFu64;
        // Cleared below in a cycle that takes the request.
        self.pre_ok.d.next = self.early_valid.val();
        self.lookup_ip.next = self.hop.q.val();
        self.reading.next = false;
        self.arp_request.next = self.request_now.q.val();
        self.request_now.d.next = false;
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
                // The request was judged into registers last cycle (a request that comes with
                // no such cycle before it waits one); the cache is read from them now. The
                // registers below are unused while Idle, so they load without looking at
                // `req_valid` (only the state does: the handshake fans out to three flip-flops).
                self.lookup_ip.next = self.pre_hop.q.val();
                self.written.d.next = self.learned.val();
                self.hop.d.next = self.pre_hop.q.val();
                self.tries.d.next = 0.into();
                self.too_long.d.next = self.pre_long.q.val();
                self.acked.d.next = false;
                self.mac.d.next = 0xFFFF_FFFF_FFFFu64.into();
                if self.req_valid.val() & self.pre_ok.q.val() {
                    self.reading.next = true;
                    if self.pre_long.q.val() {
                        self.state.d.next = ResolverState::Drop;
                    } else if self.pre_bcast.q.val() {
                        self.state.d.next = ResolverState::Send;
                    } else {
                        self.state.d.next = ResolverState::Check;
                    }
                }
            }
            ResolverState::Lookup => {
                // One cycle for the cache RAM to read the entry. A read is issued now; only a
                // write in this very cycle can make it stale.
                self.reading.next = true;
                self.written.d.next = self.learned.val();
                self.state.d.next = ResolverState::Check;
            }
            ResolverState::Check => {
                // A hit goes to Send through a register: the tag compare on the RAM's output
                // never reaches the transmitter's start or the upstream handshake.
                if self.cache_hit.val() {
                    self.mac.d.next = self.cache_mac.val();
                    self.state.d.next = ResolverState::Send;
                } else if self.written.q.val() | self.learned.val() {
                    // The entry may have been written after it was read: read it again.
                    self.state.d.next = ResolverState::Lookup;
                } else if self.tries.q.val() == self.retries.val() {
                    self.acked.d.next = false;
                    self.state.d.next = ResolverState::Drop;
                } else {
                    self.request_now.d.next = true;
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
                // `send` and `dst_mac` come from registers only.
                self.send.next = true;
                if self.send_ready.val() {
                    self.req_ready.next = true;
                    self.pre_ok.d.next = false;
                    self.state.d.next = ResolverState::Idle;
                }
            }
            ResolverState::Drop => {
                // Acknowledge first (upstream may release the payload only then), then drain.
                self.req_ready.next = !self.acked.q.val();
                if !self.acked.q.val() {
                    self.pre_ok.d.next = false;
                }
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
            self.request_now.d.next = false;
            self.pre_ok.d.next = false;
        }
    }
}

//! ARP sender: replies to requests for our address and sends the requests the TX resolver asks for.
//!
//! One reply and one request can be pending; replies go first. A reply asked for while another is
//! still pending replaces it (the newest requester is the one waiting; `reply_dropped` pulses), and
//! a request replaces a pending request (the resolver asks for one address at a time).
//!
//! ARP frame (42 bytes, padded to 60): w0 = `{dst MAC, our MAC[47:32]}`, w1 = `{our MAC[31:0],
//! 0x0806, htype 1}`, w2 = `{ptype 0x0800, hlen 6, plen 4, oper, our MAC[47:32]}`, w3 = `{our
//! MAC[31:0], our IP}`, w4 = `{target MAC, target IP[31:16]}`, carry = target IP[15:0].

use rust_hdl::prelude::*;

use crate::common::stream::StreamSource;
use crate::offload::frame_tx::FrameTx;

#[derive(LogicBlock, Default)]
pub struct ArpTx {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub our_mac: Signal<In, Bits<48>>,
    pub our_ip: Signal<In, Bits<32>>,
    /// Reply to `reply_mac`/`reply_ip` (a pulse).
    pub reply: Signal<In, Bit>,
    pub reply_mac: Signal<In, Bits<48>>,
    pub reply_ip: Signal<In, Bits<32>>,
    /// Broadcast a request for `request_ip` (a pulse).
    pub request: Signal<In, Bit>,
    pub request_ip: Signal<In, Bits<32>>,
    /// Pulses when a reply / a request frame starts.
    pub sent_reply: Signal<Out, Bit>,
    pub sent_request: Signal<Out, Bit>,
    pub reply_dropped: Signal<Out, Bit>,
    pub out: StreamSource,

    frame: FrameTx,
    reply_pending: DFF<Bit>,
    reply_mac_q: DFF<Bits<48>>,
    reply_ip_q: DFF<Bits<32>>,
    request_pending: DFF<Bit>,
    request_ip_q: DFF<Bits<32>>,
    target_mac: Signal<Local, Bits<48>>,
    target_ip: Signal<Local, Bits<32>>,
    eth_dst: Signal<Local, Bits<48>>,
    oper: Signal<Local, Bits<16>>,
}

impl Logic for ArpTx {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            reply_pending,
            reply_mac_q,
            reply_ip_q,
            request_pending,
            request_ip_q
        );
        self.frame.clock.next = self.clock.val();
        self.frame.reset.next = self.reset.val();
        StreamSource::link(&mut self.out, &mut self.frame.out);
        // The body is empty: one beat with no bytes.
        self.frame.body.valid.next = true;
        self.frame.body.last.next = true;
        self.frame.body.keep.next = 0.into();
        self.frame.body.data.next = 0.into();
        self.frame.body.error.next = false;

        if self.reply_pending.q.val() {
            self.eth_dst.next = self.reply_mac_q.q.val();
            self.target_mac.next = self.reply_mac_q.q.val();
            self.target_ip.next = self.reply_ip_q.q.val();
            self.oper.next = 2.into();
        } else {
            self.eth_dst.next = 0xFFFF_FFFF_FFFFu64.into();
            self.target_mac.next = 0.into();
            self.target_ip.next = self.request_ip_q.q.val();
            self.oper.next = 1.into();
        }
        self.frame.w0.next = (bit_cast::<64, 48>(self.eth_dst.val()) << 16)
            | bit_cast::<64, 16>(self.our_mac.val().get_bits::<16>(32));
        self.frame.w1.next =
            (bit_cast::<64, 32>(self.our_mac.val().get_bits::<32>(0)) << 32) | 0x0806_0001; // EtherType ARP, htype Ethernet
        self.frame.w2.next = 0x0800_0604_0000_0000u64 // ptype IPv4, hlen 6, plen 4
            | (bit_cast::<64, 16>(self.oper.val()) << 16)
            | bit_cast::<64, 16>(self.our_mac.val().get_bits::<16>(32));
        self.frame.w3.next = (bit_cast::<64, 32>(self.our_mac.val().get_bits::<32>(0)) << 32)
            | bit_cast::<64, 32>(self.our_ip.val());
        self.frame.w4.next = (bit_cast::<64, 48>(self.target_mac.val()) << 16)
            | bit_cast::<64, 16>(self.target_ip.val().get_bits::<16>(16));
        self.frame.late_checksum.next = 0.into();
        self.frame.carry.next = self.target_ip.val().get_bits::<16>(0);
        self.frame.frame_len.next = 42.into();

        self.frame.start.next = self.reply_pending.q.val() | self.request_pending.q.val();
        self.sent_reply.next = false;
        self.sent_request.next = false;
        if (self.reply_pending.q.val() | self.request_pending.q.val())
            & self.frame.start_ready.val()
        {
            if self.reply_pending.q.val() {
                self.reply_pending.d.next = false;
                self.sent_reply.next = true;
            } else {
                self.request_pending.d.next = false;
                self.sent_request.next = true;
            }
        }
        self.reply_dropped.next = false;
        if self.reply.val() {
            // A pending reply that is not leaving in this very cycle is replaced.
            self.reply_dropped.next = self.reply_pending.q.val() & !self.frame.start_ready.val();
            self.reply_pending.d.next = true;
            self.reply_mac_q.d.next = self.reply_mac.val();
            self.reply_ip_q.d.next = self.reply_ip.val();
        }
        if self.request.val() {
            self.request_pending.d.next = true;
            self.request_ip_q.d.next = self.request_ip.val();
        }
        if self.reset.val() {
            self.reply_pending.d.next = false;
            self.request_pending.d.next = false;
        }
    }
}

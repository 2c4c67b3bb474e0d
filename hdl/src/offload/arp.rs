//! ARP layer (Ethernet/IPv4 only): packet checks on receive.
//!
//! The ARP packet is bytes 14..41: hardware type = `w1[15:0]`, protocol type = `w2[63:48]`,
//! lengths = `w2[47:32]`, operation = `w2[31:16]`, sender MAC = `{w2[15:0], w3[63:32]}`,
//! sender IP = `w3[31:0]`, target MAC = `w4[63:16]`, target IP = `{w4[15:0], beat5[63:48]}`.

use rust_hdl::prelude::*;

/// Checks an ARP packet; the target IP's low half arrives with beat 5 (`tpa_low`).
#[derive(LogicBlock, Default)]
pub struct ArpRxCheck {
    pub w1: Signal<In, Bits<64>>,
    pub w2: Signal<In, Bits<64>>,
    pub w3: Signal<In, Bits<64>>,
    pub w4: Signal<In, Bits<64>>,
    pub tpa_low: Signal<In, Bits<16>>,
    pub our_ip: Signal<In, Bits<32>>,
    /// Ethernet/IPv4 ARP, request or reply.
    pub well_formed: Signal<Out, Bit>,
    pub is_request: Signal<Out, Bit>,
    pub target_is_us: Signal<Out, Bit>,
    pub sender_mac: Signal<Out, Bits<48>>,
    pub sender_ip: Signal<Out, Bits<32>>,
    oper: Signal<Local, Bits<16>>,
}

impl Logic for ArpRxCheck {
    #[hdl_gen]
    fn update(&mut self) {
        self.oper.next = self.w2.val().get_bits::<16>(16);
        self.well_formed.next = (self.w1.val().get_bits::<16>(0) == 1)
            & (self.w2.val().get_bits::<16>(48) == 0x0800)
            & (self.w2.val().get_bits::<16>(32) == 0x0604)
            & ((self.oper.val() == 1) | (self.oper.val() == 2));
        self.is_request.next = self.oper.val() == 1;
        self.sender_mac.next = (bit_cast::<48, 16>(self.w2.val().get_bits::<16>(0)) << 32)
            | bit_cast::<48, 32>(self.w3.val().get_bits::<32>(32));
        self.sender_ip.next = self.w3.val().get_bits::<32>(0);
        self.target_is_us.next = ((bit_cast::<32, 16>(self.w4.val().get_bits::<16>(0)) << 16)
            | bit_cast::<32, 16>(self.tpa_low.val()))
            == self.our_ip.val();
    }
}

//! Ethernet II layer: header field positions and the receive filter.
//!
//! Header words are the first beats of a frame, `w0` = bytes 0..7, `w1` = bytes 8..15, in network
//! order (see `nanet_contract::stream`): destination MAC = `w0[63:16]`, source MAC =
//! `{w0[15:0], w1[63:32]}`, EtherType = `w1[31:16]`.

use rust_hdl::prelude::*;

/// Receive filter: accepts frames for our MAC or broadcast, classifies the EtherType.
#[derive(LogicBlock, Default)]
pub struct EthRxCheck {
    pub w0: Signal<In, Bits<64>>,
    pub w1: Signal<In, Bits<64>>,
    pub our_mac: Signal<In, Bits<48>>,
    pub for_us: Signal<Out, Bit>,
    pub is_ipv4: Signal<Out, Bit>,
    pub is_arp: Signal<Out, Bit>,
    pub src_mac: Signal<Out, Bits<48>>,
    dst_mac: Signal<Local, Bits<48>>,
    ethertype: Signal<Local, Bits<16>>,
}

impl Logic for EthRxCheck {
    #[hdl_gen]
    fn update(&mut self) {
        self.dst_mac.next = self.w0.val().get_bits::<48>(16);
        self.ethertype.next = self.w1.val().get_bits::<16>(16);
        self.src_mac.next = (bit_cast::<48, 16>(self.w0.val().get_bits::<16>(0)) << 32)
            | bit_cast::<48, 32>(self.w1.val().get_bits::<32>(32));
        self.for_us.next = (self.dst_mac.val() == self.our_mac.val())
            | (self.dst_mac.val() == 0xFFFF_FFFF_FFFFu64);
        self.is_ipv4.next = self.ethertype.val() == 0x0800;
        self.is_arp.next = self.ethertype.val() == 0x0806;
    }
}

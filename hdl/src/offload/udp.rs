//! UDP layer: header checks on receive.
//!
//! With Ethernet + a 20-byte IPv4 header the UDP header is bytes 34..41: source port = `w4[47:32]`,
//! destination port = `w4[31:16]`, length = `w4[15:0]`, checksum = `w5[63:48]`. The payload starts
//! at frame byte 42.

use rust_hdl::prelude::*;

/// Length checks of a UDP header against the IPv4 total length.
#[derive(LogicBlock, Default)]
pub struct UdpRxCheck {
    pub w4: Signal<In, Bits<64>>,
    pub ip_total_len: Signal<In, Bits<16>>,
    /// UDP length equals the IPv4 payload length (and so covers the UDP header).
    pub length_ok: Signal<Out, Bit>,
    pub src_port: Signal<Out, Bits<16>>,
    pub dst_port: Signal<Out, Bits<16>>,
    pub udp_len: Signal<Out, Bits<16>>,
    pub payload_len: Signal<Out, Bits<16>>,
}

impl Logic for UdpRxCheck {
    #[hdl_gen]
    fn update(&mut self) {
        self.src_port.next = self.w4.val().get_bits::<16>(32);
        self.dst_port.next = self.w4.val().get_bits::<16>(16);
        self.udp_len.next = self.w4.val().get_bits::<16>(0);
        self.payload_len.next = self.w4.val().get_bits::<16>(0) - 8;
        // Widened so the sum cannot wrap (see "Arithmetic" in lib.rs).
        self.length_ok.next = (self.w4.val().get_bits::<16>(0) >= 8)
            & ((bit_cast::<32, 16>(self.w4.val().get_bits::<16>(0)) + 20)
                == bit_cast::<32, 16>(self.ip_total_len.val()));
    }
}

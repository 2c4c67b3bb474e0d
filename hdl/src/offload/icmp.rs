//! ICMP layer: echo request recognition on receive (the echo responder lives in `icmp_echo`).
//!
//! The ICMP header is bytes 34..41: type = `w4[47:40]`, code = `w4[39:32]`, checksum = `w4[31:16]`.

use rust_hdl::prelude::*;

/// Recognises an echo request (type 8, code 0, long enough to hold the echo header).
#[derive(LogicBlock, Default)]
pub struct IcmpRxCheck {
    pub w4: Signal<In, Bits<64>>,
    pub ip_total_len: Signal<In, Bits<16>>,
    pub is_echo_request: Signal<Out, Bit>,
}

impl Logic for IcmpRxCheck {
    #[hdl_gen]
    fn update(&mut self) {
        self.is_echo_request.next = (self.w4.val().get_bits::<16>(32) == 0x0800) // type 8 (echo request), code 0
            & (self.ip_total_len.val() >= 28); // IPv4 + ICMP echo headers
    }
}

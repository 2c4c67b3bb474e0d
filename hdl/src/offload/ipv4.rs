//! IPv4 layer (no options): header checks on receive.
//!
//! With a 14-byte Ethernet header the IPv4 header is bytes 14..33: version/IHL = `w1[15:8]`,
//! total length = `w2[63:48]`, flags + fragment offset = `w2[31:16]`, TTL = `w2[15:8]`,
//! protocol = `w2[7:0]`, header checksum = `w3[63:48]`, source = `w3[47:16]`,
//! destination = `{w3[15:0], w4[63:48]}`.

use rust_hdl::prelude::*;

/// Receive checks of an IPv4 header held in header words `w1..w4`, all but the header checksum
/// (ten 16-bit words: the parser sums them beat by beat as they arrive, see `rx_parser`).
#[derive(LogicBlock, Default)]
pub struct Ipv4RxCheck {
    pub w1: Signal<In, Bits<64>>,
    pub w2: Signal<In, Bits<64>>,
    pub w3: Signal<In, Bits<64>>,
    pub w4: Signal<In, Bits<64>>,
    pub our_ip: Signal<In, Bits<32>>,
    /// Version 4 and IHL 5.
    pub version_ihl_ok: Signal<Out, Bit>,
    /// Total length covers at least the header.
    pub length_ok: Signal<Out, Bit>,
    /// Destination is our address.
    pub dst_ok: Signal<Out, Bit>,
    /// More-fragments set or fragment offset non-zero.
    pub fragment: Signal<Out, Bit>,
    pub proto_udp: Signal<Out, Bit>,
    pub proto_icmp: Signal<Out, Bit>,
    pub total_len: Signal<Out, Bits<16>>,
    pub src_ip: Signal<Out, Bits<32>>,
    /// The source is no single host (RFC 1122 3.2.1.3): class E and limited broadcast (240/4),
    /// multicast (224/4) or loopback (127/8). (Our subnet's broadcast address is the parser's
    /// test: it needs the netmask.)
    pub src_bad: Signal<Out, Bit>,
    /// The source is 0.0.0.0 (only a host learning its own address sends it).
    pub src_zero: Signal<Out, Bit>,
}

impl Logic for Ipv4RxCheck {
    #[hdl_gen]
    fn update(&mut self) {
        self.version_ihl_ok.next = self.w1.val().get_bits::<8>(8) == 0x45; // version 4, IHL 5
        self.total_len.next = self.w2.val().get_bits::<16>(48);
        self.length_ok.next = self.w2.val().get_bits::<16>(48) >= 20;
        // MF flag is bit 13 of the flags/offset word, the offset its low 13 bits; DF is ignored.
        self.fragment.next = self.w2.val().get_bits::<14>(16).any();
        self.proto_udp.next = self.w2.val().get_bits::<8>(0) == 17;
        self.proto_icmp.next = self.w2.val().get_bits::<8>(0) == 1;
        self.src_ip.next = self.w3.val().get_bits::<32>(16);
        self.src_bad.next =
            (self.w3.val().get_bits::<3>(45) == 7) | (self.w3.val().get_bits::<8>(40) == 127);
        self.src_zero.next = !self.w3.val().get_bits::<32>(16).any();
        self.dst_ok.next = ((bit_cast::<32, 16>(self.w3.val().get_bits::<16>(0)) << 16)
            | bit_cast::<32, 16>(self.w4.val().get_bits::<16>(48)))
            == self.our_ip.val();
    }
}

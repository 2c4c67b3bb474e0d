//! A transmit descriptor (`nanet_contract::tx`, 32 bytes in host memory) into its fields, from the
//! two 128-bit read beats that carry it (bytes 0..15 and 16..31, little-endian lanes):
//! combinational, the positions are constants read from `nanet_contract::tx::field`.

use nanet_contract::events::Field;
use nanet_contract::tx::field;
use rust_hdl::prelude::*;

use crate::common::position::bit_position;

// The widths the block declares, against the contract's; the first five fields are in the first
// beat, the two UDP ports in the second.
const _: () = assert!(
    field::BUFFER.bytes == 8
        && field::LEN.bytes == 2
        && field::PORT.bytes == 1
        && field::FLAGS.bytes == 1
        && field::DST_IP.bytes == 4
        && field::SRC_PORT.bytes == 2
        && field::DST_PORT.bytes == 2
        && field::BUFFER.offset + field::BUFFER.bytes <= 16
        && field::LEN.offset + field::LEN.bytes <= 16
        && field::PORT.offset + field::PORT.bytes <= 16
        && field::FLAGS.offset + field::FLAGS.bytes <= 16
        && field::DST_IP.offset + field::DST_IP.bytes <= 16
        && field::SRC_PORT.offset >= 16
        && field::SRC_PORT.offset + field::SRC_PORT.bytes <= 32
        && field::DST_PORT.offset >= 16
        && field::DST_PORT.offset + field::DST_PORT.bytes <= 32
);

/// The bit position of a field inside its 128-bit beat.
fn lsb_in_beat(f: Field) -> Constant<Bits<8>> {
    bit_position((f.offset % 16) * 8)
}

#[derive(LogicBlock)]
pub struct TxDescUnpack {
    /// Bytes 0..15 and 16..31 of the descriptor.
    pub lo: Signal<In, Bits<128>>,
    pub hi: Signal<In, Bits<128>>,
    pub buffer: Signal<Out, Bits<64>>,
    pub len: Signal<Out, Bits<16>>,
    pub port: Signal<Out, Bits<8>>,
    pub flags: Signal<Out, Bits<8>>,
    /// Network order as a number: a.b.c.d is `a << 24 | b << 16 | c << 8 | d`.
    pub dst_ip: Signal<Out, Bits<32>>,
    pub src_port: Signal<Out, Bits<16>>,
    pub dst_port: Signal<Out, Bits<16>>,
    at_buffer: Constant<Bits<8>>,
    at_len: Constant<Bits<8>>,
    at_port: Constant<Bits<8>>,
    at_flags: Constant<Bits<8>>,
    at_dst_ip: Constant<Bits<8>>,
    at_src_port: Constant<Bits<8>>,
    at_dst_port: Constant<Bits<8>>,
}

impl Default for TxDescUnpack {
    fn default() -> Self {
        Self {
            lo: Default::default(),
            hi: Default::default(),
            buffer: Default::default(),
            len: Default::default(),
            port: Default::default(),
            flags: Default::default(),
            dst_ip: Default::default(),
            src_port: Default::default(),
            dst_port: Default::default(),
            at_buffer: lsb_in_beat(field::BUFFER),
            at_len: lsb_in_beat(field::LEN),
            at_port: lsb_in_beat(field::PORT),
            at_flags: lsb_in_beat(field::FLAGS),
            at_dst_ip: lsb_in_beat(field::DST_IP),
            at_src_port: lsb_in_beat(field::SRC_PORT),
            at_dst_port: lsb_in_beat(field::DST_PORT),
        }
    }
}

impl Logic for TxDescUnpack {
    #[hdl_gen]
    fn update(&mut self) {
        self.buffer.next = self.lo.val().get_bits::<64>(self.at_buffer.val().index());
        self.len.next = self.lo.val().get_bits::<16>(self.at_len.val().index());
        self.port.next = self.lo.val().get_bits::<8>(self.at_port.val().index());
        self.flags.next = self.lo.val().get_bits::<8>(self.at_flags.val().index());
        // The address's bytes are in memory order: the first is the most significant.
        self.dst_ip.next =
            (bit_cast::<32, 8>(self.lo.val().get_bits::<8>(self.at_dst_ip.val().index())) << 24)
                | (bit_cast::<32, 8>(
                    self.lo
                        .val()
                        .get_bits::<8>(self.at_dst_ip.val().index() + 8),
                ) << 16)
                | (bit_cast::<32, 8>(
                    self.lo
                        .val()
                        .get_bits::<8>(self.at_dst_ip.val().index() + 16),
                ) << 8)
                | bit_cast::<32, 8>(
                    self.lo
                        .val()
                        .get_bits::<8>(self.at_dst_ip.val().index() + 24),
                );
        self.src_port.next = self.hi.val().get_bits::<16>(self.at_src_port.val().index());
        self.dst_port.next = self.hi.val().get_bits::<16>(self.at_dst_port.val().index());
    }
}

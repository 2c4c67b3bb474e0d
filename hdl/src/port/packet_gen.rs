//! The built-in packet generator of a port (network domain, 156.25 MHz): UDP datagrams straight
//! into the offload core's transmit request and payload stream, as the paper's loopback
//! measurement uses, with its registers (`nanet_contract::rx::PortReg::Gen*`, words 0x68..0x6E
//! of the port block; `reg_addr` here is the word's low 3 bits).
//!
//! Payload (`nanet_contract::rx::GEN_PAYLOAD_FIELDS`): the sequence number (little-endian u64),
//! the core cycle counter when the request was taken (little-endian u32), then byte `i` is
//! `i % 256`. On the stream the first byte is in `data[63:56]`, so the little-endian fields are
//! byte-reversed into the beat. A stop ends the run after the datagram in progress: a payload is
//! never cut.

use rust_hdl::prelude::*;

use crate::common::stream::KeepForLen;
use crate::offload::udp_datagram::UdpTxSource;

#[derive(Copy, Clone, Debug, PartialEq, LogicState)]
enum GenState {
    Idle,
    Request,
    Payload,
    Gap,
}

#[derive(LogicBlock, Default)]
pub struct PacketGen {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// Core time, synchronised into this domain.
    pub now: Signal<In, Bits<32>>,

    /// Register bus: word `0x68 + reg_addr`, a write strobe, read data one cycle after the address.
    pub reg_addr: Signal<In, Bits<3>>,
    pub reg_wdata: Signal<In, Bits<32>>,
    pub reg_write: Signal<In, Bit>,
    pub reg_rdata: Signal<Out, Bits<32>>,

    /// The datagrams, to the offload core's transmitter (through the transmit feeder).
    pub tx: UdpTxSource,
    /// The generator is in a payload (its request was taken; the payload's last beat is not).
    pub busy: Signal<Out, Bit>,

    state: DFF<GenState>,
    stopping: DFF<Bit>,
    cfg_dst_ip: DFF<Bits<32>>,
    cfg_ports: DFF<Bits<32>>,
    cfg_len: DFF<Bits<16>>,
    cfg_count: DFF<Bits<32>>,
    cfg_gap: DFF<Bits<32>>,
    sent: DFF<Bits<32>>,
    seq: DFF<Bits<64>>,
    tx_time: DFF<Bits<32>>,
    /// Payload bytes left (including this beat's), the beat number, the gap left.
    left: DFF<Bits<16>>,
    beat: DFF<Bits<8>>,
    gap_left: DFF<Bits<32>>,
    rdata_q: DFF<Bits<32>>,

    /// The payload length as sent (clamped), a register (timing: the core's frame length starts
    /// from it); it follows a length write a cycle later, long before a start can.
    clamped: DFF<Bits<16>>,
    /// `keep` of the beat that carries the `left` bytes.
    beat_keep: KeepForLen,
    pattern: Signal<Local, Bits<64>>,
    base: Signal<Local, Bits<64>>,
    base8: Signal<Local, Bits<8>>,
    sent_next: Signal<Local, Bits<32>>,
    seq_swapped: Signal<Local, Bits<64>>,
    time_swapped: Signal<Local, Bits<32>>,
    done_all: Signal<Local, Bit>,
}

impl Logic for PacketGen {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, state, stopping, cfg_dst_ip, cfg_ports, cfg_len, cfg_count, cfg_gap, sent,
            seq, tx_time, left, beat, gap_left, rdata_q, clamped
        );

        // ---- registers --------------------------------------------------------------------
        self.clamped.d.next = self.cfg_len.q.val();
        if self.cfg_len.q.val() < 16 {
            self.clamped.d.next = 16.into();
        }
        if self.cfg_len.q.val() > 1472 {
            self.clamped.d.next = 1472.into();
        }
        if self.reg_write.val() {
            match self.reg_addr.val().index() {
                1 => self.cfg_dst_ip.d.next = self.reg_wdata.val(),
                2 => self.cfg_ports.d.next = self.reg_wdata.val(),
                3 => self.cfg_len.d.next = self.reg_wdata.val().get_bits::<16>(0),
                4 => self.cfg_count.d.next = self.reg_wdata.val(),
                5 => self.cfg_gap.d.next = self.reg_wdata.val(),
                _ => {}
            }
        }
        self.rdata_q.d.next = 0.into();
        match self.reg_addr.val().index() {
            0 => {
                self.rdata_q.d.next =
                    bit_cast::<32, 1>((self.state.q.val() != GenState::Idle).into())
            }
            1 => self.rdata_q.d.next = self.cfg_dst_ip.q.val(),
            2 => self.rdata_q.d.next = self.cfg_ports.q.val(),
            3 => self.rdata_q.d.next = bit_cast::<32, 16>(self.cfg_len.q.val()),
            4 => self.rdata_q.d.next = self.cfg_count.q.val(),
            5 => self.rdata_q.d.next = self.cfg_gap.q.val(),
            6 => self.rdata_q.d.next = self.sent.q.val(),
            _ => {}
        }
        self.reg_rdata.next = self.rdata_q.q.val();

        // ---- the payload beat --------------------------------------------------------------
        // Byte j of beat k is (8k + j) % 256; 8k % 256 is a multiple of 8, so OR adds it.
        self.base8.next = self.beat.q.val() << 3;
        self.base.next = bit_cast::<64, 8>(self.base8.val());
        self.pattern.next = (self.base.val() << 56)
            | (self.base.val() << 48)
            | (self.base.val() << 40)
            | (self.base.val() << 32)
            | (self.base.val() << 24)
            | (self.base.val() << 16)
            | (self.base.val() << 8)
            | self.base.val()
            | 0x0001_0203_0405_0607u64;
        self.seq_swapped.next = (bit_cast::<64, 8>(self.seq.q.val().get_bits::<8>(0)) << 56)
            | (bit_cast::<64, 8>(self.seq.q.val().get_bits::<8>(8)) << 48)
            | (bit_cast::<64, 8>(self.seq.q.val().get_bits::<8>(16)) << 40)
            | (bit_cast::<64, 8>(self.seq.q.val().get_bits::<8>(24)) << 32)
            | (bit_cast::<64, 8>(self.seq.q.val().get_bits::<8>(32)) << 24)
            | (bit_cast::<64, 8>(self.seq.q.val().get_bits::<8>(40)) << 16)
            | (bit_cast::<64, 8>(self.seq.q.val().get_bits::<8>(48)) << 8)
            | bit_cast::<64, 8>(self.seq.q.val().get_bits::<8>(56));
        self.time_swapped.next = (bit_cast::<32, 8>(self.tx_time.q.val().get_bits::<8>(0)) << 24)
            | (bit_cast::<32, 8>(self.tx_time.q.val().get_bits::<8>(8)) << 16)
            | (bit_cast::<32, 8>(self.tx_time.q.val().get_bits::<8>(16)) << 8)
            | bit_cast::<32, 8>(self.tx_time.q.val().get_bits::<8>(24));
        self.tx.payload.data.next = self.pattern.val();
        if self.beat.q.val() == 0 {
            self.tx.payload.data.next = self.seq_swapped.val();
        }
        if self.beat.q.val() == 1 {
            self.tx.payload.data.next =
                (bit_cast::<64, 32>(self.time_swapped.val()) << 32) | 0x0C0D_0E0Fu64;
        }
        self.tx.payload.last.next = self.left.q.val() <= 8;
        self.beat_keep.len.next = self.left.q.val();
        self.tx.payload.keep.next = self.beat_keep.keep.val();

        // ---- the run ----------------------------------------------------------------------
        self.tx.req_valid.next = false;
        self.tx.payload.valid.next = false;
        self.tx.payload.error.next = false;
        self.tx.dst_ip.next = self.cfg_dst_ip.q.val();
        self.tx.src_port.next = self.cfg_ports.q.val().get_bits::<16>(16);
        self.tx.dst_port.next = self.cfg_ports.q.val().get_bits::<16>(0);
        self.tx.len.next = self.clamped.q.val();
        self.busy.next = self.state.q.val() == GenState::Payload;
        self.sent_next.next = self.sent.q.val() + 1;
        self.done_all.next =
            (self.cfg_count.q.val() != 0) & (self.sent_next.val() == self.cfg_count.q.val());
        if self.reg_write.val() & (self.reg_addr.val() == 0) & self.reg_wdata.val().get_bit(1) {
            self.stopping.d.next = true;
        }
        match self.state.q.val() {
            GenState::Idle => {
                if self.reg_write.val()
                    & (self.reg_addr.val() == 0)
                    & self.reg_wdata.val().get_bit(0)
                {
                    self.seq.d.next = 0.into();
                    self.sent.d.next = 0.into();
                    self.stopping.d.next = false;
                    self.state.d.next = GenState::Request;
                }
            }
            GenState::Request => {
                self.tx.req_valid.next = true;
                if self.tx.req_ready.val() {
                    self.tx_time.d.next = self.now.val();
                    self.left.d.next = self.clamped.q.val();
                    self.beat.d.next = 0.into();
                    self.state.d.next = GenState::Payload;
                }
            }
            GenState::Payload => {
                self.tx.payload.valid.next = true;
                if self.tx.payload.ready.val() {
                    self.left.d.next = self.left.q.val() - 8;
                    self.beat.d.next = self.beat.q.val() + 1;
                    if self.left.q.val() <= 8 {
                        self.sent.d.next = self.sent_next.val();
                        self.seq.d.next = self.seq.q.val() + 1;
                        self.gap_left.d.next = self.cfg_gap.q.val();
                        self.state.d.next = GenState::Gap;
                        if self.done_all.val() | self.stopping.q.val() {
                            self.state.d.next = GenState::Idle;
                        }
                    }
                }
            }
            GenState::Gap => {
                if self.stopping.q.val() {
                    self.state.d.next = GenState::Idle;
                } else if self.gap_left.q.val() == 0 {
                    self.state.d.next = GenState::Request;
                } else {
                    self.gap_left.d.next = self.gap_left.q.val() - 1;
                }
            }
        }
        if self.reset.val() {
            self.state.d.next = GenState::Idle;
            self.stopping.d.next = false;
            self.sent.d.next = 0.into();
            self.cfg_len.d.next = 64.into();
            self.cfg_count.d.next = 0.into();
            self.cfg_gap.d.next = 0.into();
        }
    }
}

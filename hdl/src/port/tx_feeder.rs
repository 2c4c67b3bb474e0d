//! A port's transmit input (network domain): the offload core's UDP transmit request and payload
//! stream, shared by the host's datagrams (the words of `tx/engine.rs` through the port's
//! clock-crossing FIFO) and the port's packet generator (`port/packet_gen.rs`). The turn changes only
//! between datagrams, decided in `Idle`: the host takes it when a header word waits and the
//! generator is not in a payload; else a waiting generator request is shown (`GenRequest`) until
//! the core takes it (the core judges a request's fields while it is shown, so the turn never
//! moves from a shown request). The request valid the core sees is a state, not logic.
//!
//! Host entries are `W` bits (the core datapath's width: 16 bytes at 128 bits, 32 at 256) in
//! little-endian memory lanes (`tx/engine.rs`, `nanet_contract::packed::tx_entry`); each leaves
//! as 64-bit beats, `W / 64` of them (fewer for a last entry of fewer bytes), byte-reversed,
//! since the stream wants the first byte in `data[63:56]`; the last entry's tag gives its byte
//! count and whether the datagram failed (`error` on its last beat: the port sends it with a MAC
//! error).
//!
//! A host datagram starts only once it is whole in the FIFO (`q_whole`, the count of datagrams
//! whose last entry went in, is ahead of the datagrams started): its payload then follows its
//! headers without a gap, as a MAC requires (one that sees `valid` fall inside a frame ends the
//! frame there). The count crosses from the core domain through a Gray-coded synchronizer as slow
//! as the FIFO's own pointer, and the headers leave first, so the last entry is there in time.

use nanet_contract::packed::tx_entry;
use rust_hdl::prelude::*;

use crate::common::datapath_width::DatapathWidth;
use crate::offload::udp_datagram::{UdpTxSink, UdpTxSource};

// The kernel's literal tag layout must be the contract's.
const _: () = assert!(
    tx_entry::tag::KIND.lsb == 0
        && tx_entry::tag::LAST_BYTES_M1.lsb == 2
        && tx_entry::tag::LAST_BYTES_M1.width == 5
        && tx_entry::tag::ERROR.lsb == 7
        && tx_entry::tag::HEADER == 0
        && tx_entry::tag::LAST == 3
        && tx_entry::DST_PORT.lsb == 0
        && tx_entry::SRC_PORT.lsb == 16
        && tx_entry::DST_IP.lsb == 32
        && tx_entry::LEN.lsb == 64
);

#[derive(Copy, Clone, Debug, PartialEq, LogicState)]
enum FeedState {
    Idle,
    /// The generator's request is shown; its payload follows while the state is back in `Idle`
    /// (the generator is busy meanwhile, so the host cannot take the turn).
    GenRequest,
    Request,
    Payload,
}

#[derive(LogicBlock, Default)]
pub struct TxFeeder<const W: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,

    /// The port's FIFO of host words and their tags (see `tx/engine.rs`).
    pub q_data: Signal<In, Bits<W>>,
    pub q_tag: Signal<In, Bits<8>>,
    pub q_valid: Signal<In, Bit>,
    pub q_ready: Signal<Out, Bit>,
    /// Host datagrams whose last entry has gone into the FIFO (wrapping count).
    pub q_whole: Signal<In, Bits<32>>,

    /// The generator's datagrams; `generator_busy`: it is in a payload.
    pub generator: UdpTxSink,
    pub generator_busy: Signal<In, Bit>,

    /// The offload core's transmit input.
    pub out: UdpTxSource,

    width: DatapathWidth<W>,
    state: DFF<FeedState>,
    h_dst_ip: DFF<Bits<32>>,
    h_ports: DFF<Bits<32>>,
    h_len: DFF<Bits<16>>,
    /// The entry's 64-bit word that goes next (0 to `W / 64 - 1`).
    qword: DFF<Bits<2>>,
    /// The entry's last word's index: 1 at 128 bits, 3 at 256.
    last_qword: Signal<Local, Bits<2>>,
    entry: Signal<Local, Bits<256>>,
    /// Host datagrams taken (wrapping count), and whether `q_whole` was ahead of it a cycle ago
    /// (registered for timing; the turn stays away from `Idle` for two cycles after a take, so
    /// the register has caught up when the next header is looked at).
    started: DFF<Bits<32>>,
    whole_waits: DFF<Bit>,
    host_turn: Signal<Local, Bit>,
    half: Signal<Local, Bits<64>>,
    /// This beat ends the entry (its last word, or a last entry's last bytes).
    entry_done: Signal<Local, Bit>,
    beat_last: Signal<Local, Bit>,
    /// A last entry's bytes less one (0..31).
    beat_bytes: Signal<Local, Bits<5>>,
    /// `keep` of a host datagram's last beat: its first `beat_bytes + 1` lanes.
    last_keep: Signal<Local, Bits<8>>,
    take: Signal<Local, Bit>,
    swapped: Signal<Local, Bits<64>>,
    is_last: Signal<Local, Bit>,
}

impl<const W: usize> Logic for TxFeeder<W> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            state,
            h_dst_ip,
            h_ports,
            h_len,
            qword,
            started,
            whole_waits
        );
        self.whole_waits.d.next = self.q_whole.val() != self.started.q.val();
        self.entry.next = bit_cast::<256, W>(self.q_data.val());
        match self.qword.q.val().index() {
            0 => self.half.next = self.entry.val().get_bits::<64>(0),
            1 => self.half.next = self.entry.val().get_bits::<64>(64),
            2 => self.half.next = self.entry.val().get_bits::<64>(128),
            _ => self.half.next = self.entry.val().get_bits::<64>(192),
        }
        self.last_qword.next = 1.into();
        if self.width.wide.val() {
            self.last_qword.next = 3.into();
        }
        self.swapped.next = (bit_cast::<64, 8>(self.half.val().get_bits::<8>(0)) << 56)
            | (bit_cast::<64, 8>(self.half.val().get_bits::<8>(8)) << 48)
            | (bit_cast::<64, 8>(self.half.val().get_bits::<8>(16)) << 40)
            | (bit_cast::<64, 8>(self.half.val().get_bits::<8>(24)) << 32)
            | (bit_cast::<64, 8>(self.half.val().get_bits::<8>(32)) << 24)
            | (bit_cast::<64, 8>(self.half.val().get_bits::<8>(40)) << 16)
            | (bit_cast::<64, 8>(self.half.val().get_bits::<8>(48)) << 8)
            | bit_cast::<64, 8>(self.half.val().get_bits::<8>(56));
        self.is_last.next = self.q_tag.val().get_bits::<2>(0) == 3;
        // Bytes of a last entry, minus one; its last word is the one they end in (bits 4:3, at
        // 128 bits bit 3 only: the tag's bit 6 is 0 there, and dropped).
        self.beat_bytes.next = self.q_tag.val().get_bits::<5>(2);
        if !self.width.wide.val() {
            self.beat_bytes.next = self.q_tag.val().get_bits::<5>(2) & 0xF;
        }
        self.beat_last.next =
            self.is_last.val() & (self.qword.q.val() == self.beat_bytes.val().get_bits::<2>(3));
        self.entry_done.next = (self.qword.q.val() == self.last_qword.val()) | self.beat_last.val();
        // Straight from the tag's three bits (no add and wide compare: timing).
        match self.beat_bytes.val().get_bits::<3>(0).index() {
            0 => self.last_keep.next = 0x80.into(),
            1 => self.last_keep.next = 0xC0.into(),
            2 => self.last_keep.next = 0xE0.into(),
            3 => self.last_keep.next = 0xF0.into(),
            4 => self.last_keep.next = 0xF8.into(),
            5 => self.last_keep.next = 0xFC.into(),
            6 => self.last_keep.next = 0xFE.into(),
            _ => self.last_keep.next = 0xFF.into(),
        }

        // The host takes the turn at a header word, unless the generator is in a payload.
        self.take.next = (self.state.q.val() == FeedState::Idle)
            & self.q_valid.val()
            & (self.q_tag.val().get_bits::<2>(0) == 0)
            & self.whole_waits.q.val()
            & !self.generator_busy.val();
        self.host_turn.next =
            (self.state.q.val() == FeedState::Request) | (self.state.q.val() == FeedState::Payload);

        // The generator's request while shown, its payload when it is not the host's turn.
        self.out.req_valid.next = false;
        self.generator.req_ready.next = false;
        self.out.dst_ip.next = self.generator.dst_ip.val();
        self.out.src_port.next = self.generator.src_port.val();
        self.out.dst_port.next = self.generator.dst_port.val();
        self.out.len.next = self.generator.len.val();
        self.out.payload.data.next = self.generator.payload.data.val();
        self.out.payload.keep.next = self.generator.payload.keep.val();
        self.out.payload.last.next = self.generator.payload.last.val();
        self.out.payload.error.next = false;
        self.out.payload.valid.next = self.generator.payload.valid.val() & !self.host_turn.val();
        self.generator.payload.ready.next = self.out.payload.ready.val() & !self.host_turn.val();
        self.q_ready.next = false;

        match self.state.q.val() {
            FeedState::Idle => {
                if self.take.val() {
                    self.h_dst_ip.d.next = self.q_data.val().get_bits::<32>(32);
                    self.h_ports.d.next = self.q_data.val().get_bits::<32>(0);
                    self.h_len.d.next = self.q_data.val().get_bits::<16>(64);
                    self.q_ready.next = true;
                    self.qword.d.next = 0.into();
                    self.started.d.next = self.started.q.val() + 1;
                    self.state.d.next = FeedState::Request;
                } else if self.generator.req_valid.val() & !self.generator_busy.val() {
                    self.state.d.next = FeedState::GenRequest;
                }
                if !self.take.val() & self.q_valid.val() & (self.q_tag.val().get_bits::<2>(0) != 0)
                {
                    // An entry outside a datagram (cannot happen): dropped.
                    self.q_ready.next = true;
                }
            }
            FeedState::GenRequest => {
                self.out.req_valid.next = true;
                self.generator.req_ready.next = self.out.req_ready.val();
                if self.out.req_ready.val() {
                    self.state.d.next = FeedState::Idle;
                }
            }
            FeedState::Request => {
                self.out.req_valid.next = true;
                self.out.dst_ip.next = self.h_dst_ip.q.val();
                self.out.src_port.next = self.h_ports.q.val().get_bits::<16>(16);
                self.out.dst_port.next = self.h_ports.q.val().get_bits::<16>(0);
                self.out.len.next = self.h_len.q.val();
                if self.out.req_ready.val() {
                    self.state.d.next = FeedState::Payload;
                }
            }
            FeedState::Payload => {
                self.out.payload.data.next = self.swapped.val();
                self.out.payload.keep.next = 0xFF.into();
                if self.beat_last.val() {
                    self.out.payload.keep.next = self.last_keep.val();
                }
                self.out.payload.last.next = self.beat_last.val();
                self.out.payload.error.next = self.beat_last.val() & self.q_tag.val().get_bit(7);
                self.out.payload.valid.next = self.q_valid.val();
                self.q_ready.next = self.out.payload.ready.val() & self.entry_done.val();
                if self.q_valid.val() & self.out.payload.ready.val() {
                    // (Masked to the entry's words, so at 128 bits the upper bit stays 0.)
                    self.qword.d.next = (self.qword.q.val() + 1) & self.last_qword.val();
                    if self.entry_done.val() {
                        self.qword.d.next = 0.into();
                    }
                    if self.beat_last.val() {
                        self.state.d.next = FeedState::Idle;
                    }
                }
            }
        }
        if self.reset.val() {
            self.state.d.next = FeedState::Idle;
            self.started.d.next = 0.into();
        }
    }
}

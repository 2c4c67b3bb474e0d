//! The transmit engine of the core domain (250 MHz): the descriptor ring of
//! `nanet_contract::tx`, read by DMA (`pcie_read.rs`), into the ports' transmit FIFOs.
//!
//! For each descriptor between `head` and the doorbell's `tail`: read it (32 bytes), check it
//! (length 1 to 1472, a port the card has, buffer 16-byte aligned), wait until its port's FIFO has room
//! for a whole datagram (`port_room`), write two header words and the payload into that FIFO,
//! reading the payload in reads of up to 256 bytes that never cross 4 KiB. While a payload is
//! read, the next descriptor's read is issued behind it (reads come back in order), so a ring of
//! large datagrams keeps one port at line rate. Then `head` advances and, if the descriptor asks
//! for it, a `TxDone` event record goes to the event queue; a refused descriptor or a failed read
//! raises `TxError` and is counted. A read that fails in the middle of a payload ends the
//! datagram with `error` set (the port sends it with a MAC error, so no receiver takes it).
//!
//! Port FIFO entries (128 bits, a read beat: little-endian memory lanes for payload) and their
//! 8-bit tags: kind in bits 1:0 (0: the header, `dst_ip << 32 | src_port << 16 | dst_port` in
//! bits 63:0 and the payload length in bits 79:64; 2: payload; 3: the last payload entry, its
//! byte count minus one in bits 5:2, `error` in bit 6). One entry per cycle, so a datagram
//! reaches its FIFO at twice the line rate.

use nanet_contract::events::EventKind;
use nanet_contract::tx::TxReg;
use rust_hdl::prelude::*;

// The kernel's literal words and event codes must be the contract's.
const _: () = assert!(
    TxReg::RingBaseLo.word() == 0
        && TxReg::RingBaseHi.word() == 1
        && TxReg::RingSize.word() == 2
        && TxReg::Tail.word() == 3
        && TxReg::Head.word() == 4
        && TxReg::Sent.word() == 16
        && TxReg::BadDescriptor.word() == 17
        && TxReg::ReadError.word() == 18
        && EventKind::TxDone as u8 == 6
        && EventKind::TxError as u8 == 7
);

#[derive(Copy, Clone, Debug, PartialEq, LogicState)]
enum TxState {
    Idle,
    DescRead,
    DescWait,
    Check,
    Room,
    Header,
    Payload,
    Finish,
    Event,
}

#[derive(LogicBlock, Default)]
pub struct TxEngine {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub now: Signal<In, Bits<32>>,

    /// Register bus (`nanet_contract::tx::TxReg`): word address, write strobe, read data one
    /// cycle after the address.
    pub reg_addr: Signal<In, Bits<6>>,
    pub reg_wdata: Signal<In, Bits<32>>,
    pub reg_write: Signal<In, Bit>,
    pub reg_rdata: Signal<Out, Bits<32>>,

    /// Reads (`pcie_read.rs`).
    pub rq_valid: Signal<Out, Bit>,
    pub rq_ready: Signal<In, Bit>,
    pub rq_addr: Signal<Out, Bits<64>>,
    pub rq_len: Signal<Out, Bits<9>>,
    pub rd_data: Signal<In, Bits<128>>,
    pub rd_last: Signal<In, Bit>,
    pub rd_error: Signal<In, Bit>,
    pub rd_valid: Signal<In, Bit>,
    pub rd_ready: Signal<Out, Bit>,

    /// Port FIFO writes: entry, tag, the port, a strobe; bit p of `port_room`: port p's FIFO has
    /// room for a whole datagram.
    pub out_data: Signal<Out, Bits<128>>,
    pub out_tag: Signal<Out, Bits<8>>,
    pub out_port: Signal<Out, Bits<2>>,
    pub out_valid: Signal<Out, Bit>,
    pub port_room: Signal<In, Bits<4>>,
    /// The card's port count: descriptors for port `ports` and up are refused.
    pub ports: Signal<In, Bits<3>>,

    /// Event records to the event queue.
    pub ev_valid: Signal<Out, Bit>,
    pub ev_lo: Signal<Out, Bits<128>>,
    pub ev_hi: Signal<Out, Bits<128>>,
    pub ev_ready: Signal<In, Bit>,

    state: DFF<TxState>,
    // registers
    base: DFF<Bits<64>>,
    size_log2: DFF<Bits<4>>,
    enable: DFF<Bit>,
    tail: DFF<Bits<16>>,
    head: DFF<Bits<16>>,
    sent: DFF<Bits<32>>,
    bad: DFF<Bits<32>>,
    read_errors: DFF<Bits<32>>,
    rdata_q: DFF<Bits<32>>,
    // the descriptor
    d_buf: DFF<Bits<64>>,
    d_len: DFF<Bits<16>>,
    d_port: DFF<Bits<8>>,
    d_flags: DFF<Bits<8>>,
    d_ip: DFF<Bits<32>>,
    d_ports: DFF<Bits<32>>,
    d_err: DFF<Bit>,
    d_second: DFF<Bit>,
    /// The next descriptor's read is issued (its two beats follow this payload's).
    prefetched: DFF<Bit>,
    // payload reads still to issue, payload entries still to write
    iss_addr: DFF<Bits<64>>,
    iss_left: DFF<Bits<16>>,
    words_left: DFF<Bits<16>>,
    pay_err: DFF<Bit>,
    // the batch since the last TxDone event
    batch_count: DFF<Bits<16>>,
    batch_bytes: DFF<Bits<32>>,
    batch_first: DFF<Bits<16>>,
    t_fetch: DFF<Bits<32>>,
    t_checked: DFF<Bits<32>>,
    t_first: DFF<Bits<32>>,
    ev_kind: DFF<Bits<4>>,

    mask: Signal<Local, Bits<16>>,
    slot: Signal<Local, Bits<16>>,
    next_slot: Signal<Local, Bits<16>>,
    head_next: Signal<Local, Bits<16>>,
    page_off: Signal<Local, Bits<12>>,
    page_inv: Signal<Local, Bits<12>>,
    to_page: Signal<Local, Bits<16>>,
    room: Signal<Local, Bit>,
    ev_count: Signal<Local, Bits<16>>,
    ev_bytes: Signal<Local, Bits<32>>,
    chunk: Signal<Local, Bits<16>>,
    last_word: Signal<Local, Bit>,
    last_bytes: Signal<Local, Bits<4>>,
    can_prefetch: Signal<Local, Bit>,
    len_ok: Signal<Local, Bit>,
    payload_words: Signal<Local, Bits<16>>,
    len15: Signal<Local, Bits<16>>,
    len_m1: Signal<Local, Bits<16>>,
    port_ok: Signal<Local, Bit>,
}

impl Logic for TxEngine {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            state,
            base,
            size_log2,
            enable,
            tail,
            head,
            sent,
            bad,
            read_errors,
            rdata_q,
            d_buf,
            d_len,
            d_port,
            d_flags,
            d_ip,
            d_ports,
            d_err,
            d_second,
            prefetched,
            iss_addr,
            iss_left,
            words_left,
            pay_err,
            batch_count,
            batch_bytes,
            batch_first,
            t_fetch,
            t_checked,
            t_first,
            ev_kind
        );

        // ---- registers ------------------------------------------------------------------------
        if self.reg_write.val() {
            match self.reg_addr.val().index() {
                0 => {
                    self.base.d.next = (self.base.q.val() & 0xFFFF_FFFF_0000_0000u64)
                        | bit_cast::<64, 32>(self.reg_wdata.val())
                }
                1 => {
                    self.base.d.next = (self.base.q.val() & 0xFFFF_FFFFu64)
                        | (bit_cast::<64, 32>(self.reg_wdata.val()) << 32)
                }
                2 => {
                    self.size_log2.d.next = self.reg_wdata.val().get_bits::<4>(0);
                    self.enable.d.next = self.reg_wdata.val().get_bit(31);
                }
                3 => self.tail.d.next = self.reg_wdata.val().get_bits::<16>(0),
                _ => {}
            }
        }
        self.rdata_q.d.next = 0.into();
        match self.reg_addr.val().index() {
            0 => self.rdata_q.d.next = self.base.q.val().get_bits::<32>(0),
            1 => self.rdata_q.d.next = self.base.q.val().get_bits::<32>(32),
            2 => {
                self.rdata_q.d.next = bit_cast::<32, 4>(self.size_log2.q.val())
                    | (bit_cast::<32, 1>(self.enable.q.val().into()) << 31)
            }
            3 => self.rdata_q.d.next = bit_cast::<32, 16>(self.tail.q.val()),
            4 => self.rdata_q.d.next = bit_cast::<32, 16>(self.head.q.val()),
            16 => self.rdata_q.d.next = self.sent.q.val(),
            17 => self.rdata_q.d.next = self.bad.q.val(),
            18 => self.rdata_q.d.next = self.read_errors.q.val(),
            _ => {}
        }
        self.reg_rdata.next = self.rdata_q.q.val();

        // ---- ring arithmetic ------------------------------------------------------------------
        self.mask.next = 0.into();
        for i in 4..13 {
            if self.size_log2.q.val().index() == i {
                self.mask.next = ((1u64 << i) - 1).into();
            }
        }
        self.slot.next = self.head.q.val() & self.mask.val();
        self.head_next.next = self.head.q.val() + 1;
        self.next_slot.next = self.head_next.val() & self.mask.val();
        self.can_prefetch.next = !self.prefetched.q.val()
            & (self.head_next.val() != self.tail.q.val())
            & (self.iss_left.q.val() == 0);

        // ---- reads: a descriptor, payload chunks, the next descriptor --------------------------
        // Bytes to the next 4 KiB boundary (1..4096), and the chunk: at most 256 bytes.
        self.page_off.next = self.iss_addr.q.val().get_bits::<12>(0);
        self.page_inv.next = !self.page_off.val();
        self.to_page.next = bit_cast::<16, 12>(self.page_inv.val()) + 1;
        self.chunk.next = self.iss_left.q.val();
        if self.chunk.val() > 256 {
            self.chunk.next = 256.into();
        }
        if self.to_page.val() < self.chunk.val() {
            self.chunk.next = self.to_page.val();
        }
        self.rq_valid.next = false;
        self.rq_addr.next = self.iss_addr.q.val();
        self.rq_len.next = self.chunk.val().get_bits::<9>(0);
        if (self.state.q.val() == TxState::DescRead) & !self.prefetched.q.val() {
            self.rq_valid.next = true;
            self.rq_addr.next = self.base.q.val() + (bit_cast::<64, 16>(self.slot.val()) << 5);
            self.rq_len.next = 32.into();
        } else if (self.state.q.val() == TxState::Payload) & (self.iss_left.q.val() != 0) {
            self.rq_valid.next = true;
        } else if (self.state.q.val() == TxState::Payload) & self.can_prefetch.val() {
            self.rq_valid.next = true;
            self.rq_addr.next = self.base.q.val() + (bit_cast::<64, 16>(self.next_slot.val()) << 5);
            self.rq_len.next = 32.into();
        }
        if self.rq_valid.val() & self.rq_ready.val() & (self.state.q.val() == TxState::Payload) {
            if self.iss_left.q.val() != 0 {
                self.iss_addr.d.next = self.iss_addr.q.val() + bit_cast::<64, 16>(self.chunk.val());
                self.iss_left.d.next = self.iss_left.q.val() - self.chunk.val();
            } else {
                self.prefetched.d.next = true;
            }
        }

        // ---- the payload: one FIFO entry per read beat -----------------------------------------
        self.last_word.next = self.words_left.q.val() == 1;
        self.len_m1.next = self.d_len.q.val() - 1;
        self.last_bytes.next = self.len_m1.val().get_bits::<4>(0);

        self.rd_ready.next = false;
        self.out_valid.next = false;
        self.out_port.next = self.d_port.q.val().get_bits::<2>(0);
        self.out_data.next = self.rd_data.val();
        self.out_tag.next = 2.into();
        self.ev_valid.next = false;
        // The event covers the batch so far and this descriptor.
        self.ev_count.next = self.batch_count.q.val() + 1;
        self.ev_bytes.next = self.batch_bytes.q.val() + bit_cast::<32, 16>(self.d_len.q.val());
        self.ev_lo.next = bit_cast::<128, 4>(self.ev_kind.q.val())
            | (bit_cast::<128, 8>(self.d_port.q.val()) << 8)
            | (bit_cast::<128, 16>(self.head.q.val()) << 16)
            | (bit_cast::<128, 32>(self.ev_bytes.val()) << 32)
            | (bit_cast::<128, 16>(self.ev_count.val()) << 64)
            | (bit_cast::<128, 16>(self.batch_first.q.val()) << 80)
            | (bit_cast::<128, 16>(self.head.q.val()) << 96);
        self.ev_hi.next = bit_cast::<128, 32>(self.t_fetch.q.val())
            | (bit_cast::<128, 32>(self.t_checked.q.val()) << 32)
            | (bit_cast::<128, 32>(self.t_first.q.val()) << 64)
            | (bit_cast::<128, 32>(self.now.val()) << 96);

        self.room.next = false;
        match self.d_port.q.val().get_bits::<2>(0).index() {
            0 => self.room.next = self.port_room.val().get_bit(0),
            1 => self.room.next = self.port_room.val().get_bit(1),
            2 => self.room.next = self.port_room.val().get_bit(2),
            _ => self.room.next = self.port_room.val().get_bit(3),
        }
        self.len15.next = self.d_len.q.val() + 15;
        self.payload_words.next = self.len15.val() >> 4;
        self.len_ok.next = (self.d_len.q.val() != 0) & (self.d_len.q.val() <= 1472);
        self.port_ok.next = self.d_port.q.val() < bit_cast::<8, 3>(self.ports.val());

        match self.state.q.val() {
            TxState::Idle => {
                if self.enable.q.val() & (self.head.q.val() != self.tail.q.val()) {
                    self.t_fetch.d.next = self.now.val();
                    self.state.d.next = TxState::DescRead;
                }
            }
            TxState::DescRead => {
                if self.prefetched.q.val() | self.rq_ready.val() {
                    self.prefetched.d.next = false;
                    self.d_second.d.next = false;
                    self.d_err.d.next = false;
                    self.state.d.next = TxState::DescWait;
                }
            }
            TxState::DescWait => {
                self.rd_ready.next = true;
                if self.rd_valid.val() {
                    if self.rd_error.val() {
                        self.d_err.d.next = true;
                    }
                    if !self.d_second.q.val() {
                        self.d_buf.d.next = self.rd_data.val().get_bits::<64>(0);
                        self.d_len.d.next = self.rd_data.val().get_bits::<16>(64);
                        self.d_port.d.next = self.rd_data.val().get_bits::<8>(80);
                        self.d_flags.d.next = self.rd_data.val().get_bits::<8>(88);
                        // dst_ip: bytes 12..15 in network order.
                        self.d_ip.d.next =
                            (bit_cast::<32, 8>(self.rd_data.val().get_bits::<8>(96)) << 24)
                                | (bit_cast::<32, 8>(self.rd_data.val().get_bits::<8>(104)) << 16)
                                | (bit_cast::<32, 8>(self.rd_data.val().get_bits::<8>(112)) << 8)
                                | bit_cast::<32, 8>(self.rd_data.val().get_bits::<8>(120));
                        self.d_second.d.next = true;
                    } else {
                        self.d_ports.d.next = self.rd_data.val().get_bits::<32>(0);
                        self.state.d.next = TxState::Check;
                    }
                }
            }
            TxState::Check => {
                self.t_checked.d.next = self.now.val();
                self.ev_kind.d.next = 7.into();
                if self.d_err.q.val() {
                    self.read_errors.d.next = self.read_errors.q.val() + 1;
                    self.state.d.next = TxState::Event;
                } else if !self.len_ok.val()
                    | !self.port_ok.val()
                    | (self.d_buf.q.val().get_bits::<4>(0) != 0)
                {
                    self.bad.d.next = self.bad.q.val() + 1;
                    self.state.d.next = TxState::Event;
                } else {
                    self.state.d.next = TxState::Room;
                }
            }
            TxState::Room => {
                if self.room.val() {
                    self.state.d.next = TxState::Header;
                }
            }
            TxState::Header => {
                self.out_valid.next = true;
                self.out_tag.next = 0.into();
                self.out_data.next = (bit_cast::<128, 16>(self.d_len.q.val()) << 64)
                    | (bit_cast::<128, 32>(self.d_ip.q.val()) << 32)
                    | (bit_cast::<128, 16>(self.d_ports.q.val().get_bits::<16>(0)) << 16)
                    | bit_cast::<128, 16>(self.d_ports.q.val().get_bits::<16>(16));
                self.iss_addr.d.next = self.d_buf.q.val();
                self.iss_left.d.next = self.d_len.q.val();
                self.words_left.d.next = self.payload_words.val();
                self.pay_err.d.next = false;
                self.t_first.d.next = self.now.val();
                self.state.d.next = TxState::Payload;
            }
            TxState::Payload => {
                // Words of this datagram come first; the prefetched descriptor's beats follow.
                if self.rd_valid.val() & (self.words_left.q.val() != 0) {
                    self.out_valid.next = true;
                    self.words_left.d.next = self.words_left.q.val() - 1;
                    self.rd_ready.next = true;
                    if self.last_word.val() {
                        self.out_tag.next = (bit_cast::<8, 4>(self.last_bytes.val()) << 2)
                            | (bit_cast::<8, 1>(
                                (self.pay_err.q.val() | self.rd_error.val()).into(),
                            ) << 6)
                            | 3u64;
                        self.state.d.next = TxState::Finish;
                    }
                    if self.rd_error.val() {
                        self.pay_err.d.next = true;
                    }
                }
            }
            TxState::Finish => {
                // Every payload read's beats are taken: the last beat of the last read carried
                // the last word.
                self.sent.d.next = self.sent.q.val() + 1;
                self.ev_kind.d.next = 6.into();
                if self.pay_err.q.val() {
                    self.read_errors.d.next = self.read_errors.q.val() + 1;
                    self.ev_kind.d.next = 7.into();
                }
                self.state.d.next = TxState::Event;
            }
            TxState::Event => {
                // Report (if asked, or on an error), then the next descriptor.
                if (self.ev_kind.q.val() == 7) | self.d_flags.q.val().get_bit(0) {
                    self.ev_valid.next = true;
                }
                if !self.ev_valid.val() | self.ev_ready.val() {
                    self.head.d.next = self.head_next.val();
                    self.batch_count.d.next = self.ev_count.val();
                    self.batch_bytes.d.next = self.ev_bytes.val();
                    if self.ev_valid.val() {
                        self.batch_count.d.next = 0.into();
                        self.batch_bytes.d.next = 0.into();
                        self.batch_first.d.next = self.head_next.val();
                    }
                    self.state.d.next = TxState::Idle;
                    if self.prefetched.q.val() {
                        self.t_fetch.d.next = self.now.val();
                        self.state.d.next = TxState::DescRead;
                    }
                }
            }
        }
        if !self.enable.q.val() {
            self.head.d.next = 0.into();
            self.tail.d.next = 0.into();
            self.batch_count.d.next = 0.into();
            self.batch_bytes.d.next = 0.into();
            self.batch_first.d.next = 0.into();
        }
        if self.reset.val() {
            self.state.d.next = TxState::Idle;
            self.enable.d.next = false;
            self.prefetched.d.next = false;
            self.iss_left.d.next = 0.into();
            self.sent.d.next = 0.into();
            self.bad.d.next = 0.into();
            self.read_errors.d.next = 0.into();
        }
    }
}

//! Frame transmitter shared by every sender of the core (UDP, ARP, ICMP echo replies).
//!
//! A frame is five header words (bytes 0..39, built by the sender), a 16-bit carry (bytes 40..41:
//! the UDP checksum, the ARP target IP's low half, the ICMP sequence number), then the body stream
//! (bytes 42..) realigned by two bytes, then zeros up to `frame_len` bytes (at least the 60-byte
//! Ethernet minimum). A body longer than the frame is drained and discarded; a shorter one is padded
//! with zeros, so a sender's mistake can never desynchronise the stream. A body ending with
//! `error` (its sender failed it: a transmit payload read that failed) makes the frame's last beat
//! carry `error`, so the MAC ends it with a bad FCS (it used to leave with a good one and a wrong
//! payload).
//!
//! `start` is accepted (`start_ready`) with its header fields in one cycle, and the first beat is on
//! the output at the next edge. One field may come later: `late_checksum` is ORed into bytes
//! 24..25 (the IPv4 header checksum) when beat 3 is emitted, at the earliest three cycles after
//! the start, so a sender can compute it in registers meanwhile (from `held_w2..4`, the header
//! words as taken at the start); a sender without one drives 0.

use rust_hdl::prelude::*;

use crate::common::stream::{ByteMask, KeepForLen, StreamSink, StreamSource};

#[derive(Copy, Clone, Debug, PartialEq, LogicState)]
enum FrameTxState {
    Idle,
    Header,
    Body,
    Drain,
}

#[derive(LogicBlock, Default)]
pub struct FrameTx {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub start: Signal<In, Bit>,
    pub start_ready: Signal<Out, Bit>,
    pub w0: Signal<In, Bits<64>>,
    pub w1: Signal<In, Bits<64>>,
    pub w2: Signal<In, Bits<64>>,
    pub w3: Signal<In, Bits<64>>,
    pub w4: Signal<In, Bits<64>>,
    pub carry: Signal<In, Bits<16>>,
    pub late_checksum: Signal<In, Bits<16>>,
    /// Header words 2..4 of the frame being sent, as taken at its start (registers).
    pub held_w2: Signal<Out, Bits<64>>,
    pub held_w3: Signal<Out, Bits<64>>,
    pub held_w4: Signal<Out, Bits<64>>,
    pub frame_len: Signal<In, Bits<16>>,
    pub body: StreamSink,
    pub out: StreamSource,

    mask: ByteMask,
    state: DFF<FrameTxState>,
    idx: DFF<Bits<3>>,
    h1: DFF<Bits<64>>,
    h2: DFF<Bits<64>>,
    h3: DFF<Bits<64>>,
    h4: DFF<Bits<64>>,
    c: DFF<Bits<16>>,
    left: DFF<Bits<16>>,
    /// `frame_len` as taken at the start; `left` is derived from it in the first header beat (the
    /// length comes through the sender's adder, too deep to pad and subtract in the same cycle).
    len: DFF<Bits<16>>,
    body_done: DFF<Bit>,
    o_valid: DFF<Bit>,
    o_data: DFF<Bits<64>>,
    o_keep: DFF<Bits<8>>,
    o_last: DFF<Bit>,
    /// The body ended with `error` (its sender failed it): the frame's last beat carries
    /// `error`, so the MAC ends the frame with a bad FCS and no receiver takes it.
    body_err: DFF<Bit>,
    o_error: DFF<Bit>,

    o_free: Signal<Local, Bit>,
    padded_len: Signal<Local, Bits<16>>,
    out_keep: KeepForLen,
    is_last: Signal<Local, Bit>,
    emit: Signal<Local, Bit>,
    emit_data: Signal<Local, Bits<64>>,
    body_ends: Signal<Local, Bit>,
}

impl Logic for FrameTx {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, state, idx, h1, h2, h3, h4, c, left, len, body_done, o_valid, o_data,
            o_keep, o_last, body_err, o_error
        );
        self.out.valid.next = self.o_valid.q.val();
        self.out.data.next = self.o_data.q.val();
        self.out.keep.next = self.o_keep.q.val();
        self.out.last.next = self.o_last.q.val();
        self.out.error.next = self.o_error.q.val();
        self.held_w2.next = self.h2.q.val();
        self.held_w3.next = self.h3.q.val();
        self.held_w4.next = self.h4.q.val();
        self.o_free.next = !self.o_valid.q.val() | self.out.ready.val();
        if self.out.ready.val() {
            self.o_valid.d.next = false;
        }

        self.padded_len.next = self.len.q.val();
        if self.len.q.val() < 60 {
            self.padded_len.next = 60.into();
        }
        // Keep and last of the beat emitted now, from the bytes left in the frame.
        self.is_last.next = self.left.q.val() <= 8;
        self.out_keep.len.next = self.left.q.val();
        self.mask.data.next = self.body.data.val();
        self.mask.keep.next = self.body.keep.val();

        self.start_ready.next = (self.state.q.val() == FrameTxState::Idle) & self.o_free.val();
        self.body.ready.next = false;
        self.emit.next = false;
        self.emit_data.next = 0.into();
        self.body_ends.next = false;

        match self.state.q.val() {
            FrameTxState::Idle => {
                if self.start.val() & self.o_free.val() {
                    self.h1.d.next = self.w1.val();
                    self.h2.d.next = self.w2.val();
                    self.h3.d.next = self.w3.val();
                    self.h4.d.next = self.w4.val();
                    self.c.d.next = self.carry.val();
                    self.body_done.d.next = false;
                    self.body_err.d.next = false;
                    self.o_error.d.next = false;
                    self.o_valid.d.next = true;
                    self.o_data.d.next = self.w0.val();
                    self.o_keep.d.next = 0xFF.into();
                    self.o_last.d.next = false;
                    self.len.d.next = self.frame_len.val();
                    self.idx.d.next = 1.into();
                    self.state.d.next = FrameTxState::Header;
                }
            }
            FrameTxState::Header => {
                if self.o_free.val() {
                    self.o_valid.d.next = true;
                    self.o_keep.d.next = 0xFF.into();
                    self.o_last.d.next = false;
                    self.left.d.next = self.left.q.val() - 8;
                    self.idx.d.next = self.idx.q.val() + 1;
                    match self.idx.q.val().index() {
                        1 => {
                            // Beats 0 and 1 leave now: `left` starts here.
                            self.o_data.d.next = self.h1.q.val();
                            self.left.d.next = self.padded_len.val() - 16;
                        }
                        2 => self.o_data.d.next = self.h2.q.val(),
                        3 => {
                            self.o_data.d.next = self.h3.q.val()
                                | (bit_cast::<64, 16>(self.late_checksum.val()) << 48)
                        }
                        _ => {
                            self.o_data.d.next = self.h4.q.val();
                            self.state.d.next = FrameTxState::Body;
                        }
                    }
                }
            }
            FrameTxState::Body => {
                if self.o_free.val() {
                    if self.body_done.q.val() {
                        self.emit.next = true;
                        self.emit_data.next = bit_cast::<64, 16>(self.c.q.val()) << 48;
                        self.c.d.next = 0.into();
                    } else {
                        self.body.ready.next = true;
                        if self.body.valid.val() {
                            self.emit.next = true;
                            self.emit_data.next = (bit_cast::<64, 16>(self.c.q.val()) << 48)
                                | bit_cast::<64, 48>(self.mask.masked.val().get_bits::<48>(16));
                            self.c.d.next = self.mask.masked.val().get_bits::<16>(0);
                            self.body_ends.next = self.body.last.val();
                            if self.body.last.val() {
                                self.body_done.d.next = true;
                                self.body_err.d.next = self.body.error.val();
                            }
                        }
                    }
                    if self.emit.val() {
                        self.o_valid.d.next = true;
                        self.o_data.d.next = self.emit_data.val();
                        self.o_keep.d.next = self.out_keep.keep.val();
                        self.o_last.d.next = self.is_last.val();
                        self.o_error.d.next = self.is_last.val()
                            & (self.body_err.q.val()
                                | (self.body_ends.val() & self.body.error.val()));
                        self.left.d.next = self.left.q.val() - 8;
                        if self.is_last.val() {
                            if self.body_done.q.val() | self.body_ends.val() {
                                self.state.d.next = FrameTxState::Idle;
                            } else {
                                self.state.d.next = FrameTxState::Drain;
                            }
                        }
                    }
                }
            }
            FrameTxState::Drain => {
                self.body.ready.next = true;
                if self.body.valid.val() & self.body.last.val() {
                    self.state.d.next = FrameTxState::Idle;
                }
            }
            _ => {
                self.state.d.next = FrameTxState::Idle;
            }
        }

        if self.reset.val() {
            self.state.d.next = FrameTxState::Idle;
            self.o_valid.d.next = false;
        }
    }
}

//! Multi-Stream: maps each received datagram to a stream by its UDP destination port, as NaNet-10's
//! Multi-Stream module does. A table of 16 entries `{valid, port}` per port; the entry's index is
//! the stream id. A datagram whose port is in no valid entry is consumed and dropped whole, and
//! `drop_unknown_port` pulses once at its last beat, unless that beat ends it in error (the core
//! has counted it then, under the reason it ended badly: every frame is counted once).
//!
//! The lookup compares the port with all 16 entries at once (no search) and is registered: every
//! cycle it looks up `in_dst_port` for the next. So `in_dst_port` must be valid from the cycle
//! before the datagram's first beat on (the offload core's parser holds it from its header's last
//! beat, at least a cycle before the first payload beat, until the next frame's header), and a
//! table write applies to datagrams whose first beat comes two cycles or more after it. The
//! decision of the first beat holds for the whole datagram even if the table changes meanwhile.
//! The stream passes through combinationally (no added latency); the sideband is held for every
//! beat.

use array_init::array_init;
use rust_hdl::prelude::*;

use crate::common::stream::{StreamSink, StreamSource};

/// Entries of the table (stream ids 0..15).
pub const STREAMS: usize = 16;

#[derive(LogicBlock)]
pub struct MultiStream {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub inp: StreamSink,
    pub in_dst_port: Signal<In, Bits<16>>,
    pub out: StreamSource,
    pub out_stream: Signal<Out, Bits<4>>,
    pub drop_unknown_port: Signal<Out, Bit>,
    /// Table write: entry `tbl_index` becomes `{tbl_valid, tbl_port}`.
    pub tbl_write: Signal<In, Bit>,
    pub tbl_index: Signal<In, Bits<4>>,
    pub tbl_port: Signal<In, Bits<16>>,
    pub tbl_valid: Signal<In, Bit>,
    /// Table read-back of entry `tbl_index`: `{valid, port}`.
    pub tbl_read_valid: Signal<Out, Bit>,
    pub tbl_read_port: Signal<Out, Bits<16>>,

    ids: [Constant<Bits<4>>; STREAMS],
    ports: [DFF<Bits<16>>; STREAMS],
    valids: [DFF<Bit>; STREAMS],
    in_packet: DFF<Bit>,
    passing: DFF<Bit>,
    stream: DFF<Bits<4>>,
    /// The lookup of the previous cycle's `in_dst_port`, registered per group of four entries
    /// (the compares and the groups' encoders before the register, the choice of the group
    /// after it: each side fits the budget).
    group_hit_q: [DFF<Bit>; 4],
    group_hi_q: [DFF<Bit>; 4],
    group_lo_q: [DFF<Bit>; 4],
    hit: Signal<Local, Bit>,
    hit_id: Signal<Local, Bits<4>>,
    /// Entry `i` matches (bit `i`); per group of four entries: its bits, whether any matches,
    /// and the highest match's index inside it (`hi`, `lo`).
    entry_hits: Signal<Local, Bits<STREAMS>>,
    one_hot: [Constant<Bits<STREAMS>>; STREAMS],
    group_shift: [Constant<Bits<8>>; 4],
    group_shifted: [Signal<Local, Bits<STREAMS>>; 4],
    group_nibble: [Signal<Local, Bits<4>>; 4],
    group_hit: [Signal<Local, Bit>; 4],
    group_hi: [Signal<Local, Bit>; 4],
    group_lo: [Signal<Local, Bit>; 4],
    /// Group 3, 2, 1 or 0 is the highest with a match (0 also when none is).
    top3: Signal<Local, Bit>,
    top2: Signal<Local, Bit>,
    top1: Signal<Local, Bit>,
    top0: Signal<Local, Bit>,
    id_hi: Signal<Local, Bit>,
    id_lo: Signal<Local, Bit>,
    pass_now: Signal<Local, Bit>,
    id_now: Signal<Local, Bits<4>>,
}

impl Default for MultiStream {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            reset: Default::default(),
            inp: Default::default(),
            in_dst_port: Default::default(),
            out: Default::default(),
            out_stream: Default::default(),
            drop_unknown_port: Default::default(),
            tbl_write: Default::default(),
            tbl_index: Default::default(),
            tbl_port: Default::default(),
            tbl_valid: Default::default(),
            tbl_read_valid: Default::default(),
            tbl_read_port: Default::default(),
            ids: array_init(|i| Constant::new((i as u64).into())),
            ports: array_init(|_| Default::default()),
            valids: array_init(|_| Default::default()),
            in_packet: Default::default(),
            passing: Default::default(),
            stream: Default::default(),
            group_hit_q: array_init(|_| Default::default()),
            group_hi_q: array_init(|_| Default::default()),
            group_lo_q: array_init(|_| Default::default()),
            hit: Default::default(),
            hit_id: Default::default(),
            entry_hits: Default::default(),
            one_hot: array_init(|i| Constant::new((1u64 << i).into())),
            group_shift: array_init(|g| Constant::new(((4 * g) as u64).into())),
            group_shifted: array_init(|_| Default::default()),
            group_nibble: array_init(|_| Default::default()),
            group_hit: array_init(|_| Default::default()),
            group_hi: array_init(|_| Default::default()),
            group_lo: array_init(|_| Default::default()),
            top3: Default::default(),
            top2: Default::default(),
            top1: Default::default(),
            top0: Default::default(),
            id_hi: Default::default(),
            id_lo: Default::default(),
            pass_now: Default::default(),
            id_now: Default::default(),
        }
    }
}

impl Logic for MultiStream {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, in_packet, passing, stream);
        for i in 0..STREAMS {
            self.ports[i].clock.next = self.clock.val();
            self.valids[i].clock.next = self.clock.val();
            self.ports[i].d.next = self.ports[i].q.val();
            self.valids[i].d.next = self.valids[i].q.val();
        }
        // Lookup: the highest matching entry wins (entries should not repeat a port). The index
        // of the highest match as a two-level encoder (highest of each group of four, highest
        // group), not a chain of sixteen (timing).
        self.entry_hits.next = 0.into();
        for i in 0..STREAMS {
            if self.valids[i].q.val() & (self.ports[i].q.val() == self.in_dst_port.val()) {
                self.entry_hits.next = self.entry_hits.val() | self.one_hot[i].val();
            }
        }
        for g in 0..4 {
            self.group_shifted[g].next = self.entry_hits.val() >> self.group_shift[g].val();
            self.group_nibble[g].next = self.group_shifted[g].val().get_bits::<4>(0);
            self.group_hit[g].next = self.group_nibble[g].val().any();
            self.group_hi[g].next =
                self.group_nibble[g].val().get_bit(3) | self.group_nibble[g].val().get_bit(2);
            self.group_lo[g].next = self.group_nibble[g].val().get_bit(3)
                | (!self.group_nibble[g].val().get_bit(2) & self.group_nibble[g].val().get_bit(1));
        }
        for g in 0..4 {
            self.group_hit_q[g].clock.next = self.clock.val();
            self.group_hi_q[g].clock.next = self.clock.val();
            self.group_lo_q[g].clock.next = self.clock.val();
            self.group_hit_q[g].d.next = self.group_hit[g].val();
            self.group_hi_q[g].d.next = self.group_hi[g].val();
            self.group_lo_q[g].d.next = self.group_lo[g].val();
        }
        self.hit.next = self.group_hit_q[0].q.val()
            | self.group_hit_q[1].q.val()
            | self.group_hit_q[2].q.val()
            | self.group_hit_q[3].q.val();
        // The highest group with a match and, inside it, the highest entry: each bit a flat
        // sum of products of the group flags (no chain of selects).
        self.top3.next = self.group_hit_q[3].q.val();
        self.top2.next = !self.group_hit_q[3].q.val() & self.group_hit_q[2].q.val();
        self.top1.next = !self.group_hit_q[3].q.val()
            & !self.group_hit_q[2].q.val()
            & self.group_hit_q[1].q.val();
        self.top0.next = !self.group_hit_q[3].q.val()
            & !self.group_hit_q[2].q.val()
            & !self.group_hit_q[1].q.val();
        self.id_hi.next = (self.top3.val() & self.group_hi_q[3].q.val())
            | (self.top2.val() & self.group_hi_q[2].q.val())
            | (self.top1.val() & self.group_hi_q[1].q.val())
            | (self.top0.val() & self.group_hi_q[0].q.val());
        self.id_lo.next = (self.top3.val() & self.group_lo_q[3].q.val())
            | (self.top2.val() & self.group_lo_q[2].q.val())
            | (self.top1.val() & self.group_lo_q[1].q.val())
            | (self.top0.val() & self.group_lo_q[0].q.val());
        self.hit_id.next = (bit_cast::<4, 1>((self.top3.val() | self.top2.val()).into()) << 3)
            | (bit_cast::<4, 1>((self.top3.val() | self.top1.val()).into()) << 2)
            | (bit_cast::<4, 1>(self.id_hi.val().into()) << 1)
            | bit_cast::<4, 1>(self.id_lo.val().into());
        // The decision of the first beat holds for the whole datagram.
        self.pass_now.next = self.passing.q.val();
        self.id_now.next = self.stream.q.val();
        if !self.in_packet.q.val() {
            self.pass_now.next = self.hit.val();
            self.id_now.next = self.hit_id.val();
        }

        self.out.data.next = self.inp.data.val();
        self.out.keep.next = self.inp.keep.val();
        self.out.last.next = self.inp.last.val();
        self.out.error.next = self.inp.error.val();
        self.out.valid.next = self.inp.valid.val() & self.pass_now.val();
        self.out_stream.next = self.id_now.val();
        self.inp.ready.next = self.out.ready.val() | !self.pass_now.val();
        self.drop_unknown_port.next = false;
        if self.inp.valid.val() & (self.out.ready.val() | !self.pass_now.val()) {
            self.in_packet.d.next = !self.inp.last.val();
            self.passing.d.next = self.pass_now.val();
            self.stream.d.next = self.id_now.val();
            self.drop_unknown_port.next =
                self.inp.last.val() & !self.inp.error.val() & !self.pass_now.val();
        }

        // Table access.
        self.tbl_read_valid.next = false;
        self.tbl_read_port.next = 0.into();
        for i in 0..STREAMS {
            if self.tbl_index.val() == self.ids[i].val() {
                self.tbl_read_valid.next = self.valids[i].q.val();
                self.tbl_read_port.next = self.ports[i].q.val();
                if self.tbl_write.val() {
                    self.ports[i].d.next = self.tbl_port.val();
                    self.valids[i].d.next = self.tbl_valid.val();
                }
            }
        }
        if self.reset.val() {
            self.in_packet.d.next = false;
            for g in 0..4 {
                self.group_hit_q[g].d.next = false;
            }
            for i in 0..STREAMS {
                self.valids[i].d.next = false;
            }
        }
    }
}

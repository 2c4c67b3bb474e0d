//! The write-request interface of the DMA side: what the DMA writer and the event queue produce,
//! and what the PCIe TLP layer (issue [card]) or the host-memory model consumes.
//!
//! Beats of `W` bits (the PCIe variant's datapath width) in little-endian memory lanes: with
//! `B = W / 8` lanes, the byte at address `A` is in lane `A % B`, bits `[8*(A%B)+7 : 8*(A%B)]`.
//! `sop` marks a request's first beat and carries its byte length `len` (1..=256); `addr` is the
//! bus address of the beat's first byte, so on `sop` the request's address; `eop` marks its last
//! beat. A beat's bytes run from `addr`'s lane up without holes: to the last lane, or on the last
//! beat to the request's last byte, so which lanes a beat carries follows from `addr` and `len`
//! (no byte enables travel with it). A request never crosses a 4 KiB boundary. A beat moves when
//! `valid && ready`.

use rust_hdl::prelude::*;

use crate::common::pair_fifo::PairFifo;

/// Producer end of a write-request interface.
#[derive(LogicInterface, Default)]
#[join = "WriteRequestSink"]
pub struct WriteRequestSource<const W: usize> {
    pub valid: Signal<Out, Bit>,
    pub ready: Signal<In, Bit>,
    pub sop: Signal<Out, Bit>,
    pub eop: Signal<Out, Bit>,
    pub addr: Signal<Out, Bits<64>>,
    pub len: Signal<Out, Bits<9>>,
    pub data: Signal<Out, Bits<W>>,
}

/// Consumer end of a write-request interface.
#[derive(LogicInterface, Default)]
#[join = "WriteRequestSource"]
pub struct WriteRequestSink<const W: usize> {
    pub valid: Signal<In, Bit>,
    pub ready: Signal<Out, Bit>,
    pub sop: Signal<In, Bit>,
    pub eop: Signal<In, Bit>,
    pub addr: Signal<In, Bits<64>>,
    pub len: Signal<In, Bits<9>>,
    pub data: Signal<In, Bits<W>>,
}

/// A register slice on a write-request stream (`common/pair_fifo.rs`): `valid` and `ready` on
/// both sides come from flip-flops, the beat enters its registers without logic and leaves them
/// through one multiplexer, one cycle of latency, full throughput. (A `SkidBuffer` would put its
/// multiplexer in front of the registers instead; the DMA writer's realignment, which ends here,
/// has no level to spare for it.) `cancel` drops the beat offered in the cycle it is taken (the
/// source sees it taken; see the slice's `in_cancel`). `void_late` marks the beat taken in the
/// cycle *before* void: it leaves with the mark (`void_out`) and the next stage drops it. The DMA
/// writer marks so a first beat of a page whose translation missed: its tag compare reaches
/// registers only, a cycle ahead of the mark, where even a cancel into this slice's valids took a
/// level more than the core domain's budget. (Each of the slice's two entries keeps the mark of
/// its beat.) Sources that use neither tie them low.
#[derive(LogicBlock, Default)]
pub struct WriteRequestSkid<const W: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub inp: WriteRequestSink<W>,
    pub cancel: Signal<In, Bit>,
    pub void_late: Signal<In, Bit>,
    pub out: WriteRequestSource<W>,
    /// The beat on offer at `out` is marked void (`void_late`): whoever takes it drops it.
    pub void_out: Signal<Out, Bit>,
    /// A beat is inside: on offer at `out`, or waiting behind it.
    pub holds: Signal<Out, Bit>,
    /// The beat: its data, and the rest as one word (`addr` 63:0, `len` 72:64, `eop` 73, `sop`
    /// 74), moved together (the same handshake: `head` speaks for both).
    data: PairFifo<W>,
    head: PairFifo<75>,
    /// The void mark of the beat in each entry as known so far, and whether the
    /// beat went in in the cycle before (`void_late` then applies to it).
    void0: DFF<Bit>,
    void1: DFF<Bit>,
    fresh0: DFF<Bit>,
    fresh1: DFF<Bit>,
}

impl<const W: usize> Logic for WriteRequestSkid<W> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, void0, void1, fresh0, fresh1);
        self.head.clock.next = self.clock.val();
        self.head.reset.next = self.reset.val();
        self.head.in_cancel.next = self.cancel.val();
        self.head.in_data.next = bit_cast::<75, 64>(self.inp.addr.val())
            | (bit_cast::<75, 9>(self.inp.len.val()) << 64)
            | (bit_cast::<75, 1>(self.inp.eop.val().into()) << 73)
            | (bit_cast::<75, 1>(self.inp.sop.val().into()) << 74);
        self.head.in_valid.next = self.inp.valid.val();
        self.data.clock.next = self.clock.val();
        self.data.reset.next = self.reset.val();
        self.data.in_cancel.next = self.cancel.val();
        self.data.in_data.next = self.inp.data.val();
        self.data.in_valid.next = self.inp.valid.val();
        self.data.out_ready.next = self.out.ready.val();
        self.inp.ready.next = self.head.in_ready.val();
        self.out.data.next = self.data.out_data.val();
        self.out.addr.next = self.head.out_data.val().get_bits::<64>(0);
        self.out.len.next = self.head.out_data.val().get_bits::<9>(64);
        self.out.eop.next = self.head.out_data.val().get_bit(73);
        self.out.sop.next = self.head.out_data.val().get_bit(74);
        self.out.valid.next = self.head.out_valid.val();
        self.head.out_ready.next = self.out.ready.val();
        self.holds.next = self.head.out_valid.val() | !self.head.in_ready.val();

        // The void marks, one per entry: a beat going in (taken and not cancelled)
        // clears its entry's mark and is fresh for a cycle, when `void_late` sets the mark.
        // Plain assignments of the block's outputs only (no `if`, no local read back): Verilator
        // then orders them one by one, and `out.ready` (read by the slice) and `void_out` (which
        // the write mux, whose `ready` this is, reads) make no loop.
        self.void_out.next = (!self.head.rd_entry.val()
            & (self.void0.q.val() | (self.fresh0.q.val() & self.void_late.val())))
            | (self.head.rd_entry.val()
                & (self.void1.q.val() | (self.fresh1.q.val() & self.void_late.val())));
        self.fresh0.d.next = !self.reset.val()
            & self.inp.valid.val()
            & self.head.in_ready.val()
            & !self.cancel.val()
            & !self.head.wr_entry.val();
        self.fresh1.d.next = !self.reset.val()
            & self.inp.valid.val()
            & self.head.in_ready.val()
            & !self.cancel.val()
            & self.head.wr_entry.val();
        self.void0.d.next = !self.reset.val()
            & !(self.inp.valid.val()
                & self.head.in_ready.val()
                & !self.cancel.val()
                & !self.head.wr_entry.val())
            & (self.void0.q.val() | (self.fresh0.q.val() & self.void_late.val()));
        self.void1.d.next = !self.reset.val()
            & !(self.inp.valid.val()
                & self.head.in_ready.val()
                & !self.cancel.val()
                & self.head.wr_entry.val())
            & (self.void1.q.val() | (self.fresh1.q.val() & self.void_late.val()));
    }
}

//! Flow-control credit gate for one TLP class (posted, non-posted or completion) in front of the
//! Stratix V Hard IP's transmit port: a TLP may start only when the link partner has advertised
//! room for its header and its data (PCIe 2.0, 2.6.1.2).
//!
//! The Hard IP reports, per class, the credit limits the link partner advertised (`tx_cred_hdrfc*`
//! 8 bits, `tx_cred_datafc*` 12 bits, modulo counters, with `tx_cons_cred_sel` low), whether the
//! class has infinite credits (`tx_cred_fcinfinite`), and a pulse for each credit it consumed
//! itself (`tx_cred_fchipcons`: its MSIs and its own completions). The application counts its own
//! consumed credits and the Hard IP's pulses against the limits (PCIe 2.0, 2.6.1.2: a TLP may go
//! when the credits it needs are at most `limit - consumed`, modulo the counter).
//!
//! Without the gate a TLP without credits stalls in the Hard IP and every TLP behind it waits:
//! a memory read short of non-posted credits would hold up the receive path's memory writes. With
//! one gate per class in front of the merge and the arbiter, a blocked class only withdraws its
//! `valid`, and the others pass it between TLPs.
//!
//! The gate looks at the first beat only (`dw0`: bit 30 says the TLP has data, bits 9:0 its
//! length in dwords, 0 = 1024), charges the credits when that beat moves, and passes every later
//! beat of the TLP untouched, so it keeps the stream gap-free.
//!
//! Timing: the gate is registered on both sides (a `TlpSkid` in and one out, two cycles of
//! latency), and every Hard IP credit signal is registered where it enters. Instead of comparing
//! modulo counters, the gate keeps the credits available (`limit - consumed`, signed) in a
//! register: each cycle it adds what the limits advanced by and takes off what the Hard IP
//! consumed, both counted for the TLPs that start three cycles after the Hard IP showed them (late
//! is the safe side for a limit), and what the TLP starting now needs. A credit the Hard IP takes
//! is thus still counted free by the TLPs that start in its pulse's cycle and the two after: such
//! a TLP may find the Hard IP short of a credit, and the Hard IP holds it until the link partner
//! frees one (as it would hold any TLP short of credits; the gate exists so that a class short of
//! credits does not hold up the others, which still holds). For its MSIs the card avoids even
//! that: `hold` keeps every TLP from starting from the request until the pulse is counted. Both
//! sums, with and without a start, are ready before `start` is known, so the check of the beat
//! on offer is one two-operand carry chain from registers (its need's round-up folded into the
//! operands' extra low bit), and a TLP may start in the cycle after another. A class with
//! infinite credits holds its count at plenty. A count outside the spec's range (more than
//! 2^(bits-1) credits available) is taken as is: the Hard IP's limits never advertise it.

use rust_hdl::prelude::*;

use crate::pcie::tlp_stream::{TlpSink, TlpSkid, TlpSource};

#[derive(LogicBlock, Default)]
pub struct PcieCreditGate<const W: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// The link partner's header and data credit limits for this class (data credit: 16 bytes).
    pub hdr_limit: Signal<In, Bits<8>>,
    pub data_limit: Signal<In, Bits<12>>,
    pub hdr_infinite: Signal<In, Bit>,
    pub data_infinite: Signal<In, Bit>,
    /// One header / data credit of this class consumed by the Hard IP itself, this cycle.
    pub hip_hdr: Signal<In, Bit>,
    pub hip_data: Signal<In, Bit>,
    /// No TLP may start (registered, so it takes effect a cycle later): the card fences an MSI
    /// until the Hard IP's consumption of it is counted (a pulse in cycle `c` is counted for the
    /// TLPs that start from cycle `c + 3`: `hold` up until `c + 1`).
    pub hold: Signal<In, Bit>,
    pub inp: TlpSink<W>,
    pub out: TlpSource<W>,
    /// A TLP's first beat waited for the link partner's credits in the previous cycle (not for
    /// `hold`).
    pub blocked: Signal<Out, Bit>,
    /// A beat is inside the gate.
    pub occupied: Signal<Out, Bit>,

    inp_skid: TlpSkid<W>,
    out_skid: TlpSkid<W>,
    // The Hard IP's credit signals, registered.
    hdr_limit_q: DFF<Bits<8>>,
    data_limit_q: DFF<Bits<12>>,
    hdr_infinite_q: DFF<Bit>,
    data_infinite_q: DFF<Bit>,
    hold_q: DFF<Bit>,
    hip_hdr_q: DFF<Bit>,
    hip_data_q: DFF<Bit>,
    /// The limits already counted into `hdr_spare` / `data_avail`.
    hdr_counted: DFF<Bits<8>>,
    data_counted: DFF<Bits<12>>,
    /// What the credits available change by next cycle, start aside: the limits' advance less the
    /// Hard IP's own consumption.
    hdr_gain: DFF<Bits<9>>,
    hdr_gain_m1: DFF<Bits<9>>,
    data_gain: DFF<Bits<13>>,
    /// Header credits available less one (two's complement): not negative when a TLP may take one.
    hdr_spare: DFF<Bits<9>>,
    /// Data credits available (two's complement: negative only if the Hard IP took what we
    /// counted).
    data_avail: DFF<Bits<13>>,
    /// Inside a TLP: its first beat has moved, its last not yet.
    in_tlp: DFF<Bit>,
    blocked_q: DFF<Bit>,
    /// The beat's dword count, 0 for 1024 (dw0 bits 9:0).
    len: Signal<Local, Bits<10>>,
    /// The beat's data credits are `need_quads + need_round` (`ceil(len / 4)`), 0 without data;
    /// worked out without an adder as the beat enters (an adder there follows the logic in front
    /// of the gate) and carried through the input slice's side bits.
    need_quads: Signal<Local, Bits<13>>,
    need_round: Signal<Local, Bit>,
    /// `!need_round`, its own signal: inverted inside a wider expression, Verilog would widen
    /// it first and invert the zeros too.
    no_round: Signal<Local, Bit>,
    /// `need - avail - 1` as `need_quads + !avail + need_round`, negative when the beat's data
    /// fits: one two-operand sum a bit wider, `{need_quads, need_round} + {!avail, need_round}`,
    /// whose bit 0 turns the round-up into the carry into bit 1, so yosys maps it to the ALMs'
    /// carry chain (written as a sum of three, abc made it three levels of LUTs).
    short_a: Signal<Local, Bits<14>>,
    short_b: Signal<Local, Bits<14>>,
    data_short: Signal<Local, Bits<14>>,
    avail_inv: Signal<Local, Bits<13>>,
    /// `-need_quads - 1`, its own signal so the adder sees 13 bits, not 32.
    quads_inv: Signal<Local, Bits<13>>,
    /// `avail + gain - need` as `avail + gain + !need_quads + !need_round`: a carry-save step
    /// (`taken_partial`, `taken_carries`, the `!need_round` in the carries' free bit 0) and one
    /// chain (written as a sum of three, yosys maps it into a chain of LUTs ten levels deep).
    /// Written out here, not as `common::adders::Add3`: a child block's inputs and output in this
    /// kernel's one always block are a combinational cycle to the linter.
    taken_partial: Signal<Local, Bits<13>>,
    taken_carries: Signal<Local, Bits<13>>,
    data_taken: Signal<Local, Bits<13>>,
    hdr_ok: Signal<Local, Bit>,
    data_ok: Signal<Local, Bit>,
    credits_ok: Signal<Local, Bit>,
    ok: Signal<Local, Bit>,
    pass: Signal<Local, Bit>,
    /// A beat moves from the input slice to the output slice.
    moves: Signal<Local, Bit>,
    start: Signal<Local, Bit>,
    hdr_advance: Signal<Local, Bits<8>>,
    data_advance: Signal<Local, Bits<12>>,
    hdr_kept: Signal<Local, Bits<9>>,
    hdr_kept_m1: Signal<Local, Bits<9>>,
    data_kept: Signal<Local, Bits<13>>,
}

impl<const W: usize> Logic for PcieCreditGate<W> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            hdr_limit_q,
            data_limit_q,
            hdr_infinite_q,
            data_infinite_q,
            hold_q,
            hip_hdr_q,
            hip_data_q,
            hdr_counted,
            data_counted,
            hdr_gain,
            hdr_gain_m1,
            data_gain,
            hdr_spare,
            data_avail,
            in_tlp,
            blocked_q
        );
        self.inp_skid.clock.next = self.clock.val();
        self.inp_skid.reset.next = self.reset.val();
        self.out_skid.clock.next = self.clock.val();
        self.out_skid.reset.next = self.reset.val();
        TlpSink::<W>::link(&mut self.inp, &mut self.inp_skid.inp);
        TlpSource::<W>::link(&mut self.out, &mut self.out_skid.out);
        self.hdr_limit_q.d.next = self.hdr_limit.val();
        self.data_limit_q.d.next = self.data_limit.val();
        self.hdr_infinite_q.d.next = self.hdr_infinite.val();
        self.data_infinite_q.d.next = self.data_infinite.val();
        self.hold_q.d.next = self.hold.val();
        self.hip_hdr_q.d.next = self.hip_hdr.val();
        self.hip_data_q.d.next = self.hip_data.val();

        // ---- what the credits available gain next cycle, start aside ---------------------------
        self.hdr_counted.d.next = self.hdr_limit_q.q.val();
        self.data_counted.d.next = self.data_limit_q.q.val();
        // The advances modulo the counters' widths (each its own signal: widened inside one
        // expression, Verilog would subtract in the wider width).
        self.hdr_advance.next = self.hdr_limit_q.q.val() - self.hdr_counted.q.val();
        self.data_advance.next = self.data_limit_q.q.val() - self.data_counted.q.val();
        self.hdr_gain.d.next = bit_cast::<9, 8>(self.hdr_advance.val())
            - bit_cast::<9, 1>(self.hip_hdr_q.q.val().into());
        self.hdr_gain_m1.d.next = bit_cast::<9, 8>(self.hdr_advance.val())
            - bit_cast::<9, 1>(self.hip_hdr_q.q.val().into())
            - 1;
        self.data_gain.d.next = bit_cast::<13, 12>(self.data_advance.val())
            - bit_cast::<13, 1>(self.hip_data_q.q.val().into());

        // ---- the beat on offer: what it needs, whether it may go ---------------------------------
        // Data credits: ceil(len / 4) of `len` dwords (0 = 1024), when the TLP has data, 0
        // without: `len / 4` (256 for 1024 dwords) plus one when `len` is not a multiple of 4.
        // Worked out without an adder as the beat enters (side bits 7:0 `len / 4` modulo 256, 8
        // "1024 dwords", 9 the round-up; all 0 without data), so every sum below is one carry
        // chain fed by registers, or by one other chain.
        self.len.next = self.inp.data.val().get_bits::<10>(0);
        self.inp_skid.side_in.next = 0.into();
        if self.inp.data.val().get_bit(30) {
            self.inp_skid.side_in.next = bit_cast::<10, 8>(self.len.val().get_bits::<8>(2));
            if self.len.val() == 0 {
                self.inp_skid.side_in.next = 0x100.into();
            }
            if self.len.val().get_bits::<2>(0) != 0 {
                self.inp_skid.side_in.next =
                    bit_cast::<10, 8>(self.len.val().get_bits::<8>(2)) | 0x200u64;
            }
        }
        self.out_skid.side_in.next = 0.into();
        self.need_quads.next = bit_cast::<13, 9>(self.inp_skid.side_out.val().get_bits::<9>(0));
        self.need_round.next = self.inp_skid.side_out.val().get_bit(9);
        self.avail_inv.next = !self.data_avail.q.val();
        self.short_a.next = (bit_cast::<14, 13>(self.need_quads.val()) << 1)
            | bit_cast::<14, 1>(self.need_round.val().into());
        self.short_b.next = (bit_cast::<14, 13>(self.avail_inv.val()) << 1)
            | bit_cast::<14, 1>(self.need_round.val().into());
        self.data_short.next = self.short_a.val() + self.short_b.val();
        // Infinite credits hold the counts at plenty (below), so the check needs no flag.
        self.hdr_ok.next = !self.hdr_spare.q.val().get_bit(8);
        self.data_ok.next = self.data_short.val().get_bit(13);
        self.credits_ok.next = self.hdr_ok.val() & self.data_ok.val();
        self.ok.next = self.credits_ok.val() & !self.hold_q.q.val();
        self.pass.next = self.in_tlp.q.val() | self.ok.val();

        self.out_skid.inp.data.next = self.inp_skid.out.data.val();
        self.out_skid.inp.sop.next = self.inp_skid.out.sop.val();
        self.out_skid.inp.eop.next = self.inp_skid.out.eop.val();
        self.out_skid.inp.empty.next = self.inp_skid.out.empty.val();
        self.out_skid.inp.valid.next = self.inp_skid.out.valid.val() & self.pass.val();
        self.inp_skid.out.ready.next = self.out_skid.inp.ready.val() & self.pass.val();
        self.blocked_q.d.next =
            self.inp_skid.out.valid.val() & !self.in_tlp.q.val() & !self.credits_ok.val();
        self.blocked.next = self.blocked_q.q.val();
        self.occupied.next = self.inp_skid.out.valid.val() | self.out.valid.val();

        // ---- the credits available next cycle ---------------------------------------------------
        self.moves.next =
            self.inp_skid.out.valid.val() & self.out_skid.inp.ready.val() & self.pass.val();
        self.start.next = self.moves.val() & !self.in_tlp.q.val();
        // Each new count is one carry chain from registers (the data count with a start: a
        // compressor in front), the start choosing between two.
        self.hdr_kept.next = self.hdr_spare.q.val() + self.hdr_gain.q.val();
        self.hdr_kept_m1.next = self.hdr_spare.q.val() + self.hdr_gain_m1.q.val();
        self.data_kept.next = self.data_avail.q.val() + self.data_gain.q.val();
        // `kept - need` as `kept + !need_quads + !need_round` (`-x == !x + 1` in two's
        // complement: the two ones make one with `!need_round`'s help: `-q - r = !q + (1 - r)`).
        self.quads_inv.next = !self.need_quads.val();
        self.no_round.next = !self.need_round.val();
        self.taken_partial.next =
            self.data_avail.q.val() ^ self.data_gain.q.val() ^ self.quads_inv.val();
        self.taken_carries.next = (((self.data_avail.q.val() & self.data_gain.q.val())
            | (self.data_avail.q.val() & self.quads_inv.val())
            | (self.data_gain.q.val() & self.quads_inv.val()))
            << 1)
            | bit_cast::<13, 1>(self.no_round.val().into());
        self.data_taken.next = self.taken_partial.val() + self.taken_carries.val();
        self.hdr_spare.d.next = self.hdr_kept.val();
        if self.start.val() {
            self.hdr_spare.d.next = self.hdr_kept_m1.val();
        }
        self.data_avail.d.next = self.data_kept.val();
        if self.start.val() {
            self.data_avail.d.next = self.data_taken.val();
        }
        if self.hdr_infinite_q.q.val() {
            self.hdr_spare.d.next = 127.into();
        }
        if self.data_infinite_q.q.val() {
            self.data_avail.d.next = 2048.into();
        }
        if self.moves.val() {
            self.in_tlp.d.next = !self.inp_skid.out.eop.val();
        }
        if self.reset.val() {
            // Every limit counts as an advance from 0 after reset.
            self.hdr_counted.d.next = 0.into();
            self.data_counted.d.next = 0.into();
            self.hdr_gain.d.next = 0.into();
            self.hdr_gain_m1.d.next = 0x1FF.into();
            self.data_gain.d.next = 0.into();
            self.hdr_spare.d.next = 0x1FF.into();
            self.data_avail.d.next = 0.into();
            self.in_tlp.d.next = false;
            self.blocked_q.d.next = false;
        }
    }
}

//! Flow-control credit gate for one TLP class (posted, non-posted or completion) in front of the
//! Stratix V Hard IP's transmit port: a TLP may start only when the link partner has advertised
//! room for its header and its data (PCIe 2.0, 2.6.1.2).
//!
//! The Hard IP reports, per class, the credit limits the link partner advertised (`tx_cred_hdrfc*`
//! 8 bits, `tx_cred_datafc*` 12 bits, modulo counters, with `tx_cons_cred_sel` low), whether the
//! class has infinite credits (`tx_cred_fcinfinite`), and a pulse for each credit it consumed
//! itself (`tx_cred_fchipcons`: its MSIs and its own completions). The application counts its own
//! consumed credits: here `hdr_used` and `data_used`, which also count the Hard IP's pulses. A TLP
//! needing `n` credits may go when `(limit - (used + n)) mod 2^bits <= 2^(bits - 1)`.
//!
//! Without the gate a TLP without credits stalls in the Hard IP and every TLP behind it waits:
//! a memory read short of non-posted credits would hold up the receive path's memory writes. With
//! one gate per class in front of the merge and the arbiter, a blocked class only withdraws its
//! `valid`, and the others pass it between TLPs.
//!
//! The gate looks at the first beat only (`dw0`: bit 30 says the TLP has data, bits 9:0 its
//! length in dwords, 0 = 1024), charges the credits when that beat moves, and passes every later
//! beat of the TLP untouched, so it keeps the stream gap-free.

use rust_hdl::prelude::*;

use crate::pcie::tlp_stream::{TlpSink, TlpSource};

#[derive(LogicBlock, Default)]
pub struct PcieCreditGate {
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
    pub inp: TlpSink,
    pub out: TlpSource,
    /// A TLP's first beat waits for credits.
    pub blocked: Signal<Out, Bit>,

    hdr_used: DFF<Bits<8>>,
    data_used: DFF<Bits<12>>,
    /// Inside a TLP: its first beat has moved, its last not yet.
    in_tlp: DFF<Bit>,
    len: Signal<Local, Bits<12>>,
    need: Signal<Local, Bits<12>>,
    hdr_left: Signal<Local, Bits<8>>,
    data_left: Signal<Local, Bits<12>>,
    ok: Signal<Local, Bit>,
    pass: Signal<Local, Bit>,
    start: Signal<Local, Bit>,
}

impl Logic for PcieCreditGate {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, hdr_used, data_used, in_tlp);
        // Data credits of the offered TLP: ceil(length / 4) dwords, length 0 meaning 1024.
        self.len.next = bit_cast::<12, 10>(self.inp.data.val().get_bits::<10>(0));
        if self.len.val() == 0 {
            self.len.next = 1024.into();
        }
        self.need.next = 0.into();
        if self.inp.data.val().get_bit(30) {
            self.need.next = (self.len.val() + 3) >> 2;
        }
        // Room left after this TLP, modulo the counter width; "enough" is the lower half.
        self.hdr_left.next = self.hdr_limit.val() - (self.hdr_used.q.val() + 1);
        self.data_left.next = self.data_limit.val() - (self.data_used.q.val() + self.need.val());
        self.ok.next = (self.hdr_infinite.val() | (self.hdr_left.val() <= 128))
            & (self.data_infinite.val() | (self.need.val() == 0) | (self.data_left.val() <= 2048));
        self.pass.next = self.in_tlp.q.val() | self.ok.val();

        self.out.data.next = self.inp.data.val();
        self.out.sop.next = self.inp.sop.val();
        self.out.eop.next = self.inp.eop.val();
        self.out.empty.next = self.inp.empty.val();
        self.out.valid.next = self.inp.valid.val() & self.pass.val();
        self.inp.ready.next = self.out.ready.val() & self.pass.val();
        self.blocked.next = self.inp.valid.val() & !self.pass.val();

        self.start.next =
            self.inp.valid.val() & self.out.ready.val() & self.pass.val() & !self.in_tlp.q.val();
        self.hdr_used.d.next = self.hdr_used.q.val()
            + bit_cast::<8, 1>(self.start.val().into())
            + bit_cast::<8, 1>(self.hip_hdr.val().into());
        self.data_used.d.next =
            self.data_used.q.val() + bit_cast::<12, 1>(self.hip_data.val().into());
        if self.start.val() {
            self.data_used.d.next = self.data_used.q.val()
                + self.need.val()
                + bit_cast::<12, 1>(self.hip_data.val().into());
        }
        if self.inp.valid.val() & self.out.ready.val() & self.pass.val() {
            self.in_tlp.d.next = !self.inp.eop.val();
        }
        if self.reset.val() {
            self.hdr_used.d.next = 0.into();
            self.data_used.d.next = 0.into();
            self.in_tlp.d.next = false;
        }
    }
}

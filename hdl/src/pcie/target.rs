//! BAR0 target: the host's register accesses, as TLPs from the Stratix V Hard IP for PCIe
//! (Avalon-ST beats of `W` bits at 250 MHz: 128 for Gen2 x8, 256 for Gen3 x8), turned into
//! register-bus reads and writes, and reads answered with completions.
//!
//! Supported: memory reads and writes of one dword (all four byte enables) to BAR0, with 32- or
//! 64-bit addresses. Any other request that wants a completion (longer or partial reads, locked,
//! I/O and configuration requests, AtomicOps) is answered with an Unsupported Request completion
//! and changes nothing; any other posted TLP (long, partial or poisoned writes, writes with more
//! than their one dword, messages) and any completion is dropped. The TD bit is ignored. Both are counted
//! through `unsupported` / `dropped` pulses. One request is handled at a time.
//!
//! Interface conventions of the Hard IP (`sim/src/world/tlp.rs` has them at both widths): header
//! dword `n` in bits `32n+31:32n`, its first byte in bits 31:24; payload dwords little-endian and
//! address aligned, so a one-dword write's data sits in dword slot 3 (3-dword header, address bit 2
//! set), 4, or 5 (4-dword header, address bit 2 set), counted on across beats: at 128 bits slot 3
//! is in the header beat and slots 4 and 5 in the next, at 256 bits all three in the header beat;
//! `empty` in the last beat counts its unused qwords. The logic works on a 256-bit view of a beat
//! (the upper half zero at 128 bits, where synthesis drops it). `rx.ready` has a ready latency
//! of 2: a beat may come in cycle `n` only if ready was high in `n - 2`, so the receive side
//! buffers up to four beats and stops asking at two. Completions leave as a TLP source
//! (`pcie/tx_arbiter.rs`: a beat moves when valid and ready, no gap inside a TLP); the arbiter
//! meets the Hard IP's transmit latency.

use rust_hdl::prelude::*;

use crate::common::sync_fifo::SyncFifo;
use crate::pcie::tlp_stream::{TlpRxSink, TlpSource};

/// Bits of the view the target's logic works on: the widest beat.
const VIEW: usize = 256;

/// Register writes leave at least this many core cycles apart: one request at a time, a write
/// taking the states `Idle`, `Decode` and `Act` at least. Register files may count on it: the
/// transmit engine's doorbell check sees a `RingSize` written two cycles before it.
pub const REG_WRITE_SPACING: u64 = 3;

#[derive(Copy, Clone, Debug, PartialEq, LogicState)]
enum TargetState {
    Idle,
    Decode,
    Data,
    Drain,
    Act,
    WaitRead,
    SendCpl,
    SendCplData,
    SendUr,
}

#[derive(LogicBlock)]
pub struct PcieTarget<const W: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// Our bus/device/function number (the completer ID), from the Hard IP's configuration.
    pub completer_id: Signal<In, Bits<16>>,

    /// The host's requests (ready latency 2).
    pub rx: TlpRxSink<W>,

    /// Completions.
    pub tx: TlpSource<W>,

    /// Register bus: dword address inside BAR0, a write strobe, a read strobe answered (any number
    /// of cycles later) by `reg_rvalid` with `reg_rdata`; the address stays until then.
    pub reg_addr: Signal<Out, Bits<14>>,
    pub reg_wdata: Signal<Out, Bits<32>>,
    pub reg_write: Signal<Out, Bit>,
    pub reg_read: Signal<Out, Bit>,
    pub reg_rdata: Signal<In, Bits<32>>,
    pub reg_rvalid: Signal<In, Bit>,
    /// The register side is still busy with the previous access: the next waits (so writes to
    /// registers in other clock domains take effect in order).
    pub reg_busy: Signal<In, Bit>,

    /// Pulses: a request answered with Unsupported Request; a posted TLP dropped.
    pub unsupported: Signal<Out, Bit>,
    pub dropped: Signal<Out, Bit>,

    /// Received beats' data.
    rx_data: SyncFifo<W, 2, 3>,
    /// The rest of each beat, written and read with its data: sop, eop, empty, BAR0 hit.
    rx_fifo: SyncFifo<5, 2, 3>,
    /// Beats of 256 bits: every slot of a one-dword write's data is in its header beat.
    wide: Constant<Bit>,
    /// The `empty` of a last beat whose last used dword is slot 3 of its TLP (0 at 128 bits, 2
    /// at 256). Ending in slot 4 or 5, it is 1 at both widths.
    empty_to_slot3: Constant<Bits<2>>,
    state: DFF<TargetState>,
    h0: DFF<Bits<32>>,
    h1: DFF<Bits<32>>,
    h2: DFF<Bits<32>>,
    h3: DFF<Bits<32>>,
    /// Dword slots 4 and 5 of the header beat (0 at 128 bits).
    h4: DFF<Bits<32>>,
    h5: DFF<Bits<32>>,
    /// The header beat's `empty`.
    h_empty: DFF<Bits<2>>,
    bar0: DFF<Bit>,
    /// The header beat was also the last.
    ended: DFF<Bit>,
    wdata: DFF<Bits<32>>,
    have_data: DFF<Bit>,
    rdata: DFF<Bits<32>>,

    fmt: Signal<Local, Bits<3>>,
    kind: Signal<Local, Bits<5>>,
    four_dw: Signal<Local, Bit>,
    addr_lo: Signal<Local, Bits<32>>,
    is_read: Signal<Local, Bit>,
    is_write: Signal<Local, Bit>,
    /// The write's data dword is in slot 4 or 5, not 3.
    data_late: Signal<Local, Bit>,
    /// ... and in the header beat (always, at 256 bits).
    data_in_head: Signal<Local, Bit>,
    head_data: Signal<Local, Bits<32>>,
    head_empty_ok: Signal<Local, Bit>,
    /// A non-posted request: it must be answered. Registered from the header (stable from the
    /// decode cycle on, used from the next), so the request's kind never deepens the paths out.
    non_posted: DFF<Bit>,
    /// A request the register bus takes: one dword, all byte enables, BAR0, neither poisoned nor
    /// with a digest (registered as `non_posted`).
    simple: DFF<Bit>,
    head: Signal<Local, Bits<VIEW>>,
    cpld_head: Signal<Local, Bits<VIEW>>,
    /// The completion's header beat with its data dword, whether the dword ends it, and its
    /// `empty` then.
    cpld_beat: Signal<Local, Bits<VIEW>>,
    cpl_one_beat: Signal<Local, Bit>,
    cpl_empty: Signal<Local, Bits<2>>,
    /// The beat on offer, data and the rest.
    view: Signal<Local, Bits<VIEW>>,
    beat: Signal<Local, Bits<5>>,
    /// The beat on offer is taken.
    take: Signal<Local, Bit>,
    cpl_dw0: Signal<Local, Bits<32>>,
    cpl_dw1: Signal<Local, Bits<32>>,
    cpl_dw2: Signal<Local, Bits<32>>,
}

impl<const W: usize> Default for PcieTarget<W> {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            reset: Default::default(),
            completer_id: Default::default(),
            rx: Default::default(),
            tx: Default::default(),
            reg_addr: Default::default(),
            reg_wdata: Default::default(),
            reg_write: Default::default(),
            reg_read: Default::default(),
            reg_rdata: Default::default(),
            reg_rvalid: Default::default(),
            reg_busy: Default::default(),
            unsupported: Default::default(),
            dropped: Default::default(),
            rx_data: Default::default(),
            rx_fifo: Default::default(),
            wide: Constant::new(W > 128),
            empty_to_slot3: Constant::new(((W / 64 - 2) as u64).into()),
            state: Default::default(),
            h0: Default::default(),
            h1: Default::default(),
            h2: Default::default(),
            h3: Default::default(),
            h4: Default::default(),
            h5: Default::default(),
            h_empty: Default::default(),
            bar0: Default::default(),
            ended: Default::default(),
            wdata: Default::default(),
            have_data: Default::default(),
            rdata: Default::default(),
            fmt: Default::default(),
            kind: Default::default(),
            four_dw: Default::default(),
            addr_lo: Default::default(),
            is_read: Default::default(),
            is_write: Default::default(),
            data_late: Default::default(),
            data_in_head: Default::default(),
            head_data: Default::default(),
            head_empty_ok: Default::default(),
            non_posted: Default::default(),
            simple: Default::default(),
            head: Default::default(),
            cpld_head: Default::default(),
            cpld_beat: Default::default(),
            cpl_one_beat: Default::default(),
            cpl_empty: Default::default(),
            view: Default::default(),
            beat: Default::default(),
            take: Default::default(),
            cpl_dw0: Default::default(),
            cpl_dw1: Default::default(),
            cpl_dw2: Default::default(),
        }
    }
}

impl<const W: usize> Logic for PcieTarget<W> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, state, h0, h1, h2, h3, h4, h5, h_empty, bar0, ended, wdata, have_data,
            rdata, non_posted, simple
        );
        self.rx_data.clock.next = self.clock.val();
        self.rx_data.reset.next = self.reset.val();
        self.rx_fifo.clock.next = self.clock.val();
        self.rx_fifo.reset.next = self.reset.val();

        // ---- receive side: four beats of room, asked for while at most one is held -----------
        self.rx_data.in_data.next = self.rx.data.val();
        self.rx_fifo.in_data.next = (bit_cast::<5, 1>(self.rx.sop.val().into()) << 4)
            | (bit_cast::<5, 1>(self.rx.eop.val().into()) << 3)
            | (bit_cast::<5, 2>(self.rx.empty.val()) << 1)
            | bit_cast::<5, 1>(self.rx.bar.val().get_bit(0).into());
        self.rx_data.in_valid.next = self.rx.valid.val();
        self.rx_fifo.in_valid.next = self.rx.valid.val();
        self.rx.ready.next = self.rx_fifo.used.val() <= 1;
        self.view.next = bit_cast::<VIEW, W>(self.rx_data.out_data.val());
        self.beat.next = self.rx_fifo.out_data.val();
        self.take.next = false;

        // ---- the request's header fields --------------------------------------------------
        self.fmt.next = self.h0.q.val().get_bits::<3>(29);
        self.kind.next = self.h0.q.val().get_bits::<5>(24);
        self.four_dw.next = self.h0.q.val().get_bit(29);
        self.addr_lo.next = self.h2.q.val();
        if self.four_dw.val() {
            self.addr_lo.next = self.h3.q.val();
        }
        self.is_read.next = (self.fmt.val().get_bits::<2>(1) == 0) & (self.kind.val() == 0);
        self.is_write.next = (self.fmt.val().get_bits::<2>(1) == 1) & (self.kind.val() == 0);
        // A one-dword write's data: slot 3 (3-dword header, address bit 2 set), else 4 or 5.
        self.data_late.next = self.four_dw.val() | !self.addr_lo.val().get_bit(2);
        self.data_in_head.next = !self.data_late.val() | self.wide.val();
        self.head_data.next = self.h3.q.val();
        self.head_empty_ok.next = self.h_empty.q.val() == self.empty_to_slot3.val();
        if self.data_late.val() {
            self.head_data.next = self.h4.q.val();
            if self.four_dw.val() & self.addr_lo.val().get_bit(2) {
                self.head_data.next = self.h5.q.val();
            }
            self.head_empty_ok.next = self.h_empty.q.val() == 1;
        }
        // Requests that want a completion: memory read, locked read, I/O and configuration reads
        // (no data); I/O and configuration writes and AtomicOps (FetchAdd, Swap, CAS; with data).
        // Everything else is posted (memory writes, messages) or no request at all (completions).
        self.non_posted.d.next = ((self.fmt.val().get_bits::<2>(1) == 0)
            & ((self.kind.val() == 0)
                | (self.kind.val() == 1)
                | (self.kind.val() == 2)
                | (self.kind.val() == 4)
                | (self.kind.val() == 5)))
            | ((self.fmt.val().get_bits::<2>(1) == 1)
                & ((self.kind.val() == 2)
                    | (self.kind.val() == 4)
                    | (self.kind.val() == 5)
                    | (self.kind.val() == 0x0C)
                    | (self.kind.val() == 0x0D)
                    | (self.kind.val() == 0x0E)));
        // A poisoned write (EP) carries data that must not be used: not taken. The TD bit is
        // ignored: a Hard IP without ECRC forwarding strips the digest (whether it also clears
        // TD is not documented); a digest that does come makes a write's data beat longer than
        // one dword, and the write is dropped below.
        self.simple.d.next = self.bar0.q.val()
            & (self.h0.q.val().get_bits::<10>(0) == 1)
            & (self.h1.q.val().get_bits::<8>(0) == 0x0F)
            & !(self.is_write.val() & self.h0.q.val().get_bit(14));

        // ---- completion header: CplD (SC) or Cpl (UR), TC and attributes of the request -----
        self.cpl_dw0.next = (bit_cast::<32, 3>(self.h0.q.val().get_bits::<3>(20)) << 20)
            | (bit_cast::<32, 2>(self.h0.q.val().get_bits::<2>(12)) << 12)
            | 0x0A00_0000u64;
        self.cpl_dw1.next = (bit_cast::<32, 16>(self.completer_id.val()) << 16) | 4u64;
        self.cpl_dw2.next = (bit_cast::<32, 16>(self.h1.q.val().get_bits::<16>(16)) << 16)
            | (bit_cast::<32, 8>(self.h1.q.val().get_bits::<8>(8)) << 8);
        self.head.next = (bit_cast::<VIEW, 32>(self.cpl_dw2.val()) << 64)
            | (bit_cast::<VIEW, 32>(self.cpl_dw1.val()) << 32);
        // CplD of one dword: fmt 010, length 1, lower address = the request's address bits 6:2.
        self.cpld_head.next = self.head.val()
            | (bit_cast::<VIEW, 5>(self.addr_lo.val().get_bits::<5>(2)) << 66)
            | bit_cast::<VIEW, 32>(self.cpl_dw0.val() | 0x4000_0001u64);
        // Its data dword: slot 3 for an odd-dword address, else slot 4, which is in the header
        // beat at 256 bits and in a beat of its own at 128 (the header beat drops it there).
        self.cpl_one_beat.next = self.addr_lo.val().get_bit(2) | self.wide.val();
        self.cpld_beat.next =
            self.cpld_head.val() | (bit_cast::<VIEW, 32>(self.rdata.q.val()) << 128);
        self.cpl_empty.next = 1.into();
        if self.addr_lo.val().get_bit(2) {
            self.cpld_beat.next =
                self.cpld_head.val() | (bit_cast::<VIEW, 32>(self.rdata.q.val()) << 96);
            self.cpl_empty.next = self.empty_to_slot3.val();
        }

        self.tx.data.next = 0.into();
        self.tx.sop.next = false;
        self.tx.eop.next = false;
        self.tx.empty.next = 0.into();
        self.tx.valid.next = false;
        self.reg_addr.next = self.addr_lo.val().get_bits::<14>(2);
        self.reg_wdata.next = self.wdata.q.val();
        self.reg_write.next = false;
        self.reg_read.next = false;
        self.unsupported.next = false;
        self.dropped.next = false;

        match self.state.q.val() {
            TargetState::Idle => {
                if self.rx_fifo.out_valid.val() {
                    self.take.next = true;
                    if self.beat.val().get_bit(4) {
                        self.h0.d.next = self.view.val().get_bits::<32>(0);
                        self.h1.d.next = self.view.val().get_bits::<32>(32);
                        self.h2.d.next = self.view.val().get_bits::<32>(64);
                        self.h3.d.next = self.view.val().get_bits::<32>(96);
                        self.h4.d.next = self.view.val().get_bits::<32>(128);
                        self.h5.d.next = self.view.val().get_bits::<32>(160);
                        self.h_empty.d.next = self.beat.val().get_bits::<2>(1);
                        self.bar0.d.next = self.beat.val().get_bit(0);
                        self.ended.d.next = self.beat.val().get_bit(3);
                        self.have_data.d.next = false;
                        self.state.d.next = TargetState::Decode;
                    } else {
                        // A beat outside any TLP.
                        self.dropped.next = true;
                    }
                }
            }
            TargetState::Decode => {
                // A write whose data is in the header beat: taken if the beat ends right after
                // it (a beat carrying more is a malformed write, not taken; at 128 bits a stray
                // dword beside slot 3 is the Hard IP's to catch: `empty` cannot tell).
                if self.is_write.val() & self.data_in_head.val() {
                    self.wdata.d.next = self.head_data.val();
                    self.have_data.d.next = self.ended.q.val() & self.head_empty_ok.val();
                }
                if self.ended.q.val() {
                    self.state.d.next = TargetState::Act;
                } else if self.is_write.val() & !self.data_in_head.val() {
                    self.state.d.next = TargetState::Data;
                } else {
                    self.state.d.next = TargetState::Drain;
                }
            }
            TargetState::Data => {
                if self.rx_fifo.out_valid.val() {
                    self.take.next = true;
                    // (128 bits only: slot 4 or 5 in the second beat.)
                    self.wdata.d.next = self.view.val().get_bits::<32>(0);
                    if self.addr_lo.val().get_bit(2) {
                        self.wdata.d.next = self.view.val().get_bits::<32>(32);
                    }
                    // Its one dword ends the TLP, in the lower qword of the beat (`empty`): a
                    // beat carrying more is a malformed write, not taken. (One stray dword beside
                    // it, in the lower qword, is the Hard IP's to catch: `empty` cannot tell.)
                    self.have_data.d.next = self.beat.val().get_bits::<2>(1) == 1;
                    self.state.d.next = TargetState::Drain;
                    if self.beat.val().get_bit(3) {
                        self.state.d.next = TargetState::Act;
                    }
                }
            }
            TargetState::Drain => {
                if self.rx_fifo.out_valid.val() {
                    self.take.next = true;
                    // A one-dword write with beats beyond its data is malformed: not taken.
                    self.have_data.d.next = false;
                    if self.beat.val().get_bit(3) {
                        self.state.d.next = TargetState::Act;
                    }
                }
            }
            TargetState::Act => {
                self.state.d.next = TargetState::Idle;
                if self.reg_busy.val() & self.simple.q.val() {
                    self.state.d.next = TargetState::Act;
                } else if self.is_write.val() & self.simple.q.val() & self.have_data.q.val() {
                    self.reg_write.next = true;
                } else if self.is_read.val() & self.simple.q.val() {
                    self.reg_read.next = true;
                    self.state.d.next = TargetState::WaitRead;
                } else if self.non_posted.q.val() {
                    self.unsupported.next = true;
                    self.state.d.next = TargetState::SendUr;
                } else {
                    self.dropped.next = true;
                }
            }
            TargetState::WaitRead => {
                if self.reg_rvalid.val() {
                    self.rdata.d.next = self.reg_rdata.val();
                    self.state.d.next = TargetState::SendCpl;
                }
            }
            TargetState::SendCpl => {
                self.tx.valid.next = true;
                self.tx.sop.next = true;
                self.tx.data.next = bit_cast::<W, VIEW>(self.cpld_beat.val());
                if self.cpl_one_beat.val() {
                    self.tx.eop.next = true;
                    self.tx.empty.next = self.cpl_empty.val();
                    if self.tx.ready.val() {
                        self.state.d.next = TargetState::Idle;
                    }
                } else if self.tx.ready.val() {
                    self.state.d.next = TargetState::SendCplData;
                }
            }
            TargetState::SendCplData => {
                self.tx.valid.next = true;
                self.tx.eop.next = true;
                self.tx.empty.next = 1.into();
                self.tx.data.next = bit_cast::<W, 32>(self.rdata.q.val());
                if self.tx.ready.val() {
                    self.state.d.next = TargetState::Idle;
                }
            }
            TargetState::SendUr => {
                // Cpl without data, status UR (bits 15:13 of dword 1 = 001).
                self.tx.valid.next = true;
                self.tx.sop.next = true;
                self.tx.eop.next = true;
                self.tx.empty.next = self.empty_to_slot3.val();
                self.tx.data.next = bit_cast::<W, VIEW>(
                    self.head.val()
                        | (bit_cast::<VIEW, 1>(true.into()) << 45)
                        | bit_cast::<VIEW, 32>(self.cpl_dw0.val()),
                );
                if self.tx.ready.val() {
                    self.state.d.next = TargetState::Idle;
                }
            }
        }
        self.rx_data.out_ready.next = self.take.val();
        self.rx_fifo.out_ready.next = self.take.val();
        if self.reset.val() {
            self.state.d.next = TargetState::Idle;
        }
    }
}

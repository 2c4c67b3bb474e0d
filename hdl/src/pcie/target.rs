//! BAR0 target: the host's register accesses, as TLPs from the Stratix V Hard IP for PCIe
//! (Avalon-ST, 128 bits at 250 MHz), turned into register-bus reads and writes, and reads answered
//! with completions.
//!
//! Supported: memory reads and writes of one dword (all four byte enables) to BAR0, with 32- or
//! 64-bit addresses. Any other request that wants a completion (longer or partial reads, locked,
//! I/O and configuration requests, AtomicOps) is answered with an Unsupported Request completion
//! and changes nothing; any other posted TLP (long, partial or poisoned writes, writes with more
//! than their one dword, messages) and any completion is dropped. The TD bit is ignored. Both are counted
//! through `unsupported` / `dropped` pulses. One request is handled at a time.
//!
//! Interface conventions of the Hard IP (128-bit mode): header dword `n` in bits `32n+31:32n`, its
//! first byte in bits 31:24; payload dwords little-endian; a 3-dword header whose address has bit 2
//! set carries its first payload dword in bits 127:96 of the header beat, otherwise the payload
//! starts in the next beat (4-dword headers: bits 31:0, or 63:32 when address bit 2 is set);
//! `empty` in the last beat says the upper 64 bits are unused. `rx.ready` has a ready latency
//! of 2: a beat may come in cycle `n` only if ready was high in `n - 2`, so the receive side
//! buffers up to four beats and stops asking at two. Completions leave as a TLP source
//! (`pcie/tx_arbiter.rs`: a beat moves when valid and ready, no gap inside a TLP); the arbiter
//! meets the Hard IP's transmit latency.

use rust_hdl::prelude::*;

use crate::common::sync_fifo::SyncFifo;
use crate::pcie::tlp_stream::{TlpRxSink, TlpSource};

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

#[derive(LogicBlock, Default)]
pub struct PcieTarget {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// Our bus/device/function number (the completer ID), from the Hard IP's configuration.
    pub completer_id: Signal<In, Bits<16>>,

    /// The host's requests (ready latency 2).
    pub rx: TlpRxSink<128>,

    /// Completions.
    pub tx: TlpSource<128>,

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

    /// Received beats: data, sop, eop, empty, BAR0 hit.
    rx_fifo: SyncFifo<132, 2, 3>,
    state: DFF<TargetState>,
    h0: DFF<Bits<32>>,
    h1: DFF<Bits<32>>,
    h2: DFF<Bits<32>>,
    h3: DFF<Bits<32>>,
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
    /// A non-posted request: it must be answered. Registered from the header (stable from the
    /// decode cycle on, used from the next), so the request's kind never deepens the paths out.
    non_posted: DFF<Bit>,
    /// A request the register bus takes: one dword, all byte enables, BAR0, neither poisoned nor
    /// with a digest (registered as `non_posted`).
    simple: DFF<Bit>,
    head: Signal<Local, Bits<128>>,
    cpld_head: Signal<Local, Bits<128>>,
    beat: Signal<Local, Bits<132>>,
    cpl_dw0: Signal<Local, Bits<32>>,
    cpl_dw1: Signal<Local, Bits<32>>,
    cpl_dw2: Signal<Local, Bits<32>>,
}

impl Logic for PcieTarget {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, state, h0, h1, h2, h3, bar0, ended, wdata, have_data, rdata, non_posted,
            simple
        );
        self.rx_fifo.clock.next = self.clock.val();
        self.rx_fifo.reset.next = self.reset.val();

        // ---- receive side: four beats of room, asked for while at most one is held -----------
        self.rx_fifo.in_data.next = (bit_cast::<132, 128>(self.rx.data.val()) << 4)
            | (bit_cast::<132, 1>(self.rx.sop.val().into()) << 3)
            | (bit_cast::<132, 1>(self.rx.eop.val().into()) << 2)
            | (bit_cast::<132, 1>(self.rx.empty.val().get_bit(0).into()) << 1)
            | bit_cast::<132, 1>(self.rx.bar.val().get_bit(0).into());
        self.rx_fifo.in_valid.next = self.rx.valid.val();
        self.rx.ready.next = self.rx_fifo.used.val() <= 1;
        self.beat.next = self.rx_fifo.out_data.val();
        self.rx_fifo.out_ready.next = false;

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
        self.head.next = (bit_cast::<128, 32>(self.cpl_dw2.val()) << 64)
            | (bit_cast::<128, 32>(self.cpl_dw1.val()) << 32);
        // CplD of one dword: fmt 010, length 1, lower address = the request's address bits 6:2.
        self.cpld_head.next = self.head.val()
            | (bit_cast::<128, 5>(self.addr_lo.val().get_bits::<5>(2)) << 66)
            | bit_cast::<128, 32>(self.cpl_dw0.val() | 0x4000_0001u64);

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
                    self.rx_fifo.out_ready.next = true;
                    if self.beat.val().get_bit(3) {
                        self.h0.d.next = self.beat.val().get_bits::<32>(4);
                        self.h1.d.next = self.beat.val().get_bits::<32>(36);
                        self.h2.d.next = self.beat.val().get_bits::<32>(68);
                        self.h3.d.next = self.beat.val().get_bits::<32>(100);
                        self.bar0.d.next = self.beat.val().get_bit(0);
                        self.ended.d.next = self.beat.val().get_bit(2);
                        self.have_data.d.next = false;
                        self.state.d.next = TargetState::Decode;
                    } else {
                        // A beat outside any TLP.
                        self.dropped.next = true;
                    }
                }
            }
            TargetState::Decode => {
                // A 3-dword write to an odd dword carries its data in the header beat.
                if self.is_write.val() & !self.four_dw.val() & self.addr_lo.val().get_bit(2) {
                    self.wdata.d.next = self.h3.q.val();
                    self.have_data.d.next = true;
                }
                if self.ended.q.val() {
                    self.state.d.next = TargetState::Act;
                } else if self.is_write.val()
                    & (self.four_dw.val() | !self.addr_lo.val().get_bit(2))
                {
                    self.state.d.next = TargetState::Data;
                } else {
                    self.state.d.next = TargetState::Drain;
                }
            }
            TargetState::Data => {
                if self.rx_fifo.out_valid.val() {
                    self.rx_fifo.out_ready.next = true;
                    self.wdata.d.next = self.beat.val().get_bits::<32>(4);
                    if self.addr_lo.val().get_bit(2) {
                        self.wdata.d.next = self.beat.val().get_bits::<32>(36);
                    }
                    // Its one dword ends the TLP, in the lower half of the beat (`empty`): a
                    // beat carrying more is a malformed write, not taken. (One stray dword beside
                    // it, in the lower half, is the Hard IP's to catch: `empty` cannot tell.)
                    self.have_data.d.next = self.beat.val().get_bit(1);
                    self.state.d.next = TargetState::Drain;
                    if self.beat.val().get_bit(2) {
                        self.state.d.next = TargetState::Act;
                    }
                }
            }
            TargetState::Drain => {
                if self.rx_fifo.out_valid.val() {
                    self.rx_fifo.out_ready.next = true;
                    // A one-dword write with beats beyond its data is malformed: not taken.
                    self.have_data.d.next = false;
                    if self.beat.val().get_bit(2) {
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
                self.tx.data.next = self.cpld_head.val();
                if self.addr_lo.val().get_bit(2) {
                    // Odd dword: the data rides in the header beat.
                    self.tx.data.next =
                        self.cpld_head.val() | (bit_cast::<128, 32>(self.rdata.q.val()) << 96);
                    self.tx.eop.next = true;
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
                self.tx.data.next = bit_cast::<128, 32>(self.rdata.q.val());
                if self.tx.ready.val() {
                    self.state.d.next = TargetState::Idle;
                }
            }
            TargetState::SendUr => {
                // Cpl without data, status UR (bits 15:13 of dword 1 = 001).
                self.tx.valid.next = true;
                self.tx.sop.next = true;
                self.tx.eop.next = true;
                self.tx.data.next = self.head.val()
                    | (bit_cast::<128, 1>(true.into()) << 45)
                    | bit_cast::<128, 32>(self.cpl_dw0.val());
                if self.tx.ready.val() {
                    self.state.d.next = TargetState::Idle;
                }
            }
        }
        if self.reset.val() {
            self.state.d.next = TargetState::Idle;
        }
    }
}

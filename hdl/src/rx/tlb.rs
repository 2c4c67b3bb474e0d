//! TLB: 128 entries translating virtual pages (4 KiB, 64 KiB or 2 MiB, per entry) to bus addresses.
//!
//! Host managed and O(1): the host gives every CLOP a range of slots, one per page of its buffers;
//! the CLOP engine asks for a translation of `vaddr` *at* a slot (the CLOP's first slot plus the
//! page index within the CLOP), for a page of the CLOP's page size. The slot's tag — valid, page
//! size, virtual page number — must match the request, otherwise the lookup misses: a stale,
//! invalidated or wrong slot can never produce a bus address, so there is no untranslated write,
//! and an entry of a smaller page than the CLOP's (which the DMA writer would walk past) misses
//! too. One RAM read per lookup, one lookup per cycle.
//!
//! The answer comes in the cycle after the request: `resp_hit` from the tag compare, `resp_addr`
//! from the bus page alone (meaningful only with `resp_hit`; it does not wait for the compare).
//!
//! Entry: tag `{valid[54], size[53:52], vpn[51:0]}` (vpn = vaddr[63:12]) and the bus page address
//! `ppn[51:0]` (bus address [63:12]), in two RAMs so no word is wider than 64 bits. For 64 KiB and
//! 2 MiB pages the low vpn/ppn bits of the page are ignored (offset bits come from `vaddr`).

use rust_hdl::prelude::*;

/// Entries.
pub const TLB_ENTRIES: usize = 128;
/// Page size codes.
pub const PAGE_4K: u64 = 0;
pub const PAGE_64K: u64 = 1;
pub const PAGE_2M: u64 = 2;

#[derive(LogicBlock, Default)]
pub struct Tlb {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// Host writes: slot `wr_slot` becomes `{wr_valid, wr_size, wr_vpn, wr_ppn}`. Invalidating
    /// a slot is writing it with `wr_valid` clear.
    pub wr: Signal<In, Bit>,
    pub wr_slot: Signal<In, Bits<7>>,
    pub wr_valid: Signal<In, Bit>,
    pub wr_size: Signal<In, Bits<2>>,
    pub wr_vpn: Signal<In, Bits<52>>,
    pub wr_ppn: Signal<In, Bits<52>>,
    /// Lookup request (accepted every cycle the response side is not stalled).
    pub req_valid: Signal<In, Bit>,
    pub req_ready: Signal<Out, Bit>,
    pub req_slot: Signal<In, Bits<7>>,
    pub req_vaddr: Signal<In, Bits<64>>,
    /// Page size code the entry must have.
    pub req_size: Signal<In, Bits<2>>,
    /// Response, one cycle after the request: hit (with the bus address), or miss.
    pub resp_valid: Signal<Out, Bit>,
    pub resp_ready: Signal<In, Bit>,
    pub resp_hit: Signal<Out, Bit>,
    pub resp_addr: Signal<Out, Bits<64>>,

    tags: RAM<Bits<55>, 7>,
    ppns: RAM<Bits<52>, 7>,
    r_valid: DFF<Bit>,
    r_vaddr: DFF<Bits<64>>,
    r_slot: DFF<Bits<7>>,
    r_size: DFF<Bits<2>>,
    /// The request's page size as masks of the compare, registered with it: page-number bits
    /// 3:0 are offset (64 KiB and 2 MiB pages), bits 8:4 too (2 MiB). The compare is then one
    /// AND tree of bit compares, not a choice among three (for timing: it decides the DMA
    /// writer's miss, in the cycle of the answer).
    r_skip_lo: DFF<Bit>,
    r_skip_mid: DFF<Bit>,
    /// The request's page size is one of the three (size code 3 never hits).
    r_size_ok: DFF<Bit>,
    /// Sweep after reset: every slot invalid.
    sweeping: DFF<Bit>,
    sweep_slot: DFF<Bits<7>>,
    vpn_match: Signal<Local, Bit>,
    tag_vpn: Signal<Local, Bits<52>>,
    req_vpn: Signal<Local, Bits<52>>,
    fire: Signal<Local, Bit>,
}

impl Logic for Tlb {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, r_valid, r_vaddr, r_slot, r_size, r_skip_lo, r_skip_mid, r_size_ok,
            sweeping, sweep_slot
        );
        self.tags.read_clock.next = self.clock.val();
        self.tags.write_clock.next = self.clock.val();
        self.ppns.read_clock.next = self.clock.val();
        self.ppns.write_clock.next = self.clock.val();

        // ---- host writes (and the reset sweep) ------------------------------------------------
        self.tags.write_enable.next = self.wr.val();
        self.ppns.write_enable.next = self.wr.val();
        self.tags.write_address.next = self.wr_slot.val();
        self.ppns.write_address.next = self.wr_slot.val();
        self.tags.write_data.next = (bit_cast::<55, 1>(self.wr_valid.val().into()) << 54)
            | (bit_cast::<55, 2>(self.wr_size.val()) << 52)
            | bit_cast::<55, 52>(self.wr_vpn.val());
        self.ppns.write_data.next = self.wr_ppn.val();
        if self.sweeping.q.val() {
            self.tags.write_enable.next = true;
            self.tags.write_address.next = self.sweep_slot.q.val();
            self.tags.write_data.next = 0.into();
            self.sweep_slot.d.next = self.sweep_slot.q.val() + 1;
            if self.sweep_slot.q.val() == 127 {
                self.sweeping.d.next = false;
            }
        }

        // ---- lookup: read the slot, compare its tag one cycle later ---------------------------
        self.req_ready.next = !self.r_valid.q.val() | self.resp_ready.val();
        self.fire.next = self.req_valid.val() & (!self.r_valid.q.val() | self.resp_ready.val());
        // While a response waits the RAMs read its slot again, so their outputs stay put; else
        // they read the slot on offer, whether or not a request comes (for timing: the address
        // does not wait for `req_valid`; without a request nobody reads the answer).
        self.tags.read_address.next = self.r_slot.q.val();
        self.ppns.read_address.next = self.r_slot.q.val();
        if !self.r_valid.q.val() | self.resp_ready.val() {
            self.tags.read_address.next = self.req_slot.val();
            self.ppns.read_address.next = self.req_slot.val();
        }
        if self.resp_ready.val() {
            self.r_valid.d.next = false;
        }
        if self.fire.val() {
            self.r_valid.d.next = true;
            self.r_vaddr.d.next = self.req_vaddr.val();
            self.r_slot.d.next = self.req_slot.val();
            self.r_size.d.next = self.req_size.val();
            self.r_skip_lo.d.next = self.req_size.val() != 0;
            self.r_skip_mid.d.next = self.req_size.val() == 2;
            self.r_size_ok.d.next = self.req_size.val() != 3;
        }

        self.tag_vpn.next = self.tags.read_data.val().get_bits::<52>(0);
        self.req_vpn.next = self.r_vaddr.q.val().get_bits::<52>(12);
        // The compared bits follow the requested size (registers), not the entry's.
        self.vpn_match.next = (self.tag_vpn.val().get_bits::<43>(9)
            == self.req_vpn.val().get_bits::<43>(9))
            & ((self.tag_vpn.val().get_bits::<5>(4) == self.req_vpn.val().get_bits::<5>(4))
                | self.r_skip_mid.q.val())
            & ((self.tag_vpn.val().get_bits::<4>(0) == self.req_vpn.val().get_bits::<4>(0))
                | self.r_skip_lo.q.val())
            & self.r_size_ok.q.val();
        self.resp_addr.next = (bit_cast::<64, 52>(self.ppns.read_data.val()) << 12)
            | bit_cast::<64, 12>(self.r_vaddr.q.val().get_bits::<12>(0));
        match self.r_size.q.val().index() {
            1 => {
                // 64 KiB: the low 4 bits of the page number are offset.
                self.resp_addr.next =
                    (bit_cast::<64, 48>(self.ppns.read_data.val().get_bits::<48>(4)) << 16)
                        | bit_cast::<64, 16>(self.r_vaddr.q.val().get_bits::<16>(0));
            }
            2 => {
                // 2 MiB: the low 9 bits of the page number are offset.
                self.resp_addr.next =
                    (bit_cast::<64, 43>(self.ppns.read_data.val().get_bits::<43>(9)) << 21)
                        | bit_cast::<64, 21>(self.r_vaddr.q.val().get_bits::<21>(0));
            }
            _ => {}
        }
        self.resp_valid.next = self.r_valid.q.val();
        self.resp_hit.next = self.tags.read_data.val().get_bit(54)
            & (self.tags.read_data.val().get_bits::<2>(52) == self.r_size.q.val())
            & self.vpn_match.val()
            & !self.sweeping.q.val();

        if self.reset.val() {
            self.r_valid.d.next = false;
            self.sweeping.d.next = true;
            self.sweep_slot.d.next = 0.into();
        }
    }
}

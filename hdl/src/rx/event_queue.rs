//! Event queue: writes event records into the host's ring and raises the interrupt.
//!
//! The ring is `2^size_log2` records of 32 bytes at bus address `base` (the layout is
//! `nanet_contract::events`). The card's producer index `tail` counts records written (16 bits,
//! wrapping); the host's consumer index `head` says how many it has consumed. A record goes to slot
//! `tail % 2^n` with phase bit `!tail[n]` (1 on the first lap), so the host can poll memory alone.
//! The queue never overwrites a record the host has not consumed: while the ring is full it holds
//! the event (and the engine behind it waits); the free-slot check is a register (for timing),
//! updated with the record that fills the ring and one cycle behind a new `head`. While `enable`
//! is low, `tail` stays 0 and events are discarded (`dropped` pulses); a record whose first beat
//! is out when `enable` drops is finished first.
//!
//! A record is one write request (`wr`, see `write_request`): bytes 0..15 from `ev_lo`, bytes
//! 16..31 from `ev_hi` (little-endian lanes), the phase bit ORed into bit 7 of every 8-byte word
//! (the packer leaves those bits clear), so the host takes a record only once all of it landed.
//! At 128 bits it is two beats; at 256 one, and the cycle after it is a rest (no record offered):
//! either way no record is done in the cycle after another, which the registered free-slot check
//! relies on. `base` is 32-byte aligned (its low five bits are ignored). The address and phase
//! of the record at `tail` are registers (for timing), recomputed every cycle; those of the
//! record after it are computed a cycle ahead, so a record can start right after the one before
//! (at 256 bits, after its rest). Records start two cycles after
//! `enable` rises, when the address and the slot mask (a register) reflect the ring's `base` and
//! `size_log2`.
//!
//! Interrupt: `irq` pulses when armed (`irq_arm` pulse) and records are pending, at least
//! `irq_min_interval` cycles after the previous interrupt, once `irq_count` records are pending or
//! the oldest pending one has waited `irq_min_interval` cycles (these conditions are registered,
//! then combined in a register: `irq` comes two cycles after they hold, for timing). Firing
//! disarms; the host re-arms after it has drained the ring. The card's MSI goes out only once the
//! writes before it have left (`card/nic.rs`): records done meanwhile leave ahead of it, and when
//! its request starts (`msi_covers`) they stop being pending, so they raise no second interrupt.

use nanet_contract::events::PHASE_BYTES;
use rust_hdl::prelude::*;

use crate::common::staged_compare::StagedGe32;

// The phase bits the update ORs in: bit 7 of bytes 0, 15, 23 and 31 of the record (its bits 7,
// 127, 191 and 255).
const _: () = assert!(
    PHASE_BYTES[0] == 0 && PHASE_BYTES[1] == 15 && PHASE_BYTES[2] == 23 && PHASE_BYTES[3] == 31
);
use crate::pcie::write_request::WriteRequestSource;

#[derive(LogicBlock)]
pub struct EventQueue<const W: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,

    pub enable: Signal<In, Bit>,
    pub base: Signal<In, Bits<64>>,
    pub size_log2: Signal<In, Bits<4>>,
    pub head: Signal<In, Bits<16>>,
    pub tail: Signal<Out, Bits<16>>,

    pub irq_arm: Signal<In, Bit>,
    pub irq_min_interval: Signal<In, Bits<32>>,
    pub irq_count: Signal<In, Bits<16>>,
    pub irq: Signal<Out, Bit>,
    pub armed: Signal<Out, Bit>,
    /// The card's MSI request started in the cycle before (`card/nic.rs`): every record done
    /// before that cycle had left ahead of it, so it announces them too and they are no longer
    /// pending (else they would raise a second interrupt with nothing new in the ring).
    pub msi_covers: Signal<In, Bit>,

    pub ev_valid: Signal<In, Bit>,
    pub ev_ready: Signal<Out, Bit>,
    pub ev_lo: Signal<In, Bits<128>>,
    pub ev_hi: Signal<In, Bits<128>>,

    pub wr: WriteRequestSource<W>,

    /// One pulse per record written, and per event discarded while disabled.
    pub written: Signal<Out, Bit>,
    pub dropped: Signal<Out, Bit>,

    tail_r: DFF<Bits<16>>,
    /// The cycle after a record's first beat: its second beat at 128 bits, a rest at 256.
    second: DFF<Bit>,
    /// A record is one beat (256 bits).
    one_beat: Constant<Bit>,
    /// The record as one 256-bit word, phase bits in, and its upper half (at 128 bits, the
    /// second beat).
    record: Signal<Local, Bits<256>>,
    record_hi: Signal<Local, Bits<256>>,
    armed_r: DFF<Bit>,
    pending: DFF<Bits<16>>,
    /// `pending + 1`, kept beside it (for timing: a record done takes it through a multiplexer,
    /// with no adder after the write mux's handshake).
    pending_p1: DFF<Bits<16>>,
    age: DFF<Bits<32>>,
    since_irq: DFF<Bits<32>>,
    /// The moderation conditions held two cycles before (registered, then combined).
    due: DFF<Bit>,
    /// The ring has a free slot, as of the cycle before (for timing): computed from the count
    /// after that cycle's record, so a record that fills the ring stops the next one.
    space_q: DFF<Bit>,
    /// The ring would have a free slot after one more record (see its update).
    space_after: DFF<Bit>,
    /// `enable` one and two cycles ago: records start when all three hold, once `mask` has
    /// followed a `size_log2` written with the enable.
    enabled: DFF<Bit>,
    enabled2: DFF<Bit>,
    /// `2^size_log2 - 1`, registered (for timing: the shift and subtraction stay off the record
    /// paths; `size_log2` only changes while the ring is disabled).
    mask: DFF<Bits<16>>,
    /// The base's bits from 21 up, plus one (registered, for timing: a record's address is a
    /// 16-bit add of its slot to the base's bits 20:5, its carry choosing the upper bits; the base
    /// only changes while the ring is disabled).
    base_hi_inc: DFF<Bits<43>>,
    /// Bus address and phase bit of the record at `tail`, and of the one after it.
    rec_addr: DFF<Bits<64>>,
    rec_phase: DFF<Bit>,
    next_addr: DFF<Bits<64>>,
    next_phase: DFF<Bit>,

    slots: Signal<Local, Bits<17>>,
    used: Signal<Local, Bits<16>>,
    /// `used - mask`: negative when one more record fits (its sign, for timing: a carry chain
    /// that yosys keeps, where the compare was mapped as a chain of LUTs).
    used_past_mask: Signal<Local, Bits<17>>,
    space: Signal<Local, Bit>,
    base_hi: Signal<Local, Bits<43>>,
    /// Slot plus the base's bits 20:5, at `tail` and after it (bit 16: the carry).
    rec_low: Signal<Local, Bits<17>>,
    next_low: Signal<Local, Bits<17>>,
    after: Signal<Local, Bits<16>>,
    slot: Signal<Local, Bits<16>>,
    lap: Signal<Local, Bits<16>>,
    slot_after: Signal<Local, Bits<16>>,
    lap_after: Signal<Local, Bits<16>>,
    open: Signal<Local, Bit>,
    offer: Signal<Local, Bit>,
    discard: Signal<Local, Bit>,
    irq_now: Signal<Local, Bit>,
    fire: Signal<Local, Bit>,
    done: Signal<Local, Bit>,
    count_met: DFF<Bit>,
    /// A record was done in the last cycle (still pending when an MSI request covers the ones
    /// before).
    done_q: DFF<Bit>,
    /// `since_irq >= irq_min_interval` and `age >= irq_min_interval`, a cycle late.
    interval_met: StagedGe32,
    age_met: StagedGe32,
    any_pending: DFF<Bit>,
}

impl<const W: usize> EventQueue<W> {
    /// The beat is 128 or 256 bits (a record is two beats or one).
    const WIDTH_OK: () = assert!(W == 128 || W == 256, "EventQueue: W must be 128 or 256");
}

impl<const W: usize> Default for EventQueue<W> {
    fn default() -> Self {
        #[allow(clippy::let_unit_value)]
        let () = Self::WIDTH_OK;
        Self {
            clock: Default::default(),
            reset: Default::default(),
            enable: Default::default(),
            base: Default::default(),
            size_log2: Default::default(),
            head: Default::default(),
            tail: Default::default(),
            irq_arm: Default::default(),
            irq_min_interval: Default::default(),
            irq_count: Default::default(),
            irq: Default::default(),
            armed: Default::default(),
            msi_covers: Default::default(),
            ev_valid: Default::default(),
            ev_ready: Default::default(),
            ev_lo: Default::default(),
            ev_hi: Default::default(),
            wr: Default::default(),
            written: Default::default(),
            dropped: Default::default(),
            tail_r: Default::default(),
            second: Default::default(),
            one_beat: Constant::new(W > 128),
            record: Default::default(),
            record_hi: Default::default(),
            armed_r: Default::default(),
            pending: Default::default(),
            pending_p1: Default::default(),
            age: Default::default(),
            since_irq: Default::default(),
            due: Default::default(),
            space_q: Default::default(),
            space_after: Default::default(),
            enabled: Default::default(),
            enabled2: Default::default(),
            mask: Default::default(),
            base_hi_inc: Default::default(),
            rec_addr: Default::default(),
            rec_phase: Default::default(),
            next_addr: Default::default(),
            next_phase: Default::default(),
            slots: Default::default(),
            used: Default::default(),
            used_past_mask: Default::default(),
            space: Default::default(),
            base_hi: Default::default(),
            rec_low: Default::default(),
            next_low: Default::default(),
            after: Default::default(),
            slot: Default::default(),
            lap: Default::default(),
            slot_after: Default::default(),
            lap_after: Default::default(),
            open: Default::default(),
            offer: Default::default(),
            discard: Default::default(),
            irq_now: Default::default(),
            fire: Default::default(),
            done: Default::default(),
            count_met: Default::default(),
            done_q: Default::default(),
            interval_met: Default::default(),
            age_met: Default::default(),
            any_pending: Default::default(),
        }
    }
}

impl<const W: usize> Logic for EventQueue<W> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            tail_r,
            second,
            armed_r,
            pending,
            pending_p1,
            age,
            since_irq,
            due,
            space_q,
            space_after,
            enabled,
            enabled2,
            mask,
            base_hi_inc,
            count_met,
            done_q,
            any_pending,
            rec_addr,
            rec_phase,
            next_addr,
            next_phase
        );

        // ---- ring space, slot and phase of the next record ---------------------------------
        self.slots.next = 1.into();
        self.slots.next = self.slots.val() << self.size_log2.val();
        self.mask.d.next = self.slots.val().get_bits::<16>(0) - 1;
        self.after.next = self.tail_r.q.val() + 1;
        self.used.next = self.tail_r.q.val() - self.head.val();
        // While enabled, `head` only grows (the host consumes), so a one-cycle-old count is on
        // the safe side; the host moves it back (to 0) or shrinks the ring only while disabled.
        self.space.next = self.space_q.q.val();
        // Below `2^n` records used: no bit above the slot mask set (for timing: no compare).
        // After this record, below `2^n` used: `used + 1 < 2^n`, i.e. `used < mask` (one compare
        // after the count, for timing; a count beyond the ring, from a head ahead of the tail,
        // compares as full).
        // Registered, from the cycle before the beat that completes the record (its first beat at
        // 128 bits, the rest after the record before, or an idle cycle, at 256): no record is
        // done in that cycle, so `tail` is the one the record goes to, and `head` only grows: on
        // the safe side.
        self.used_past_mask.next =
            bit_cast::<17, 16>(self.used.val()) - bit_cast::<17, 16>(self.mask.q.val());
        self.space_after.d.next = self.used_past_mask.val().get_bit(16);
        self.space_q.d.next = (self.used.val() & !self.mask.q.val()) == 0;
        // The records at `tail` and after it: slot, address and phase (`!tail[n]`).
        self.base_hi.next = self.base.val().get_bits::<43>(21);
        self.base_hi_inc.d.next = self.base_hi.val() + 1;
        self.slot.next = self.tail_r.q.val() & self.mask.q.val();
        self.lap.next = self.tail_r.q.val() >> self.size_log2.val();
        self.rec_low.next = bit_cast::<17, 16>(self.base.val().get_bits::<16>(5))
            + bit_cast::<17, 16>(self.slot.val());
        self.rec_addr.d.next = (bit_cast::<64, 43>(self.base_hi.val()) << 21)
            | (bit_cast::<64, 16>(self.rec_low.val().get_bits::<16>(0)) << 5);
        if self.rec_low.val().get_bit(16) {
            self.rec_addr.d.next = (bit_cast::<64, 43>(self.base_hi_inc.q.val()) << 21)
                | (bit_cast::<64, 16>(self.rec_low.val().get_bits::<16>(0)) << 5);
        }
        self.rec_phase.d.next = !self.lap.val().get_bit(0);
        self.slot_after.next = self.after.val() & self.mask.q.val();
        self.lap_after.next = self.after.val() >> self.size_log2.val();
        self.next_low.next = bit_cast::<17, 16>(self.base.val().get_bits::<16>(5))
            + bit_cast::<17, 16>(self.slot_after.val());
        self.next_addr.d.next = (bit_cast::<64, 43>(self.base_hi.val()) << 21)
            | (bit_cast::<64, 16>(self.next_low.val().get_bits::<16>(0)) << 5);
        if self.next_low.val().get_bit(16) {
            self.next_addr.d.next = (bit_cast::<64, 43>(self.base_hi_inc.q.val()) << 21)
                | (bit_cast::<64, 16>(self.next_low.val().get_bits::<16>(0)) << 5);
        }
        self.next_phase.d.next = !self.lap_after.val().get_bit(0);
        self.tail.next = self.tail_r.q.val();
        self.enabled.d.next = self.enable.val();
        self.enabled2.d.next = self.enabled.q.val();
        self.open.next = self.enable.val() & self.enabled.q.val() & self.enabled2.q.val();

        // ---- the beats of a record ---------------------------------------------------------
        // A record starts into a free slot of an open ring; once started it is finished, even if
        // `enable` drops in between (a write request is never left half sent). At 256 bits the
        // cycle after it (`second`) offers nothing.
        self.offer.next = self.ev_valid.val()
            & ((self.open.val() & self.space.val() & !self.second.q.val())
                | (self.second.q.val() & !self.one_beat.val()));
        self.wr.valid.next = self.offer.val();
        self.wr.sop.next = !self.second.q.val();
        self.wr.eop.next = self.second.q.val() | self.one_beat.val();
        self.wr.len.next = 32.into();
        self.wr.addr.next = self.rec_addr.q.val();
        // The phase in every 8-byte word (`PHASE_BYTES`, checked above): bits 7, 127, 191 and
        // 255 of the record; at 128 bits its lower half is the first beat, the upper the second.
        self.record.next = (bit_cast::<256, 128>(self.ev_hi.val()) << 128)
            | bit_cast::<256, 128>(self.ev_lo.val())
            | (bit_cast::<256, 1>(self.rec_phase.q.val().into()) << 7)
            | (bit_cast::<256, 1>(self.rec_phase.q.val().into()) << 127)
            | (bit_cast::<256, 1>(self.rec_phase.q.val().into()) << 191)
            | (bit_cast::<256, 1>(self.rec_phase.q.val().into()) << 255);
        self.record_hi.next = self.record.val() >> 128;
        self.wr.data.next = self.record.val().get_bits::<W>(0);
        if self.second.q.val() {
            self.wr.addr.next = self.rec_addr.q.val() | 16;
            self.wr.data.next = self.record_hi.val().get_bits::<W>(0);
        }
        self.fire.next = self.offer.val() & self.wr.ready.val();
        self.done.next = self.fire.val() & (self.second.q.val() | self.one_beat.val());
        // (At 256 bits: set by a record, cleared the cycle after.)
        self.second.d.next = self.second.q.val() ^ self.fire.val();
        if self.one_beat.val() {
            self.second.d.next = self.fire.val();
        }
        if self.done.val() {
            self.tail_r.d.next = self.after.val();
            self.space_q.d.next = self.space_after.q.val();
            self.rec_addr.d.next = self.next_addr.q.val();
            self.rec_phase.d.next = self.next_phase.q.val();
        }
        self.discard.next = !self.enable.val() & !self.second.q.val();
        // The record is taken with its last beat; ready does not wait for `ev_valid` (a record
        // whose first beat went out stays on offer until then), for timing. `discard` restated:
        // a local shared with what reads `ev_valid` would tie `ev_ready` to `ev_valid` in
        // Verilator's ordering, a loop with the event mux (UNOPTFLAT).
        // (At 256 bits `open` and `space` restated from registers, for the same reason.)
        self.ev_ready.next = (self.second.q.val() & !self.one_beat.val() & self.wr.ready.val())
            | (!self.second.q.val()
                & self.one_beat.val()
                & self.enable.val()
                & self.enabled.q.val()
                & self.enabled2.q.val()
                & self.space_q.q.val()
                & self.wr.ready.val())
            | (!self.enable.val() & !self.second.q.val());
        self.written.next = self.done.val();
        self.dropped.next = self.ev_valid.val() & self.discard.val();
        if self.discard.val() {
            self.tail_r.d.next = 0.into();
            self.second.d.next = false;
        }

        // ---- interrupt moderation ---------------------------------------------------------------
        if self.since_irq.q.val() != 0xFFFF_FFFFu64 {
            self.since_irq.d.next = self.since_irq.q.val() + 1;
        }
        if (self.pending.q.val() != 0) & (self.age.q.val() != 0xFFFF_FFFFu64) {
            self.age.d.next = self.age.q.val() + 1;
        }
        if self.done.val() {
            self.pending.d.next = self.pending_p1.q.val();
            self.pending_p1.d.next = self.pending_p1.q.val() + 1;
        }
        if self.irq_arm.val() {
            self.armed_r.d.next = true;
        }
        // Each condition in its own register, then `due` from them (for timing: three wide
        // compares side by side, not one after the other): `irq` comes two cycles after they hold.
        // The 32-bit compares by halves (`StagedGe32`).
        self.count_met.d.next = self.pending.q.val() >= self.irq_count.val();
        self.interval_met.clock.next = self.clock.val();
        self.interval_met.a.next = self.since_irq.q.val();
        self.interval_met.b.next = self.irq_min_interval.val();
        self.age_met.clock.next = self.clock.val();
        self.age_met.a.next = self.age.q.val();
        self.age_met.b.next = self.irq_min_interval.val();
        self.any_pending.d.next = self.pending.q.val() != 0;
        self.due.d.next = self.any_pending.q.val()
            & self.interval_met.ge.val()
            & (self.count_met.q.val() | self.age_met.ge.val());
        // An MSI request that started in the last cycle (c) announces every record done before
        // c (each had reached the write mux's output slice, which the request waits to see
        // empty); the ones done in c and now are behind it, and still pending.
        self.done_q.d.next = self.done.val();
        if self.msi_covers.val() {
            // (`done` only selects: every sum is of registers.)
            self.pending.d.next = bit_cast::<16, 1>(self.done_q.q.val().into());
            self.pending_p1.d.next = bit_cast::<16, 1>(self.done_q.q.val().into()) + 1;
            if self.done.val() {
                self.pending.d.next = bit_cast::<16, 1>(self.done_q.q.val().into()) + 1;
                self.pending_p1.d.next = bit_cast::<16, 1>(self.done_q.q.val().into()) + 2;
            }
            self.age.d.next = 0.into();
            self.any_pending.d.next = false;
            self.count_met.d.next = false;
            self.due.d.next = false;
        }
        // While the ring is disabled nothing is pending: the records made before are gone for the
        // host (it sets the ring up again), so they raise no interrupt after a re-enable.
        if !self.enabled.q.val() {
            self.pending.d.next = 0.into();
            self.pending_p1.d.next = 1.into();
            self.age.d.next = 0.into();
            self.any_pending.d.next = false;
            self.due.d.next = false;
        }
        // (`due` in the cycle of `msi_covers` still counts records that MSI announces.)
        self.irq_now.next =
            self.armed_r.q.val() & self.due.q.val() & self.enabled.q.val() & !self.msi_covers.val();
        // The registered conditions start again with the counts (on the late side).
        self.interval_met.clear.next = self.irq_now.val();
        self.age_met.clear.next = self.irq_now.val();
        self.irq.next = self.irq_now.val();
        if self.irq_now.val() {
            self.armed_r.d.next = false;
            self.pending.d.next = 0.into();
            self.pending_p1.d.next = 1.into();
            if self.done.val() {
                self.pending.d.next = 1.into();
                self.pending_p1.d.next = 2.into();
            }
            self.age.d.next = 0.into();
            self.since_irq.d.next = 0.into();
            // The registered conditions start again with the counts (on the late side).
            self.any_pending.d.next = false;
            self.count_met.d.next = false;
            self.due.d.next = false;
        }
        self.armed.next = self.armed_r.q.val();

        if self.reset.val() {
            self.tail_r.d.next = 0.into();
            self.second.d.next = false;
            self.armed_r.d.next = false;
            self.pending.d.next = 0.into();
            self.pending_p1.d.next = 1.into();
            self.age.d.next = 0.into();
            self.since_irq.d.next = 0xFFFF_FFFFu64.into();
            self.any_pending.d.next = false;
            self.due.d.next = false;
            self.done_q.d.next = false;
        }
    }
}

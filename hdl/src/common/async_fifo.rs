//! Clock-domain crossing FIFO for words of `D` bits of data and `M` bits of metadata, with the classic
//! Gray-coded pointers (Cummings, "Simulation and Synthesis Techniques for Asynchronous FIFO
//! Design"): each side keeps its pointer in binary and Gray code, the other side sees the Gray
//! pointer through two flip-flops, so at most one bit changes per transfer.
//!
//! Depth `2^A` entries; `AP1` must be `A + 1` (pointers carry one extra bit to tell full from
//! empty). Write side: `in_valid`/`in_ready` on `write_clock`. Read side: first-word fall-through
//! `out_valid`/`out_ready` on `read_clock`, from a registered output stage: an entry counts as read
//! only when it is taken from the output, so the writer never overwrites one still on its way.
//!
//! Each side has its own synchronous reset; assert both together (for at least three cycles of the
//! slower clock) to empty the FIFO.
//!
//! Timing: the decisions are registers, so each output comes from a register through at most one
//! level: `in_ready` (not full), `out_valid`, whether an entry is waiting (`nonempty`), and the
//! synchronized read pointer in binary (`rbin_w`, so `in_used` is one subtraction; decoded over
//! two stages, so `in_used` follows the reader two cycles after the synchronizer). They are
//! computed from the second synchronizer stages, never the first, so each takes effect one cycle
//! after the other side's pointer has come through both flip-flops: the writer sees space, and
//! the reader sees an entry, a cycle later than a combinational decision would (always the safe
//! side).
//!
//! The read side never lets `out_ready` reach the memory or a fetch: the RAM reads the entry at
//! the read pointer (a register) every cycle, a fetch (an entry waiting and room in the output
//! stage, both registers) decides whether that read counts, and the entry arrives a cycle later
//! in the three-register output stage (`FifoOutput`, one for the data and one for the metadata,
//! driven alike), whose outputs are flip-flops. A steady reader still takes an entry every cycle;
//! an entry reaches the output one read cycle later than a read straight from the RAM would
//! bring it.

use rust_hdl::prelude::*;

use crate::common::fifo_output::FifoOutput;

#[derive(LogicBlock)]
pub struct AsyncFifo<const D: usize, const M: usize, const A: usize, const AP1: usize> {
    pub write_clock: Signal<In, Clock>,
    pub write_reset: Signal<In, Bit>,
    pub in_data: Signal<In, Bits<D>>,
    pub in_meta: Signal<In, Bits<M>>,
    pub in_valid: Signal<In, Bit>,
    pub in_ready: Signal<Out, Bit>,
    /// Entries in use as the write side sees them (never fewer than there are): a writer that
    /// must not be refused mid-packet reserves space with it.
    pub in_used: Signal<Out, Bits<AP1>>,

    pub read_clock: Signal<In, Clock>,
    pub read_reset: Signal<In, Bit>,
    pub out_data: Signal<Out, Bits<D>>,
    pub out_meta: Signal<Out, Bits<M>>,
    pub out_valid: Signal<Out, Bit>,
    pub out_ready: Signal<In, Bit>,

    data_ram: RAM<Bits<D>, A>,
    meta_ram: RAM<Bits<M>, A>,
    /// The two most significant pointer bits, inverted in the Gray "full" comparison.
    msb2: Constant<Bits<AP1>>,
    // Write side. The pointer and the one after it, each in binary and Gray code (for timing:
    // the full flag's compares start from registers; `wbin_inc` is `wbin + 1` from reset on).
    wbin: DFF<Bits<AP1>>,
    wgray: DFF<Bits<AP1>>,
    wbin_inc: DFF<Bits<AP1>>,
    wgray_inc: DFF<Bits<AP1>>,
    rgray_s1: DFF<Bits<AP1>>,
    rgray_s2: DFF<Bits<AP1>>,
    /// `rgray_s2` in binary, two cycles later: the prefix XOR over two stages (`rx2_q` holds the
    /// first half), as abc maps one stage as a chain of two-input XORs.
    rx2_q: DFF<Bits<AP1>>,
    rbin_w: DFF<Bits<AP1>>,
    /// The writer is a whole lap ahead of what the reader had taken a cycle before.
    full: DFF<Bit>,
    // Read side.
    /// The next entry to fetch; the RAM reads it every cycle. With its Gray code and the pointer
    /// after it, as on the write side.
    rbin: DFF<Bits<AP1>>,
    rgray: DFF<Bits<AP1>>,
    rbin_inc: DFF<Bits<AP1>>,
    rgray_inc: DFF<Bits<AP1>>,
    /// An entry is in the memory at `rbin` (its Gray code differed from `wgray_s2` a cycle
    /// before).
    nonempty: DFF<Bit>,
    /// The output stages of the data and the metadata (driven alike: `out_data`'s says when an
    /// entry is taken).
    out_data_stage: FifoOutput<D>,
    out_meta_stage: FifoOutput<M>,
    /// Entries taken from the output, in binary and Gray code (the writer sees the Gray one).
    cbin: DFF<Bits<AP1>>,
    cgray: DFF<Bits<AP1>>,
    wgray_s1: DFF<Bits<AP1>>,
    wgray_s2: DFF<Bits<AP1>>,

    fetch: Signal<Local, Bit>,
    take: Signal<Local, Bit>,
    wbin_after: Signal<Local, Bits<AP1>>,
    rbin_after: Signal<Local, Bits<AP1>>,
    cbin_next: Signal<Local, Bits<AP1>>,
    rx1: Signal<Local, Bits<AP1>>,
    rx2: Signal<Local, Bits<AP1>>,
    rx4: Signal<Local, Bits<AP1>>,
}

impl<const D: usize, const M: usize, const A: usize, const AP1: usize> Default
    for AsyncFifo<D, M, A, AP1>
{
    fn default() -> Self {
        assert_eq!(AP1, A + 1, "AsyncFifo: AP1 must be A + 1");
        assert!(M <= 128, "AsyncFifo: metadata wider than 128 bits");
        assert!(AP1 <= 16, "AsyncFifo: pointers wider than 16 bits");
        Self {
            write_clock: Default::default(),
            write_reset: Default::default(),
            in_data: Default::default(),
            in_meta: Default::default(),
            in_valid: Default::default(),
            in_ready: Default::default(),
            in_used: Default::default(),
            read_clock: Default::default(),
            read_reset: Default::default(),
            out_data: Default::default(),
            out_meta: Default::default(),
            out_valid: Default::default(),
            out_ready: Default::default(),
            data_ram: Default::default(),
            meta_ram: Default::default(),
            msb2: Constant::new((3u64 << (A - 1)).into()),
            wbin: Default::default(),
            wgray: Default::default(),
            wbin_inc: Default::default(),
            wgray_inc: Default::default(),
            rgray_s1: Default::default(),
            rgray_s2: Default::default(),
            rx2_q: Default::default(),
            rbin_w: Default::default(),
            full: Default::default(),
            rbin: Default::default(),
            rgray: Default::default(),
            rbin_inc: Default::default(),
            rgray_inc: Default::default(),
            nonempty: Default::default(),
            out_data_stage: Default::default(),
            out_meta_stage: Default::default(),
            cbin: Default::default(),
            cgray: Default::default(),
            wgray_s1: Default::default(),
            wgray_s2: Default::default(),
            fetch: Default::default(),
            take: Default::default(),
            wbin_after: Default::default(),
            rbin_after: Default::default(),
            cbin_next: Default::default(),
            rx1: Default::default(),
            rx2: Default::default(),
            rx4: Default::default(),
        }
    }
}

impl<const D: usize, const M: usize, const A: usize, const AP1: usize> Logic
    for AsyncFifo<D, M, A, AP1>
{
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            write_clock,
            wbin,
            wgray,
            wbin_inc,
            wgray_inc,
            rgray_s1,
            rgray_s2,
            rx2_q,
            rbin_w,
            full
        );
        dff_setup!(
            self, read_clock, rbin, rgray, rbin_inc, rgray_inc, nonempty, cbin, cgray, wgray_s1,
            wgray_s2
        );
        self.out_data_stage.clock.next = self.read_clock.val();
        self.out_meta_stage.clock.next = self.read_clock.val();
        self.out_data_stage.reset.next = self.read_reset.val();
        self.out_meta_stage.reset.next = self.read_reset.val();
        self.data_ram.write_clock.next = self.write_clock.val();
        self.meta_ram.write_clock.next = self.write_clock.val();
        self.data_ram.read_clock.next = self.read_clock.val();
        self.meta_ram.read_clock.next = self.read_clock.val();

        // ---- write side ----------------------------------------------------------------------
        self.rgray_s1.d.next = self.cgray.q.val();
        self.rgray_s2.d.next = self.rgray_s1.q.val();
        self.in_ready.next = !self.full.q.val();
        // The synchronized read pointer to binary (prefix XOR, pointers up to 16 bits).
        self.rx1.next = self.rgray_s2.q.val() ^ (self.rgray_s2.q.val() >> 1);
        self.rx2.next = self.rx1.val() ^ (self.rx1.val() >> 2);
        self.rx2_q.d.next = self.rx2.val();
        self.rx4.next = self.rx2_q.q.val() ^ (self.rx2_q.q.val() >> 4);
        self.rbin_w.d.next = self.rx4.val() ^ (self.rx4.val() >> 8);
        self.in_used.next = self.wbin.q.val() - self.rbin_w.q.val();
        self.wbin_after.next = self.wbin_inc.q.val() + 1;
        self.data_ram.write_address.next = self.wbin.q.val().get_bits::<A>(0);
        self.meta_ram.write_address.next = self.wbin.q.val().get_bits::<A>(0);
        self.data_ram.write_data.next = self.in_data.val();
        self.meta_ram.write_data.next = self.in_meta.val();
        self.data_ram.write_enable.next = self.in_valid.val() & !self.full.q.val();
        self.meta_ram.write_enable.next = self.in_valid.val() & !self.full.q.val();
        // Full, for the next cycle, from the write pointer the register is about to hold: both
        // outcomes are compared from registers, the write only chooses (one level after in_valid).
        self.full.d.next = self.wgray.q.val() == (self.rgray_s2.q.val() ^ self.msb2.val());
        if self.in_valid.val() & !self.full.q.val() {
            self.wbin.d.next = self.wbin_inc.q.val();
            self.wgray.d.next = self.wgray_inc.q.val();
            self.wbin_inc.d.next = self.wbin_after.val();
            self.wgray_inc.d.next = self.wbin_after.val() ^ (self.wbin_after.val() >> 1);
            self.full.d.next = self.wgray_inc.q.val() == (self.rgray_s2.q.val() ^ self.msb2.val());
        }
        if self.write_reset.val() {
            self.wbin.d.next = 0.into();
            self.wgray.d.next = 0.into();
            self.wbin_inc.d.next = 1.into();
            self.wgray_inc.d.next = 1.into();
            self.rgray_s1.d.next = 0.into();
            self.rgray_s2.d.next = 0.into();
            self.rx2_q.d.next = 0.into();
            self.rbin_w.d.next = 0.into();
            self.full.d.next = false;
        }

        // ---- read side -----------------------------------------------------------------------
        self.wgray_s1.d.next = self.wgray.q.val();
        self.wgray_s2.d.next = self.wgray_s1.q.val();
        self.data_ram.read_address.next = self.rbin.q.val().get_bits::<A>(0);
        self.meta_ram.read_address.next = self.rbin.q.val().get_bits::<A>(0);
        self.fetch.next = self.nonempty.q.val() & self.out_data_stage.room.val();
        self.out_data_stage.fetch.next = self.fetch.val();
        self.out_meta_stage.fetch.next = self.fetch.val();
        self.out_data_stage.ram_data.next = self.data_ram.read_data.val();
        self.out_meta_stage.ram_data.next = self.meta_ram.read_data.val();
        self.out_data_stage.out_ready.next = self.out_ready.val();
        self.out_meta_stage.out_ready.next = self.out_ready.val();
        self.out_valid.next = self.out_data_stage.out_valid.val();
        self.out_data.next = self.out_data_stage.out_data.val();
        self.out_meta.next = self.out_meta_stage.out_data.val();
        self.take.next = self.out_data_stage.take.val();
        // Both outcomes of the fetch from registers; the fetch only chooses.
        self.rbin_after.next = self.rbin_inc.q.val() + 1;
        self.nonempty.d.next = self.rgray.q.val() != self.wgray_s2.q.val();
        if self.fetch.val() {
            self.rbin.d.next = self.rbin_inc.q.val();
            self.rgray.d.next = self.rgray_inc.q.val();
            self.rbin_inc.d.next = self.rbin_after.val();
            self.rgray_inc.d.next = self.rbin_after.val() ^ (self.rbin_after.val() >> 1);
            self.nonempty.d.next = self.rgray_inc.q.val() != self.wgray_s2.q.val();
        }
        // Entries taken, for the writer.
        self.cbin_next.next = self.cbin.q.val() + 1;
        if self.take.val() {
            self.cbin.d.next = self.cbin_next.val();
            self.cgray.d.next = self.cbin_next.val() ^ (self.cbin_next.val() >> 1);
        }
        if self.read_reset.val() {
            self.rbin.d.next = 0.into();
            self.rgray.d.next = 0.into();
            self.rbin_inc.d.next = 1.into();
            self.rgray_inc.d.next = 1.into();
            self.nonempty.d.next = false;
            self.cbin.d.next = 0.into();
            self.cgray.d.next = 0.into();
            self.wgray_s1.d.next = 0.into();
            self.wgray_s2.d.next = 0.into();
        }
    }
}

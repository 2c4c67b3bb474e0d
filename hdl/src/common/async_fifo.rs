//! Clock-domain crossing FIFO for beats (64-bit data + `M` bits of metadata), with the classic
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
//! synchronized read pointer in binary (`rbin_w`, so `in_used` is one subtraction). They are
//! computed from the second synchronizer stages, never the first, so each takes effect one cycle
//! after the other side's pointer has come through both flip-flops: the writer sees space, and the
//! reader sees an entry, a cycle later than a combinational decision would (always the safe side).
//!
//! The read side never lets `out_ready` reach the memory: the RAM reads the entry at the read
//! pointer (a register) every cycle, and a fetch only decides whether that read counts. A fetched
//! entry arrives a cycle later (`ram_valid`) and moves into the output register, or into a skid
//! register behind it when the output is held. A fetch is made when the entry it brings will find
//! room: fewer than two entries on the way, or two with the output being taken. So `out_ready`
//! never reaches the memory's address: it goes through the fetch into the pointer, the fetch
//! flag and the output stage's enables (1 to 4 levels as yosys maps them: it shares one
//! comparator between the pointer's two outcomes), and `out_data` is a register. A steady
//! reader still takes an entry every cycle; an entry reaches the output one read cycle later
//! than a read straight from the RAM would bring it.

use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct AsyncFifo<const M: usize, const A: usize, const AP1: usize> {
    pub write_clock: Signal<In, Clock>,
    pub write_reset: Signal<In, Bit>,
    pub in_data: Signal<In, Bits<64>>,
    pub in_meta: Signal<In, Bits<M>>,
    pub in_valid: Signal<In, Bit>,
    pub in_ready: Signal<Out, Bit>,
    /// Entries in use as the write side sees them (never fewer than there are): a writer that
    /// must not be refused mid-packet reserves space with it.
    pub in_used: Signal<Out, Bits<AP1>>,

    pub read_clock: Signal<In, Clock>,
    pub read_reset: Signal<In, Bit>,
    pub out_data: Signal<Out, Bits<64>>,
    pub out_meta: Signal<Out, Bits<M>>,
    pub out_valid: Signal<Out, Bit>,
    pub out_ready: Signal<In, Bit>,

    data_ram: RAM<Bits<64>, A>,
    meta_ram: RAM<Bits<M>, A>,
    /// The two most significant pointer bits, inverted in the Gray "full" comparison.
    msb2: Constant<Bits<AP1>>,
    // Write side.
    wbin: DFF<Bits<AP1>>,
    wgray: DFF<Bits<AP1>>,
    rgray_s1: DFF<Bits<AP1>>,
    rgray_s2: DFF<Bits<AP1>>,
    /// `rgray_s2` in binary, a cycle later.
    rbin_w: DFF<Bits<AP1>>,
    /// The writer is a whole lap ahead of what the reader had taken a cycle before.
    full: DFF<Bit>,
    // Read side.
    /// The next entry to fetch; the RAM reads it every cycle.
    rbin: DFF<Bits<AP1>>,
    /// An entry is in the memory at `rbin` (its Gray code differed from `wgray_s2` a cycle
    /// before).
    nonempty: DFF<Bit>,
    /// The RAM's output holds the entry fetched in the last cycle.
    ram_valid: DFF<Bit>,
    /// The output register, and the skid register behind it (used only while the output is held).
    out_data_q: DFF<Bits<64>>,
    out_meta_q: DFF<Bits<M>>,
    out_full: DFF<Bit>,
    skid_data: DFF<Bits<64>>,
    skid_meta: DFF<Bits<M>>,
    skid_full: DFF<Bit>,
    /// Entries taken from the output, in binary and Gray code (the writer sees the Gray one).
    cbin: DFF<Bits<AP1>>,
    cgray: DFF<Bits<AP1>>,
    wgray_s1: DFF<Bits<AP1>>,
    wgray_s2: DFF<Bits<AP1>>,

    fetch: Signal<Local, Bit>,
    wgray_next: Signal<Local, Bits<AP1>>,
    take: Signal<Local, Bit>,
    /// Entries fetched and not yet taken: the output, the skid and the one the RAM brings (0 to
    /// 2; never 3, by the fetch rule).
    on_the_way: Signal<Local, Bits<2>>,
    wbin_next: Signal<Local, Bits<AP1>>,
    rbin_next: Signal<Local, Bits<AP1>>,
    rgray_stay: Signal<Local, Bits<AP1>>,
    rgray_next: Signal<Local, Bits<AP1>>,
    cbin_next: Signal<Local, Bits<AP1>>,
    rx1: Signal<Local, Bits<AP1>>,
    rx2: Signal<Local, Bits<AP1>>,
    rx4: Signal<Local, Bits<AP1>>,
}

impl<const M: usize, const A: usize, const AP1: usize> Default for AsyncFifo<M, A, AP1> {
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
            rgray_s1: Default::default(),
            rgray_s2: Default::default(),
            rbin_w: Default::default(),
            full: Default::default(),
            rbin: Default::default(),
            nonempty: Default::default(),
            ram_valid: Default::default(),
            out_data_q: Default::default(),
            out_meta_q: Default::default(),
            out_full: Default::default(),
            skid_data: Default::default(),
            skid_meta: Default::default(),
            skid_full: Default::default(),
            cbin: Default::default(),
            cgray: Default::default(),
            wgray_s1: Default::default(),
            wgray_s2: Default::default(),
            fetch: Default::default(),
            wgray_next: Default::default(),
            take: Default::default(),
            on_the_way: Default::default(),
            wbin_next: Default::default(),
            rbin_next: Default::default(),
            rgray_stay: Default::default(),
            rgray_next: Default::default(),
            cbin_next: Default::default(),
            rx1: Default::default(),
            rx2: Default::default(),
            rx4: Default::default(),
        }
    }
}

impl<const M: usize, const A: usize, const AP1: usize> Logic for AsyncFifo<M, A, AP1> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            write_clock,
            wbin,
            wgray,
            rgray_s1,
            rgray_s2,
            rbin_w,
            full
        );
        dff_setup!(
            self, read_clock, rbin, nonempty, ram_valid, out_data_q, out_meta_q, out_full,
            skid_data, skid_meta, skid_full, cbin, cgray, wgray_s1, wgray_s2
        );
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
        self.rx4.next = self.rx2.val() ^ (self.rx2.val() >> 4);
        self.rbin_w.d.next = self.rx4.val() ^ (self.rx4.val() >> 8);
        self.in_used.next = self.wbin.q.val() - self.rbin_w.q.val();
        self.wbin_next.next = self.wbin.q.val() + 1;
        self.data_ram.write_address.next = self.wbin.q.val().get_bits::<A>(0);
        self.meta_ram.write_address.next = self.wbin.q.val().get_bits::<A>(0);
        self.data_ram.write_data.next = self.in_data.val();
        self.meta_ram.write_data.next = self.in_meta.val();
        self.data_ram.write_enable.next = self.in_valid.val() & !self.full.q.val();
        self.meta_ram.write_enable.next = self.in_valid.val() & !self.full.q.val();
        // Full, for the next cycle, from the write pointer the register is about to hold: both
        // outcomes are compared from registers, the write only chooses (one level after in_valid).
        self.wgray_next.next = self.wbin_next.val() ^ (self.wbin_next.val() >> 1);
        self.full.d.next = self.wgray.q.val() == (self.rgray_s2.q.val() ^ self.msb2.val());
        if self.in_valid.val() & !self.full.q.val() {
            self.wbin.d.next = self.wbin_next.val();
            self.wgray.d.next = self.wgray_next.val();
            self.full.d.next = self.wgray_next.val() == (self.rgray_s2.q.val() ^ self.msb2.val());
        }
        if self.write_reset.val() {
            self.wbin.d.next = 0.into();
            self.wgray.d.next = 0.into();
            self.rgray_s1.d.next = 0.into();
            self.rgray_s2.d.next = 0.into();
            self.rbin_w.d.next = 0.into();
            self.full.d.next = false;
        }

        // ---- read side -----------------------------------------------------------------------
        self.wgray_s1.d.next = self.wgray.q.val();
        self.wgray_s2.d.next = self.wgray_s1.q.val();
        self.data_ram.read_address.next = self.rbin.q.val().get_bits::<A>(0);
        self.meta_ram.read_address.next = self.rbin.q.val().get_bits::<A>(0);
        self.out_valid.next = self.out_full.q.val();
        self.out_data.next = self.out_data_q.q.val();
        self.out_meta.next = self.out_meta_q.q.val();
        self.take.next = self.out_full.q.val() & self.out_ready.val();
        // Fetch when the entry will find room in the output or skid register a cycle from now.
        self.on_the_way.next = bit_cast::<2, 1>(self.out_full.q.val().into())
            + bit_cast::<2, 1>(self.skid_full.q.val().into())
            + bit_cast::<2, 1>(self.ram_valid.q.val().into());
        self.fetch.next = self.nonempty.q.val()
            & ((self.on_the_way.val() < 2) | ((self.on_the_way.val() == 2) & self.take.val()));
        self.ram_valid.d.next = self.fetch.val();
        // Both outcomes of the fetch from registers; the fetch only chooses.
        self.rbin_next.next = self.rbin.q.val() + 1;
        self.rgray_stay.next = self.rbin.q.val() ^ (self.rbin.q.val() >> 1);
        self.rgray_next.next = self.rbin_next.val() ^ (self.rbin_next.val() >> 1);
        self.nonempty.d.next = self.rgray_stay.val() != self.wgray_s2.q.val();
        if self.fetch.val() {
            self.rbin.d.next = self.rbin_next.val();
            self.nonempty.d.next = self.rgray_next.val() != self.wgray_s2.q.val();
        }
        // The output stage: the skid register first, then what the RAM brings.
        if self.take.val() | !self.out_full.q.val() {
            self.out_full.d.next = self.skid_full.q.val() | self.ram_valid.q.val();
            self.skid_full.d.next = self.skid_full.q.val() & self.ram_valid.q.val();
            if self.skid_full.q.val() {
                self.out_data_q.d.next = self.skid_data.q.val();
                self.out_meta_q.d.next = self.skid_meta.q.val();
                self.skid_data.d.next = self.data_ram.read_data.val();
                self.skid_meta.d.next = self.meta_ram.read_data.val();
            } else {
                self.out_data_q.d.next = self.data_ram.read_data.val();
                self.out_meta_q.d.next = self.meta_ram.read_data.val();
            }
        } else if self.ram_valid.q.val() {
            // The output is held: the arriving entry waits behind it (the skid is free: a fetch
            // is only made when the entry it brings will find room).
            self.skid_full.d.next = true;
            self.skid_data.d.next = self.data_ram.read_data.val();
            self.skid_meta.d.next = self.meta_ram.read_data.val();
        }
        // Entries taken, for the writer.
        self.cbin_next.next = self.cbin.q.val() + 1;
        if self.take.val() {
            self.cbin.d.next = self.cbin_next.val();
            self.cgray.d.next = self.cbin_next.val() ^ (self.cbin_next.val() >> 1);
        }
        if self.read_reset.val() {
            self.rbin.d.next = 0.into();
            self.nonempty.d.next = false;
            self.ram_valid.d.next = false;
            self.out_full.d.next = false;
            self.skid_full.d.next = false;
            self.cbin.d.next = 0.into();
            self.cgray.d.next = 0.into();
            self.wgray_s1.d.next = 0.into();
            self.wgray_s2.d.next = 0.into();
        }
    }
}

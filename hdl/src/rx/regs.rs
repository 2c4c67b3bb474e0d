//! Register file of the receive engine (`nanet_contract::rx`): staging registers, commands, the
//! core cycle counter and the counters. Read data comes three clocks after the address (from
//! registers: the address and its group, the data in four parts, the word; the status word's
//! `busy` is the engine's of the cycle before it shows); a write takes effect a cycle after the
//! bus shows it (decoded into a bit per register as it is registered).
//!
//! A CLOP command reaches the CLOP engine only when it is well formed: its operation is configure
//! or disable, and for a configure the staged count (1..=256), size (1..2^24) and page size code
//! are in range, each judged when its register is written. Staging writes while a command waits
//! are ignored (the engine reads the staging registers when it takes the command). Refusals set
//! `CLOP_COMMAND_REFUSED` and are counted in `bad_clop_command`, with the engine's own (a
//! configure of an enabled CLOP).

use array_init::array_init;
use rust_hdl::prelude::*;

use crate::rx::clop::engine::ClopCommandSource;
use crate::rx::clop::gather::ClopCountsSink;

/// Counters (`nanet_contract::rx::RxCounter`, in order).
pub const RX_COUNTERS: usize = nanet_contract::rx::RxCounter::COUNT;
// (Read back by a 16-way choice on the address's low bits.)
const _: () = assert!(RX_COUNTERS <= 16);

#[derive(LogicBlock)]
pub struct RxRegs {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub reg_addr: Signal<In, Bits<8>>,
    pub reg_wdata: Signal<In, Bits<32>>,
    pub reg_write: Signal<In, Bit>,
    pub reg_rdata: Signal<Out, Bits<32>>,

    /// Core cycle counter.
    pub now: Signal<Out, Bits<32>>,
    /// The CLOP engines' counts (summed over the engines, each counter's amount of a cycle).
    pub clop: ClopCountsSink,
    /// A CLOP command was refused in this cycle (the engines' `cfg_refused`; commands go to one
    /// engine at a time).
    pub clop_refused_now: Signal<In, Bit>,
    /// One pulse per counted event of the release and event queues, bit `i` for `RxCounter`
    /// `ReleaseOverflow + i`.
    pub queue_count: Signal<In, Bits<4>>,
    /// The CLOP engine took a release from the release queue (counted in `ReleasesTaken`).
    pub release_taken: Signal<In, Bit>,
    pub clop_busy: Signal<In, Bit>,
    pub eq_tail: Signal<In, Bits<16>>,
    pub irq_armed: Signal<In, Bit>,

    /// The pending CLOP command.
    pub cfg: ClopCommandSource,

    pub tlb_wr: Signal<Out, Bit>,
    pub tlb_wr_slot: Signal<Out, Bits<7>>,
    pub tlb_wr_valid: Signal<Out, Bit>,
    pub tlb_wr_size: Signal<Out, Bits<2>>,
    pub tlb_wr_vpn: Signal<Out, Bits<52>>,
    pub tlb_wr_ppn: Signal<Out, Bits<52>>,

    pub eq_enable: Signal<Out, Bit>,
    pub eq_base: Signal<Out, Bits<64>>,
    pub eq_size_log2: Signal<Out, Bits<4>>,
    pub eq_head: Signal<Out, Bits<16>>,
    pub irq_arm: Signal<Out, Bit>,
    pub irq_min_interval: Signal<Out, Bits<32>>,
    pub irq_count: Signal<Out, Bits<16>>,
    pub mps_256: Signal<Out, Bit>,

    cycle: DFF<Bits<32>>,
    cmd_pending: DFF<Bit>,
    cmd_word: DFF<Bits<10>>,
    /// The staged count, size and page size code are in range (judged as each is written).
    count_ok: DFF<Bit>,
    size_ok: DFF<Bit>,
    page_ok: DFF<Bit>,
    /// The last refusal came after the last accepted command (read back in `ClopCommand`).
    refused: DFF<Bit>,
    /// A command or staging write was refused in the last cycle (counted now).
    bad_write: DFF<Bit>,
    /// The queues' pulses, registered where they enter (the CLOP engines' counts come registered
    /// from `ClopFanout`), and the refusals of a cycle (engines and register file) summed into
    /// one increment: every counter follows its event two cycles late.
    count_q: DFF<Bits<4>>,
    release_taken_q: DFF<Bit>,
    refusals: DFF<Bits<2>>,
    cmd_ok: Signal<Local, Bit>,
    base_lo: DFF<Bits<32>>,
    base_hi: DFF<Bits<32>>,
    buf_size: DFF<Bits<24>>,
    buf_count: DFF<Bits<9>>,
    tlb_cfg: DFF<Bits<10>>,
    mode: DFF<Bits<2>>,
    timeout: DFF<Bits<32>>,
    vpn_lo: DFF<Bits<32>>,
    vpn_hi: DFF<Bits<20>>,
    ppn_lo: DFF<Bits<32>>,
    ppn_hi: DFF<Bits<20>>,
    tlb_wr_q: DFF<Bit>,
    tlb_cmd: DFF<Bits<17>>,
    eq_base_lo: DFF<Bits<32>>,
    eq_base_hi: DFF<Bits<32>>,
    eq_size: DFF<Bits<4>>,
    eq_enable_q: DFF<Bit>,
    eq_head_q: DFF<Bits<16>>,
    /// A head written while the ring is enabled is taken a cycle after its write is decoded,
    /// only if it lies between
    /// the current head and the tail (`ahead <= avail`): a head beyond the tail, or moved back,
    /// makes the card see a full ring and stop writing records until the host mends it. Else it
    /// is counted. (Two heads written in consecutive cycles are both judged against the head
    /// before them: the host writes one per batch of records.)
    head_check: DFF<Bit>,
    head_cand: DFF<Bits<16>>,
    head_ahead: DFF<Bits<16>>,
    head_avail: DFF<Bits<16>>,
    /// `avail - ahead`, its sign the check (for timing: a carry chain, no compare after it).
    head_room: Signal<Local, Bits<17>>,
    bad_head: DFF<Bit>,
    irq_arm_q: DFF<Bit>,
    irq_interval: DFF<Bits<32>>,
    irq_count_q: DFF<Bits<16>>,
    mps: DFF<Bit>,
    /// The write on the bus, registered and decoded (see the writes below): bit `k` of
    /// `write_at` is a write to register `k` (none for addresses from 32 on, none of which is
    /// written), `write_staging` a write to a command or staging register (0..8).
    write_at: DFF<Bits<32>>,
    write_staging: DFF<Bit>,
    write_data: DFF<Bits<32>>,
    /// The first 32 addresses, one bit each (the write decode's shift operand).
    one_hot_first: Constant<Bits<32>>,
    write_size_ok: DFF<Bit>,
    write_count_ok: DFF<Bit>,
    /// The read address, registered (for timing: the read muxes start from flip-flops, not from
    /// the bus's decode shared with the writes and the other engine).
    read_addr: DFF<Bits<8>>,
    /// The read address's group, decoded as it is registered.
    read_is_cfg: DFF<Bit>,
    read_is_eq: DFF<Bit>,
    read_is_count: DFF<Bit>,
    /// Read data in four registered parts (for timing: no mux sees another's address decode):
    /// the staging registers, the event queue's and the counters (in two halves of eight), each
    /// 0 when the address is not theirs. The status word (address 0) is formed from the registers into `rdata_q`, so it
    /// reads the engine's `busy` of the cycle before the data shows.
    rdata_cfg: DFF<Bits<32>>,
    rdata_eq: DFF<Bits<32>>,
    rdata_count_lo: DFF<Bits<32>>,
    rdata_count_hi: DFF<Bits<32>>,
    read_lo3: Signal<Local, Bits<3>>,
    read_lo4: Signal<Local, Bits<4>>,
    read_status: DFF<Bit>,
    /// The read data, from a register (for timing: the status word's `busy` comes from the CLOP
    /// engine's state decode).
    rdata_q: DFF<Bits<32>>,
    counters: [DFF<Bits<32>>; RX_COUNTERS],
}

impl Default for RxRegs {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            reset: Default::default(),
            reg_addr: Default::default(),
            reg_wdata: Default::default(),
            reg_write: Default::default(),
            reg_rdata: Default::default(),
            now: Default::default(),
            clop: Default::default(),
            clop_refused_now: Default::default(),
            queue_count: Default::default(),
            release_taken: Default::default(),
            clop_busy: Default::default(),
            eq_tail: Default::default(),
            irq_armed: Default::default(),
            cfg: Default::default(),
            tlb_wr: Default::default(),
            tlb_wr_slot: Default::default(),
            tlb_wr_valid: Default::default(),
            tlb_wr_size: Default::default(),
            tlb_wr_vpn: Default::default(),
            tlb_wr_ppn: Default::default(),
            eq_enable: Default::default(),
            eq_base: Default::default(),
            eq_size_log2: Default::default(),
            eq_head: Default::default(),
            irq_arm: Default::default(),
            irq_min_interval: Default::default(),
            irq_count: Default::default(),
            mps_256: Default::default(),
            cycle: Default::default(),
            cmd_pending: Default::default(),
            cmd_word: Default::default(),
            count_ok: Default::default(),
            size_ok: Default::default(),
            page_ok: Default::default(),
            refused: Default::default(),
            bad_write: Default::default(),
            count_q: Default::default(),
            release_taken_q: Default::default(),
            refusals: Default::default(),
            cmd_ok: Default::default(),
            base_lo: Default::default(),
            base_hi: Default::default(),
            buf_size: Default::default(),
            buf_count: Default::default(),
            tlb_cfg: Default::default(),
            mode: Default::default(),
            timeout: Default::default(),
            vpn_lo: Default::default(),
            vpn_hi: Default::default(),
            ppn_lo: Default::default(),
            ppn_hi: Default::default(),
            tlb_wr_q: Default::default(),
            tlb_cmd: Default::default(),
            eq_base_lo: Default::default(),
            eq_base_hi: Default::default(),
            eq_size: Default::default(),
            eq_enable_q: Default::default(),
            eq_head_q: Default::default(),
            head_check: Default::default(),
            head_cand: Default::default(),
            head_ahead: Default::default(),
            head_avail: Default::default(),
            head_room: Default::default(),
            bad_head: Default::default(),
            irq_arm_q: Default::default(),
            irq_interval: Default::default(),
            irq_count_q: Default::default(),
            mps: Default::default(),
            write_at: Default::default(),
            write_staging: Default::default(),
            one_hot_first: Constant::new(1u64.into()),
            write_data: Default::default(),
            write_size_ok: Default::default(),
            write_count_ok: Default::default(),
            read_addr: Default::default(),
            read_is_cfg: Default::default(),
            read_is_eq: Default::default(),
            read_is_count: Default::default(),
            rdata_cfg: Default::default(),
            rdata_eq: Default::default(),
            rdata_count_lo: Default::default(),
            rdata_count_hi: Default::default(),
            read_lo3: Default::default(),
            read_lo4: Default::default(),
            read_status: Default::default(),
            rdata_q: Default::default(),
            counters: array_init(|_| Default::default()),
        }
    }
}

impl Logic for RxRegs {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            cycle,
            cmd_pending,
            cmd_word,
            count_ok,
            size_ok,
            page_ok,
            refused,
            bad_write,
            count_q,
            release_taken_q,
            refusals,
            base_lo,
            base_hi,
            buf_size,
            buf_count,
            tlb_cfg,
            mode,
            timeout,
            vpn_lo,
            vpn_hi,
            ppn_lo,
            ppn_hi,
            tlb_wr_q,
            tlb_cmd,
            eq_base_lo,
            eq_base_hi,
            eq_size,
            eq_enable_q,
            eq_head_q,
            head_check,
            head_cand,
            head_ahead,
            head_avail,
            bad_head,
            irq_arm_q,
            irq_interval,
            irq_count_q,
            mps,
            write_at,
            write_staging,
            write_data,
            write_size_ok,
            write_count_ok,
            read_addr,
            read_is_cfg,
            read_is_eq,
            read_is_count,
            rdata_cfg,
            rdata_eq,
            rdata_count_lo,
            rdata_count_hi,
            read_status,
            rdata_q
        );
        for i in 0..RX_COUNTERS {
            self.counters[i].clock.next = self.clock.val();
            self.counters[i].d.next = self.counters[i].q.val();
        }
        self.cycle.d.next = self.cycle.q.val() + 1;
        self.now.next = self.cycle.q.val();

        self.cfg.valid.next = self.cmd_pending.q.val();
        self.cfg.cmd.clop.next = self.cmd_word.q.val().get_bits::<6>(0);
        self.cfg.cmd.op.next = self.cmd_word.q.val().get_bits::<2>(8);
        self.cfg.cmd.base.next = (bit_cast::<64, 32>(self.base_hi.q.val()) << 32)
            | bit_cast::<64, 32>(self.base_lo.q.val());
        self.cfg.cmd.buf_size.next = self.buf_size.q.val();
        self.cfg.cmd.buf_count.next = self.buf_count.q.val();
        self.cfg.cmd.slot.next = self.tlb_cfg.q.val().get_bits::<7>(0);
        self.cfg.cmd.page.next = self.tlb_cfg.q.val().get_bits::<2>(8);
        self.cfg.cmd.header.next = self.mode.q.val().get_bit(0);
        self.cfg.cmd.skip.next = self.mode.q.val().get_bit(1);
        self.cfg.cmd.timeout.next = self.timeout.q.val();
        if self.cfg.ready.val() {
            self.cmd_pending.d.next = false;
        }
        self.tlb_wr.next = self.tlb_wr_q.q.val();
        self.tlb_wr_slot.next = self.tlb_cmd.q.val().get_bits::<7>(0);
        self.tlb_wr_size.next = self.tlb_cmd.q.val().get_bits::<2>(8);
        self.tlb_wr_valid.next = self.tlb_cmd.q.val().get_bit(16);
        self.tlb_wr_vpn.next = (bit_cast::<52, 20>(self.vpn_hi.q.val()) << 32)
            | bit_cast::<52, 32>(self.vpn_lo.q.val());
        self.tlb_wr_ppn.next = (bit_cast::<52, 20>(self.ppn_hi.q.val()) << 32)
            | bit_cast::<52, 32>(self.ppn_lo.q.val());
        self.eq_enable.next = self.eq_enable_q.q.val();
        self.eq_base.next = (bit_cast::<64, 32>(self.eq_base_hi.q.val()) << 32)
            | bit_cast::<64, 32>(self.eq_base_lo.q.val());
        self.eq_size_log2.next = self.eq_size.q.val();
        self.eq_head.next = self.eq_head_q.q.val();
        self.irq_arm.next = self.irq_arm_q.q.val();
        self.irq_min_interval.next = self.irq_interval.q.val();
        self.irq_count.next = self.irq_count_q.q.val();
        self.mps_256.next = self.mps.q.val();

        // ---- counters ---------------------------------------------------------------------------
        self.count_q.d.next = self.queue_count.val();
        self.counters[0].d.next =
            self.counters[0].q.val() + bit_cast::<32, 3>(self.clop.committed.val());
        self.counters[1].d.next =
            self.counters[1].q.val() + bit_cast::<32, 18>(self.clop.committed_bytes.val());
        self.counters[2].d.next =
            self.counters[2].q.val() + bit_cast::<32, 3>(self.clop.drop_disabled.val());
        self.counters[3].d.next =
            self.counters[3].q.val() + bit_cast::<32, 3>(self.clop.drop_too_big.val());
        self.counters[4].d.next =
            self.counters[4].q.val() + bit_cast::<32, 3>(self.clop.drop_no_buffer.val());
        self.counters[5].d.next =
            self.counters[5].q.val() + bit_cast::<32, 3>(self.clop.drop_tlb_miss.val());
        self.counters[6].d.next =
            self.counters[6].q.val() + bit_cast::<32, 3>(self.clop.drop_bad.val());
        self.counters[7].d.next =
            self.counters[7].q.val() + bit_cast::<32, 3>(self.clop.bad_release.val());
        self.counters[8].d.next =
            self.counters[8].q.val() + bit_cast::<32, 1>(self.count_q.q.val().get_bit(0).into());
        self.counters[9].d.next =
            self.counters[9].q.val() + bit_cast::<32, 1>(self.count_q.q.val().get_bit(1).into());
        self.counters[10].d.next =
            self.counters[10].q.val() + bit_cast::<32, 1>(self.count_q.q.val().get_bit(2).into());
        self.counters[11].d.next =
            self.counters[11].q.val() + bit_cast::<32, 1>(self.count_q.q.val().get_bit(3).into());
        // Refusals of the engines (one command at a time, so one at most) and of this register
        // file can come in the same cycle.
        self.refusals.d.next = bit_cast::<2, 1>(self.clop_refused_now.val().into())
            + bit_cast::<2, 1>(self.bad_write.q.val().into());
        self.counters[12].d.next =
            self.counters[12].q.val() + bit_cast::<32, 2>(self.refusals.q.val());
        if self.clop_refused_now.val() {
            self.refused.d.next = true;
        }
        self.counters[13].d.next =
            self.counters[13].q.val() + bit_cast::<32, 1>(self.bad_head.q.val().into());
        self.release_taken_q.d.next = self.release_taken.val();
        self.counters[14].d.next =
            self.counters[14].q.val() + bit_cast::<32, 1>(self.release_taken_q.q.val().into());
        // The event ring's head: checked a cycle after its write.
        self.head_avail.d.next = self.eq_tail.val() - self.eq_head_q.q.val();
        self.head_room.next = bit_cast::<17, 16>(self.head_avail.q.val())
            - bit_cast::<17, 16>(self.head_ahead.q.val());
        self.head_check.d.next = false;
        self.bad_head.d.next = false;
        if self.head_check.q.val() {
            if !self.head_room.val().get_bit(16) {
                self.eq_head_q.d.next = self.head_cand.q.val();
            } else {
                self.bad_head.d.next = true;
            }
        }
        // A write takes effect from registers a cycle after the bus shows it (for timing: its
        // decode starts from flip-flops of this file, not the bus's decode shared with reads and
        // the other engine; a read comes three cycles after its address, so it sees the write).
        self.write_at.d.next = 0.into();
        if self.reg_write.val() & (self.reg_addr.val().get_bits::<3>(5) == 0) {
            self.write_at.d.next = self.one_hot_first.val() << self.reg_addr.val().get_bits::<5>(0);
        }
        self.write_staging.d.next =
            self.reg_write.val() & (self.reg_addr.val().get_bits::<5>(3) == 0);
        self.write_data.d.next = self.reg_wdata.val();
        // The written value's range checks, judged on the way in (as staging values: a size
        // 1..2^24; a count 1..=256, i.e. bits 31:9 clear, not 0, and 256 only as exactly 256).
        self.write_size_ok.d.next = (self.reg_wdata.val().get_bits::<8>(24) == 0)
            & (self.reg_wdata.val().get_bits::<24>(0) != 0);
        self.write_count_ok.d.next = (self.reg_wdata.val().get_bits::<23>(9) == 0)
            & (self.reg_wdata.val().get_bits::<9>(0) != 0)
            & (!self.reg_wdata.val().get_bit(8) | (self.reg_wdata.val().get_bits::<8>(0) == 0));
        // A configure with its staging in range, or a disable.
        self.cmd_ok.next = (self.write_data.q.val().get_bits::<2>(8) == 2)
            | ((self.write_data.q.val().get_bits::<2>(8) == 1)
                & self.count_ok.q.val()
                & self.size_ok.q.val()
                & self.page_ok.q.val());
        // ---- register writes (nanet_contract::rx::RxReg) --------------------------------------
        self.tlb_wr_q.d.next = false;
        self.irq_arm_q.d.next = false;
        self.bad_write.d.next = false;
        if self.write_staging.q.val() & self.cmd_pending.q.val() {
            // A command, or a staging value, while a command waits: ignored.
            self.bad_write.d.next = true;
            self.refused.d.next = true;
        } else {
            if self.write_at.q.val().get_bit(0) {
                if self.cmd_ok.val() {
                    self.cmd_pending.d.next = true;
                    self.cmd_word.d.next = self.write_data.q.val().get_bits::<10>(0);
                    self.refused.d.next = false;
                } else {
                    self.bad_write.d.next = true;
                    self.refused.d.next = true;
                }
            }
            if self.write_at.q.val().get_bit(1) {
                self.base_lo.d.next = self.write_data.q.val();
            }
            if self.write_at.q.val().get_bit(2) {
                self.base_hi.d.next = self.write_data.q.val();
            }
            if self.write_at.q.val().get_bit(3) {
                self.buf_size.d.next = self.write_data.q.val().get_bits::<24>(0);
                self.size_ok.d.next = self.write_size_ok.q.val();
            }
            if self.write_at.q.val().get_bit(4) {
                self.buf_count.d.next = self.write_data.q.val().get_bits::<9>(0);
                self.count_ok.d.next = self.write_count_ok.q.val();
            }
            if self.write_at.q.val().get_bit(5) {
                self.tlb_cfg.d.next = self.write_data.q.val().get_bits::<10>(0);
                self.page_ok.d.next = self.write_data.q.val().get_bits::<2>(8) != 3;
            }
            if self.write_at.q.val().get_bit(6) {
                self.mode.d.next = self.write_data.q.val().get_bits::<2>(0);
            }
            if self.write_at.q.val().get_bit(7) {
                self.timeout.d.next = self.write_data.q.val();
            }
            if self.write_at.q.val().get_bit(9) {
                self.vpn_lo.d.next = self.write_data.q.val();
            }
            if self.write_at.q.val().get_bit(10) {
                self.vpn_hi.d.next = self.write_data.q.val().get_bits::<20>(0);
            }
            if self.write_at.q.val().get_bit(11) {
                self.ppn_lo.d.next = self.write_data.q.val();
            }
            if self.write_at.q.val().get_bit(12) {
                self.ppn_hi.d.next = self.write_data.q.val().get_bits::<20>(0);
            }
            if self.write_at.q.val().get_bit(13) {
                self.tlb_wr_q.d.next = true;
                self.tlb_cmd.d.next = self.write_data.q.val().get_bits::<17>(0);
            }
            if self.write_at.q.val().get_bit(16) {
                self.eq_base_lo.d.next = self.write_data.q.val();
            }
            if self.write_at.q.val().get_bit(17) {
                self.eq_base_hi.d.next = self.write_data.q.val();
            }
            if self.write_at.q.val().get_bit(18) {
                self.eq_size.d.next = self.write_data.q.val().get_bits::<4>(0);
                self.eq_enable_q.d.next = self.write_data.q.val().get_bit(31);
            }
            if self.write_at.q.val().get_bit(19) {
                // While the ring is disabled any head is taken (the host resets it to 0).
                if self.eq_enable_q.q.val() {
                    self.head_check.d.next = true;
                    self.head_cand.d.next = self.write_data.q.val().get_bits::<16>(0);
                    self.head_ahead.d.next =
                        self.write_data.q.val().get_bits::<16>(0) - self.eq_head_q.q.val();
                } else {
                    self.eq_head_q.d.next = self.write_data.q.val().get_bits::<16>(0);
                }
            }
            if self.write_at.q.val().get_bit(21) {
                self.irq_arm_q.d.next = true;
            }
            if self.write_at.q.val().get_bit(22) {
                self.irq_interval.d.next = self.write_data.q.val();
            }
            if self.write_at.q.val().get_bit(23) {
                self.irq_count_q.d.next = self.write_data.q.val().get_bits::<16>(0);
            }
            if self.write_at.q.val().get_bit(24) {
                self.mps.d.next = self.write_data.q.val().get_bit(0);
            }
        }

        // ---- register reads -------------------------------------------------------------------
        self.rdata_q.d.next = self.rdata_cfg.q.val()
            | self.rdata_eq.q.val()
            | self.rdata_count_lo.q.val()
            | self.rdata_count_hi.q.val();
        if self.read_status.q.val() {
            self.rdata_q.d.next =
                bit_cast::<32, 1>((self.cmd_pending.q.val() | self.clop_busy.val()).into())
                    | (bit_cast::<32, 1>(self.refused.q.val().into()) << 1);
        }
        self.reg_rdata.next = self.rdata_q.q.val();
        self.read_addr.d.next = self.reg_addr.val();
        self.read_status.d.next = self.read_addr.q.val() == 0;
        self.read_is_cfg.d.next = self.reg_addr.val().get_bits::<5>(3) == 0;
        self.read_is_eq.d.next = self.reg_addr.val().get_bits::<4>(4) == 1;
        self.read_is_count.d.next = self.reg_addr.val().get_bits::<4>(4) == 4;
        self.rdata_cfg.d.next = 0.into();
        self.rdata_eq.d.next = 0.into();
        self.rdata_count_lo.d.next = 0.into();
        self.rdata_count_hi.d.next = 0.into();
        self.read_lo3.next = self.read_addr.q.val().get_bits::<3>(0);
        self.read_lo4.next = self.read_addr.q.val().get_bits::<4>(0);
        if self.read_is_cfg.q.val() {
            match self.read_lo3.val().index() {
                1 => self.rdata_cfg.d.next = self.base_lo.q.val(),
                2 => self.rdata_cfg.d.next = self.base_hi.q.val(),
                3 => self.rdata_cfg.d.next = bit_cast::<32, 24>(self.buf_size.q.val()),
                4 => self.rdata_cfg.d.next = bit_cast::<32, 9>(self.buf_count.q.val()),
                5 => self.rdata_cfg.d.next = bit_cast::<32, 10>(self.tlb_cfg.q.val()),
                6 => self.rdata_cfg.d.next = bit_cast::<32, 2>(self.mode.q.val()),
                7 => self.rdata_cfg.d.next = self.timeout.q.val(),
                _ => {}
            }
        }
        if self.read_is_eq.q.val() {
            match self.read_lo4.val().index() {
                0 => self.rdata_eq.d.next = self.eq_base_lo.q.val(),
                1 => self.rdata_eq.d.next = self.eq_base_hi.q.val(),
                2 => {
                    self.rdata_eq.d.next = (bit_cast::<32, 1>(self.eq_enable_q.q.val().into())
                        << 31)
                        | bit_cast::<32, 4>(self.eq_size.q.val())
                }
                3 => self.rdata_eq.d.next = bit_cast::<32, 16>(self.eq_head_q.q.val()),
                4 => self.rdata_eq.d.next = bit_cast::<32, 16>(self.eq_tail.val()),
                5 => self.rdata_eq.d.next = bit_cast::<32, 1>(self.irq_armed.val().into()),
                6 => self.rdata_eq.d.next = self.irq_interval.q.val(),
                7 => self.rdata_eq.d.next = bit_cast::<32, 16>(self.irq_count_q.q.val()),
                8 => self.rdata_eq.d.next = bit_cast::<32, 1>(self.mps.q.val().into()),
                9 => self.rdata_eq.d.next = self.cycle.q.val(),
                _ => {}
            }
        }
        // (Counters from address 64: an eight-way choice by the low bits in each half.)
        if self.read_is_count.q.val() {
            for i in 0..8 {
                if self.read_lo4.val().index() == i {
                    self.rdata_count_lo.d.next = self.counters[i].q.val();
                }
            }
            for i in 8..RX_COUNTERS {
                if self.read_lo4.val().index() == i {
                    self.rdata_count_hi.d.next = self.counters[i].q.val();
                }
            }
        }

        if self.reset.val() {
            self.cycle.d.next = 0.into();
            self.cmd_pending.d.next = false;
            self.count_ok.d.next = false;
            self.size_ok.d.next = false;
            self.page_ok.d.next = false;
            self.refused.d.next = false;
            self.bad_write.d.next = false;
            self.count_q.d.next = 0.into();
            self.release_taken_q.d.next = false;
            self.refusals.d.next = 0.into();
            self.eq_enable_q.d.next = false;
            self.eq_head_q.d.next = 0.into();
            self.head_check.d.next = false;
            self.bad_head.d.next = false;
            self.write_at.d.next = 0.into();
            self.write_staging.d.next = false;
            self.irq_interval.d.next = 0.into();
            self.irq_count_q.d.next = 1.into();
            self.mps.d.next = false;
            for i in 0..RX_COUNTERS {
                self.counters[i].d.next = 0.into();
            }
        }
    }
}

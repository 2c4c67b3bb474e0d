//! Register file of the receive engine (`nanet_contract::rx`): staging registers, commands, the
//! core cycle counter and the counters. Read data comes one clock after the address.

use array_init::array_init;
use rust_hdl::prelude::*;

use crate::rx::clop::engine::ClopCommandSource;

/// Counters (`nanet_contract::rx::RxCounter`, in order).
pub const RX_COUNTERS: usize = 12;

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
    /// One pulse per counted event, bit `i` for `RxCounter` `i`; `committed_bytes` is added to
    /// `CommittedBytes` when bit 1 is set.
    pub count: Signal<In, Bits<12>>,
    pub committed_bytes: Signal<In, Bits<16>>,
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
    irq_arm_q: DFF<Bit>,
    irq_interval: DFF<Bits<32>>,
    irq_count_q: DFF<Bits<16>>,
    mps: DFF<Bit>,
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
            count: Default::default(),
            committed_bytes: Default::default(),
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
            irq_arm_q: Default::default(),
            irq_interval: Default::default(),
            irq_count_q: Default::default(),
            mps: Default::default(),
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
            irq_arm_q,
            irq_interval,
            irq_count_q,
            mps,
            rdata_q
        );
        for i in 0..RX_COUNTERS {
            self.counters[i].clock.next = self.clock.val();
            self.counters[i].d.next = self.counters[i].q.val();
        }
        self.cycle.d.next = self.cycle.q.val() + 1;
        self.now.next = self.cycle.q.val();

        self.cfg.valid.next = self.cmd_pending.q.val();
        self.cfg.clop.next = self.cmd_word.q.val().get_bits::<6>(0);
        self.cfg.op.next = self.cmd_word.q.val().get_bits::<2>(8);
        self.cfg.base.next = (bit_cast::<64, 32>(self.base_hi.q.val()) << 32)
            | bit_cast::<64, 32>(self.base_lo.q.val());
        self.cfg.buf_size.next = self.buf_size.q.val();
        self.cfg.buf_count.next = self.buf_count.q.val();
        self.cfg.slot.next = self.tlb_cfg.q.val().get_bits::<7>(0);
        self.cfg.page.next = self.tlb_cfg.q.val().get_bits::<2>(8);
        self.cfg.header.next = self.mode.q.val().get_bit(0);
        self.cfg.skip.next = self.mode.q.val().get_bit(1);
        self.cfg.timeout.next = self.timeout.q.val();
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
        for i in 0..RX_COUNTERS {
            if self.count.val().get_bit(i) {
                self.counters[i].d.next = self.counters[i].q.val() + 1;
            }
        }
        if self.count.val().get_bit(1) {
            self.counters[1].d.next =
                self.counters[1].q.val() + bit_cast::<32, 16>(self.committed_bytes.val());
        }
        // ---- register writes (nanet_contract::rx::RxReg) --------------------------------------
        self.tlb_wr_q.d.next = false;
        self.irq_arm_q.d.next = false;
        if self.reg_write.val() {
            match self.reg_addr.val().index() {
                0 => {
                    self.cmd_pending.d.next = true;
                    self.cmd_word.d.next = self.reg_wdata.val().get_bits::<10>(0);
                }
                1 => self.base_lo.d.next = self.reg_wdata.val(),
                2 => self.base_hi.d.next = self.reg_wdata.val(),
                3 => self.buf_size.d.next = self.reg_wdata.val().get_bits::<24>(0),
                4 => self.buf_count.d.next = self.reg_wdata.val().get_bits::<9>(0),
                5 => self.tlb_cfg.d.next = self.reg_wdata.val().get_bits::<10>(0),
                6 => self.mode.d.next = self.reg_wdata.val().get_bits::<2>(0),
                7 => self.timeout.d.next = self.reg_wdata.val(),
                9 => self.vpn_lo.d.next = self.reg_wdata.val(),
                10 => self.vpn_hi.d.next = self.reg_wdata.val().get_bits::<20>(0),
                11 => self.ppn_lo.d.next = self.reg_wdata.val(),
                12 => self.ppn_hi.d.next = self.reg_wdata.val().get_bits::<20>(0),
                13 => {
                    self.tlb_wr_q.d.next = true;
                    self.tlb_cmd.d.next = self.reg_wdata.val().get_bits::<17>(0);
                }
                16 => self.eq_base_lo.d.next = self.reg_wdata.val(),
                17 => self.eq_base_hi.d.next = self.reg_wdata.val(),
                18 => {
                    self.eq_size.d.next = self.reg_wdata.val().get_bits::<4>(0);
                    self.eq_enable_q.d.next = self.reg_wdata.val().get_bit(31);
                }
                19 => self.eq_head_q.d.next = self.reg_wdata.val().get_bits::<16>(0),
                21 => self.irq_arm_q.d.next = true,
                22 => self.irq_interval.d.next = self.reg_wdata.val(),
                23 => self.irq_count_q.d.next = self.reg_wdata.val().get_bits::<16>(0),
                24 => self.mps.d.next = self.reg_wdata.val().get_bit(0),
                _ => {}
            }
        }

        // ---- register reads -------------------------------------------------------------------
        self.reg_rdata.next = self.rdata_q.q.val();
        self.rdata_q.d.next = 0.into();
        match self.reg_addr.val().index() {
            0 => {
                self.rdata_q.d.next =
                    bit_cast::<32, 1>((self.cmd_pending.q.val() | self.clop_busy.val()).into())
            }
            1 => self.rdata_q.d.next = self.base_lo.q.val(),
            2 => self.rdata_q.d.next = self.base_hi.q.val(),
            3 => self.rdata_q.d.next = bit_cast::<32, 24>(self.buf_size.q.val()),
            4 => self.rdata_q.d.next = bit_cast::<32, 9>(self.buf_count.q.val()),
            5 => self.rdata_q.d.next = bit_cast::<32, 10>(self.tlb_cfg.q.val()),
            6 => self.rdata_q.d.next = bit_cast::<32, 2>(self.mode.q.val()),
            7 => self.rdata_q.d.next = self.timeout.q.val(),
            16 => self.rdata_q.d.next = self.eq_base_lo.q.val(),
            17 => self.rdata_q.d.next = self.eq_base_hi.q.val(),
            18 => {
                self.rdata_q.d.next = (bit_cast::<32, 1>(self.eq_enable_q.q.val().into()) << 31)
                    | bit_cast::<32, 4>(self.eq_size.q.val())
            }
            19 => self.rdata_q.d.next = bit_cast::<32, 16>(self.eq_head_q.q.val()),
            20 => self.rdata_q.d.next = bit_cast::<32, 16>(self.eq_tail.val()),
            21 => self.rdata_q.d.next = bit_cast::<32, 1>(self.irq_armed.val().into()),
            22 => self.rdata_q.d.next = self.irq_interval.q.val(),
            23 => self.rdata_q.d.next = bit_cast::<32, 16>(self.irq_count_q.q.val()),
            24 => self.rdata_q.d.next = bit_cast::<32, 1>(self.mps.q.val().into()),
            25 => self.rdata_q.d.next = self.cycle.q.val(),
            _ => {}
        }
        for i in 0..RX_COUNTERS {
            if self.reg_addr.val().index() == (i + 64) {
                self.rdata_q.d.next = self.counters[i].q.val();
            }
        }

        if self.reset.val() {
            self.cycle.d.next = 0.into();
            self.cmd_pending.d.next = false;
            self.eq_enable_q.d.next = false;
            self.eq_head_q.d.next = 0.into();
            self.irq_interval.d.next = 0.into();
            self.irq_count_q.d.next = 1.into();
            self.mps.d.next = false;
            for i in 0..RX_COUNTERS {
                self.counters[i].d.next = 0.into();
            }
        }
    }
}

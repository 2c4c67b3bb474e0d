//! Programs a Silicon Labs Si570 oscillator to a new frequency at start-up, over I2C
//! (`i2c_master.rs`), the way its datasheet and Linux's `clk-si570` driver do it for a large
//! change:
//!
//! 1. RECALL (register 135 bit 0): the factory dividers and RFREQ come back into the registers;
//!    the bit is read until it clears.
//! 2. Registers 7 to 12 are read: HS_DIV (7[7:5], divider = code + 4), N1 (7[4:0] and 8[7:6],
//!    divider = code + 1) and RFREQ (8[5:0] to 12, 38 bits of 10.28 fixed point). The crystal is
//!    `fxtal = f_startup * HS_DIV * N1 / RFREQ` (each part's own, within 2000 ppm of 114.285 MHz),
//!    so the new `RFREQ' = RFREQ * (f_new * HS_DIV' * N1') / (f_startup * HS_DIV * N1)`: one
//!    multiplication by a constant, one division, in hardware (shift and add, shift and subtract).
//!    Dividers that are no legal code, or an RFREQ' for a crystal more than 2000 ppm from nominal,
//!    mean a read gone wrong: the part's nominal crystal is used instead, and `fallback` says so.
//! 3. Freeze the DCO (register 137 bit 4), write registers 7 to 12 (HS_DIV', N1', RFREQ'),
//!    unfreeze, and set NewFreq (register 135 bit 6; within 10 ms of the unfreeze).
//! 4. Wait `SETTLE` cycles (the datasheet's 10 ms for the output to settle), then `done`.
//!
//! The sequence begins with a bus clear (nine clocks with SDA released, then a stop), which frees a
//! part left in the middle of a read by a reset. A write the part does not acknowledge ends the
//! bus transaction with a stop; the whole sequence starts again after `SETTLE` cycles (`failures`
//! counts these), at most `MAX_TRIES` times: then `gave_up` (the part is not there). The new dividers are chosen as
//! the datasheet says: the DCO (4.85 to 5.67 GHz) with the lowest N1 and the highest HS_DIV.
//! (Parts of 7 ppm stability keep these registers at 13 to 18; the boards this drives carry parts
//! of 50 ppm, with registers 7 to 12.)

use rust_hdl::prelude::*;

use crate::board::i2c_master::{I2cMaster, I2C_READ, I2C_START, I2C_STOP, I2C_WRITE};

/// One step of the I2C program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum I2cStep {
    /// Nine clocks with SDA released (a read nobody answers, not acknowledged).
    BusClear,
    Start,
    Stop,
    /// A byte, as given.
    Write(u8),
    /// Byte `k` (0 to 5) of the new registers 7 to 12.
    WriteNew(usize),
    /// A byte read into register copy `into` (0 to 5: registers 7 to 12; 6: register 135),
    /// acknowledged or not (the last of a read).
    Read {
        into: usize,
        ack: bool,
    },
}

/// The program and its branch points (step numbers).
pub struct Program {
    pub steps: Vec<I2cStep>,
    /// The stop after the read of register 135 (RECALL polled: again while bit 0 is set).
    pub poll_start: usize,
    pub poll_end: usize,
    /// The stop after the read of registers 7 to 12 (the new registers are computed).
    pub read_end: usize,
    /// The stop after NewFreq (the output settles).
    pub last: usize,
    /// A stop of its own, after a write not acknowledged.
    pub error_stop: usize,
}

/// Sequences tried before the programmer gives up on a part that does not answer.
pub const MAX_TRIES: u64 = 8;

/// Register 135: RECALL (bit 0), NewFreq (bit 6); register 137: Freeze DCO (bit 4).
pub const REG_CONTROL: u8 = 135;
pub const RECALL: u8 = 0x01;
pub const NEW_FREQ: u8 = 0x40;
pub const REG_FREEZE: u8 = 137;
pub const FREEZE_DCO: u8 = 0x10;
/// The first divider / RFREQ register (20 and 50 ppm parts).
pub const REG_DIVIDERS: u8 = 7;

/// The programming sequence for the part at 7-bit address `address`.
pub fn program(address: u8) -> Program {
    use I2cStep::*;
    let (w, r) = (address << 1, address << 1 | 1);
    let mut s = vec![
        BusClear,
        Stop,
        Start,
        Write(w),
        Write(REG_CONTROL),
        Write(RECALL),
        Stop,
    ];
    let poll_start = s.len();
    s.extend([
        Start,
        Write(w),
        Write(REG_CONTROL),
        Start,
        Write(r),
        Read {
            into: 6,
            ack: false,
        },
        Stop,
    ]);
    let poll_end = s.len() - 1;
    s.extend([Start, Write(w), Write(REG_DIVIDERS), Start, Write(r)]);
    s.extend((0..6).map(|k| Read {
        into: k,
        ack: k < 5,
    }));
    s.push(Stop);
    let read_end = s.len() - 1;
    s.extend([Start, Write(w), Write(REG_FREEZE), Write(FREEZE_DCO), Stop]);
    s.extend([Start, Write(w), Write(REG_DIVIDERS)]);
    s.extend((0..6).map(WriteNew));
    s.push(Stop);
    s.extend([Start, Write(w), Write(REG_FREEZE), Write(0), Stop]);
    s.extend([Start, Write(w), Write(REG_CONTROL), Write(NEW_FREQ), Stop]);
    let last = s.len() - 1;
    s.push(Stop);
    let error_stop = s.len() - 1;
    Program {
        steps: s,
        poll_start,
        poll_end,
        read_end,
        last,
        error_stop,
    }
}

impl I2cStep {
    /// The step as a ROM word: op (start 0, write 1, read 2, stop 3) in bits 14:13, a read's
    /// acknowledge in bit 12, the source or destination in 11:8 (0 the literal; 1 to 6 new byte or
    /// register copy 0 to 5; 7 register 135), the literal in 7:0.
    pub fn word(self) -> u16 {
        let op = |code: u64| (code as u16) << 13;
        match self {
            // Into register copy 0: the six bytes read later replace it.
            I2cStep::BusClear => op(I2C_READ) | 1 << 8,
            I2cStep::Start => op(I2C_START),
            I2cStep::Stop => op(I2C_STOP),
            I2cStep::Write(b) => op(I2C_WRITE) | b as u16,
            I2cStep::WriteNew(k) => op(I2C_WRITE) | (k as u16 + 1) << 8,
            I2cStep::Read { into, ack } => {
                op(I2C_READ) | (ack as u16) << 12 | (into as u16 + 1) << 8
            }
        }
    }
}

/// The dividers of a frequency: (HS_DIV, N1) with the DCO in 4.85 to 5.67 GHz, the lowest N1
/// and, for it, the highest HS_DIV (the datasheet's choice, for the lowest power).
pub fn dividers(mhz: f64) -> Option<(u64, u64)> {
    let n1s = std::iter::once(1).chain((2..=128).step_by(2));
    for n1 in n1s {
        for hs in [11u64, 9, 7, 6, 5, 4] {
            let fdco = mhz * (hs * n1) as f64;
            if (4850.0..=5670.0).contains(&fdco) {
                return Some((hs, n1));
            }
        }
    }
    None
}

/// What the sequencer computes, for the part it programs: the new frequency and dividers, the
/// factor `f_new * HS' * N1' / f_startup` as `NUM / 2^SHIFT`, and the range of RFREQ' for a
/// crystal within 2000 ppm of nominal.
#[derive(Clone, Copy, Debug)]
pub struct Si570Target {
    pub address: u8,
    pub startup_mhz: f64,
    pub mhz: f64,
    pub hs_div: u64,
    pub n1: u64,
    pub num: u64,
    pub shift: u32,
    /// RFREQ' for the nominal crystal (the fallback), and the limits of a plausible one.
    pub rfreq_nominal: u64,
    pub rfreq_min: u64,
    pub rfreq_max: u64,
}

/// The nominal crystal and its tolerance (datasheet).
pub const FXTAL_NOMINAL_MHZ: f64 = 114.285;
pub const FXTAL_TOLERANCE: f64 = 2000e-6;

impl Si570Target {
    /// The part at `address` that starts at `startup_mhz`, to be set to `mhz`.
    pub fn new(address: u8, startup_mhz: f64, mhz: f64) -> Self {
        let (hs_div, n1) = dividers(mhz).expect("a frequency the Si570 can make");
        let fdco = mhz * (hs_div * n1) as f64;
        let ratio = fdco / startup_mhz;
        let shift = (0..=8)
            .find(|s| (ratio * (1u64 << s) as f64).fract() == 0.0)
            .expect("f_new * HS_DIV * N1 / f_startup a multiple of 1/256");
        let rfreq = |fxtal: f64| fdco / fxtal * (1u64 << 28) as f64;
        Self {
            address,
            startup_mhz,
            mhz,
            hs_div,
            n1,
            num: (ratio * (1u64 << shift) as f64) as u64,
            shift,
            rfreq_nominal: rfreq(FXTAL_NOMINAL_MHZ).round() as u64,
            rfreq_min: rfreq(FXTAL_NOMINAL_MHZ * (1.0 + FXTAL_TOLERANCE)).floor() as u64,
            rfreq_max: rfreq(FXTAL_NOMINAL_MHZ * (1.0 - FXTAL_TOLERANCE)).ceil() as u64,
        }
    }

    /// Registers 7 and 8's divider bits for the new frequency (RFREQ' goes below them).
    pub fn divider_bits(&self) -> u64 {
        ((self.hs_div - 4) << 45) | ((self.n1 - 1) << 38)
    }
}

/// The DE5-Net's Si570 (I2C address 0, the factory's 100 MHz) for the SFP+ reference of
/// 10GBASE-R, 644.53125 MHz.
pub fn de5net_sfp_refclk() -> Si570Target {
    Si570Target::new(0x00, 100.0, 644.53125)
}

#[derive(LogicBlock)]
pub struct Si570Init<const QUARTER: u64, const SETTLE: u64> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// Begin (held high; the sequence runs once, again only after a reset).
    pub start: Signal<In, Bit>,
    /// The oscillator runs at the new frequency.
    pub done: Signal<Out, Bit>,
    /// The part's dividers read back made no sense: its nominal crystal was assumed.
    pub fallback: Signal<Out, Bit>,
    /// Sequences begun again after a write the part did not acknowledge.
    pub failures: Signal<Out, Bits<8>>,
    /// `MAX_TRIES` sequences failed: the programmer stopped.
    pub gave_up: Signal<Out, Bit>,
    pub scl_low: Signal<Out, Bit>,
    pub sda_low: Signal<Out, Bit>,
    pub sda_in: Signal<In, Bit>,

    i2c: I2cMaster<QUARTER>,
    rom: ROM<Bits<16>, 6>,
    poll_start: Constant<Bits<6>>,
    poll_end: Constant<Bits<6>>,
    read_end: Constant<Bits<6>>,
    last: Constant<Bits<6>>,
    error_stop: Constant<Bits<6>>,
    settle_cycles: Constant<Bits<32>>,
    num: Constant<Bits<10>>,
    shift: Constant<Bits<4>>,
    new_bits: Constant<Bits<48>>,
    rfreq_nominal: Constant<Bits<48>>,
    rfreq_min: Constant<Bits<48>>,
    rfreq_max: Constant<Bits<48>>,
    max_tries: Constant<Bits<8>>,

    /// 0 idle, 1 the I2C program, 2 the dividers' product, 3 RFREQ times the factor, 4 the
    /// division, 5 the check, 6 waiting (settling, or before a new try), 7 done.
    state: DFF<Bits<3>>,
    step: DFF<Bits<6>>,
    /// The operation of `step` was handed to the master.
    issued: DFF<Bit>,
    /// After the wait: done (the output settled) or a new try.
    settled_next: DFF<Bit>,
    /// Registers 7 to 12 as read (register 7 in bits 47:40).
    regs: DFF<Bits<48>>,
    /// Register 135 as read.
    control: DFF<Bits<8>>,
    /// The new registers 7 to 12.
    new_regs: DFF<Bits<48>>,
    mul_a: DFF<Bits<48>>,
    mul_b: DFF<Bits<10>>,
    acc: DFF<Bits<48>>,
    /// The old dividers' product (HS_DIV * N1).
    product: DFF<Bits<12>>,
    rem: DFF<Bits<16>>,
    iter: DFF<Bits<6>>,
    waited: DFF<Bits<32>>,
    fallback_q: DFF<Bit>,
    failures_q: DFF<Bits<8>>,
    word: Signal<Local, Bits<16>>,
    source: Signal<Local, Bits<4>>,
    literal: Signal<Local, Bits<8>>,
    new_byte: Signal<Local, Bits<8>>,
    hs_code: Signal<Local, Bits<3>>,
    n1_code: Signal<Local, Bits<7>>,
    rem_in: Signal<Local, Bits<16>>,
    top_bit: Signal<Local, Bits<16>>,
    quotient: Signal<Local, Bits<48>>,
    quotient_38: Signal<Local, Bits<38>>,
    rfreq_38: Signal<Local, Bits<38>>,
    plausible: Signal<Local, Bit>,
}

impl<const QUARTER: u64, const SETTLE: u64> Si570Init<QUARTER, SETTLE> {
    pub fn new(target: Si570Target) -> Self {
        let p = program(target.address);
        assert!(p.steps.len() <= 64);
        let rom = ROM::new(
            p.steps
                .iter()
                .enumerate()
                .map(|(i, s)| (i.to_bits(), s.word().to_bits()))
                .collect(),
        );
        let c6 = |v: usize| Constant::new(v.to_bits());
        Self {
            clock: Default::default(),
            reset: Default::default(),
            start: Default::default(),
            done: Default::default(),
            fallback: Default::default(),
            failures: Default::default(),
            gave_up: Default::default(),
            scl_low: Default::default(),
            sda_low: Default::default(),
            sda_in: Default::default(),
            i2c: Default::default(),
            rom,
            poll_start: c6(p.poll_start),
            poll_end: c6(p.poll_end),
            read_end: c6(p.read_end),
            last: c6(p.last),
            error_stop: c6(p.error_stop),
            settle_cycles: Constant::new(SETTLE.to_bits()),
            num: Constant::new(target.num.to_bits()),
            shift: Constant::new((target.shift as u64).to_bits()),
            new_bits: Constant::new(target.divider_bits().to_bits()),
            rfreq_nominal: Constant::new(target.rfreq_nominal.to_bits()),
            rfreq_min: Constant::new(target.rfreq_min.to_bits()),
            rfreq_max: Constant::new(target.rfreq_max.to_bits()),
            max_tries: Constant::new(MAX_TRIES.to_bits()),
            state: Default::default(),
            step: Default::default(),
            issued: Default::default(),
            settled_next: Default::default(),
            regs: Default::default(),
            control: Default::default(),
            new_regs: Default::default(),
            mul_a: Default::default(),
            mul_b: Default::default(),
            acc: Default::default(),
            product: Default::default(),
            rem: Default::default(),
            iter: Default::default(),
            waited: Default::default(),
            fallback_q: Default::default(),
            failures_q: Default::default(),
            word: Default::default(),
            source: Default::default(),
            literal: Default::default(),
            new_byte: Default::default(),
            hs_code: Default::default(),
            n1_code: Default::default(),
            rem_in: Default::default(),
            top_bit: Default::default(),
            quotient: Default::default(),
            quotient_38: Default::default(),
            rfreq_38: Default::default(),
            plausible: Default::default(),
        }
    }
}

impl<const QUARTER: u64, const SETTLE: u64> Default for Si570Init<QUARTER, SETTLE> {
    fn default() -> Self {
        Self::new(de5net_sfp_refclk())
    }
}

impl<const QUARTER: u64, const SETTLE: u64> Logic for Si570Init<QUARTER, SETTLE> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            state,
            step,
            issued,
            settled_next,
            regs,
            control,
            new_regs,
            mul_a,
            mul_b,
            acc,
            product,
            rem,
            iter,
            waited,
            fallback_q,
            failures_q
        );
        self.i2c.clock.next = self.clock.val();
        self.i2c.reset.next = self.reset.val();
        self.i2c.sda_in.next = self.sda_in.val();
        self.scl_low.next = self.i2c.scl_low.val();
        self.sda_low.next = self.i2c.sda_low.val();
        self.done.next = self.state.q.val() == 7;
        self.fallback.next = self.fallback_q.q.val();
        self.failures.next = self.failures_q.q.val();
        self.gave_up.next = self.failures_q.q.val() == self.max_tries.val();

        // ---- the step's operation, from the program ROM ---------------------------------------
        self.rom.address.next = self.step.q.val();
        self.word.next = self.rom.data.val();
        self.source.next = self.word.val().get_bits::<4>(8);
        self.literal.next = self.word.val().get_bits::<8>(0);
        // Byte k of the new registers: bits 47-8k down to 40-8k.
        self.new_byte.next = self.literal.val();
        if self.source.val() == 1 {
            self.new_byte.next = self.new_regs.q.val().get_bits::<8>(40);
        } else if self.source.val() == 2 {
            self.new_byte.next = self.new_regs.q.val().get_bits::<8>(32);
        } else if self.source.val() == 3 {
            self.new_byte.next = self.new_regs.q.val().get_bits::<8>(24);
        } else if self.source.val() == 4 {
            self.new_byte.next = self.new_regs.q.val().get_bits::<8>(16);
        } else if self.source.val() == 5 {
            self.new_byte.next = self.new_regs.q.val().get_bits::<8>(8);
        } else if self.source.val() == 6 {
            self.new_byte.next = self.new_regs.q.val().get_bits::<8>(0);
        }
        self.i2c.op.next = self.word.val().get_bits::<2>(13);
        self.i2c.op_ack.next = self.word.val().get_bit(12);
        self.i2c.op_data.next = self.new_byte.val();
        self.i2c.op_valid.next = (self.state.q.val() == 1) & !self.issued.q.val();

        // ---- the registers read back -------------------------------------------------------
        self.hs_code.next = self.regs.q.val().get_bits::<3>(45);
        self.n1_code.next = self.regs.q.val().get_bits::<7>(38);
        // The division: the remainder takes the dividend's next bit.
        self.top_bit.next = 0.into();
        if self.acc.q.val().get_bit(47) {
            self.top_bit.next = 1.into();
        }
        self.rem_in.next = (self.rem.q.val() << 1) | self.top_bit.val();
        self.quotient_38.next = self.acc.q.val().get_bits::<38>(0);
        self.quotient.next = bit_cast::<48, 38>(self.quotient_38.val());
        self.rfreq_38.next = self.regs.q.val().get_bits::<38>(0);
        self.plausible.next =
            (self.acc.q.val() >= self.rfreq_min.val()) & (self.acc.q.val() <= self.rfreq_max.val());

        if self.state.q.val() == 0 {
            if self.start.val() & (self.failures_q.q.val() != self.max_tries.val()) {
                self.state.d.next = 1.into();
                self.step.d.next = 0.into();
                self.issued.d.next = false;
            }
        } else if self.state.q.val() == 1 {
            if !self.issued.q.val() {
                if !self.i2c.busy.val() {
                    self.issued.d.next = true;
                }
            } else if self.i2c.done.val() {
                self.issued.d.next = false;
                self.step.d.next = self.step.q.val() + 1;
                // A read's byte into its copy.
                if self.word.val().get_bits::<2>(13) == 2 {
                    if self.source.val() == 7 {
                        self.control.d.next = self.i2c.rdata.val();
                    } else {
                        self.regs.d.next =
                            (self.regs.q.val() << 8) | bit_cast::<48, 8>(self.i2c.rdata.val());
                    }
                }
                if (self.word.val().get_bits::<2>(13) == 1) & self.i2c.nack.val() {
                    // Not acknowledged: a stop, then a new try after the wait.
                    self.step.d.next = self.error_stop.val();
                } else if self.step.q.val() == self.poll_end.val() {
                    if self.control.q.val().get_bit(0) {
                        self.step.d.next = self.poll_start.val();
                    }
                } else if self.step.q.val() == self.read_end.val() {
                    // The old dividers' product: (HS_DIV) * (N1), by shift and add.
                    self.state.d.next = 2.into();
                    self.mul_a.d.next = bit_cast::<48, 7>(self.n1_code.val()) + 1;
                    self.mul_b.d.next = bit_cast::<10, 3>(self.hs_code.val()) + 4;
                    self.acc.d.next = 0.into();
                } else if self.step.q.val() == self.last.val() {
                    self.state.d.next = 6.into();
                    self.waited.d.next = 0.into();
                    self.settled_next.d.next = true;
                } else if self.step.q.val() == self.error_stop.val() {
                    self.state.d.next = 6.into();
                    self.waited.d.next = 0.into();
                    self.settled_next.d.next = false;
                    self.failures_q.d.next = self.failures_q.q.val() + 1;
                }
            }
        } else if (self.state.q.val() == 2) | (self.state.q.val() == 3) {
            // Shift and add: acc += mul_a for each set bit of mul_b.
            if self.mul_b.q.val() == 0 {
                if self.state.q.val() == 2 {
                    self.product.d.next = self.acc.q.val().get_bits::<12>(0);
                    self.state.d.next = 3.into();
                    self.mul_a.d.next = bit_cast::<48, 38>(self.rfreq_38.val());
                    self.mul_b.d.next = self.num.val();
                    self.acc.d.next = 0.into();
                } else {
                    // RFREQ * NUM / 2^SHIFT, divided by the product (bit by bit from bit 47).
                    self.state.d.next = 4.into();
                    self.acc.d.next = self.acc.q.val() >> self.shift.val();
                    self.rem.d.next = 0.into();
                    self.iter.d.next = 0.into();
                }
            } else {
                if self.mul_b.q.val().get_bit(0) {
                    self.acc.d.next = self.acc.q.val() + self.mul_a.q.val();
                }
                self.mul_a.d.next = self.mul_a.q.val() << 1;
                self.mul_b.d.next = self.mul_b.q.val() >> 1;
            }
        } else if self.state.q.val() == 4 {
            self.acc.d.next = self.acc.q.val() << 1;
            self.rem.d.next = self.rem_in.val();
            if self.rem_in.val() >= bit_cast::<16, 12>(self.product.q.val()) {
                self.rem.d.next = self.rem_in.val() - bit_cast::<16, 12>(self.product.q.val());
                self.acc.d.next = (self.acc.q.val() << 1) | 1;
            }
            self.iter.d.next = self.iter.q.val() + 1;
            if self.iter.q.val() == 47 {
                self.state.d.next = 5.into();
            }
        } else if self.state.q.val() == 5 {
            // Legal old dividers (HS_DIV codes 4 and 6 unused; N1 one or even) and a crystal
            // within tolerance; else the nominal crystal.
            self.new_regs.d.next = self.new_bits.val() | self.quotient.val();
            self.fallback_q.d.next = false;
            if (self.hs_code.val() == 4)
                | (self.hs_code.val() == 6)
                | ((self.n1_code.val() != 0) & !self.n1_code.val().get_bit(0))
                | !self.plausible.val()
            {
                self.new_regs.d.next = self.new_bits.val() | self.rfreq_nominal.val();
                self.fallback_q.d.next = true;
            }
            self.state.d.next = 1.into();
            self.step.d.next = self.read_end.val() + 1;
        } else if self.state.q.val() == 6 {
            self.waited.d.next = self.waited.q.val() + 1;
            if self.waited.q.val() == self.settle_cycles.val() {
                if self.settled_next.q.val() {
                    self.state.d.next = 7.into();
                } else if self.failures_q.q.val() == self.max_tries.val() {
                    self.state.d.next = 0.into();
                } else {
                    self.state.d.next = 1.into();
                    self.step.d.next = 0.into();
                }
            }
        }

        if self.reset.val() {
            self.state.d.next = 0.into();
            self.issued.d.next = false;
            self.fallback_q.d.next = false;
            self.failures_q.d.next = 0.into();
        }
    }
}

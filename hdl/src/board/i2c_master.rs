//! An I2C master for a board's management bus, one operation at a time: a start (or repeated
//! start), a byte written (and the acknowledge read back), a byte read (and the acknowledge sent),
//! a stop. Open drain: it only pulls SCL and SDA low (`scl_low`, `sda_low`) or lets them go; the
//! board's pull-ups make the high level.
//!
//! Every operation is made of bit periods of four quarters of `QUARTER` cycles (a bit rate of
//! clock / (4 `QUARTER`)): SDA is set in the first quarter while SCL is low, SCL rises in the
//! second, SDA is read at the end of the third, SCL falls in the fourth. A start releases SDA,
//! then SCL, then pulls SDA low while SCL is high, then SCL; a stop pulls SDA low, releases SCL,
//! then releases SDA. Every operation but a stop leaves SCL low; between operations the lines
//! stay as the last one left them. A byte goes out most significant bit first; after it, a write
//! reads the device's acknowledge (`nack`: the device did not pull SDA low), a read sends its own
//! (`op_ack`: pull SDA low, more bytes to come).
//!
//! One master, no clock stretching (the devices it talks to do not stretch). `sda_in` comes from
//! the pin through two flip-flops. Every setup and hold is a quarter bit: at 100 kHz, 2.5 us,
//! which meets fast mode (the Si570 takes 400 kHz) but not standard mode's 4 us start hold.

use rust_hdl::prelude::*;

/// Operations (`op`); the kernel spells them as literals (start 0, write 1, read 2, stop 3), the
/// Si570 programmer's ROM (`si570.rs`) uses these.
pub const I2C_START: u64 = 0;
pub const I2C_WRITE: u64 = 1;
pub const I2C_READ: u64 = 2;
pub const I2C_STOP: u64 = 3;

#[derive(LogicBlock)]
pub struct I2cMaster<const QUARTER: u64> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// An operation, taken while `busy` is low.
    pub op_valid: Signal<In, Bit>,
    pub op: Signal<In, Bits<2>>,
    /// The byte of a write.
    pub op_data: Signal<In, Bits<8>>,
    /// A read acknowledges its byte (the device sends another).
    pub op_ack: Signal<In, Bit>,
    pub busy: Signal<Out, Bit>,
    /// Pulses when an operation ends; then `nack` (a write the device did not acknowledge) holds
    /// until the next write ends, and `rdata` (the byte of a read) until the next operation starts.
    pub done: Signal<Out, Bit>,
    pub nack: Signal<Out, Bit>,
    pub rdata: Signal<Out, Bits<8>>,
    /// The bus: pull SCL / SDA low; SDA as the pin reads it.
    pub scl_low: Signal<Out, Bit>,
    pub sda_low: Signal<Out, Bit>,
    pub sda_in: Signal<In, Bit>,

    quarter_last: Constant<Bits<16>>,
    active: DFF<Bit>,
    cur_op: DFF<Bits<2>>,
    /// Bit period within the operation (0 to 8: eight data bits and the acknowledge).
    bit_no: DFF<Bits<4>>,
    quarter: DFF<Bits<2>>,
    count: DFF<Bits<16>>,
    /// A write's byte, shifted out from bit 7; a read's, shifted in at bit 0.
    shift: DFF<Bits<8>>,
    ack_send: DFF<Bit>,
    nack_q: DFF<Bit>,
    done_q: DFF<Bit>,
    scl_q: DFF<Bit>,
    sda_q: DFF<Bit>,
    sda_1: DFF<Bit>,
    sda_2: DFF<Bit>,
    tick: Signal<Local, Bit>,
    last_bit: Signal<Local, Bit>,
    data_bit: Signal<Local, Bit>,
}

impl<const QUARTER: u64> Default for I2cMaster<QUARTER> {
    fn default() -> Self {
        assert!(
            (2..65536).contains(&QUARTER),
            "I2cMaster: QUARTER must be 2 to 65535"
        );
        Self {
            clock: Default::default(),
            reset: Default::default(),
            op_valid: Default::default(),
            op: Default::default(),
            op_data: Default::default(),
            op_ack: Default::default(),
            busy: Default::default(),
            done: Default::default(),
            nack: Default::default(),
            rdata: Default::default(),
            scl_low: Default::default(),
            sda_low: Default::default(),
            sda_in: Default::default(),
            quarter_last: Constant::new((QUARTER - 1).into()),
            active: Default::default(),
            cur_op: Default::default(),
            bit_no: Default::default(),
            quarter: Default::default(),
            count: Default::default(),
            shift: Default::default(),
            ack_send: Default::default(),
            nack_q: Default::default(),
            done_q: Default::default(),
            scl_q: Default::default(),
            sda_q: Default::default(),
            sda_1: Default::default(),
            sda_2: Default::default(),
            tick: Default::default(),
            last_bit: Default::default(),
            data_bit: Default::default(),
        }
    }
}

impl<const QUARTER: u64> Logic for I2cMaster<QUARTER> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, active, cur_op, bit_no, quarter, count, shift, ack_send, nack_q, done_q,
            scl_q, sda_q, sda_1, sda_2
        );
        self.sda_1.d.next = self.sda_in.val();
        self.sda_2.d.next = self.sda_1.q.val();
        self.busy.next = self.active.q.val();
        self.done.next = self.done_q.q.val();
        self.nack.next = self.nack_q.q.val();
        self.rdata.next = self.shift.q.val();
        self.scl_low.next = self.scl_q.q.val();
        self.sda_low.next = self.sda_q.q.val();
        self.done_q.d.next = false;

        self.tick.next = self.active.q.val() & (self.count.q.val() == self.quarter_last.val());
        self.last_bit.next =
            (self.bit_no.q.val() == 8) | (self.cur_op.q.val() == 0) | (self.cur_op.q.val() == 3);
        // The bit on SDA in a write's data bits; the acknowledge of a read.
        self.data_bit.next = self.shift.q.val().get_bit(7);

        if !self.active.q.val() {
            if self.op_valid.val() {
                self.active.d.next = true;
                self.cur_op.d.next = self.op.val();
                self.bit_no.d.next = 0.into();
                self.quarter.d.next = 0.into();
                self.count.d.next = 0.into();
                self.ack_send.d.next = self.op_ack.val();
                if self.op.val() == 1 {
                    self.shift.d.next = self.op_data.val();
                }
            }
        } else if self.tick.val() {
            self.count.d.next = 0.into();
            self.quarter.d.next = self.quarter.q.val() + 1;
            // End of the third quarter: SCL is high, the bit is read.
            if self.quarter.q.val() == 2 {
                if (self.cur_op.q.val() == 1) & (self.bit_no.q.val() == 8) {
                    self.nack_q.d.next = self.sda_2.q.val();
                }
                if (self.cur_op.q.val() == 2) & (self.bit_no.q.val() != 8) {
                    self.shift.d.next =
                        (self.shift.q.val() << 1) | bit_cast::<8, 1>(self.sda_2.q.val().into());
                }
            }
            if self.quarter.q.val() == 3 {
                if (self.cur_op.q.val() == 1) & (self.bit_no.q.val() != 8) {
                    self.shift.d.next = self.shift.q.val() << 1;
                }
                if self.last_bit.val() {
                    self.active.d.next = false;
                    self.done_q.d.next = true;
                } else {
                    self.bit_no.d.next = self.bit_no.q.val() + 1;
                }
            }
        } else {
            self.count.d.next = self.count.q.val() + 1;
        }

        // The lines in the current quarter (registered: one cycle behind it).
        if self.active.q.val() {
            if self.cur_op.q.val() == 0 {
                if self.quarter.q.val() == 0 {
                    self.sda_q.d.next = false;
                } else if self.quarter.q.val() == 1 {
                    self.scl_q.d.next = false;
                } else if self.quarter.q.val() == 2 {
                    self.sda_q.d.next = true;
                } else {
                    self.scl_q.d.next = true;
                }
            } else if self.cur_op.q.val() == 3 {
                if self.quarter.q.val() == 0 {
                    self.scl_q.d.next = true;
                    self.sda_q.d.next = true;
                } else if self.quarter.q.val() == 1 {
                    self.scl_q.d.next = false;
                } else if self.quarter.q.val() == 2 {
                    self.sda_q.d.next = false;
                }
            } else {
                // A data or acknowledge bit: SDA driven by the master for a write's data and a
                // read's acknowledge, released for the device otherwise.
                if self.bit_no.q.val() == 8 {
                    self.sda_q.d.next = (self.cur_op.q.val() == 2) & self.ack_send.q.val();
                } else {
                    self.sda_q.d.next = (self.cur_op.q.val() == 1) & !self.data_bit.val();
                }
                self.scl_q.d.next = (self.quarter.q.val() == 0) | (self.quarter.q.val() == 3);
            }
        }

        if self.reset.val() {
            self.active.d.next = false;
            self.done_q.d.next = false;
            self.nack_q.d.next = false;
            self.scl_q.d.next = false;
            self.sda_q.d.next = false;
        }
    }
}

//! The Silicon Labs Si570 programmable oscillator on an I2C bus, as its datasheet describes the
//! parts of 20 and 50 ppm stability (registers 7 to 12) and as Linux's `clk-si570` driver uses
//! them:
//! - I2C: a 7-bit address; a write sets the register pointer with its first byte, then writes from
//!   there, the pointer moving on with every byte; a read (after a write of the pointer and a
//!   repeated start) reads from the pointer on. Bytes are acknowledged by the receiver; a byte the
//!   part sends is driven while SCL is low.
//! - Registers 7 to 12: HS_DIV (7[7:5], code + 4; codes 4 and 6 unused), N1 (7[4:0] and 8[7:6],
//!   code + 1; 1 or even), RFREQ (8[5:0] to 12, 10.28 fixed point). The output is
//!   `fxtal * RFREQ / (HS_DIV * N1)`, with the DCO (`fxtal * RFREQ`) in 4.85 to 5.67 GHz.
//! - Register 135: RECALL (bit 0) reloads 7 to 12 from the factory's memory and reads 1 until
//!   done; NewFreq (bit 6) applies 7 to 12 and clears itself. Register 137: Freeze DCO (bit 4).
//!   A large change must write 7 to 12 with the DCO frozen, and set NewFreq within 10 ms of the
//!   unfreeze; anything else is a violation, recorded, and the output does not change.
//!
//! The model runs on the I2C master's clock: every cycle it sees the lines (after the wired AND)
//! and says whether it pulls SDA low.

/// A register write the part took, or a read it answered: (register, value).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    Write(u8, u8),
    Read(u8, u8),
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Phase {
    Idle,
    /// Receiving a byte: (bits so far, value); `address` for the first byte of a transaction.
    Receive {
        bits: u8,
        value: u8,
        address: bool,
    },
    /// Acknowledging the byte just received (pull SDA low until SCL falls after the 9th pulse).
    Ack {
        read_next: bool,
    },
    /// Sending a byte, bit `bit` (7 down to 0) on the line.
    Send {
        bit: i8,
        value: u8,
    },
    /// Reading the master's acknowledge of a byte sent.
    MasterAck,
    /// Not addressed: waiting for a stop or a start.
    Ignore,
}

pub struct Si570 {
    pub address: u8,
    /// The part's crystal (114.285 MHz, each part within 2000 ppm).
    pub fxtal_mhz: f64,
    /// The factory's registers 7 to 12 (the start-up frequency).
    pub factory: [u8; 6],
    /// The output frequency.
    pub output_mhz: f64,
    /// Cycles a RECALL takes, and cycles in 10 ms (the NewFreq deadline).
    pub recall_cycles: u64,
    pub cycles_10ms: u64,
    regs: [u8; 256],
    pointer: u8,
    /// The first byte of a write transaction (the pointer) is still to come.
    expect_pointer: bool,
    phase: Phase,
    pull_sda: bool,
    last_scl: bool,
    last_sda: bool,
    recall_done_at: Option<u64>,
    unfrozen_at: Option<u64>,
    /// Registers 7 to 12 written since the last NewFreq, and whether all with the DCO frozen.
    dividers_written: bool,
    written_unfrozen: bool,
    cycle: u64,
    /// Every access, in order; the frequency set by each NewFreq.
    pub accesses: Vec<Access>,
    pub new_freqs: Vec<f64>,
    pub violations: Vec<String>,
}

/// Registers 7 to 12 for the dividers and RFREQ.
pub fn divider_regs(hs_div: u64, n1: u64, rfreq: u64) -> [u8; 6] {
    let v = (hs_div - 4) << 45 | (n1 - 1) << 38 | (rfreq & ((1 << 38) - 1));
    std::array::from_fn(|k| (v >> (40 - 8 * k)) as u8)
}

/// The dividers and RFREQ of registers 7 to 12.
pub fn decode(regs: &[u8; 6]) -> (u64, u64, u64) {
    let v = regs.iter().fold(0u64, |a, &b| a << 8 | b as u64);
    ((v >> 45) + 4, (v >> 38 & 0x7F) + 1, v & ((1 << 38) - 1))
}

impl Si570 {
    /// A part at `address` with crystal `fxtal_mhz`, whose factory setting is `startup_mhz`
    /// through the dividers `hs_div` and `n1`.
    pub fn new(address: u8, fxtal_mhz: f64, startup_mhz: f64, hs_div: u64, n1: u64) -> Self {
        let fdco = startup_mhz * (hs_div * n1) as f64;
        let rfreq = (fdco / fxtal_mhz * (1u64 << 28) as f64).round() as u64;
        let factory = divider_regs(hs_div, n1, rfreq);
        let mut regs = [0u8; 256];
        regs[7..13].copy_from_slice(&factory);
        let mut s = Self {
            address,
            fxtal_mhz,
            factory,
            output_mhz: 0.0,
            recall_cycles: 50,
            cycles_10ms: 1_000_000,
            regs,
            pointer: 0,
            expect_pointer: false,
            phase: Phase::Idle,
            pull_sda: false,
            last_scl: true,
            last_sda: true,
            recall_done_at: None,
            unfrozen_at: None,
            dividers_written: false,
            written_unfrozen: false,
            cycle: 0,
            accesses: vec![],
            new_freqs: vec![],
            violations: vec![],
        };
        s.output_mhz = s.frequency().expect("a legal factory setting");
        s
    }

    /// Registers 7 to 12 as they are.
    pub fn dividers(&self) -> [u8; 6] {
        self.regs[7..13].try_into().unwrap()
    }

    /// The output the registers 7 to 12 make, if they are legal.
    fn frequency(&self) -> Result<f64, String> {
        let (hs, n1, rfreq) = decode(&self.dividers());
        if hs == 8 || hs == 10 {
            return Err(format!("HS_DIV code {} is unused", hs - 4));
        }
        if n1 != 1 && n1 % 2 == 1 {
            return Err(format!("N1 = {n1} (must be 1 or even)"));
        }
        let fdco = self.fxtal_mhz * rfreq as f64 / (1u64 << 28) as f64;
        if !(4850.0..=5670.0).contains(&fdco) {
            return Err(format!("DCO at {fdco:.3} MHz, outside 4850 to 5670"));
        }
        Ok(fdco / (hs * n1) as f64)
    }

    fn write(&mut self, reg: u8, value: u8) {
        self.accesses.push(Access::Write(reg, value));
        match reg {
            7..=12 => {
                self.dividers_written = true;
                if self.regs[137] & 0x10 == 0 {
                    self.written_unfrozen = true;
                }
                self.regs[reg as usize] = value;
            }
            135 => {
                if value & 0x01 != 0 {
                    self.regs[135] |= 0x01;
                    self.recall_done_at = Some(self.cycle + self.recall_cycles);
                }
                if value & 0x40 != 0 {
                    self.new_freq();
                }
                if value & 0x80 != 0 {
                    self.violations
                        .push("RST_REG written (it interrupts the I2C bus)".to_string());
                }
            }
            137 => {
                let was_frozen = self.regs[137] & 0x10 != 0;
                self.regs[137] = value;
                if was_frozen && value & 0x10 == 0 {
                    self.unfrozen_at = Some(self.cycle);
                }
            }
            _ => self.violations.push(format!("a write of register {reg}")),
        }
    }

    fn new_freq(&mut self) {
        let problem = if self.regs[137] & 0x10 != 0 {
            Some("NewFreq with the DCO frozen".to_string())
        } else if self.written_unfrozen {
            Some("registers 7 to 12 written without Freeze DCO".to_string())
        } else if !self.dividers_written {
            Some("NewFreq without new dividers".to_string())
        } else if self
            .unfrozen_at
            .is_none_or(|at| self.cycle - at > self.cycles_10ms)
        {
            Some("NewFreq more than 10 ms after the unfreeze".to_string())
        } else {
            None
        };
        match problem.map_or_else(|| self.frequency(), Err) {
            Ok(f) => {
                self.output_mhz = f;
                self.new_freqs.push(f);
            }
            Err(e) => self.violations.push(e),
        }
        self.dividers_written = false;
        self.written_unfrozen = false;
    }

    fn read(&mut self) -> u8 {
        let v = self.regs[self.pointer as usize];
        self.accesses.push(Access::Read(self.pointer, v));
        self.pointer = self.pointer.wrapping_add(1);
        v
    }

    /// One cycle: the lines as they are now; whether the part pulls SDA low from now on.
    pub fn tick(&mut self, scl: bool, sda: bool) -> bool {
        self.cycle += 1;
        if self.recall_done_at.is_some_and(|at| self.cycle >= at) {
            self.recall_done_at = None;
            self.regs[7..13].copy_from_slice(&self.factory.clone());
            self.regs[135] &= !0x01;
        }
        let (rose, fell) = (scl && !self.last_scl, !scl && self.last_scl);
        if scl && self.last_scl && sda != self.last_sda {
            if !sda {
                // Start (or repeated start).
                self.phase = Phase::Receive {
                    bits: 0,
                    value: 0,
                    address: true,
                };
                self.pull_sda = false;
            } else {
                self.phase = Phase::Idle;
                self.pull_sda = false;
            }
        } else if rose {
            self.phase = match self.phase {
                Phase::Receive {
                    bits,
                    value,
                    address,
                } => Phase::Receive {
                    bits: bits + 1,
                    value: value << 1 | sda as u8,
                    address,
                },
                Phase::MasterAck => {
                    if sda {
                        // Not acknowledged: the master ends the read.
                        Phase::Ignore
                    } else {
                        Phase::MasterAck
                    }
                }
                p => p,
            };
        } else if fell {
            self.phase = match self.phase {
                Phase::Receive {
                    bits: 8,
                    value,
                    address: true,
                } => {
                    if value >> 1 == self.address {
                        self.pull_sda = true;
                        let read = value & 1 == 1;
                        self.expect_pointer = !read;
                        Phase::Ack { read_next: read }
                    } else {
                        Phase::Ignore
                    }
                }
                Phase::Receive {
                    bits: 8,
                    value,
                    address: false,
                } => {
                    if self.expect_pointer {
                        self.pointer = value;
                        self.expect_pointer = false;
                    } else {
                        let reg = self.pointer;
                        self.pointer = self.pointer.wrapping_add(1);
                        self.write(reg, value);
                    }
                    self.pull_sda = true;
                    Phase::Ack { read_next: false }
                }
                Phase::Ack { read_next } => {
                    if read_next {
                        let value = self.read();
                        self.pull_sda = value & 0x80 == 0;
                        Phase::Send { bit: 7, value }
                    } else {
                        self.pull_sda = false;
                        Phase::Receive {
                            bits: 0,
                            value: 0,
                            address: false,
                        }
                    }
                }
                Phase::Send { bit, value } => {
                    if bit == 0 {
                        self.pull_sda = false;
                        Phase::MasterAck
                    } else {
                        self.pull_sda = value >> (bit - 1) & 1 == 0;
                        Phase::Send {
                            bit: bit - 1,
                            value,
                        }
                    }
                }
                Phase::MasterAck => {
                    // Acknowledged: the next byte.
                    let value = self.read();
                    self.pull_sda = value & 0x80 == 0;
                    Phase::Send { bit: 7, value }
                }
                p => p,
            };
        }
        self.last_scl = scl;
        self.last_sda = sda;
        self.pull_sda
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registers_encode_and_decode_and_the_factory_setting_is_its_frequency() {
        let r = divider_regs(4, 2, 0x2D1E127AF);
        assert_eq!(r, [0x00, 0x42, 0xD1, 0xE1, 0x27, 0xAF]);
        assert_eq!(decode(&r), (4, 2, 0x2D1E127AF));
        let part = Si570::new(0, 114.285, 100.0, 9, 6);
        assert!((part.output_mhz - 100.0).abs() < 1e-6);
        assert_eq!(decode(&part.factory).0, 9);
    }
}

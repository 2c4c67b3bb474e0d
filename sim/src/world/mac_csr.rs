//! The configuration registers of Intel's 10-Gbps Ethernet MAC (`altera_eth_10g_mac`) as its CSR
//! interface shows them: Avalon-MM, 32-bit words, `csr_address` the word address (the user
//! guide's byte offset / 4: the receive path from byte 0x0000, the transmit path from 0x4000),
//! a write taken in a cycle `waitrequest` is low. The register map and the meanings below are the
//! 10-Gbps Ethernet MAC user guide's; the reset values are those Intel's MAC documentation gives
//! for this map (the legacy MAC's guide leaves some unsaid, so the card writes every setting it
//! depends on). Settings other than the transfer controls are to be written with the paths
//! stopped ("configure before you enable"): a write while a path runs is a violation. The
//! registers of the receive and transmit paths sit behind bridges in those paths' clocks: while
//! the MAC's paths are in reset (`in_reset`), `waitrequest` stays high.

use std::collections::BTreeMap;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// (word address, name, reset value).
pub const REGISTERS: [(u16, &str, u32); 12] = [
    (0x000, "rx_transfer_control", 0),
    (0x040, "rx_padcrc_control", 1),
    (0x080, "rx_crccheck_control", 2),
    (0x800, "rx_frame_control", 3),
    (0x801, "rx_frame_maxlength", 1518),
    (0x802, "rx_frame_addr0", 0),
    (0x803, "rx_frame_addr1", 0),
    (0x1000, "tx_transfer_control", 0),
    (0x1040, "tx_padins_control", 1),
    (0x1080, "tx_crcins_control", 3),
    (0x1200, "tx_addrins_control", 0),
    (0x1801, "tx_frame_maxlength", 1518),
];

pub struct MacCsr {
    pub regs: BTreeMap<u16, u32>,
    /// Probability that `waitrequest` is high in a cycle.
    pub stall: f64,
    rng: StdRng,
    waitrequest: bool,
    /// The MAC's transmit and receive resets.
    pub in_reset: bool,
    pub writes: Vec<(u16, u32)>,
    pub violations: Vec<String>,
}

impl MacCsr {
    pub fn new(stall: f64, seed: u64) -> Self {
        Self {
            regs: REGISTERS.iter().map(|&(a, _, v)| (a, v)).collect(),
            stall,
            rng: StdRng::seed_from_u64(seed),
            waitrequest: true,
            in_reset: true,
            writes: vec![],
            violations: vec![],
        }
    }

    pub fn reg(&self, name: &str) -> u32 {
        let a = REGISTERS
            .iter()
            .find(|r| r.1 == name)
            .expect("a register")
            .0;
        self.regs[&a]
    }

    /// `waitrequest` in this cycle.
    pub fn waitrequest(&self) -> bool {
        self.waitrequest
    }

    /// One cycle: the master's write (if any) under this cycle's `waitrequest`; then the next
    /// cycle's `waitrequest`.
    pub fn tick(&mut self, write: Option<(u16, u32)>) {
        if let Some((address, value)) = write.filter(|_| !self.waitrequest) {
            self.writes.push((address, value));
            let running = self.regs[&0x000] & 1 == 0 || self.regs[&0x1000] & 1 == 0;
            let transfer = address == 0x000 || address == 0x1000;
            match self.regs.get_mut(&address) {
                None => self.violations.push(format!(
                    "a write of {value:#x} to word {address:#x}: no register there"
                )),
                Some(r) => {
                    if running && !transfer {
                        self.violations
                            .push(format!("word {address:#x} written with a path running"));
                    }
                    *r = value;
                }
            }
        }
        self.waitrequest = self.in_reset || self.rng.gen_bool(self.stall);
    }
}

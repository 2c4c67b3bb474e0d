//! Resource estimate of the gateware with yosys (`synth_intel_alm -family cyclonev`: yosys has no
//! Stratix V flow, and Cyclone V's ALM is its nearest kin), beside the paper's Table 1.
//!
//! The synthesis itself is `crate::synth` (shared with the timing walk, and cached).
//!
//! What is counted: ALUTs (every LUT cell, arithmetic ones included), registers (flip-flops),
//! M10K blocks. The vendor IP (MAC, PHY, PCIe Hard IP) is not in our Verilog and not counted.

use anyhow::{Context, Result};
use serde_json::Value;

/// Cells of one synthesized design.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Cells {
    pub aluts: u64,
    pub registers: u64,
    pub m10k: u64,
    pub mlab: u64,
}

impl Cells {
    pub fn times(self, n: u64) -> Cells {
        Cells {
            aluts: self.aluts * n,
            registers: self.registers * n,
            m10k: self.m10k * n,
            mlab: self.mlab * n,
        }
    }
    pub fn plus(self, o: Cells) -> Cells {
        Cells {
            aluts: self.aluts + o.aluts,
            registers: self.registers + o.registers,
            m10k: self.m10k + o.m10k,
            mlab: self.mlab + o.mlab,
        }
    }

    /// The counts in yosys's `stat -json` output (the design's totals).
    pub fn from_stat_json(json: &str) -> Result<Cells> {
        let v: Value = serde_json::from_str(json).context("yosys stat -json output")?;
        let cells = v["design"]["num_cells_by_type"]
            .as_object()
            .context("no design cell counts in yosys stat output")?;
        let mut c = Cells::default();
        for (name, n) in cells {
            let n = n.as_u64().unwrap_or(0);
            match name.as_str() {
                "MISTRAL_FF" => c.registers += n,
                "MISTRAL_M10K" => c.m10k += n,
                "MISTRAL_MLAB" => c.mlab += n,
                "MISTRAL_NOT" => c.aluts += n,
                other if other.starts_with("MISTRAL_ALUT") => c.aluts += n,
                _ => {}
            }
        }
        Ok(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_are_counted_from_yosys_stat() {
        let json = r#"{"design": {"num_cells_by_type": {"MISTRAL_ALUT2": 7, "MISTRAL_ALUT6": 1,
            "MISTRAL_ALUT_ARITH": 164, "MISTRAL_NOT": 4, "MISTRAL_FF": 203, "MISTRAL_M10K": 2,
            "MISTRAL_IB": 54}}}"#;
        let c = Cells::from_stat_json(json).unwrap();
        assert_eq!(
            c,
            Cells {
                aluts: 176,
                registers: 203,
                m10k: 2,
                mlab: 0
            }
        );
        assert_eq!(c.times(4).aluts, 704);
        assert!(Cells::from_stat_json("{}").is_err());
    }
}

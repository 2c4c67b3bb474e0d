//! A board description (`boards/<name>.toml`): the FPGA, its clocks, the PCIe and SFP+ pins, the
//! status LEDs and the fan. Data only: the generators read it, and no pin is named anywhere else.

use std::path::{Path, PathBuf};

use nanet_contract::pcie::PcieVariant;
use serde::Deserialize;

#[derive(Debug, thiserror::Error)]
pub enum BoardError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("{board}: {message}")]
    Invalid { board: String, message: String },
    #[error("no board {name:?} in {dir}: known boards are {known}")]
    Unknown {
        name: String,
        dir: PathBuf,
        known: String,
    },
}

/// A top-level port on a pin.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Pin {
    pub port: String,
    pub pin: String,
    pub io_standard: String,
}

/// A clock input on a pin.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ClockPin {
    pub port: String,
    pub pin: String,
    pub io_standard: String,
    pub mhz: f64,
}

impl ClockPin {
    pub fn as_pin(&self) -> Pin {
        Pin {
            port: self.port.clone(),
            pin: self.pin.clone(),
            io_standard: self.io_standard.clone(),
        }
    }
    pub fn period_ns(&self) -> f64 {
        1000.0 / self.mhz
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pcie {
    /// The highest PCIe generation the board's edge and the FPGA's Hard IP run (the card's
    /// variant may be this or older).
    pub generation: u32,
    /// Lanes of the edge connector (the card's variant must use them all).
    pub lanes: usize,
    pub refclk: ClockPin,
    pub perst_n: Pin,
    pub lane_io_standard: String,
    pub rx_pins: Vec<String>,
    pub tx_pins: Vec<String>,
}

/// The PLL that makes the management clock from the board's oscillator.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ManagementPll {
    pub mhz: f64,
}

impl ManagementPll {
    pub fn period_ns(&self) -> f64 {
        1000.0 / self.mhz
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Si570 {
    pub scl: Pin,
    pub sda: Pin,
}

/// One SFP+ cage: its transceiver pins (positive leg) and its control pins.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sfp {
    pub cage: String,
    pub rx: String,
    pub tx: String,
    pub los: String,
    pub mod0_prsnt_n: String,
    pub tx_disable: String,
    pub tx_fault: String,
    pub ratesel: [String; 2],
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SfpIo {
    pub lane_io_standard: String,
    pub control_io_standard: String,
}

/// A vector of LEDs, one per port.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LedVector {
    pub port: String,
    pub pins: Vec<String>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Leds {
    pub active_low: bool,
    pub io_standard: String,
    pub link: LedVector,
    pub activity: LedVector,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Board {
    pub name: String,
    pub title: String,
    pub family: String,
    pub device: String,
    pub top: String,
    pub default_io_standard: String,
    /// The free-running oscillator the management PLL runs from.
    pub management_clock: ClockPin,
    /// The management clock: reset sequencing, the MAC's registers, PHY management and
    /// transceiver reconfiguration (Intel: 100 to 125 MHz for the reconfiguration controller).
    pub management_pll: ManagementPll,
    pub reset_button: Pin,
    /// The board's fan switch, driven high (fan on).
    pub fan: Pin,
    pub pcie: Pcie,
    pub sfp_refclk: ClockPin,
    pub si570: Si570,
    pub sfp: Vec<Sfp>,
    pub sfp_io: SfpIo,
    pub leds: Leds,
    /// Hand-written timing sources in `constraints/`, copied into the project after the
    /// generated `.sdc`.
    pub constraints: Vec<String>,
}

/// A port of a board top: a name (with `[i]` for a bit of a vector), its pin, its I/O standard.
#[derive(Clone, Debug, PartialEq)]
pub struct PinAssignment {
    pub port: String,
    pub pin: String,
    pub io_standard: String,
}

impl Board {
    /// Reads and checks `path`.
    pub fn load(path: &Path) -> Result<Board, BoardError> {
        let text = std::fs::read_to_string(path).map_err(|source| BoardError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let board: Board = toml::from_str(&text).map_err(|e| BoardError::Parse {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        board.check()?;
        Ok(board)
    }

    /// The board `name` from the descriptions in `dir` (`dir/<name>.toml`).
    pub fn named(dir: &Path, name: &str) -> Result<Board, BoardError> {
        let path = dir.join(format!("{name}.toml"));
        if !path.exists() {
            let mut known: Vec<String> = std::fs::read_dir(dir)
                .map(|d| {
                    d.filter_map(|e| e.ok())
                        .filter_map(|e| {
                            let p = e.path();
                            (p.extension()? == "toml")
                                .then(|| p.file_stem()?.to_str().map(String::from))?
                        })
                        .collect()
                })
                .unwrap_or_default();
            known.sort();
            return Err(BoardError::Unknown {
                name: name.to_string(),
                dir: dir.to_path_buf(),
                known: known.join(", "),
            });
        }
        Board::load(&path)
    }

    /// The most ports the board can have (its SFP+ cages).
    pub fn max_ports(&self) -> usize {
        self.sfp.len()
    }

    /// Whether the board runs the card's PCIe `variant`: its lanes, at most the board's
    /// generation.
    pub fn check_pcie(&self, variant: PcieVariant) -> Result<(), BoardError> {
        let p = &self.pcie;
        if variant.generation() > p.generation || variant.lanes() as usize != p.lanes {
            return Err(self.invalid(format!(
                "{} runs PCIe up to Gen{} x{}, not {}",
                self.title,
                p.generation,
                p.lanes,
                variant.describe()
            )));
        }
        Ok(())
    }

    fn invalid(&self, message: String) -> BoardError {
        BoardError::Invalid {
            board: self.name.clone(),
            message,
        }
    }

    fn check(&self) -> Result<(), BoardError> {
        let p = &self.pcie;
        if p.rx_pins.len() != p.lanes || p.tx_pins.len() != p.lanes {
            return Err(self.invalid(format!(
                "PCIe x{} needs {} rx and tx pins, the description has {} and {}",
                p.lanes,
                p.lanes,
                p.rx_pins.len(),
                p.tx_pins.len()
            )));
        }
        if !PcieVariant::ALL
            .iter()
            .any(|v| v.generation() <= p.generation && v.lanes() as usize == p.lanes)
        {
            return Err(self.invalid(format!(
                "the card's TLP layer runs {}; the board's PCIe is Gen{} x{}",
                PcieVariant::ALL.map(|v| v.describe()).join(" or "),
                p.generation,
                p.lanes
            )));
        }
        if self.management_pll.mhz != nanet_hdl::board::glue::DE5NET_MGMT_MHZ {
            return Err(self.invalid(format!(
                "the management clock must be {} MHz (in the transceiver reconfiguration \
                 controller's 100 to 125 MHz; the board glue's power-on, I2C and settling times \
                 are counted in its cycles), not {} MHz",
                nanet_hdl::board::glue::DE5NET_MGMT_MHZ,
                self.management_pll.mhz
            )));
        }
        if self.sfp.is_empty() || self.sfp.len() > nanet_contract::rx::MAX_PORTS {
            return Err(self.invalid(format!(
                "{} SFP+ cages: the card has 1 to {} ports",
                self.sfp.len(),
                nanet_contract::rx::MAX_PORTS
            )));
        }
        for v in [&self.leds.link, &self.leds.activity] {
            if v.pins.len() < self.sfp.len() {
                return Err(self.invalid(format!(
                    "{} has {} LEDs for {} ports",
                    v.port,
                    v.pins.len(),
                    self.sfp.len()
                )));
            }
        }
        let mut seen = std::collections::HashMap::new();
        for a in self.all_pins() {
            if let Some(other) = seen.insert(a.pin.clone(), a.port.clone()) {
                return Err(self.invalid(format!(
                    "pin {} is given to both {other} and {}",
                    a.pin, a.port
                )));
            }
        }
        Ok(())
    }

    /// Every pin the board description names, whichever port count is built.
    fn all_pins(&self) -> Vec<PinAssignment> {
        self.pins(self.sfp.len())
    }

    /// The SFP+ cage signal names of cage `c`: `SFP<c>_<what>`.
    pub fn sfp_port(cage: &Sfp, what: &str) -> String {
        format!("SFP{}_{what}", cage.cage)
    }

    /// The pin assignments of the board top for a card of `ports` ports (the first `ports`
    /// cages; LEDs always whole, those of absent ports stay off).
    pub fn pins(&self, ports: usize) -> Vec<PinAssignment> {
        let a = |port: String, pin: &str, io: &str| PinAssignment {
            port,
            pin: pin.to_string(),
            io_standard: io.to_string(),
        };
        let from = |p: &Pin| a(p.port.clone(), &p.pin, &p.io_standard);
        let mut out = vec![
            from(&self.management_clock.as_pin()),
            from(&self.reset_button),
            from(&self.fan),
            from(&self.si570.scl),
            from(&self.si570.sda),
            from(&self.pcie.refclk.as_pin()),
            from(&self.pcie.perst_n),
        ];
        for (i, pin) in self.pcie.rx_pins.iter().enumerate() {
            out.push(a(
                format!("PCIE_RX_p[{i}]"),
                pin,
                &self.pcie.lane_io_standard,
            ));
        }
        for (i, pin) in self.pcie.tx_pins.iter().enumerate() {
            out.push(a(
                format!("PCIE_TX_p[{i}]"),
                pin,
                &self.pcie.lane_io_standard,
            ));
        }
        out.push(from(&self.sfp_refclk.as_pin()));
        let (lane, ctl) = (
            &self.sfp_io.lane_io_standard,
            &self.sfp_io.control_io_standard,
        );
        for cage in &self.sfp[..ports] {
            let s = |w: &str| Self::sfp_port(cage, w);
            out.push(a(s("RX_p"), &cage.rx, lane));
            out.push(a(s("TX_p"), &cage.tx, lane));
            out.push(a(s("LOS"), &cage.los, ctl));
            out.push(a(s("MOD0_PRSNT_n"), &cage.mod0_prsnt_n, ctl));
            out.push(a(s("TXDISABLE"), &cage.tx_disable, ctl));
            out.push(a(s("TXFAULT"), &cage.tx_fault, ctl));
            for (i, pin) in cage.ratesel.iter().enumerate() {
                out.push(a(format!("{}[{i}]", s("RATESEL")), pin, ctl));
            }
        }
        for v in [&self.leds.link, &self.leds.activity] {
            for (i, pin) in v.pins.iter().enumerate() {
                out.push(a(format!("{}[{i}]", v.port), pin, &self.leds.io_standard));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn boards_dir() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
    }

    #[test]
    fn the_de5net_description_reads_and_checks() {
        let b = Board::named(&boards_dir(), "de5net").unwrap();
        assert_eq!(b.device, "5SGXEA7N2F45C2");
        assert_eq!(b.max_ports(), 4);
        // 4 clock/reset pins, the fan, the Si570's I2C, 16 PCIe lanes, the SFP reference, 8 per
        // cage, 8 LEDs.
        assert_eq!(b.pins(4).len(), 7 + 16 + 1 + 4 * 8 + 8);
        assert_eq!(b.pins(1).len(), 7 + 16 + 1 + 8 + 8);
    }

    #[test]
    fn an_unknown_board_names_the_known_ones() {
        let e = Board::named(&boards_dir(), "nope").unwrap_err().to_string();
        assert!(e.contains("de5net"), "{e}");
    }

    #[test]
    fn a_pin_given_twice_is_refused() {
        let path = boards_dir().join("de5net.toml");
        let text = std::fs::read_to_string(&path)
            .unwrap()
            .replace("los = \"F22\"", "los = \"AW35\"");
        let dir = std::env::temp_dir().join(format!("nanet-board-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("twice.toml"), text).unwrap();
        let e = Board::named(&dir, "twice").unwrap_err().to_string();
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(e.contains("pin AW35 is given to both"), "{e}");
    }
}

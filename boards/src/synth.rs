//! yosys synthesis for Intel ALMs, for the resource estimate and the timing walk, and cached: a
//! design whose Verilog and mapping have not changed is not synthesized again (the four-port card
//! takes 13-19 minutes alone).
//!
//! The flow: `synth_intel_alm -family cyclonev` (yosys has no Stratix V flow; Cyclone V's ALM is
//! its nearest kin) with `-noclkbuf` (clock nets keep their port names), `-noiopad` and `-nodsp`
//! (the walk times LUTs, carry chains, flip-flops and memories), then `stat -json` and
//! `write_json`.
//!
//! Two mappings (`Mapping`), by what the result is for. yosys's own abc script maps every path for
//! the least delay, then recovers area on every path up to the delay of the slowest one (abc has
//! one required time for the whole netlist): the fewest LUTs, what the resource estimate wants.
//! For timing that is wrong: the slowest path here is a carry chain with logic around it (about
//! 5.3 ns in abc's model, nearly nine LUTs' worth), so paths of five LUTs were mapped six, seven or
//! eight deep, differently on every synthesis (the same logic measured 6 to 8 levels as unrelated
//! code changed). A timing-driven tool such as Quartus holds each path to its clock's constraint
//! instead. The timing mapping keeps every path at its own least delay (abc's `&if -t`: each
//! output's required time is its own best arrival) and recovers area only within that; the
//! one-port card of an earlier gateware measured 6 endpoints over budget at 6 levels so, against
//! 290 at 7 levels with the area mapping, for 16% more LUTs.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

use crate::resources::Cells;

/// The synthesis command (the top module is added).
pub const FLOW: &str = "synth_intel_alm -family cyclonev -noclkbuf -noiopad -nodsp";

/// How abc maps the logic into LUTs (see the module's header).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mapping {
    /// yosys's default abc9 script: least delay, then area recovered up to the slowest path's delay.
    Area,
    /// Every path at its own least delay, area recovered only within that.
    Depth,
}

impl Mapping {
    /// The abc9 script (yosys's default with `-t` for `Depth`), or None for yosys's default.
    fn abc_script(self) -> Option<&'static str> {
        match self {
            Mapping::Area => None,
            Mapping::Depth => Some("&scorr; &sweep; &dc2; &dch -f; &ps; &if -W 600 -t -v; &mfs"),
        }
    }

    /// The flow as the reports name it.
    pub fn flow(self) -> String {
        match self.abc_script() {
            None => FLOW.to_string(),
            Some(abc) => format!("{FLOW}, abc9 script \"{abc}\""),
        }
    }
}

/// A synthesized design: its cell counts and its JSON netlist.
#[derive(Clone, Debug)]
pub struct Synthesized {
    pub cells: Cells,
    pub netlist: PathBuf,
    /// yosys's log (and, when the result came from the cache, the log of the run that made it).
    pub log: PathBuf,
    /// Whether this call ran yosys (false: the cache had it).
    pub ran: bool,
}

/// 64-bit FNV-1a: the cache key of a design's Verilog (stable across builds and machines).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Synthesizes module `top` of `verilog`, in `cache/<top>-<hash>/` (reused when it holds a
/// finished run of the same text and mapping).
pub fn synthesize(cache: &Path, verilog: &str, top: &str, mapping: Mapping) -> Result<Synthesized> {
    // The key covers the flow too: a change of options is a new synthesis.
    let key = fnv1a(format!("{}\n{verilog}", mapping.flow()).as_bytes());
    let dir = cache.join(format!("{top}-{key:016x}"));
    let netlist = dir.join("netlist.json");
    let stat = dir.join("stat.json");
    let log = dir.join("yosys.log");
    let ran = !(netlist.exists() && stat.exists());
    if ran {
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let source = dir.join(format!("{top}.v"));
        std::fs::write(&source, verilog)
            .with_context(|| format!("writing {}", source.display()))?;
        // Written under temporary names and renamed at the end: an interrupted run leaves no
        // half-written netlist behind to be taken for a finished one.
        let (stat_tmp, netlist_tmp) = (dir.join("stat.json.tmp"), dir.join("netlist.json.tmp"));
        // abc's script goes in a file: yosys would split it at its semicolons.
        let abc = match mapping.abc_script() {
            None => String::new(),
            Some(text) => {
                let file = dir.join("map.abc");
                std::fs::write(&file, text)
                    .with_context(|| format!("writing {}", file.display()))?;
                format!("scratchpad -set abc9.script {}; ", file.display())
            }
        };
        let script = format!(
            "read_verilog {}; {abc}{FLOW} -top {top}; tee -q -o {} stat -json; write_json {}",
            source.display(),
            stat_tmp.display(),
            netlist_tmp.display()
        );
        let out = Command::new("yosys")
            .args(["-q", "-l"])
            .arg(&log)
            .args(["-p", &script])
            .output()
            .context("running yosys (`make tools` installs it)")?;
        if !out.status.success() {
            bail!(
                "yosys failed on {top} (see {}): {}",
                log.display(),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::fs::rename(&stat_tmp, &stat)?;
        std::fs::rename(&netlist_tmp, &netlist)?;
    }
    let json = std::fs::read_to_string(&stat).with_context(|| format!("{}", stat.display()))?;
    Ok(Synthesized {
        cells: Cells::from_stat_json(&json)?,
        netlist,
        log,
        ran,
    })
}

#[cfg(test)]
mod tests {
    use super::fnv1a;

    #[test]
    fn the_cache_key_is_fnv1a() {
        // The published test vectors of 64-bit FNV-1a.
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a(b"foobar"), 0x8594_4171_f739_67e8);
    }
}

//! The timing debt: groups of paths known to be over budget while the card is being pipelined,
//! each with the most levels tolerated (`boards/timing-debt.toml`). A ratchet: a group over budget
//! that is not listed, deeper than listed, or listed with more levels than it now has, is an
//! error; the file shrinks to nothing as the pipelining lands.

use serde::Deserialize;

use super::Report;

#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Debt {
    /// The design as `nanet-timing` labels it (`nanet_nic, 1 port`).
    pub design: String,
    /// The group as the report describes it (`core_clock register to register`).
    pub paths: String,
    pub max_levels: u16,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DebtFile {
    /// Levels a group may move either way without failing: abc maps the whole netlist anew on
    /// every synthesis, and an unrelated one-line change has moved untouched paths (by up to three
    /// levels with yosys's default mapping, by one with the timing mapping of `crate::synth`).
    #[serde(default)]
    pub noise_levels: u16,
    #[serde(default)]
    pub over_budget: Vec<Debt>,
}

impl DebtFile {
    pub fn parse(text: &str) -> anyhow::Result<DebtFile> {
        Ok(toml::from_str(text)?)
    }

    /// What is wrong with `reports` (labelled by design) against this debt; empty when every
    /// group is within its budget or its listed debt, and no listed debt could be lowered.
    /// Entries for designs not among `reports` are not checked.
    pub fn problems(&self, reports: &[(String, Report)]) -> Vec<String> {
        let mut out = vec![];
        for (design, r) in reports {
            if !r.unsynchronized.is_empty() {
                out.push(format!(
                    "{design}: {} registers take another clock's signal unsynchronized (never \
                     tolerated), e.g. {} ({} -> {})",
                    r.unsynchronized.len(),
                    r.unsynchronized[0].register,
                    r.unsynchronized[0].from,
                    r.unsynchronized[0].to
                ));
            }
            for d in self.over_budget.iter().filter(|d| &d.design == design) {
                if !r.groups.iter().any(|g| g.kind.describe() == d.paths) {
                    out.push(format!(
                        "{design}: {} has no paths any more: remove its entry from the debt file",
                        d.paths
                    ));
                }
            }
            for g in &r.groups {
                let paths = g.kind.describe();
                let debt = self
                    .over_budget
                    .iter()
                    .find(|d| &d.design == design && d.paths == paths);
                let budget = g
                    .budget
                    .map_or("none allowed".to_string(), |b| format!("budget {b}"));
                match debt {
                    None if !g.passes() => out.push(format!(
                        "{design}: {paths}: {} levels ({budget}), {} endpoints over budget",
                        g.max_levels, g.over_budget
                    )),
                    None => {}
                    Some(_) if g.passes() => out.push(format!(
                        "{design}: {paths} is within budget now: remove its entry from the debt file"
                    )),
                    Some(d) if g.max_levels > d.max_levels + self.noise_levels => out.push(format!(
                        "{design}: {paths}: {} levels, deeper than the {} tolerated ({budget})",
                        g.max_levels, d.max_levels
                    )),
                    Some(d) if g.max_levels + self.noise_levels < d.max_levels => out.push(format!(
                        "{design}: {paths}: {} levels now: lower its entry in the debt file from {}",
                        g.max_levels, d.max_levels
                    )),
                    Some(_) => {}
                }
            }
        }
        out
    }
}

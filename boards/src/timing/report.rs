//! A timing report as text (for people) and JSON (`target/bench/timing.json`).

use std::fmt::Write;

use serde_json::{json, Value};

use super::walk::Step;
use super::{Group, PathKind, Report, STRATIX_V_SPEEDUP};

/// How many blocks and endpoints the text lists per group.
const LIST: usize = 12;

fn ns(ps: u32) -> f64 {
    ps as f64 / 1000.0
}

/// The Stratix V C2 estimate of a Cyclone V delay.
fn stratix_ns(ps: u32) -> f64 {
    ns(ps) / STRATIX_V_SPEEDUP
}

impl Report {
    /// The summary table, then for every group over budget its worst paths, the blocks and the
    /// deepest endpoints.
    pub fn text(&self, detail: bool) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "timing of {} (Cyclone V cell delays + {} ps per connection; Stratix V C2 = Cyclone V / {})",
            self.top, self.route_ps, STRATIX_V_SPEEDUP
        );
        let _ = writeln!(
            s,
            "  {:<44} {:>6} {:>9} {:>7} {:>6} {:>9} {:>13}",
            "paths", "budget", "endpoints", "over", "levels", "worst ns", "fmax (SV est)"
        );
        for g in &self.groups {
            let budget = g.budget.map_or("none".to_string(), |b| b.to_string());
            let fmax = match &g.kind {
                PathKind::Within(c) => {
                    let mhz = self
                        .clocks
                        .iter()
                        .find(|k| &k.name == c)
                        .map_or(0.0, |k| k.mhz);
                    format!("{:.0} MHz/{mhz}", 1000.0 / stratix_ns(g.worst_ps))
                }
                _ => String::new(),
            };
            let _ = writeln!(
                s,
                "{} {:<44} {:>6} {:>9} {:>7} {:>6} {:>9.2} {:>13}",
                if g.passes() { " " } else { "!" },
                g.kind.describe(),
                budget,
                g.endpoints,
                g.over_budget,
                g.max_levels,
                ns(g.worst_ps),
                fmax
            );
        }
        if !self.unsynchronized.is_empty() {
            let _ = writeln!(
                s,
                "! {} registers take another clock's signal with neither a second flip-flop nor an \
                 enable of their own clock:",
                self.unsynchronized.len()
            );
            for u in self.unsynchronized.iter().take(LIST) {
                let _ = writeln!(s, "    {} -> {}: {}", u.from, u.to, u.register);
            }
            if self.unsynchronized.len() > LIST {
                let _ = writeln!(s, "    ... and {} more", self.unsynchronized.len() - LIST);
            }
        }
        let _ = writeln!(
            s,
            "{}",
            if self.passes() {
                "every path within budget".to_string()
            } else {
                format!(
                    "OVER BUDGET: {} endpoints, {} unsynchronized registers (lines marked !)",
                    self.groups.iter().map(|g| g.over_budget).sum::<usize>(),
                    self.unsynchronized.len()
                )
            }
        );
        if detail {
            for g in self.groups.iter().filter(|g| !g.passes()) {
                group_detail(&mut s, g);
            }
        }
        s
    }

    pub fn json(&self) -> Value {
        let mut domains = serde_json::Map::new();
        for c in &self.clocks {
            let Some(g) = self
                .groups
                .iter()
                .find(|g| g.kind == PathKind::Within(c.name.clone()))
            else {
                continue;
            };
            domains.insert(
                c.name.clone(),
                json!({
                    "mhz": c.mhz,
                    "budget_levels": c.levels,
                    "max_levels": g.max_levels,
                    "worst_ns": stratix_ns(g.worst_ps),
                    "worst_ns_cyclone_v": ns(g.worst_ps),
                    "fmax_mhz": 1000.0 / stratix_ns(g.worst_ps),
                    "endpoints": g.endpoints,
                    "endpoints_over_budget": g.over_budget,
                }),
            );
        }
        let groups: Vec<Value> = self
            .groups
            .iter()
            .map(|g| {
                json!({
                    "paths": g.kind.describe(),
                    "budget_levels": g.budget,
                    "endpoints": g.endpoints,
                    "endpoints_over_budget": g.over_budget,
                    "max_levels": g.max_levels,
                    "worst_ns_cyclone_v": ns(g.worst_ps),
                    "endpoints_by_levels": g.histogram.iter()
                        .map(|(l, n)| (l.to_string(), json!(n))).collect::<serde_json::Map<_, _>>(),
                    "deepest_path": steps_json(&g.deepest_path),
                    "slowest_path": steps_json(&g.slowest_path),
                    "deepest_endpoints": g.deepest.iter()
                        .map(|(n, l, ps)| json!({"endpoint": n, "levels": l, "ns_cyclone_v": ns(*ps)}))
                        .collect::<Vec<_>>(),
                    "slowest_endpoints": g.slowest.iter()
                        .map(|(n, l, ps)| json!({"endpoint": n, "levels": l, "ns_cyclone_v": ns(*ps)}))
                        .collect::<Vec<_>>(),
                    "blocks_over_budget": g.blocks.iter()
                        .map(|(b, n, l)| json!({"block": b, "endpoints": n, "max_levels": l}))
                        .collect::<Vec<_>>(),
                })
            })
            .collect();
        json!({
            "top": self.top,
            "tool": format!(
                "yosys 0.23 {} (or, with --netlist, as that netlist was made), walked by \
                 nanet-timing",
                crate::synth::Mapping::Depth.flow()
            ),
            "caveat": "An estimate until Quartus runs: Cyclone V cell delays from yosys's cell \
                       library, a fixed routing delay per connection, scaled to a Stratix V C2.",
            "route_ps": self.route_ps,
            "stratix_v_speedup": STRATIX_V_SPEEDUP,
            "passes": self.passes(),
            "domains": domains,
            "unsynchronized": self.unsynchronized.iter()
                .map(|u| json!({"from": u.from, "to": u.to, "register": u.register}))
                .collect::<Vec<_>>(),
            "groups": groups,
        })
    }
}

fn steps_json(steps: &[Step]) -> Vec<Value> {
    steps
        .iter()
        .map(|st| {
            json!({"cell": st.cell, "pin": st.pin, "net": st.net, "levels": st.levels,
                   "ns_cyclone_v": ns(st.ps)})
        })
        .collect()
}

fn group_detail(s: &mut String, g: &Group) {
    let budget = match g.budget {
        Some(b) => format!("at most {b} levels"),
        None => "no such path allowed".to_string(),
    };
    let _ = writeln!(s, "\n== {} ({budget})", g.kind.describe());
    let _ = writeln!(s, "deepest path, {} levels:", g.max_levels);
    write_path(s, &g.deepest_path);
    if g.slowest_path.last() != g.deepest_path.last() {
        let _ = writeln!(s, "slowest path, {:.2} ns:", ns(g.worst_ps));
        write_path(s, &g.slowest_path);
    }
    for (block, path) in &g.focus {
        let levels = path.last().map_or(0, |st| st.levels);
        let _ = writeln!(s, "deepest path into {block}, {levels} levels:");
        write_path(s, path);
    }
    let _ = writeln!(s, "blocks with endpoints over budget (endpoints, deepest):");
    for (b, n, l) in g.blocks.iter().take(LIST) {
        let _ = writeln!(s, "  {n:>7} {l:>3}  {b}");
    }
    if g.blocks.len() > LIST {
        let _ = writeln!(s, "  ... and {} more blocks", g.blocks.len() - LIST);
    }
    let hist: Vec<String> = g
        .histogram
        .iter()
        .rev()
        .map(|(l, n)| format!("{l}:{n}"))
        .collect();
    let _ = writeln!(s, "endpoints by levels: {}", hist.join(" "));
    let _ = writeln!(s, "deepest registers (by their deepest bit):");
    for (n, l, ps) in g.deepest.iter().take(LIST) {
        let _ = writeln!(s, "  {l:>3} {:>7.2} ns  {n}", ns(*ps));
    }
    // (abc9 maps for delay and recovers area on every path up to the slowest one's delay.)
    let _ = writeln!(
        s,
        "slowest registers (by their slowest bit; other paths may deepen to their delay):"
    );
    for (n, l, ps) in g.slowest.iter().take(LIST) {
        let _ = writeln!(s, "  {l:>3} {:>7.2} ns  {n}", ns(*ps));
    }
}

fn write_path(s: &mut String, steps: &[Step]) {
    for st in steps {
        let _ = writeln!(
            s,
            "  {:>3} {:>7.2}  {:<40} {:<6} {}",
            st.levels,
            ns(st.ps),
            st.cell,
            st.pin,
            st.net
        );
    }
}

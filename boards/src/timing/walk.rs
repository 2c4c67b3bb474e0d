//! The static timing walk: arrival times and logic levels propagated from every start point
//! through the combinational arcs in topological order, kept apart per launching domain, so that
//! every endpoint knows its deepest and its slowest path from each domain that reaches it.

use anyhow::{bail, Result};

use super::graph::{Domain, Graph};

const NONE: u32 = u32::MAX;

/// The deepest and the slowest arrival at a net from one launching domain, each with the arc it
/// came through (`NONE` at the start point).
#[derive(Clone, Copy, Debug)]
pub struct Arrival {
    pub domain: Domain,
    pub levels: u16,
    /// The delay along the deepest path.
    pub levels_ps: u32,
    pub levels_arc: u32,
    pub ps: u32,
    pub ps_arc: u32,
}

/// One cell on a reported path: the net it drives and the totals at that net.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    /// The cell's type, name and source location, or "input" for a top-level port.
    pub cell: String,
    pub pin: String,
    pub net: String,
    pub levels: u16,
    pub ps: u32,
}

pub struct Walk<'g> {
    pub graph: &'g Graph,
    pub route_ps: u32,
    pub arrivals: Vec<Vec<Arrival>>,
}

impl<'g> Walk<'g> {
    /// Propagates arrivals; `route_ps` is added for every general routing connection (into a
    /// cell's input that is not on a carry chain, and into every endpoint).
    pub fn run(graph: &'g Graph, route_ps: u32) -> Result<Walk<'g>> {
        let n = graph.nets;
        let mut fanout: Vec<Vec<u32>> = vec![vec![]; n];
        let mut pending = vec![0u32; n];
        for (i, a) in graph.arcs.iter().enumerate() {
            fanout[a.from as usize].push(i as u32);
            pending[a.to as usize] += 1;
        }
        let mut arrivals: Vec<Vec<Arrival>> = vec![vec![]; n];
        for s in &graph.starts {
            merge(
                &mut arrivals[s.net as usize],
                Arrival {
                    domain: s.domain,
                    levels: 0,
                    levels_ps: s.ps,
                    levels_arc: NONE,
                    ps: s.ps,
                    ps_arc: NONE,
                },
            );
        }
        let mut ready: Vec<u32> = (0..n as u32)
            .filter(|&i| pending[i as usize] == 0)
            .collect();
        let mut done = 0usize;
        while let Some(net) = ready.pop() {
            done += 1;
            for &ai in &fanout[net as usize] {
                let a = &graph.arcs[ai as usize];
                let add = a.ps + if a.routed { route_ps } else { 0 };
                let step = u16::from(a.level);
                for k in 0..arrivals[net as usize].len() {
                    let from = arrivals[net as usize][k];
                    merge(
                        &mut arrivals[a.to as usize],
                        Arrival {
                            domain: from.domain,
                            levels: from.levels + step,
                            levels_ps: from.levels_ps + add,
                            levels_arc: ai,
                            ps: from.ps + add,
                            ps_arc: ai,
                        },
                    );
                }
                let p = &mut pending[a.to as usize];
                *p -= 1;
                if *p == 0 {
                    ready.push(a.to);
                }
            }
        }
        if done < n {
            let mut looped: Vec<String> = (0..n)
                .filter(|&i| pending[i] > 0)
                .take(8)
                .map(|i| graph.net_name(i as u32))
                .collect();
            looped.sort();
            bail!(
                "combinational loop in {}: {} nets never settle, among them {}",
                graph.top,
                n - done,
                looped.join(", ")
            );
        }
        Ok(Walk {
            graph,
            route_ps,
            arrivals,
        })
    }

    /// The path behind `arrival` at `net`, start first: the deepest one, or the slowest; levels
    /// and delays are summed along that path.
    pub fn path(&self, net: u32, arrival: &Arrival, deepest: bool) -> Vec<Step> {
        let g = self.graph;
        let mut chain = vec![];
        let mut net = net;
        let mut at = *arrival;
        loop {
            let arc = if deepest { at.levels_arc } else { at.ps_arc };
            if arc == NONE {
                break;
            }
            chain.push(arc);
            net = g.arcs[arc as usize].from;
            match self.arrivals[net as usize]
                .iter()
                .find(|p| p.domain == at.domain)
            {
                Some(p) => at = *p,
                None => break,
            }
        }
        let start = g
            .starts
            .iter()
            .find(|s| s.net == net && s.domain == at.domain);
        let mut ps = start.map_or(0, |s| s.ps);
        let mut levels = 0u16;
        let mut steps = vec![Step {
            cell: match start.and_then(|s| s.cell) {
                Some(c) => describe_cell(g, c),
                None => "input".to_string(),
            },
            pin: String::new(),
            net: g.net_name(net),
            levels,
            ps,
        }];
        for &ai in chain.iter().rev() {
            let a = &g.arcs[ai as usize];
            ps += a.ps + if a.routed { self.route_ps } else { 0 };
            levels += u16::from(a.level);
            // Along a carry chain: one line for the whole run.
            if a.pin == "CI" {
                if let Some(last) = steps.last_mut().filter(|l| l.pin.starts_with("CI")) {
                    let bits = last.pin.trim_start_matches("CI x").parse().unwrap_or(1) + 1;
                    last.pin = format!("CI x{bits}");
                    last.net = g.net_name(a.to);
                    last.ps = ps;
                    continue;
                }
            }
            steps.push(Step {
                cell: describe_cell(g, a.cell),
                pin: a.pin.to_string(),
                net: g.net_name(a.to),
                levels,
                ps,
            });
        }
        steps
    }
}

fn describe_cell(g: &Graph, c: u32) -> String {
    let cell = &g.cells[c as usize];
    let kind = cell.kind.trim_start_matches("MISTRAL_");
    // The Verilog file's name and the line range, without the folder.
    let src = super::graph::design_src(&cell.src);
    let src = src.rsplit('/').next().unwrap_or(src);
    if src.is_empty() {
        kind.to_string()
    } else {
        format!("{kind} ({src})")
    }
}

/// Keeps, per domain, the deepest arrival (slowest among equally deep) and the slowest one.
fn merge(list: &mut Vec<Arrival>, new: Arrival) {
    match list.iter_mut().find(|a| a.domain == new.domain) {
        None => list.push(new),
        Some(a) => {
            if (new.levels, new.levels_ps) > (a.levels, a.levels_ps) {
                a.levels = new.levels;
                a.levels_ps = new.levels_ps;
                a.levels_arc = new.levels_arc;
            }
            if new.ps > a.ps {
                a.ps = new.ps;
                a.ps_arc = new.ps_arc;
            }
        }
    }
}

//! `make timing`: a static timing estimate of the generated Verilog. yosys maps a design to Intel
//! ALM cells (`crate::synth`: `synth_intel_alm -family cyclonev -noclkbuf`, flattened) and writes
//! the netlist as JSON; this module walks it register to register per clock domain.
//!
//! What is measured, per (launching, capturing) domain pair:
//! - logic levels: a LUT is a level, a carry chain one level where it is entered (the carry inside
//!   it adds delay, not levels), an MLAB's asynchronous read a level;
//! - delay: the Cyclone V cell delays of yosys's cell library ([`cells`]), plus [`ROUTE_PS`] for
//!   every routed connection, from a register's clock-to-output to the capturing pin;
//! - an Fmax estimate for a Stratix V C2: the Cyclone V delay divided by [`STRATIX_V_SPEEDUP`].
//!
//! The budgets are those of `DESIGN.md` ("Timing"): a clock's levels register to register, at most
//! [`IO_LEVELS`] from a top-level input to its first register or from a last register to an output,
//! no path from an input straight to an output, and no logic on a path from one clock's register to
//! another clock's (a synchronizer or a FIFO memory: a memory's contents launch nothing, see
//! [`cells::Role::Memory`]). The levels are the gate; the delay is reported.

pub mod cells;
pub mod debt;
pub mod graph;
pub mod report;
pub mod walk;

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use anyhow::{bail, Context, Result};

use graph::{Domain, Graph};
use walk::{Step, Walk};

/// Levels allowed between a top-level port and its first or last register.
pub const IO_LEVELS: u16 = 3;
/// Routing delay per connection (ps): nextpnr-mistral's Cyclone V estimates put a hop of general
/// routing at 200-370 ps; a connection is often two hops.
pub const ROUTE_PS: u32 = 600;
/// How much faster a Stratix V C2 runs the same logic than a Cyclone V: Intel's NCO IP user guide
/// (683406, "Performance and Resource Utilization") lists the same cores at 260-275 MHz on Cyclone
/// V and 500-700 MHz on Stratix V, a ratio of about 1.8 to 2.5; the low end of the ratio is taken.
pub const STRATIX_V_SPEEDUP: f64 = 2.0;

/// A clock and its budget.
#[derive(Clone, Debug, PartialEq)]
pub struct ClockBudget {
    /// The clock's net name; a budget also covers clocks whose name starts with it.
    pub name: String,
    pub mhz: f64,
    pub levels: u16,
}

impl ClockBudget {
    pub fn new(name: &str, mhz: f64, levels: u16) -> ClockBudget {
        ClockBudget {
            name: name.to_string(),
            mhz,
            levels,
        }
    }

    /// `NAME=MHZ:LEVELS`, as given on the command line.
    pub fn parse(s: &str) -> Result<ClockBudget> {
        let parsed = s.split_once('=').and_then(|(name, rest)| {
            let (mhz, levels) = rest.split_once(':')?;
            Some(ClockBudget::new(
                name,
                mhz.parse().ok()?,
                levels.parse().ok()?,
            ))
        });
        parsed.with_context(|| format!("a clock budget is NAME=MHZ:LEVELS, not {s:?}"))
    }
}

/// The card's clocks: the PCIe Hard IP's 250 MHz core domain and the MACs' 156.25 MHz network
/// domains.
pub fn card_clocks() -> Vec<ClockBudget> {
    vec![
        ClockBudget::new("core_clock", 250.0, 5),
        ClockBudget::new("net_clock", 156.25, 8),
    ]
}

/// The kind of a group of paths, by where they start and end.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PathKind {
    /// Register to register within one clock.
    Within(String),
    InputToRegister(String),
    RegisterToOutput(String),
    InputToOutput,
    /// From a register of one clock to a register of another.
    Crossing {
        from: String,
        to: String,
    },
}

impl PathKind {
    pub fn describe(&self) -> String {
        match self {
            PathKind::Within(c) => format!("{c} register to register"),
            PathKind::InputToRegister(c) => format!("inputs to {c} registers"),
            PathKind::RegisterToOutput(c) => format!("{c} registers to outputs"),
            PathKind::InputToOutput => "inputs straight to outputs".to_string(),
            PathKind::Crossing { from, to } => format!("crossing {from} -> {to}"),
        }
    }
}

/// Every path of one kind.
#[derive(Clone, Debug)]
pub struct Group {
    pub kind: PathKind,
    /// Levels allowed; `None`: no such path is allowed at all.
    pub budget: Option<u16>,
    pub endpoints: usize,
    pub over_budget: usize,
    pub max_levels: u16,
    /// The slowest path's Cyclone V delay.
    pub worst_ps: u32,
    /// Endpoints by the depth of their deepest path.
    pub histogram: BTreeMap<u16, usize>,
    pub deepest_path: Vec<Step>,
    pub slowest_path: Vec<Step>,
    /// The deepest endpoints: name, levels, Cyclone V delay.
    pub deepest: Vec<(String, u16, u32)>,
    /// The slowest endpoints: name, levels of their slowest path, its Cyclone V delay. (abc9 maps
    /// for delay and recovers area up to the slowest path's delay: the slowest paths set how deep
    /// the others may become.)
    pub slowest: Vec<(String, u16, u32)>,
    /// Endpoints over budget by block (the hierarchy above the register): block, count, deepest.
    pub blocks: Vec<(String, usize, u16)>,
    /// For each block asked about (`--into`), the deepest path ending in it, if any.
    pub focus: Vec<(String, Vec<Step>)>,
}

impl Group {
    pub fn passes(&self) -> bool {
        self.over_budget == 0
    }
}

/// A register that takes another clock's signal and uses it at once: neither the first stage of
/// a two-flop synchronizer (whose output goes only into a second register of its clock) nor a
/// capture qualified by its own clock's logic through its enable or synchronous clear (data held
/// stable by a handshake).
#[derive(Clone, Debug, PartialEq)]
pub struct Unsynchronized {
    pub from: String,
    pub to: String,
    pub register: String,
}

/// The outcome of a walk over one design.
#[derive(Clone, Debug)]
pub struct Report {
    pub top: String,
    pub route_ps: u32,
    pub clocks: Vec<ClockBudget>,
    pub groups: Vec<Group>,
    pub unsynchronized: Vec<Unsynchronized>,
}

impl Report {
    pub fn passes(&self) -> bool {
        self.groups.iter().all(Group::passes) && self.unsynchronized.is_empty()
    }
}

/// How many of the deepest endpoints a group lists.
const DEEPEST: usize = 20;

/// Walks `graph` against the budgets of `budgets` (every clock of the design needs one).
pub fn analyze(graph: &Graph, budgets: &[ClockBudget], route_ps: u32) -> Result<Report> {
    analyze_into(graph, budgets, route_ps, &[])
}

/// As [`analyze`], with the deepest path into each of the blocks `focus` (hierarchical name
/// prefixes such as `rx.fifos$0.meta_ram`) in every group.
pub fn analyze_into(
    graph: &Graph,
    budgets: &[ClockBudget],
    route_ps: u32,
    focus: &[String],
) -> Result<Report> {
    let mut clocks = vec![];
    for name in &graph.clocks {
        match budgets.iter().find(|b| name.starts_with(&b.name)) {
            Some(b) => clocks.push(ClockBudget::new(name, b.mhz, b.levels)),
            None => bail!(
                "{} has clock {name} but no budget for it; give one as --clock {name}=MHZ:LEVELS",
                graph.top
            ),
        }
    }
    let walk = Walk::run(graph, route_ps)?;
    let clock = |d: Domain| match d {
        Domain::Clock(i) => Some(clocks[i as usize].clone()),
        Domain::Ports => None,
    };

    struct Hit {
        end: usize,
        arrival: walk::Arrival,
        ps: u32,
    }
    /// The first `DEEPEST` registers of `hits` in order, each once (by its first bit), with the
    /// levels and delay `measure` gives.
    fn each_register_once(
        graph: &Graph,
        hits: &[Hit],
        measure: impl Fn(&Hit) -> (u16, u32),
    ) -> Vec<(String, u16, u32)> {
        let mut seen = std::collections::HashSet::new();
        hits.iter()
            .filter(|h| {
                let name = graph.end_name(&graph.ends[h.end]);
                seen.insert(name.split('[').next().unwrap_or(&name).to_string())
            })
            .take(DEEPEST)
            .map(|h| {
                let (levels, ps) = measure(h);
                (graph.end_name(&graph.ends[h.end]), levels, ps)
            })
            .collect()
    }
    let mut by_kind: BTreeMap<PathKind, Vec<Hit>> = BTreeMap::new();
    let mut budget_of: HashMap<PathKind, Option<u16>> = HashMap::new();
    for (ei, e) in graph.ends.iter().enumerate() {
        for a in &walk.arrivals[e.net as usize] {
            let (kind, budget) = match (clock(a.domain), clock(e.domain)) {
                (Some(l), Some(c)) if l.name == c.name => {
                    (PathKind::Within(l.name), Some(l.levels))
                }
                (Some(l), Some(c)) => (
                    PathKind::Crossing {
                        from: l.name,
                        to: c.name,
                    },
                    Some(0),
                ),
                (None, Some(c)) => (PathKind::InputToRegister(c.name), Some(IO_LEVELS)),
                (Some(l), None) => (PathKind::RegisterToOutput(l.name), Some(IO_LEVELS)),
                (None, None) => (PathKind::InputToOutput, None),
            };
            budget_of.insert(kind.clone(), budget);
            by_kind.entry(kind).or_default().push(Hit {
                end: ei,
                arrival: *a,
                ps: a.ps + route_ps,
            });
        }
    }

    let mut groups = vec![];
    for (kind, mut hits) in by_kind {
        let budget = budget_of[&kind];
        let over = |levels: u16| budget.is_none_or(|b| levels > b);
        let mut histogram = BTreeMap::new();
        let mut blocks: HashMap<String, (usize, u16)> = HashMap::new();
        for h in &hits {
            *histogram.entry(h.arrival.levels).or_insert(0) += 1;
            if over(h.arrival.levels) {
                let b = blocks
                    .entry(block_of(&graph.end_name(&graph.ends[h.end])))
                    .or_default();
                b.0 += 1;
                b.1 = b.1.max(h.arrival.levels);
            }
        }
        let slowest = hits.iter().max_by_key(|h| h.ps).map(|h| {
            let e = &graph.ends[h.end];
            walk.path(e.net, &h.arrival, false)
        });
        let worst_ps = hits.iter().map(|h| h.ps).max().unwrap_or(0);
        hits.sort_by_key(|h| std::cmp::Reverse(h.ps));
        let slowest_ends = each_register_once(graph, &hits, |h| {
            let path = walk.path(graph.ends[h.end].net, &h.arrival, false);
            (path.last().map_or(0, |st| st.levels), h.ps)
        });
        hits.sort_by_key(|h| std::cmp::Reverse((h.arrival.levels, h.arrival.levels_ps)));
        let deepest_path = hits
            .first()
            .map(|h| walk.path(graph.ends[h.end].net, &h.arrival, true))
            .unwrap_or_default();
        // The deepest registers, each once (by its deepest bit).
        let deepest = each_register_once(graph, &hits, |h| {
            (h.arrival.levels, h.arrival.levels_ps + route_ps)
        });
        // `hits` is sorted deepest first: the first hit in a block is its deepest.
        let focus = focus
            .iter()
            .filter_map(|b| {
                let h = hits
                    .iter()
                    .find(|h| graph.end_name(&graph.ends[h.end]).starts_with(b.as_str()))?;
                Some((
                    b.clone(),
                    walk.path(graph.ends[h.end].net, &h.arrival, true),
                ))
            })
            .collect();
        let mut blocks: Vec<(String, usize, u16)> =
            blocks.into_iter().map(|(b, (n, l))| (b, n, l)).collect();
        blocks.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        groups.push(Group {
            budget,
            endpoints: hits.len(),
            over_budget: hits.iter().filter(|h| over(h.arrival.levels)).count(),
            max_levels: hits.first().map_or(0, |h| h.arrival.levels),
            worst_ps,
            histogram,
            deepest_path,
            slowest_path: slowest.unwrap_or_default(),
            deepest,
            slowest: slowest_ends,
            blocks,
            focus,
            kind,
        });
    }
    let unsynchronized = unsynchronized(graph, &walk, &clocks);
    Ok(Report {
        top: graph.top.clone(),
        route_ps,
        clocks,
        groups,
        unsynchronized,
    })
}

/// The registers that take another clock's signal without synchronizing it (see
/// [`Unsynchronized`]).
fn unsynchronized(graph: &Graph, walk: &Walk, clocks: &[ClockBudget]) -> Vec<Unsynchronized> {
    let mut drives_logic = vec![false; graph.nets];
    for a in &graph.arcs {
        drives_logic[a.from as usize] = true;
    }
    let mut ends_on: HashMap<u32, Vec<&graph::End>> = HashMap::new();
    for e in &graph.ends {
        ends_on.entry(e.net).or_default().push(e);
    }
    let clock_name = |d: Domain| match d {
        Domain::Clock(i) => clocks[i as usize].name.clone(),
        Domain::Ports => "ports".to_string(),
    };
    let mut out: Vec<Unsynchronized> = vec![];
    for e in &graph.ends {
        let (Some(c), Domain::Clock(_)) = (e.cell, e.domain) else {
            continue;
        };
        let cell = &graph.cells[c as usize];
        let Some(q) = cell.q else { continue };
        for a in &walk.arrivals[e.net as usize] {
            if a.domain == e.domain || a.domain == Domain::Ports {
                continue;
            }
            // A first synchronizer stage: its output only loads registers of its own clock.
            let second_stage = !drives_logic[q as usize]
                && ends_on.get(&q).is_some_and(|ends| {
                    ends.iter().all(|x| {
                        x.pin == "DATAIN"
                            && x.domain == e.domain
                            && x.cell.is_some_and(|k| graph.cells[k as usize].q.is_some())
                    })
                });
            // A capture of held data, qualified by logic of the capturing clock only: the register
            // loads it only when its enable is on (or its synchronous clear off).
            let enabled = e.pin == "DATAIN"
                && !cell.controls.is_empty()
                && cell.controls.iter().all(|&n| {
                    // The capturing clock's logic, possibly with a top-level input (its reset).
                    let from = &walk.arrivals[n as usize];
                    from.iter().any(|x| x.domain == e.domain)
                        && from
                            .iter()
                            .all(|x| x.domain == e.domain || x.domain == Domain::Ports)
                });
            let synchronized = (e.pin == "DATAIN" && second_stage) || enabled;
            if !synchronized {
                let u = Unsynchronized {
                    from: clock_name(a.domain),
                    to: clock_name(e.domain),
                    register: graph.end_name(e),
                };
                if !out.contains(&u) {
                    out.push(u);
                }
            }
        }
    }
    out.sort_by(|a, b| (&a.from, &a.to, &a.register).cmp(&(&b.from, &b.to, &b.register)));
    out
}

/// The block an endpoint belongs to: its name without the last hierarchy component and bit.
fn block_of(end: &str) -> String {
    let name = end.split(" (").next().unwrap_or(end);
    let name = name.split('[').next().unwrap_or(name);
    match name.rsplit_once('.') {
        Some((block, _)) => block.to_string(),
        None => "(top)".to_string(),
    }
}

/// Reads a JSON netlist and walks it (`focus`: see [`analyze_into`]).
pub fn analyze_netlist(
    json: &Path,
    top: Option<&str>,
    budgets: &[ClockBudget],
    route_ps: u32,
    focus: &[String],
) -> Result<Report> {
    let text =
        std::fs::read_to_string(json).with_context(|| format!("reading {}", json.display()))?;
    let graph = Graph::from_json(&text, top)?;
    analyze_into(&graph, budgets, route_ps, focus)
}

#[cfg(test)]
mod tests;

//! yosys's JSON netlist (`write_json` after `synth_intel_alm`, flattened) as a timing graph: net
//! bits, the points where paths start (register outputs, top-level inputs) and end (register and
//! memory inputs, top-level outputs), and the combinational arcs between.

use std::collections::HashMap;

use anyhow::{bail, Context, Result};
use serde::Deserialize;

use super::cells::{role, Role};

/// Where a path starts or ends: a clock (an index into [`Graph::clocks`]) or the design's ports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Domain {
    Clock(u16),
    /// Top-level inputs when launching, top-level outputs when capturing.
    Ports,
}

#[derive(Clone, Debug)]
pub struct Start {
    pub net: u32,
    pub domain: Domain,
    pub ps: u32,
    /// The launching cell, if any (none for a top-level input).
    pub cell: Option<u32>,
}

#[derive(Clone, Debug)]
pub struct End {
    pub net: u32,
    pub domain: Domain,
    /// The capturing cell (none for a top-level output) and its pin, with the bit for a bus.
    pub cell: Option<u32>,
    pub pin: String,
}

#[derive(Clone, Debug)]
pub struct Arc {
    pub from: u32,
    pub to: u32,
    pub ps: u32,
    pub level: bool,
    pub routed: bool,
    pub cell: u32,
    pub pin: &'static str,
}

#[derive(Clone, Debug)]
pub struct CellInfo {
    pub name: String,
    pub kind: String,
    /// The cell's `src` attribute: where in the Verilog it came from.
    pub src: String,
    /// For a register: its output net (whose name is the register's RTL name).
    pub q: Option<u32>,
    /// For a register: the nets on its enable and synchronous-clear pins (those not tied to a
    /// constant).
    pub controls: Vec<u32>,
}

#[derive(Debug, Default)]
pub struct Graph {
    pub top: String,
    pub nets: usize,
    /// Clock nets by name, in order of first use.
    pub clocks: Vec<String>,
    pub starts: Vec<Start>,
    pub ends: Vec<End>,
    pub arcs: Vec<Arc>,
    pub cells: Vec<CellInfo>,
    /// Per net: an index into `names` and the bit of that name, if the netlist names the net.
    net_name: Vec<Option<(u32, u32)>>,
    names: Vec<(String, usize)>,
}

#[derive(Deserialize)]
struct JsonNetlist {
    modules: HashMap<String, JsonModule>,
}

#[derive(Deserialize)]
struct JsonModule {
    #[serde(default)]
    attributes: HashMap<String, serde_json::Value>,
    #[serde(default)]
    ports: HashMap<String, JsonPort>,
    #[serde(default)]
    cells: HashMap<String, JsonCell>,
    #[serde(default)]
    netnames: HashMap<String, JsonNetName>,
}

#[derive(Deserialize)]
struct JsonPort {
    direction: String,
    bits: Vec<Bit>,
}

#[derive(Deserialize)]
struct JsonCell {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    attributes: HashMap<String, serde_json::Value>,
    #[serde(default)]
    connections: HashMap<String, Vec<Bit>>,
}

#[derive(Deserialize)]
struct JsonNetName {
    #[serde(default)]
    hide_name: u8,
    bits: Vec<Bit>,
}

/// A bit of a connection: a net or a constant ("0", "1", "x", "z").
#[derive(Deserialize, Clone, Copy)]
#[serde(untagged)]
enum Bit {
    Net(u32),
    #[allow(dead_code)]
    Const(Constant),
}

#[derive(Deserialize, Clone, Copy)]
#[serde(from = "String")]
struct Constant;

impl From<String> for Constant {
    fn from(_: String) -> Constant {
        Constant
    }
}

impl Bit {
    fn net(self) -> Option<u32> {
        match self {
            Bit::Net(n) => Some(n),
            Bit::Const(_) => None,
        }
    }
}

impl Graph {
    /// Reads the netlist of module `top` (or the one module marked top) from yosys's JSON.
    pub fn from_json(json: &str, top: Option<&str>) -> Result<Graph> {
        let netlist: JsonNetlist =
            serde_json::from_str(json).context("reading yosys's JSON netlist")?;
        let name = match top {
            Some(t) => t.to_string(),
            None => netlist
                .modules
                .iter()
                .find(|(_, m)| m.attributes.contains_key("top"))
                .map(|(n, _)| n.clone())
                .context("no module is marked top in the netlist; name one")?,
        };
        let module = netlist
            .modules
            .get(&name)
            .with_context(|| format!("no module {name} in the netlist"))?;
        Graph::from_module(&name, module)
    }

    fn from_module(top: &str, m: &JsonModule) -> Result<Graph> {
        let mut g = Graph {
            top: top.to_string(),
            ..Graph::default()
        };
        let max_net = m
            .netnames
            .values()
            .flat_map(|n| n.bits.iter())
            .chain(
                m.cells
                    .values()
                    .flat_map(|c| c.connections.values().flatten()),
            )
            .filter_map(|b| b.net())
            .max()
            .unwrap_or(0);
        g.nets = max_net as usize + 1;
        g.name_nets(m);

        let mut clock_ids: HashMap<u32, u16> = HashMap::new();
        let mut unknown: HashMap<&str, usize> = HashMap::new();
        // Cells in name order, so that reports do not depend on hash order.
        let mut cells: Vec<(&String, &JsonCell)> = m.cells.iter().collect();
        cells.sort_by(|a, b| a.0.cmp(b.0));
        for (cname, c) in cells {
            let Some(r) = role(&c.kind) else {
                *unknown.entry(c.kind.as_str()).or_default() += 1;
                continue;
            };
            let id = g.cells.len() as u32;
            let src = c
                .attributes
                .get("src")
                .and_then(|v| v.as_str())
                .unwrap_or("")
                .to_string();
            g.cells.push(CellInfo {
                name: cname.clone(),
                kind: c.kind.clone(),
                src,
                q: None,
                controls: vec![],
            });
            let pin = |p: &str| c.connections.get(p).map(Vec::as_slice).unwrap_or(&[]);
            // A bus pin's bits as `PIN[i]` (a single bit keeps the plain name).
            let bits = |p: &'static str| {
                let bits = pin(p);
                bits.iter()
                    .enumerate()
                    .filter_map(|(i, b)| {
                        let name = if bits.len() == 1 {
                            p.to_string()
                        } else {
                            format!("{p}[{i}]")
                        };
                        b.net().map(|n| (name, n))
                    })
                    .collect::<Vec<_>>()
            };
            let mut clock_of = |g: &mut Graph, p: &str| -> Result<Domain> {
                let Some(net) = pin(p).first().and_then(|b| b.net()) else {
                    bail!("{} {cname} has no clock on {p}", c.kind);
                };
                let next = clock_ids.len() as u16;
                let id = *clock_ids.entry(net).or_insert(next);
                if id as usize == g.clocks.len() {
                    g.clocks.push(g.net_name(net));
                }
                Ok(Domain::Clock(id))
            };
            match r {
                Role::Register {
                    clock,
                    q,
                    clk_to_q,
                    captures,
                } => {
                    let domain = clock_of(&mut g, clock)?;
                    g.cells[id as usize].controls = ["ENA", "SCLR"]
                        .iter()
                        .filter_map(|p| pin(p).first().and_then(|b| b.net()))
                        .collect();
                    if let Some(net) = pin(q).first().and_then(|b| b.net()) {
                        g.cells[id as usize].q = Some(net);
                        g.starts.push(Start {
                            net,
                            domain,
                            ps: clk_to_q,
                            cell: Some(id),
                        });
                    }
                    for p in captures {
                        for (pin, net) in bits(p) {
                            g.ends.push(End {
                                net,
                                domain,
                                cell: Some(id),
                                pin,
                            });
                        }
                    }
                }
                Role::Logic { arcs } => g.add_arcs(id, arcs, &pin),
                Role::Memory {
                    clock,
                    captures,
                    launch,
                    arcs,
                } => {
                    let domain = clock_of(&mut g, clock)?;
                    for p in captures {
                        for (pin, net) in bits(p) {
                            g.ends.push(End {
                                net,
                                domain,
                                cell: Some(id),
                                pin,
                            });
                        }
                    }
                    if let Some((p, ps)) = launch {
                        for b in pin(p).iter().filter_map(|b| b.net()) {
                            g.starts.push(Start {
                                net: b,
                                domain,
                                ps,
                                cell: Some(id),
                            });
                        }
                    }
                    g.add_arcs(id, arcs, &pin);
                }
            }
        }
        if !unknown.is_empty() {
            let mut kinds: Vec<String> =
                unknown.iter().map(|(k, n)| format!("{k} ({n})")).collect();
            kinds.sort();
            bail!(
                "the netlist has cells the timing walk does not know: {} (synthesize with \
                 synth_intel_alm -noclkbuf -noiopad -nodsp)",
                kinds.join(", ")
            );
        }

        let mut ports: Vec<(&String, &JsonPort)> = m.ports.iter().collect();
        ports.sort_by(|a, b| a.0.cmp(b.0));
        for (pname, p) in ports {
            for (i, b) in p.bits.iter().enumerate() {
                let Some(net) = b.net() else { continue };
                let pin = if p.bits.len() == 1 {
                    pname.clone()
                } else {
                    format!("{pname}[{i}]")
                };
                match p.direction.as_str() {
                    "input" => g.starts.push(Start {
                        net,
                        domain: Domain::Ports,
                        ps: 0,
                        cell: None,
                    }),
                    "output" => g.ends.push(End {
                        net,
                        domain: Domain::Ports,
                        cell: None,
                        pin,
                    }),
                    other => {
                        bail!("port {pname} of {top} is {other}: only inputs and outputs are timed")
                    }
                }
            }
        }
        Ok(g)
    }

    /// Arcs of a combinational cell whose connections `pin` returns. Arc pins written `P[i]`
    /// name bit `i` of bus pin `P`.
    fn add_arcs<'a>(
        &mut self,
        cell: u32,
        arcs: &'static [super::cells::Arc],
        pin: &dyn Fn(&str) -> &'a [Bit],
    ) {
        for a in arcs {
            let (from_pin, bit) = split_bit(a.from);
            let Some(from) = pin(from_pin).get(bit).and_then(|b| b.net()) else {
                continue;
            };
            for to in pin(a.to).iter().filter_map(|b| b.net()) {
                self.arcs.push(Arc {
                    from,
                    to,
                    ps: a.ps,
                    level: a.level,
                    routed: a.routed,
                    cell,
                    pin: a.from,
                });
            }
        }
    }

    /// Chooses a name for every named net: a public name before a generated one, then the
    /// shortest (a top-level port before the wire it drives inside a block).
    fn name_nets(&mut self, m: &JsonModule) {
        self.net_name = vec![None; self.nets];
        let mut named: Vec<(&String, &JsonNetName)> = m.netnames.iter().collect();
        // yosys's autoname derives names from the cells a net connects (`x$d_MISTRAL_ALUT4_Q_A`):
        // those come after the RTL's own names.
        named.sort_by_key(|(n, nn)| {
            (
                n.contains("_MISTRAL_"),
                nn.hide_name,
                n.len(),
                n.to_string(),
            )
        });
        for (n, nn) in named {
            let idx = self.names.len() as u32;
            self.names.push((n.clone(), nn.bits.len()));
            for (i, b) in nn.bits.iter().enumerate() {
                if let Some(net) = b.net() {
                    let slot = &mut self.net_name[net as usize];
                    if slot.is_none() {
                        *slot = Some((idx, i as u32));
                    }
                }
            }
        }
    }

    /// The RTL name of a net bit, `name[i]` for a bus (or `net N` for an unnamed one).
    pub fn net_name(&self, net: u32) -> String {
        match self.net_name.get(net as usize).copied().flatten() {
            Some((idx, bit)) => {
                let (name, width) = &self.names[idx as usize];
                match name.split_once("_MISTRAL_") {
                    // A derived name: the RTL signal it starts from, marked (its bits are not the
                    // RTL signal's).
                    Some((rtl, _)) => format!("{rtl}~"),
                    None if *width == 1 => name.clone(),
                    None => format!("{name}[{bit}]"),
                }
            }
            None => format!("net {net}"),
        }
    }

    /// What an endpoint is called in reports: the register it loads (by its output's name), the
    /// memory and pin, or the output port.
    pub fn end_name(&self, e: &End) -> String {
        match e.cell {
            None => e.pin.clone(),
            Some(c) => {
                let cell = &self.cells[c as usize];
                match cell.q {
                    Some(q) if e.pin == "DATAIN" => self.net_name(q),
                    Some(q) => format!("{} ({})", self.net_name(q), e.pin),
                    // A memory by its RTL name (yosys numbers the cells of one memory).
                    None => {
                        let mut name = cell.name.as_str();
                        while let Some((head, n)) = name.rsplit_once('.') {
                            if !n.chars().all(|c| c.is_ascii_digit()) {
                                break;
                            }
                            name = head;
                        }
                        let kind = cell.kind.trim_start_matches("MISTRAL_");
                        format!("{name} ({kind} {})", e.pin)
                    }
                }
            }
        }
    }
}

/// `B1ADDR[3]` as (`B1ADDR`, 3); a plain pin as bit 0.
fn split_bit(p: &str) -> (&str, usize) {
    match p.split_once('[') {
        Some((name, rest)) => (name, rest.trim_end_matches(']').parse().unwrap_or(0)),
        None => (p, 0),
    }
}

/// The first source location of a `src` attribute in the design's own files (yosys joins several
/// with `|`; those in its cell library say nothing about the design).
pub fn design_src(src: &str) -> &str {
    src.split('|')
        .find(|s| !s.contains("/share/yosys/"))
        .unwrap_or("")
}

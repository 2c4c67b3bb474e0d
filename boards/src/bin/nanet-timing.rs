//! `nanet-timing`: the static timing estimate of `make timing` (see `nanet_board::timing`).
//!
//! By default the card (`nanet_nic`, with `--ports N`) and its board glue; `--module NAME` a single
//! gateware module; `--verilog FILE --top TOP` any design; `--netlist FILE.json` a netlist yosys
//! wrote before. Syntheses are cached in `OUT/synth/` (beside nanet-resources's: timing maps every
//! path for its least depth, the resource estimate for the fewest LUTs; `nanet_board::synth`). Writes
//! `OUT/timing.json`; with `--check`, exits 1 when a path is over budget (or, with `--debt`, over
//! the debt that file tolerates).

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::Parser;
use nanet_board::synth::{synthesize, Mapping};
use nanet_board::timing::{self, card_clocks, debt::DebtFile, ClockBudget, Report, ROUTE_PS};
use nanet_contract::pcie::PcieVariant;
use nanet_hdl::verilog::{module_verilog_for, nic_verilog, DEFAULT_PCIE, MODULES};
use serde_json::json;

#[derive(Parser)]
#[command(
    name = "nanet-timing",
    about = "Static timing estimate of the generated Verilog"
)]
struct Args {
    /// Cards to time, by port count (comma-separated), e.g. `1,4`. A four-port card takes 13-19
    /// minutes of yosys here, a one-port card 4-5 (cached while the Verilog does not change).
    #[arg(long, value_delimiter = ',', default_value = "1")]
    ports: Vec<usize>,
    /// The cards' PCIe variants (comma-separated): gen2 (128-bit datapath), gen3 (256-bit). Each
    /// port count is timed with each; a Gen3 card's label ends in ", Gen3 x8".
    #[arg(long, value_delimiter = ',', default_value = DEFAULT_PCIE.name(), value_parser = nanet_board::pcie_variant_arg)]
    pcie: Vec<PcieVariant>,
    /// Time these gateware modules instead of the card, by name (comma-separated or repeated;
    /// their clock is `clock`: give its budget with --clock).
    #[arg(long = "module", value_delimiter = ',')]
    modules: Vec<String>,
    /// Time a design of your own: its Verilog files (with --top).
    #[arg(long)]
    verilog: Vec<PathBuf>,
    /// The top module of --verilog or --netlist.
    #[arg(long)]
    top: Option<String>,
    /// Walk a JSON netlist yosys already wrote (`synth_intel_alm ... -noclkbuf; write_json`).
    #[arg(long)]
    netlist: Option<PathBuf>,
    /// A clock's budget, NAME=MHZ:LEVELS (before the card's: core_clock=250:5,
    /// net_clock=156.25:8, mgmt_clock=100:8).
    #[arg(long = "clock")]
    clocks: Vec<String>,
    /// Routing delay per connection, in ps.
    #[arg(long, default_value_t = ROUTE_PS)]
    route_ps: u32,
    /// Folder of timing.json and of the cached syntheses (`synth/`).
    #[arg(long, default_value = "target/bench")]
    out: PathBuf,
    /// Exit with status 1 when any path is over budget.
    #[arg(long)]
    check: bool,
    /// The paths tolerated over budget while pipelining goes on (boards/timing-debt.toml): with
    /// --check, a group over budget fails only when it is not listed or deeper than listed, and a
    /// listed group that got shallower fails until its entry is lowered.
    #[arg(long)]
    debt: Option<PathBuf>,
    /// Only the summary table, not the worst paths.
    #[arg(long)]
    brief: bool,
    /// Also show the deepest path ending in these blocks (hierarchical name prefixes from the
    /// report, e.g. `rx.fifos$0.meta_ram`; comma-separated or repeated), in every group that
    /// has one.
    #[arg(long = "into", value_delimiter = ',')]
    into: Vec<String>,
}

/// One design to time: its name in the report, and its Verilog or its netlist.
struct Design {
    label: String,
    top: String,
    source: Source,
}

enum Source {
    Verilog(String),
    Netlist(PathBuf),
}

fn module(name: &str, ports: usize) -> Result<Source> {
    let v = module_verilog_for(name, ports)
        .with_context(|| format!("unknown module {name}; known: {}", MODULES.join(" ")))?;
    Ok(Source::Verilog(v))
}

/// A card's name in the report and in `timing.json`: "nanet_nic, 4 ports" at the default variant,
/// "nanet_nic, 4 ports, Gen3 x8" at another.
fn card_label(ports: usize, v: PcieVariant) -> String {
    let mut label = format!(
        "nanet_nic, {ports} port{}",
        if ports == 1 { "" } else { "s" }
    );
    if v != DEFAULT_PCIE {
        label += &format!(", Gen{} x{}", v.generation(), v.lanes());
    }
    label
}

fn designs(a: &Args) -> Result<Vec<Design>> {
    if let Some(n) = &a.netlist {
        return Ok(vec![Design {
            label: n.display().to_string(),
            top: a.top.clone().unwrap_or_default(),
            source: Source::Netlist(n.clone()),
        }]);
    }
    if !a.verilog.is_empty() {
        let top = a.top.clone().context("--verilog needs --top")?;
        let mut text = String::new();
        for f in &a.verilog {
            text +=
                &std::fs::read_to_string(f).with_context(|| format!("reading {}", f.display()))?;
        }
        return Ok(vec![Design {
            label: top.clone(),
            top,
            source: Source::Verilog(text),
        }]);
    }
    if !a.modules.is_empty() {
        return a
            .modules
            .iter()
            .map(|m| {
                Ok(Design {
                    label: m.clone(),
                    top: m.clone(),
                    source: module(m, 1)?,
                })
            })
            .collect();
    }
    let mut out = vec![];
    for &v in &a.pcie {
        for &p in &a.ports {
            if !(1..=4).contains(&p) {
                bail!("--ports takes port counts from 1 to 4, not {p}");
            }
            out.push(Design {
                label: card_label(p, v),
                top: "nanet_nic".into(),
                source: Source::Verilog(nic_verilog(v, p, "nanet_nic").context("the NIC")?),
            });
        }
    }
    out.push(Design {
        label: "nanet_board_glue".into(),
        top: "nanet_board_glue".into(),
        source: module("nanet_board_glue", 4)?,
    });
    Ok(out)
}

fn main() -> Result<()> {
    let a = Args::parse();
    let cache = a.out.join("synth");
    let debt = match &a.debt {
        Some(p) => DebtFile::parse(
            &std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?,
        )
        .with_context(|| format!("reading {}", p.display()))?,
        None => DebtFile::default(),
    };
    let mut budgets = a
        .clocks
        .iter()
        .map(|c| ClockBudget::parse(c))
        .collect::<Result<Vec<_>>>()?;
    budgets.extend(card_clocks());
    // The board glue's management domain: the management PLL's clock (100 MHz on the DE5-Net).
    budgets.push(ClockBudget::new("mgmt_clock", 100.0, 8));

    let mut reports: Vec<(String, Report)> = vec![];
    for d in designs(&a)? {
        let netlist = match &d.source {
            Source::Netlist(n) => n.clone(),
            Source::Verilog(v) => {
                eprintln!("synthesizing {} with yosys ...", d.label);
                let t = Instant::now();
                let s = synthesize(&cache, v, &d.top, Mapping::Depth)?;
                if s.ran {
                    eprintln!(
                        "  {:.0} s (log: {})",
                        t.elapsed().as_secs_f64(),
                        s.log.display()
                    );
                } else {
                    eprintln!("  unchanged since the last run: {}", s.netlist.display());
                }
                s.netlist
            }
        };
        let top = (!d.top.is_empty()).then_some(d.top.as_str());
        let r = timing::analyze_netlist(&netlist, top, &budgets, a.route_ps, &a.into)
            .with_context(|| format!("timing {}", d.label))?;
        println!("{}", r.text(!a.brief));
        reports.push((d.label.clone(), r));
    }

    let passes = reports.iter().all(|(_, r)| r.passes());
    let problems = debt.problems(&reports);
    let out = json!({
        "passes": passes,
        "designs": reports.iter().map(|(label, r)| {
            let mut j = r.json();
            j["design"] = json!(label);
            j
        }).collect::<Vec<_>>(),
    });
    std::fs::create_dir_all(&a.out).with_context(|| format!("creating {}", a.out.display()))?;
    let path = a.out.join("timing.json");
    std::fs::write(&path, serde_json::to_string_pretty(&out)?)
        .with_context(|| format!("writing {}", path.display()))?;
    println!("wrote {}", path.display());
    if let Some(p) = &a.debt {
        if problems.is_empty() {
            println!("within the budgets, or the debt {} tolerates", p.display());
        } else {
            eprintln!("against {}:", p.display());
            problems.iter().for_each(|m| eprintln!("  {m}"));
        }
    }
    if a.check && !problems.is_empty() {
        eprintln!("nanet-timing: paths over budget (see above)");
        std::process::exit(1);
    }
    Ok(())
}

//! `nanet-resources`: the resource estimate of `make bench` (`target/bench/resources.json`): the
//! four-port 10GbE I/O and the whole card synthesized by yosys for Cyclone V ALMs, beside the
//! paper's Table 1 (NaNet-10 on a Stratix V, Quartus).

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result};
use clap::Parser;
use nanet_board::resources::Cells;
use nanet_board::synth::{synthesize, Mapping};
use nanet_hdl::verilog::module_verilog_for;
use serde_json::json;

#[derive(Parser)]
#[command(name = "nanet-resources")]
struct Args {
    /// Folder of the JSON (and of the cached syntheses, in `synth/`, shared with nanet-timing).
    #[arg(long, default_value = "target/bench")]
    out: PathBuf,
    /// Only the 10GbE I/O (the whole card takes several minutes).
    #[arg(long)]
    quick: bool,
}

/// NaNet-10's Table 1: (ALUTs, registers).
const PAPER_IO_4_PORTS: (u64, u64) = (40_503, 84_935);
const PAPER_TOTAL: (u64, u64) = (83_611, 132_194);

/// Synthesizes gateware module `name` (of a card with `ports` ports), from the cache if its
/// Verilog has not changed.
fn cells_of(cache: &Path, name: &str, ports: usize) -> Result<Cells> {
    let v = module_verilog_for(name, ports).with_context(|| format!("Verilog of {name}"))?;
    Ok(synthesize(cache, &v, name, Mapping::Area)?.cells)
}

fn row(what: &str, ports: usize, c: Cells, paper: (u64, u64), note: &str) -> serde_json::Value {
    println!(
        "{what:<58} {:>8} ALUTs ({:>5.1}% of {:>6}) {:>8} registers ({:>5.1}% of {:>6}) {:>4} M10K",
        c.aluts,
        100.0 * c.aluts as f64 / paper.0 as f64,
        paper.0,
        c.registers,
        100.0 * c.registers as f64 / paper.1 as f64,
        paper.1,
        c.m10k
    );
    json!({
        "design": what,
        "ports": ports,
        "alut_count": c.aluts,
        "register_count": c.registers,
        "m10k_count": c.m10k,
        "mlab_count": c.mlab,
        "paper_alut_count": paper.0,
        "paper_register_count": paper.1,
        "alut_ratio": c.aluts as f64 / paper.0 as f64,
        "register_ratio": c.registers as f64 / paper.1 as f64,
        "note": note,
    })
}

fn main() -> Result<()> {
    let a = Args::parse();
    let cache = a.out.join("synth");
    let mut rows = vec![];

    eprintln!("synthesizing one port's I/O (nanet_rx_port) with yosys ...");
    let t = Instant::now();
    let one = cells_of(&cache, "nanet_rx_port", 4)?;
    eprintln!("  {:.0} s", t.elapsed().as_secs_f64());
    rows.push(row(
        "10GbE I/O, 4 ports (offload core, Multi-Stream, packer, TX feeder, generator)",
        4,
        one.times(4),
        PAPER_IO_4_PORTS,
        "four times one nanet_rx_port; MAC and PHY are vendor IP, not counted",
    ));

    if !a.quick {
        eprintln!("synthesizing the whole card (nanet_nic, 4 ports, and the board glue) ...");
        let t = Instant::now();
        let card = cells_of(&cache, "nanet_nic", 4)?.plus(cells_of(&cache, "nanet_board_glue", 4)?);
        eprintln!("  {:.0} s", t.elapsed().as_secs_f64());
        rows.push(row(
            "whole card (NIC with 4 ports, board glue)",
            4,
            card,
            PAPER_TOTAL,
            "MAC, PHY, PCIe Hard IP and transceiver reconfiguration are vendor IP, not counted",
        ));
    }

    let out = json!({
        "tool": format!("yosys 0.23 {}", Mapping::Area.flow()),
        "caveat": "An estimate: yosys maps to Cyclone V ALMs (it has no Stratix V flow) and \
                   optimizes differently from Quartus; the paper's figures are Quartus on a \
                   Stratix V. ALUTs count every LUT cell including arithmetic ones.",
        "rows": rows,
    });
    let path = a.out.join("resources.json");
    std::fs::write(&path, serde_json::to_string_pretty(&out)?)
        .with_context(|| format!("writing {}", path.display()))?;
    println!("wrote {}", path.display());
    Ok(())
}

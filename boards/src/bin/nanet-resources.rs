//! `nanet-resources`: the resource estimate of `make bench` (`target/bench/resources.json`): the
//! four-port 10GbE I/O and the whole card, at each PCIe variant's datapath width, synthesized by
//! yosys for Cyclone V ALMs, beside the paper's Table 1 (NaNet-10 on a Stratix V, Quartus).

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result};
use clap::Parser;
use nanet_board::resources::Cells;
use nanet_board::synth::{synthesize, Mapping};
use nanet_contract::pcie::PcieVariant;
use nanet_hdl::verilog::{module_verilog_for, nic_verilog};
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
    /// The PCIe variants (comma-separated): gen2 (the 128-bit datapath), gen3 (256-bit); a row of
    /// each for the I/O and the whole card (the four-port cards take 15-30 minutes of yosys each).
    #[arg(long, value_delimiter = ',', default_value = "gen2,gen3", value_parser = nanet_board::pcie_variant_arg)]
    pcie: Vec<PcieVariant>,
}

/// NaNet-10's Table 1: (ALUTs, registers).
const PAPER_IO_4_PORTS: (u64, u64) = (40_503, 84_935);
const PAPER_TOTAL: (u64, u64) = (83_611, 132_194);

/// Synthesizes Verilog `v` (top `name`), from the cache if it has not changed.
fn cells_of(cache: &Path, v: Option<String>, name: &str) -> Result<Cells> {
    let v = v.with_context(|| format!("Verilog of {name}"))?;
    Ok(synthesize(cache, &v, name, Mapping::Area)?.cells)
}

fn row(
    what: &str,
    pcie: PcieVariant,
    ports: usize,
    c: Cells,
    paper: (u64, u64),
    note: &str,
) -> serde_json::Value {
    let what = format!("{what}, {}", pcie.describe());
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
        "pcie": pcie.name(),
        "datapath_bits": pcie.beat_bits(),
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

    for &v in &a.pcie {
        // The modules' names at the variant's width (the 128-bit ones carry no suffix).
        let port_module = match v {
            PcieVariant::Gen2x8 => "nanet_rx_port",
            PcieVariant::Gen3x8 => "nanet_rx_port_256",
        };
        eprintln!("synthesizing one port's I/O ({port_module}) with yosys ...");
        let t = Instant::now();
        let one = cells_of(&cache, module_verilog_for(port_module, 4), port_module)?;
        eprintln!("  {:.0} s", t.elapsed().as_secs_f64());
        rows.push(row(
            "10GbE I/O, 4 ports (offload core, Multi-Stream, packer, TX feeder, generator)",
            v,
            4,
            one.times(4),
            PAPER_IO_4_PORTS,
            "four times one port's block; MAC and PHY are vendor IP, not counted",
        ));
        if a.quick {
            continue;
        }
        eprintln!(
            "synthesizing the whole card (nanet_nic, 4 ports, {}, and the board glue) ...",
            v.describe()
        );
        let t = Instant::now();
        let nic = cells_of(&cache, nic_verilog(v, 4, "nanet_nic"), "nanet_nic")?;
        let glue = cells_of(
            &cache,
            module_verilog_for("nanet_board_glue", 4),
            "nanet_board_glue",
        )?;
        eprintln!("  {:.0} s", t.elapsed().as_secs_f64());
        rows.push(row(
            "whole card (NIC with 4 ports, board glue)",
            v,
            4,
            nic.plus(glue),
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

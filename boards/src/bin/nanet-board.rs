//! `nanet-board`: writes the Quartus-ready folder of a board (`make verilog` runs it).

use std::path::PathBuf;

use anyhow::Result;
use clap::Parser;
use nanet_board::pcie_variant_arg;
use nanet_board::{Board, Project};
use nanet_contract::pcie::PcieVariant;
use nanet_hdl::verilog::DEFAULT_PCIE;

/// Generate the Verilog, constraints and Quartus project files of the nanet card for a board.
#[derive(Parser)]
#[command(name = "nanet-board")]
struct Args {
    /// Board description: boards/<BOARD>.toml.
    #[arg(long, default_value = "de5net")]
    board: String,
    /// Ports of the card, 1 to the board's SFP+ cages (default: all of them).
    #[arg(long)]
    ports: Option<usize>,
    /// PCIe variant: gen2 (Gen2 x8, 128-bit datapath) or gen3 (Gen3 x8, 256-bit datapath).
    #[arg(long, default_value = DEFAULT_PCIE.name(), value_parser = pcie_variant_arg)]
    pcie: PcieVariant,
    /// Output folder (default: build/<BOARD>).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Folder of the board descriptions.
    #[arg(long, default_value = "boards")]
    boards: PathBuf,
    /// Folder of the hand-written constraints.
    #[arg(long, default_value = "constraints")]
    constraints: PathBuf,
}

fn main() -> Result<()> {
    let a = Args::parse();
    let board = Board::named(&a.boards, &a.board)?;
    let ports = a.ports.unwrap_or(board.max_ports());
    let out = a
        .out
        .unwrap_or_else(|| PathBuf::from("build").join(&board.name));
    let project = Project::new(&board, ports, a.pcie, &a.constraints)?;
    for path in project.write(&out)? {
        println!("wrote {}", path.display());
    }
    println!(
        "{} with {ports} port(s), PCIe {}: open {} (README.md there lists the manual steps)",
        board.title,
        a.pcie.describe(),
        out.join("create_project.tcl").display()
    );
    Ok(())
}

//! Writes the Verilog of the gateware modules: `nanet-verilog --out DIR [--ports N] [MODULE...]`
//! (all when none is named; `N` ports, 1 to 4, default 4); `--list` prints the module names.

use std::path::PathBuf;
use std::process::ExitCode;

use nanet_hdl::verilog::{module_verilog_for, DEFAULT_PORTS, MODULES};

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let mut out = PathBuf::from("build/verilog");
    let mut names = vec![];
    let mut ports = DEFAULT_PORTS;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--out" => match args.next() {
                Some(d) => out = PathBuf::from(d),
                None => return fail("--out needs a directory"),
            },
            "--ports" => match args.next().and_then(|n| n.parse().ok()) {
                Some(n) if (1..=4).contains(&n) => ports = n,
                _ => return fail("--ports needs a port count from 1 to 4"),
            },
            "--list" => {
                MODULES.iter().for_each(|m| println!("{m}"));
                return ExitCode::SUCCESS;
            }
            "-h" | "--help" => {
                println!(
                    "usage: nanet-verilog [--out DIR] [--ports N] [--list] [MODULE...]\n\
                     --ports N: a card with N ports, 1 to 4 (default {DEFAULT_PORTS})\nmodules: {}",
                    MODULES.join(" ")
                );
                return ExitCode::SUCCESS;
            }
            m => names.push(m.to_string()),
        }
    }
    if names.is_empty() {
        names = MODULES.iter().map(|s| s.to_string()).collect();
    }
    if let Err(e) = std::fs::create_dir_all(&out) {
        return fail(&format!("cannot create {}: {e}", out.display()));
    }
    for name in &names {
        let Some(v) = module_verilog_for(name, ports) else {
            return fail(&format!(
                "unknown module {name}; known: {}",
                MODULES.join(" ")
            ));
        };
        let path = out.join(format!("{name}.v"));
        if let Err(e) = std::fs::write(&path, v) {
            return fail(&format!("cannot write {}: {e}", path.display()));
        }
        println!("wrote {}", path.display());
    }
    ExitCode::SUCCESS
}

fn fail(msg: &str) -> ExitCode {
    eprintln!("nanet-verilog: {msg}");
    ExitCode::FAILURE
}

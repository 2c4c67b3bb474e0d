//! Writes the Verilog of the gateware modules: `nanet-verilog --out DIR [MODULE...]` (all when none
//! is named); `--list` prints the module names.

use std::path::PathBuf;
use std::process::ExitCode;

use nanet_hdl::verilog::{module_verilog, MODULES};

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let mut out = PathBuf::from("build/verilog");
    let mut names = vec![];
    while let Some(a) = args.next() {
        match a.as_str() {
            "--out" => match args.next() {
                Some(d) => out = PathBuf::from(d),
                None => return fail("--out needs a directory"),
            },
            "--list" => {
                MODULES.iter().for_each(|m| println!("{m}"));
                return ExitCode::SUCCESS;
            }
            "-h" | "--help" => {
                println!(
                    "usage: nanet-verilog [--out DIR] [--list] [MODULE...]\nmodules: {}",
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
        let Some(v) = module_verilog(name) else {
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

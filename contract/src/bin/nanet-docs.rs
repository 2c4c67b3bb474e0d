//! Writes the contract's generated files (`docs/regmap.md`, `host/include/nanet_regs.h`) under
//! the repository root given as the only argument (default: the current directory).

use std::path::PathBuf;

use nanet_contract::docs;

fn main() {
    let root = PathBuf::from(std::env::args().nth(1).unwrap_or_else(|| ".".into()));
    for (path, text) in [
        (docs::REGMAP_MD, docs::regmap_markdown()),
        (docs::C_HEADER, docs::c_header()),
    ] {
        let p = root.join(path);
        if let Err(e) =
            std::fs::create_dir_all(p.parent().unwrap()).and_then(|_| std::fs::write(&p, text))
        {
            eprintln!("nanet-docs: cannot write {}: {e}", p.display());
            std::process::exit(1);
        }
        println!("wrote {}", p.display());
    }
}

//! The committed generated files match what the contract generates now.

use std::path::Path;

use nanet_contract::docs;

fn check(path: &str, want: String) {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(path);
    let have = std::fs::read_to_string(&p)
        .unwrap_or_else(|e| panic!("{} missing ({e}): run `make docs`", p.display()));
    assert!(
        have == want,
        "{path} is stale: the contract changed; run `make docs` and commit the result"
    );
}

#[test]
fn regmap_markdown_is_current() {
    check(docs::REGMAP_MD, docs::regmap_markdown());
}

#[test]
fn c_header_is_current() {
    check(docs::C_HEADER, docs::c_header());
}

/// The header is valid C: it compiles, and its structs have the documented sizes.
#[test]
fn c_header_compiles() {
    let dir = std::env::temp_dir().join(format!("nanet-regs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let h = dir.join("nanet_regs.h");
    std::fs::write(&h, docs::c_header()).unwrap();
    let c = dir.join("t.c");
    std::fs::write(
        &c,
        "#include \"nanet_regs.h\"\nint main(void) { return NANET_RX_CLOP_COMMAND == 0 ? 0 : 1; }\n",
    )
    .unwrap();
    let out = std::process::Command::new("cc")
        .args(["-std=c11", "-Wall", "-Werror", "-fsyntax-only"])
        .arg(&c)
        .output()
        .expect("cc runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::remove_dir_all(&dir).ok();
}

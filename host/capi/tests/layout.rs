//! The C header's structs against the Rust layout the library reads and writes: a C program built
//! with `nanet.h` prints each field's offset and each struct's size, and they must be the Rust
//! `#[repr(C)]` structs' (a field added, moved or resized on one side only fails here).

use std::mem::{offset_of, size_of};
use std::path::Path;
use std::process::Command;

use nanet_c::{NanetClopConfig, NanetDatagram, NanetEvent, NanetPortConfig};

macro_rules! rust_layout {
    ($t:ty, $c:literal, [$($f:ident),* $(,)?]) => {{
        let mut v = vec![(format!("{} size", $c), size_of::<$t>())];
        $(v.push((format!("{} {}", $c, stringify!($f)), offset_of!($t, $f)));)*
        v
    }};
}

/// `printf` lines of the C program for a struct's size and fields.
fn c_lines(c: &str, fields: &[(String, usize)]) -> String {
    fields
        .iter()
        .map(|(name, _)| {
            let field = name.strip_prefix(&format!("{c} ")).unwrap();
            let expr = if field == "size" {
                format!("sizeof({c})")
            } else {
                format!("offsetof({c}, {field})")
            };
            format!("    printf(\"{name} %zu\\n\", {expr});\n")
        })
        .collect()
}

#[test]
fn the_headers_structs_are_the_rust_layout() {
    let structs = [
        (
            "nanet_event",
            rust_layout!(
                NanetEvent,
                "nanet_event",
                [
                    kind,
                    clop,
                    buffer,
                    bytes,
                    packets,
                    first_seq,
                    last_seq,
                    sop_at_mac,
                    header_parsed,
                    first_dma_beat,
                    last_dma_beat
                ]
            ),
        ),
        (
            "nanet_clop_config",
            rust_layout!(
                NanetClopConfig,
                "nanet_clop_config",
                [
                    port,
                    udp_port,
                    buffers,
                    buffer_bytes,
                    layout,
                    flush_timeout_us,
                    skip_held
                ]
            ),
        ),
        (
            "nanet_datagram",
            rust_layout!(
                NanetDatagram,
                "nanet_datagram",
                [port, dst_ip, dst_port, src_port, payload, len]
            ),
        ),
        (
            "nanet_port_config",
            rust_layout!(
                NanetPortConfig,
                "nanet_port_config",
                [mac, ip, netmask, gateway]
            ),
        ),
    ];
    let mut program = String::from(
        "#include <stdio.h>\n#include <stddef.h>\n#include \"nanet.h\"\nint main(void) {\n",
    );
    for (c, fields) in &structs {
        program += &c_lines(c, fields);
    }
    program += "    return 0;\n}\n";
    let dir = std::env::temp_dir().join(format!("nanet-layout-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (src, exe) = (dir.join("layout.c"), dir.join("layout"));
    std::fs::write(&src, program).unwrap();
    let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("../include");
    let cc = Command::new("cc")
        .args(["-std=c11", "-Wall", "-Werror", "-I"])
        .arg(&include)
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .output()
        .expect("a C compiler (cc)");
    assert!(
        cc.status.success(),
        "{}",
        String::from_utf8_lossy(&cc.stderr)
    );
    let out = Command::new(&exe).output().unwrap();
    let printed = String::from_utf8(out.stdout).unwrap();
    let want: String = structs
        .iter()
        .flat_map(|(_, f)| f.iter())
        .map(|(name, v)| format!("{name} {v}\n"))
        .collect();
    assert_eq!(printed, want);
    std::fs::remove_dir_all(&dir).ok();
}

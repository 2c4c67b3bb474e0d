//! The host benchmark runs (short form) and writes its JSON.

#[test]
fn host_bench_writes_its_figures() {
    let dir = std::env::temp_dir().join(format!("nanet-host-bench-{}", std::process::id()));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_nanet-host-bench"))
        .args(["--events", "20000", "--out"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json = std::fs::read_to_string(dir.join("host.json")).unwrap();
    for key in [
        "\"packets_per_event\": 1",
        "\"packets_per_event\": 64",
        "\"per_event_ns\"",
        "\"meets_target\"",
    ] {
        assert!(json.contains(key), "{key} missing from {json}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

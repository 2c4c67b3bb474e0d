//! `nanet-sim replay` end to end: a capture in, the CLI run as a user would, its pcap read back by
//! tshark (Wireshark's dissectors, an independent decoder) and its JSON by serde.

use std::process::Command;

use nanet_sim::traffic::packets::*;
use nanet_sim::traffic::pcap::{write_pcap, CapturedFrame};

const PORT: Endpoint = Endpoint::new([0x02, 0x4E, 0x41, 0x4E, 0x45, 0x54], [172, 16, 0, 1]);
const HOST: Endpoint = Endpoint::new([0x02, 0x11, 0x22, 0x33, 0x44, 0x55], [172, 16, 0, 9]);

fn tshark(args: &[&str]) -> String {
    let out = Command::new("tshark").args(args).output().unwrap_or_else(|e| {
        panic!("tshark is needed to check pcaps ({e}); `make test` installs it, or: apt-get install tshark")
    });
    assert!(
        out.status.success(),
        "tshark failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn replay_cli_writes_a_pcap_tshark_reads_and_the_counters() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.pcap");
    let output = dir.path().join("out.pcap");
    let counters = dir.path().join("counters.json");
    let delivered = dir.path().join("delivered.json");
    let mut frames = vec![
        arp_request(&HOST, PORT.ip),
        icmp_echo_request(&HOST, &PORT, 1, 1, b"abc"),
    ];
    for i in 0..5u16 {
        frames.push(udp_frame(
            &HOST,
            &PORT,
            7000 + i,
            5000,
            &vec![i as u8; 100 * i as usize],
        ));
    }
    frames.push(icmp_echo_request(&HOST, &PORT, 1, 2, &[0x77; 300]));
    let mut bad = udp_frame(&HOST, &PORT, 1, 2, b"corrupted payload!");
    bad[45] ^= 4;
    frames.push(bad);
    frames.push(vec![0xAB; 70]);
    write_capture(&input, &frames);

    let status = Command::new(env!("CARGO_BIN_EXE_nanet-sim"))
        .args(["replay", "--pcap"])
        .arg(&input)
        .arg("--out")
        .arg(&output)
        .arg("--counters")
        .arg(&counters)
        .arg("--delivered")
        .arg(&delivered)
        .args(["--mac", "02:4e:41:4e:45:54", "--ip", "172.16.0.1"])
        .status()
        .unwrap();
    assert!(status.success());

    let c: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&counters).unwrap()).unwrap();
    assert_eq!(c["frames_in"], 10);
    assert_eq!(c["counters"]["rx_packets"], 5);
    assert_eq!(c["counters"]["arp_replies_out"], 1);
    assert_eq!(c["counters"]["icmp_echo_replies"], 2);
    assert_eq!(c["counters"]["drop_udp_checksum"], 1);
    assert_eq!(c["counters"]["drop_not_for_us"], 1, "the garbage frame");
    let d: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&delivered).unwrap()).unwrap();
    let d = d.as_array().unwrap();
    assert_eq!(d.len(), 5);
    assert_eq!(d[3]["src_ip"], "172.16.0.9");
    assert_eq!(d[3]["src_port"], 7003);
    assert_eq!(d[3]["len"], 300);

    let out = output.to_str().unwrap();
    let lines = tshark(&[
        "-r",
        out,
        "-T",
        "fields",
        "-e",
        "_ws.col.Protocol",
        "-e",
        "_ws.col.Info",
    ]);
    let lines: Vec<&str> = lines.lines().collect();
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert!(
        lines[0].starts_with("ARP") && lines[0].contains("172.16.0.1 is at 02:4e:41:4e:45:54"),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].starts_with("ICMP") && lines[1].contains("Echo (ping) reply"),
        "{}",
        lines[1]
    );
    assert!(lines[2].contains("seq=2"), "{}", lines[2]);
    // No dissector complaint about any frame (bad checksums, malformed packets).
    let expert = tshark(&[
        "-r",
        out,
        "-o",
        "ip.check_checksum:TRUE",
        "-Y",
        "_ws.expert.severity >= warning || _ws.malformed",
    ]);
    assert!(expert.trim().is_empty(), "tshark flags frames: {expert}");
}

/// Writes `frames` to a pcap file, time stamps 1 us apart.
fn write_capture(path: &std::path::Path, frames: &[Vec<u8>]) {
    let caps: Vec<_> = frames
        .iter()
        .enumerate()
        .map(|(i, f)| CapturedFrame {
            time_ns: 1_000 * i as u64,
            bytes: f.clone(),
        })
        .collect();
    write_pcap(path, &caps).unwrap();
}

/// Runs `nanet-sim replay` on `frames` (time stamps 1 us apart) with `extra` arguments; returns
/// its stdout and the counters JSON.
fn replay_cli(frames: &[Vec<u8>], extra: &[&str]) -> (String, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.pcap");
    let counters = dir.path().join("counters.json");
    write_capture(&input, frames);
    let out = Command::new(env!("CARGO_BIN_EXE_nanet-sim"))
        .args(["replay", "--ip", "172.16.0.1", "--pcap"])
        .arg(&input)
        .arg("--counters")
        .arg(&counters)
        .args(extra)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let c = serde_json::from_str(&std::fs::read_to_string(&counters).unwrap()).unwrap();
    (String::from_utf8(out.stdout).unwrap(), c)
}

/// A capture taken on the sending host holds frames as its stack handed them to the MAC: an ARP
/// request of 42 bytes, a UDP datagram of 4 bytes in 46. On the wire the MAC pads them to 60, and
/// replay does the same (saying so); `--raw` feeds them short, and the port counts runts.
#[test]
fn replay_pads_frames_captured_on_the_sender_and_raw_keeps_them_short() {
    let unpadded = |mut f: Vec<u8>, len: usize| {
        f.truncate(len);
        f
    };
    let frames = vec![
        unpadded(arp_request(&HOST, PORT.ip), 42),
        unpadded(
            udp_frame(&HOST, &PORT, 7000, 5000, b"abcd"),
            14 + 20 + 8 + 4,
        ),
        unpadded(
            udp_frame(&HOST, &PORT, 7001, 5000, &[9; 10]),
            14 + 20 + 8 + 10,
        ),
        udp_frame(&HOST, &PORT, 7002, 5000, &[7; 100]),
    ];
    let (stdout, c) = replay_cli(&frames, &[]);
    assert_eq!(c["padded_frames"], 3);
    assert!(
        stdout.contains("3 frames shorter than 60 bytes padded"),
        "{stdout}"
    );
    assert_eq!(c["counters"]["arp_replies_out"], 1, "{c}");
    assert_eq!(c["counters"]["rx_packets"], 3, "{c}");
    assert_eq!(c["counters"]["drop_runt"], 0, "{c}");

    let (stdout, c) = replay_cli(&frames, &["--raw"]);
    assert_eq!(c["padded_frames"], 0);
    assert!(!stdout.contains("padded"), "{stdout}");
    assert_eq!(c["counters"]["drop_runt"], 3, "{c}");
    assert_eq!(c["counters"]["rx_packets"], 1, "{c}");
    assert_eq!(c["counters"]["arp_replies_out"], 0, "{c}");
}

#[test]
fn replay_cli_traces_to_vcd_on_request_on_either_engine() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.pcap");
    let caps = vec![CapturedFrame {
        time_ns: 0,
        bytes: arp_request(&HOST, PORT.ip),
    }];
    write_pcap(&input, &caps).unwrap();
    for engine in ["rusthdl", "verilator"] {
        let vcd = dir.path().join(format!("{engine}.vcd"));
        let status = Command::new(env!("CARGO_BIN_EXE_nanet-sim"))
            .args(["replay", "--ip", "172.16.0.1", "--engine", engine, "--pcap"])
            .arg(&input)
            .arg("--vcd")
            .arg(&vcd)
            .status()
            .unwrap();
        assert!(status.success(), "{engine}");
        let text = std::fs::read_to_string(&vcd).unwrap();
        assert!(
            text.contains("$enddefinitions"),
            "{engine}: not a VCD header"
        );
        assert!(
            text.contains("mac_rx") && text.contains("mac_tx"),
            "{engine}: the core's ports are traced"
        );
        assert!(
            text.lines().filter(|l| l.starts_with('#')).count() > 1000,
            "{engine}: time steps recorded"
        );
    }
}

#[test]
fn a_bad_engine_name_is_refused_with_the_choices() {
    let out = Command::new(env!("CARGO_BIN_EXE_nanet-sim"))
        .args(["demo", "--engine", "fpga"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("rusthdl, verilator, both"));
    assert!(
        matches!("spice".parse::<nanet_sim::engine::EngineKind>(), Err(e) if e.to_string().contains("NANET_ENGINE"))
    );
}

#[test]
fn replay_cli_explains_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope.pcap");
    let out = Command::new(env!("CARGO_BIN_EXE_nanet-sim"))
        .args(["replay", "--ip", "10.0.0.1", "--pcap"])
        .arg(&missing)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cannot open") && err.contains("nope.pcap"),
        "{err}"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_nanet-sim"))
        .args(["replay", "--ip", "10.0.0.1", "--mac", "02:00:00", "--pcap"])
        .arg(&missing)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("six bytes"));
}

/// The demo on Verilator with `var` set to `value` in its environment: it must fail (`why` if it
/// does not); its standard error.
fn verilator_demo_error(var: &str, value: &str, why: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_nanet-sim"))
        .args(["demo", "--engine", "verilator"])
        .env(var, value)
        .output()
        .unwrap();
    assert!(!out.status.success(), "{why}");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_missing_verilator_is_an_error_that_says_how_to_install_it() {
    let err = verilator_demo_error(
        "PATH",
        "/nonexistent",
        "must not fall back to another engine silently",
    );
    assert!(
        err.contains("`verilator` was not found") && err.contains("apt-get install verilator"),
        "{err}"
    );
}

#[test]
fn an_optimisation_level_out_of_range_is_an_error_that_names_the_setting() {
    let err = verilator_demo_error(
        "NANET_VERILATOR_OPT",
        "fast",
        "must not build at a level of its own",
    );
    assert!(
        err.contains("NANET_VERILATOR_OPT=\"fast\"") && err.contains("0 to 3 or g"),
        "{err}"
    );
}

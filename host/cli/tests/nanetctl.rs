//! nanetctl's commands on the simulated card.

use std::process::Command;

fn nanetctl(args: &[&str]) -> (bool, String, String) {
    nanetctl_on("sim", args)
}

fn nanetctl_on(device: &str, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_nanetctl"))
        .args(["--device", device])
        .args(args)
        .output()
        .expect("nanetctl runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn info_regs_and_stats_describe_the_card() {
    let (ok, out, err) = nanetctl(&["info"]);
    assert!(ok, "{err}");
    let core = nanet_contract::offload::VERSION_VALUE;
    let core = format!("port 3: offload core v{}.{}", core >> 16, core & 0xFFFF);
    assert!(
        out.contains("simulated card") && out.contains(&core),
        "{out}"
    );
    use nanet_contract::card::{CONTRACT_MAJOR, CONTRACT_MINOR};
    let version = format!("contract v{CONTRACT_MAJOR}.{CONTRACT_MINOR}");
    assert!(
        out.contains(&version)
            && out.contains("transmit ring 3 at 0x1b00")
            && out.contains("port 3 at 0x5000")
            && out.contains("4 ports, PCIe Gen2 x8, 128-bit Avalon-ST;"),
        "the card block: {out}"
    );
    let (ok, out, err) = nanetctl(&["regs"]);
    assert!(ok, "{err}");
    assert!(out.contains("0x0000  card      magic"), "{out}");
    assert!(out.contains("0x1000  rx        clop_command"), "{out}");
    assert!(out.contains("port 2    stream_table"), "{out}");
    assert!(out.contains("0x1910  tx ring 1 tx_head"), "{out}");
    let (ok, out, err) = nanetctl(&["arp"]);
    assert!(ok, "{err}");
    assert!(out.contains("port 3: 0 entries"), "{out}");
    let (ok, out, err) = nanetctl(&["clops"]);
    assert!(ok, "{err}");
    assert!(out.contains("no CLOP is registered"), "{out}");
    let (ok, out, err) = nanetctl(&["stats", "--all"]);
    assert!(ok, "{err}");
    assert!(
        out.contains("receive engine:") && out.contains("drop_udp_checksum"),
        "{out}"
    );
}

#[test]
fn rx_receives_generated_streams_and_reports_them() {
    let (ok, out, err) = nanetctl(&[
        "rx",
        "--stream",
        "0:5000",
        "--stream",
        "3:7000",
        "--sim-traffic",
        "512@5",
        "--datagrams",
        "200",
        "--duration",
        "60",
    ]);
    assert!(ok, "{err}");
    for line in ["port 0 udp 5000", "port 3 udp 7000"] {
        let l = out
            .lines()
            .find(|l| l.starts_with(line))
            .unwrap_or_else(|| panic!("{out}"));
        assert!(
            !l.contains("lost"),
            "nothing lost below the memory's bandwidth: {l}"
        );
        let n: u64 = l.split_whitespace().nth(4).unwrap().parse().unwrap();
        assert!(n >= 200, "{l}");
    }
}

/// A 40-frame capture into four streams of one port (`--device sim:pcap=FILE@0`): every stream is
/// registered before the far end sends, so each gets all five of its datagrams; the capture's
/// unpadded ARP requests (42 bytes, as captured on the sender) are padded as its MAC would, not
/// counted as runts; datagrams for an unregistered UDP port are counted.
#[test]
fn rx_registers_every_stream_before_a_capture_plays_and_pads_its_runts() {
    use nanet_sim::traffic::packets::{arp_request, udp_frame, Endpoint};
    use nanet_sim::traffic::pcap::{write_pcap, CapturedFrame};
    // Port 0 as `nanetctl rx` addresses it (default --ip 10.0.0.10).
    let card = Endpoint::new([0x02, 0x4E, 0x4E, 0, 0, 0], [10, 0, 0, 10]);
    let host = Endpoint::new([0x02, 0x11, 0x22, 0x33, 0x44, 0x55], [10, 0, 0, 99]);
    let mut frames = vec![];
    for i in 0..20u16 {
        frames.push(if i % 2 == 0 {
            let mut arp = arp_request(&host, card.ip);
            arp.truncate(42);
            arp
        } else {
            udp_frame(&host, &card, 4000, 6000, &[0x5A; 32])
        });
        frames.push(udp_frame(&host, &card, 4000, 5000 + i % 4, &[i as u8; 64]));
    }
    let dir = tempfile::tempdir().unwrap();
    let pcap = dir.path().join("four-streams.pcap");
    let caps: Vec<CapturedFrame> = frames
        .into_iter()
        .enumerate()
        .map(|(i, bytes)| CapturedFrame {
            time_ns: 1000 * i as u64,
            bytes,
        })
        .collect();
    write_pcap(&pcap, &caps).unwrap();
    let device = format!("sim:ports=1,pcap={}@0", pcap.display());
    let mut args = vec!["rx"];
    for s in ["0:5000", "0:5001", "0:5002", "0:5003"] {
        args.extend(["--stream", s]);
    }
    args.extend(["--datagrams", "5", "--duration", "30", "--timeout-us", "5"]);
    let (ok, out, err) = nanetctl_on(&device, &args);
    assert!(ok, "{err}");
    for udp in 5000..5004 {
        let l = out
            .lines()
            .find(|l| l.starts_with(&format!("port 0 udp {udp}")))
            .unwrap_or_else(|| panic!("{out}"));
        let n: u64 = l.split_whitespace().nth(4).unwrap().parse().unwrap();
        assert_eq!(n, 5, "{l}");
    }
    assert!(
        out.contains("10 captured frames shorter than 60 bytes padded"),
        "{out}"
    );
    let drops = out
        .lines()
        .find(|l| l.starts_with("port 0 drops"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        drops.contains("drop_no_stream 10") && !drops.contains("runt"),
        "{drops}"
    );
}

#[test]
fn bad_arguments_are_explained() {
    let (ok, _, err) = nanetctl(&["rx", "--stream", "9:5000", "--duration", "0.1"]);
    assert!(!ok);
    assert!(err.contains("port 9 does not exist"), "{err}");
    let (ok, _, err) = nanetctl(&["rx", "--layout", "zigzag"]);
    assert!(!ok);
    assert!(err.contains("header or raw"), "{err}");
    let out = Command::new(env!("CARGO_BIN_EXE_nanetctl"))
        .args(["--device", "0000:ff:1f.7", "info"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("lspci"));
}

#[test]
fn rx_into_gpu_memory_checks_every_sequence_number() {
    let (ok, out, err) = nanetctl(&[
        "rx",
        "--gpu",
        "0",
        "--stream",
        "1:5100",
        "--sim-traffic",
        "700@5",
        "--datagrams",
        "200",
        "--duration",
        "60",
    ]);
    assert!(ok, "{err}");
    assert!(out.contains("buffers in GPU memory: GPU stand-in"), "{out}");
    let l = out
        .lines()
        .find(|l| l.starts_with("port 1 udp 5100"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(!l.contains("lost"), "{l}");
    let n: u64 = l.split_whitespace().nth(4).unwrap().parse().unwrap();
    assert!(n >= 200, "{l}");
}

#[test]
fn gen_sends_through_a_cable_and_rx_times_the_flight() {
    let (ok, out, err) = nanetctl_on(
        "sim:loopback=0:1",
        &[
            "gen",
            "--port",
            "0",
            "--to",
            "10.0.0.11:5000",
            "--bytes",
            "256",
            "--count",
            "50",
        ],
    );
    assert!(ok, "{err}");
    assert!(
        out.contains("port 0 sent 50 datagrams of 256 bytes to 10.0.0.11:5000"),
        "{out}"
    );
    assert!(out.contains("tx_packets 50"), "{out}");
    let (ok, out, err) = nanetctl_on(
        "sim:loopback=0:1",
        &[
            "rx",
            "--stream",
            "1:5000",
            "--gen",
            "0:512@5",
            "--datagrams",
            "200",
            "--duration",
            "60",
        ],
    );
    assert!(ok, "{err}");
    let line = out
        .lines()
        .find(|l| l.starts_with("port 1 udp 5000"))
        .expect(&out);
    assert!(line.contains("flight ") && !line.contains("lost"), "{line}");
    // Without a cable nobody answers the generator's ARP: the drops are counted and explained.
    let (ok, out, err) = nanetctl(&[
        "gen",
        "--to",
        "10.0.0.50:9",
        "--count",
        "2",
        "--bytes",
        "64",
    ]);
    assert!(ok, "{err}");
    assert!(out.contains("did not answer ARP"), "{out}");
    let (ok, _, err) = nanetctl(&["gen", "--to", "10.0.0.11:5000", "--bytes", "8"]);
    assert!(!ok && err.contains("16 to 1472"), "{err}");
}

#[test]
fn tx_sends_from_host_memory_and_counts() {
    let (ok, out, err) = nanetctl_on(
        "sim:loopback=0:1",
        &[
            "tx",
            "--port",
            "1",
            "--to",
            "10.0.0.10:5000",
            "--bytes",
            "256",
            "--count",
            "100",
            "--batch",
            "7",
        ],
    );
    assert!(ok, "{err}");
    assert!(
        out.contains("port 1 sent 100 of 100 datagrams of 256 bytes to 10.0.0.10:5000"),
        "{out}"
    );
    assert!(
        out.contains("tx_sent 100") && out.contains("tx_packets 100"),
        "{out}"
    );
    let (ok, _, err) = nanetctl(&[
        "tx",
        "--to",
        "10.0.0.11:5000",
        "--bytes",
        "0",
        "--count",
        "1",
    ]);
    assert!(!ok && err.contains("1 to 1472"), "{err}");
    let (ok, _, err) = nanetctl(&["tx", "--to", "10.0.0.11:5000", "--batch", "0"]);
    assert!(!ok && err.contains("--batch"), "{err}");
}

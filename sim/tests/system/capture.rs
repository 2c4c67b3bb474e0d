//! Real captures through the whole card (`nanet_sim::testbench::capture`): every datagram the
//! reference receiver accepts lands byte-exact and in order in its CLOP, every other frame is
//! counted under the reason the reference gives. `real.pcap` whole on Verilator, a slice of it on
//! the engine `NANET_ENGINE` names (in lockstep in `make test-long`), `negative.pcap` (nothing
//! for the card); and `nanet-sim capture` as a user runs it.

use std::path::PathBuf;
use std::process::Command;

use nanet_sim::engine::EngineKind;
use nanet_sim::testbench::capture::{capture_through_card, CaptureCard, CaptureReport};
use nanet_sim::traffic::packets::{udp_frame, Endpoint};
use nanet_sim::traffic::pcap::{read_pcap, write_frames};

/// The address the shared captures are retargeted to (`../shared/captures/README.md`).
const CARD: CaptureCard = CaptureCard {
    us: Endpoint::new([0x02, 0x4E, 0x41, 0x4E, 0x45, 0x54], [192, 0, 2, 10]),
    netmask: 0xFFFF_FF00,
};

/// `../shared/captures/NAME` beside the repository (or under `NANET_CAPTURES`).
fn shared_capture(name: &str) -> PathBuf {
    let dir = std::env::var_os("NANET_CAPTURES")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/captures"));
    let p = dir.join(name);
    assert!(
        p.exists(),
        "{} missing: the real captures live in shared/captures beside the repository (or set NANET_CAPTURES)",
        p.display()
    );
    p
}

fn run(name: &str, engine: EngineKind, limit: Option<usize>) -> CaptureReport {
    let frames = read_pcap(&shared_capture(name)).unwrap();
    let r = capture_through_card(engine, &frames, CARD, limit).unwrap_or_else(|e| panic!("{e}"));
    print!("{name}: {r}");
    assert!(r.mismatches.is_empty(), "{:#?}", r.mismatches);
    r
}

#[test]
fn real_captures_through_the_whole_card_land_as_the_reference_receiver_says() {
    let r = run("real.pcap", EngineKind::Verilator, None);
    assert_eq!(r.frames, 1665);
    assert!(r.delivered_total() > 500, "{}", r.delivered_total());
    assert!(r.delivered.len() >= 40, "{} CLOPs", r.delivered.len());
    for reason in [
        "drop_oversize",
        "drop_not_for_us",
        "drop_ip_checksum",
        "drop_fragment",
        "drop_udp_checksum",
        "drop_unknown_protocol",
        "drop_no_stream",
    ] {
        assert!(r.drops.contains_key(reason), "no {reason}: {:?}", r.drops);
    }
    assert!(r.arp > 0 && r.echo > 0);
    let n = run("negative.pcap", EngineKind::Verilator, None);
    assert_eq!(n.delivered_total(), 0);
    assert_eq!(
        n.drops.values().sum::<u64>(),
        n.frames as u64 - n.arp - n.echo
    );
}

/// The first 12 frames of `real.pcap` on the engine `NANET_ENGINE` names: a LONG test, on
/// Verilator in `make test` (where the whole capture runs too) and in lockstep in `make
/// test-long` (the whole card in lockstep is slow: three minutes for the slice).
#[test]
fn a_slice_of_a_real_capture_through_the_card() {
    let engine = EngineKind::from_env().unwrap_or_else(|e| panic!("{e}"));
    let r = run("real.pcap", engine, Some(12));
    assert!(r.delivered_total() >= 10, "{}", r.delivered_total());
}

/// `nanet-sim capture` on a capture a user made: empty datagrams (UDP length 8) among short ones
/// on two UDP ports, each into its CLOP.
#[test]
fn capture_cli_delivers_empty_datagrams_into_their_clops() {
    let peer = Endpoint::new([0x02, 0, 0, 0, 0, 0x77], [192, 0, 2, 77]);
    let mut frames = vec![];
    for i in 0..24u16 {
        let len = if i % 3 == 0 { 0 } else { i as usize };
        frames.push(udp_frame(
            &peer,
            &CARD.us,
            4000,
            7000 + i % 2,
            &vec![i as u8; len],
        ));
    }
    frames.push(udp_frame(&peer, &CARD.us, 4000, 7001, &[]));
    let dir = tempfile::tempdir().unwrap();
    let pcap = dir.path().join("empty.pcap");
    write_frames(&pcap, frames, 1000).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_nanet-sim"))
        .args(["capture", "--pcap"])
        .arg(&pcap)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("25 datagrams delivered into 2 CLOPs"),
        "{stdout}"
    );
    assert!(stdout.contains("udp 7000: 12 datagrams"), "{stdout}");
    assert!(stdout.contains("udp 7001: 13 datagrams"), "{stdout}");
    assert!(stdout.contains("every datagram and every drop"), "{stdout}");
}

//! The Linux kernel as the simulated card's peer (`sim:tap=PORT@NAMESPACE`): a port's link goes to
//! a TAP device in a network namespace this test creates, where ordinary Linux sockets and the
//! `ping` program talk to the card through the kernel's own ARP, IPv4, UDP and ICMP.
//!
//! Creating the namespace needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN). Where the process lacks
//! them, the test is reported ignored, with the reason on stderr, rather than passing unseen. The
//! harness is libtest-mimic for that: libtest decides "ignored" at compile time only.

use std::net::UdpSocket;
use std::process::Command;
use std::time::{Duration, Instant};

use libtest_mimic::{Arguments, Failed, Trial};
use nanet::{ClopConfig, Device, Event, PortConfig, SendTo};
use nanet_sim::world::linux_peer::{available, in_namespace};
use rand::{Rng, SeedableRng};

const CARD_IP: [u8; 4] = [10, 0, 0, 10];
/// The Linux side's address (the simulated card's `SIM_PEER`).
const LINUX_IP: [u8; 4] = [10, 0, 0, 99];
/// Wall time any one step may take: the kernel retries ARP for 3 s, the card answers within
/// microseconds of its own time, and even a loaded machine simulates far more than that.
const STEP: Duration = Duration::from_secs(60);

fn main() {
    let args = Arguments::from_args();
    let why_not = available().err();
    let name = "a_linux_socket_sends_into_a_clop_and_receives_what_the_card_sends";
    if let Some(e) = &why_not {
        eprintln!("linux_peer: {name} ignored: {e}");
    }
    let trials =
        vec![Trial::test(name, linux_socket_both_ways).with_ignored_flag(why_not.is_some())];
    libtest_mimic::run(&args, trials).exit();
}

fn ip_text(ip: [u8; 4]) -> String {
    std::net::Ipv4Addr::from(ip).to_string()
}

/// The next event of `clop` within [`STEP`] of wall time.
fn next_event(clop: &nanet::Clop) -> Result<Event, Failed> {
    let start = Instant::now();
    while start.elapsed() < STEP {
        if let Some(e) = clop.wait(Duration::from_millis(20))? {
            return Ok(e);
        }
    }
    Err(format!("no event from the card in {STEP:?}").into())
}

fn linux_socket_both_ways() -> Result<(), Failed> {
    let ns = format!("nanet-test-{}", std::process::id());
    let dev = Device::open(&format!("sim:tap=0@{ns}"))?;
    let sim = dev.sim().expect("a simulated card");
    assert_eq!(sim.linux_namespace(0), Some(ns.as_str()));
    dev.configure_port(
        0,
        &PortConfig {
            mac: [0x02, 0, 0, 0, 1, 0],
            ip: CARD_IP,
            netmask: [255, 255, 255, 0],
            gateway: [10, 0, 0, 1],
        },
    )?;
    let clop = dev.register(
        &ClopConfig::new(0, 5000)
            .buffers(8, 8192)
            .flush_timeout(Some(Duration::from_micros(20))),
    )?;

    // Linux to the card: a socket in the namespace sends distinct datagrams of every size class;
    // the kernel resolves the card by ARP first (the card answers), then sends them.
    let sock = in_namespace(&ns, || UdpSocket::bind((ip_text(LINUX_IP), 6000)))??;
    sock.set_read_timeout(Some(STEP))?;
    let mut rng = rand::rngs::StdRng::seed_from_u64(21);
    let sent: Vec<Vec<u8>> = [1usize, 7, 18, 64, 300, 1000, 1471, 1472, 512, 2]
        .iter()
        .map(|&n| (0..n).map(|_| rng.gen()).collect())
        .collect();
    for p in &sent {
        sock.send_to(p, (ip_text(CARD_IP), 5000))?;
    }
    let mut got: Vec<Vec<u8>> = vec![];
    while got.len() < sent.len() {
        let e = next_event(&clop)?;
        let buf = clop.take(&e)?;
        for p in buf.packets()? {
            assert_eq!((p.header.src_ip, p.header.src_port), (LINUX_IP, 6000));
            got.push(p.payload.to_vec());
        }
    }
    assert_eq!(got, sent, "every datagram from Linux, byte-exact, in order");

    // The card to Linux: datagrams through port 0's transmit ring (the card resolves Linux by ARP);
    // the kernel checks their IPv4 headers and hands them to the socket.
    let to = SendTo {
        dst_ip: LINUX_IP,
        dst_port: 6000,
        src_port: 5000,
    };
    for p in &sent {
        dev.send(0, to, p)?;
    }
    let mut buf = vec![0u8; 2048];
    for (i, p) in sent.iter().enumerate() {
        let (n, from) = sock
            .recv_from(&mut buf)
            .map_err(|e| format!("datagram {i} from the card: {e}"))?;
        assert_eq!(from.to_string(), format!("{}:5000", ip_text(CARD_IP)));
        assert_eq!(&buf[..n], &p[..], "datagram {i} from the card");
    }

    // `ping` in the namespace: the card's ICMP echo responder answers the kernel's requests.
    let ping = Command::new("ip")
        .args([
            "netns", "exec", &ns, "ping", "-c", "3", "-i", "0.2", "-W", "10",
        ])
        .arg(ip_text(CARD_IP))
        .output()
        .map_err(|e| format!("running ping: {e}"))?;
    let text = String::from_utf8_lossy(&ping.stdout);
    assert!(
        ping.status.success() && text.contains("3 received"),
        "ping in {ns}: {text}{}",
        String::from_utf8_lossy(&ping.stderr)
    );

    // Nothing went wrong on either side; every frame Linux sent was accounted for.
    let stats = sim.stats();
    assert!(stats.faults.is_empty(), "card faults: {:?}", stats.faults);
    assert!(
        stats.linux_peer_errors.is_empty(),
        "{:?}",
        stats.linux_peer_errors
    );
    let counters = dev.port_counters(0)?;
    let counter = |name: &str| counters.iter().find(|(n, _)| *n == name).map(|c| c.1);
    assert_eq!(counter("forwarded"), Some(sent.len() as u32));
    assert_eq!(counter("icmp_echo_replies"), Some(3));
    let dropped: u32 = counters
        .iter()
        .filter(|(n, _)| n.starts_with("drop_"))
        .map(|c| c.1)
        .sum();
    assert_eq!(
        dropped, 0,
        "the card dropped frames from Linux: {counters:?}"
    );
    assert!(stats.frames_from_linux >= sent.len() as u64 + 4 && stats.frames_to_linux > 0);
    // Closing the card (the last handle to it) deletes the namespace.
    drop((clop, sim, dev));
    assert!(
        !std::path::Path::new("/run/netns").join(&ns).exists(),
        "the namespace {ns} is deleted with the card"
    );
    Ok(())
}

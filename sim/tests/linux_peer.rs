//! `nanet-sim tap`: one port with the Linux kernel as its peer, through a TAP device in a network
//! namespace the command creates. A Linux UDP socket's datagrams come back echoed through the
//! port's transmit path, `ping` gets its replies from the port, and Ctrl-C deletes the namespace.
//!
//! Needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN); without, the test is reported ignored with the
//! reason on stderr (libtest-mimic: libtest decides "ignored" at compile time only).

use std::io::{BufRead, BufReader, Read};
use std::net::UdpSocket;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use libtest_mimic::{Arguments, Failed, Trial};
use nanet_sim::world::linux_peer::{available, in_namespace};

fn main() {
    let args = Arguments::from_args();
    let why_not = available().err();
    let name = "nanet_sim_tap_echoes_a_linux_socket_answers_ping_and_cleans_up_on_ctrl_c";
    if let Some(e) = &why_not {
        eprintln!("linux_peer: {name} ignored: {e}");
    }
    let trials = vec![Trial::test(name, tap_command).with_ignored_flag(why_not.is_some())];
    libtest_mimic::run(&args, trials).exit();
}

fn tap_command() -> Result<(), Failed> {
    let ns = format!("nanet-simtest-{}", std::process::id());
    let mut child = Command::new(env!("CARGO_BIN_EXE_nanet-sim"))
        .args(["tap", "--namespace", &ns, "--echo", "--seconds", "300"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let mut out = BufReader::new(child.stdout.take().expect("piped"));
    // The command says how to reach the port once the namespace is up.
    let mut said = String::new();
    while !said.contains("try: ip netns exec") {
        if out.read_line(&mut said)? == 0 {
            let mut err = String::new();
            child
                .stderr
                .take()
                .expect("piped")
                .read_to_string(&mut err)?;
            return Err(format!("nanet-sim tap ended early: {said}{err}").into());
        }
    }
    assert!(
        Path::new("/run/netns").join(&ns).exists(),
        "namespace {ns} created"
    );

    let sock = in_namespace(&ns, || UdpSocket::bind("10.0.0.99:7000"))??;
    sock.set_read_timeout(Some(Duration::from_secs(60)))?;
    let sent: Vec<Vec<u8>> = (0..5u8)
        .map(|i| (0..(1 + 300 * i as usize)).map(|j| (j as u8) ^ i).collect())
        .collect();
    let mut buf = [0u8; 2048];
    for p in &sent {
        sock.send_to(p, "10.0.0.10:5000")?;
        let (n, from) = sock.recv_from(&mut buf)?;
        assert_eq!(from.to_string(), "10.0.0.10:5000");
        assert_eq!(&buf[..n], &p[..], "the echo of {} bytes", p.len());
    }

    let ping = Command::new("ip")
        .args([
            "netns", "exec", &ns, "ping", "-c", "2", "-i", "0.2", "-W", "10",
        ])
        .arg("10.0.0.10")
        .output()?;
    let text = String::from_utf8_lossy(&ping.stdout);
    assert!(
        ping.status.success() && text.contains("2 received"),
        "{text}"
    );

    // Ctrl-C: the command stops, prints its counters and deletes the namespace.
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let started = Instant::now();
    let status = child.wait()?;
    assert!(status.success(), "exit status after Ctrl-C: {status}");
    assert!(started.elapsed() < Duration::from_secs(30));
    let mut rest = String::new();
    out.read_to_string(&mut rest)?;
    for want in [
        "10.0.0.99:7000 -> port 5000: 1 bytes",
        "10.0.0.99:7000 -> port 5000: 1201 bytes",
        "icmp_echo_replies",
        "frames from Linux",
    ] {
        assert!(rest.contains(want), "{want:?} missing from:\n{rest}");
    }
    assert!(
        !Path::new("/run/netns").join(&ns).exists(),
        "namespace {ns} deleted on Ctrl-C"
    );
    Ok(())
}

//! The host library's API against the simulated card (Verilator on the generated Verilog unless
//! `NANET_HOST_SIM` gives other options, e.g. `engine=model`).

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use std::sync::Arc;

use nanet::gpu::{GpuDriver, GpuMemory, HostGpu, GPU_CLOP_PAGE, GPU_PAGE};
use nanet::{Clop, ClopConfig, Device, Error, Event, EventKind, FullPolicy, Layout, PortConfig};
use nanet_sim::traffic::packets::{udp_frame, Endpoint};
use rand::{Rng, SeedableRng};

const PEER: Endpoint = Endpoint::new([0x02, 0, 0, 0, 0, 0x99], [10, 0, 0, 99]);
/// How long a test waits for an event: 10 ms of the card's own time (core cycles at 250 MHz), far
/// beyond what any test here needs. Card time, not wall time: the lockstep engine runs the rust-hdl
/// model beside Verilator, hundreds of times slower, and a busy machine slows both further.
const CARD_WAIT_CYCLES: u64 = 2_500_000;

/// The card's time in core cycles, failing the test if it stands still for a minute of wall time
/// after `since` (the simulator thread is gone or stuck: no engine is that slow).
fn card_cycles(dev: &Device, since: &mut (u64, Instant)) -> u64 {
    let now = dev.sim().expect("the simulated card").stats().core_cycles;
    if now != since.0 {
        *since = (now, Instant::now());
    }
    assert!(
        since.1.elapsed() < Duration::from_secs(60),
        "the simulated card's time stood still at cycle {now} for a minute"
    );
    now
}

/// The next event of `clop` within `cycles` of card time, or None.
fn event_within(dev: &Device, clop: &Clop, cycles: u64) -> Option<Event> {
    let mut seen = (u64::MAX, Instant::now());
    let start = card_cycles(dev, &mut seen);
    loop {
        if let Some(e) = clop.wait(Duration::from_millis(10)).unwrap() {
            return Some(e);
        }
        if card_cycles(dev, &mut seen) - start >= cycles {
            return clop.poll().unwrap();
        }
    }
}

/// The next event of `clop`; fails the test, saying what it waited for, after `CARD_WAIT_CYCLES`.
fn next_event(dev: &Device, clop: &Clop, what: &str) -> Event {
    event_within(dev, clop, CARD_WAIT_CYCLES)
        .unwrap_or_else(|| panic!("no event ({what}) in {CARD_WAIT_CYCLES} card cycles"))
}

/// Lets the card run `cycles` core cycles.
fn let_card_run(dev: &Device, cycles: u64) {
    let mut seen = (u64::MAX, Instant::now());
    let start = card_cycles(dev, &mut seen);
    while card_cycles(dev, &mut seen) - start < cycles {
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn card_endpoint(port: u8) -> Endpoint {
    Endpoint::new([0x02, 0, 0, 0, 1, port], [10, 0, 0, 10 + port])
}

/// A simulated card that checks, when the test lets go of it, that it never faulted (no DMA
/// write outside the mappings, no PCIe protocol fault): every test that opens one checks that,
/// whatever else it asserts. Derefs to the [`Device`].
struct Checked(Device);

impl std::ops::Deref for Checked {
    type Target = Device;
    fn deref(&self) -> &Device {
        &self.0
    }
}

impl Drop for Checked {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            assert_no_faults(&self.0);
        }
    }
}

fn open() -> Checked {
    open_with("")
}

/// The simulated card with `extra` options besides those of `NANET_HOST_SIM`, ports configured.
fn open_with(extra: &str) -> Checked {
    let opts = std::env::var("NANET_HOST_SIM").unwrap_or_default();
    let dev = Device::open(&format!("sim:{opts},{extra}")).unwrap_or_else(|e| panic!("{e}"));
    for p in 0..dev.ports() as u8 {
        let us = card_endpoint(p);
        dev.configure_port(
            p,
            &PortConfig {
                mac: us.mac,
                ip: us.ip,
                netmask: [255, 255, 255, 0],
                gateway: [10, 0, 0, 1],
            },
        )
        .unwrap();
    }
    Checked(dev)
}

fn send(dev: &Device, port: u8, dport: u16, payload: &[u8]) {
    let frame = udp_frame(&PEER, &card_endpoint(port), 4242, dport, payload);
    dev.sim().unwrap().send_frame(port, frame).unwrap();
}

fn payloads(seed: u64, n: usize, len: std::ops::Range<usize>) -> Vec<Vec<u8>> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    (0..n)
        .map(|_| {
            let l = rng.gen_range(len.clone());
            (0..l).map(|_| rng.gen()).collect()
        })
        .collect()
}

fn assert_no_faults(dev: &Device) {
    let s = dev.sim().unwrap().stats();
    assert!(s.faults.is_empty(), "the card faulted: {:?}", s.faults);
}

fn counter(list: &[(&str, u32)], name: &str) -> u32 {
    list.iter().find(|(n, _)| *n == name).unwrap().1
}

#[test]
fn datagrams_land_in_order_and_buffers_go_back() {
    let dev = open();
    let clop = dev
        .register(
            &ClopConfig::new(0, 5000)
                .buffers(4, 2048)
                .flush_timeout(Some(Duration::from_micros(20))),
        )
        .unwrap();
    let sent = payloads(1, 60, 1..400);
    let mut buffers = 0;
    // In batches of 10 datagrams (with their headers at most three buffers), each sent once the
    // card has the previous batch's buffers back (releases are posted writes, hence the flush):
    // the card never waits for a buffer, however slowly this program runs beside it.
    for batch in sent.chunks(10) {
        dev.flush_writes().unwrap();
        for p in batch {
            send(&dev, 0, 5000, p);
        }
        let mut want: VecDeque<&Vec<u8>> = batch.iter().collect();
        while !want.is_empty() {
            let e = next_event(&dev, &clop, "an event");
            assert!(e.is_buffer(), "{e:?}");
            let buf = clop.take(&e).unwrap();
            assert_eq!(buf.packet_count(), e.packets);
            for p in buf.packets().unwrap() {
                assert_eq!(p.payload, &want.pop_front().unwrap()[..]);
                assert_eq!(p.header.src_ip, PEER.ip);
                assert_eq!(p.header.src_port, 4242);
            }
            // A buffer cannot be taken twice.
            assert!(matches!(clop.take(&e), Err(Error::NotHeld { .. })));
            buffers += 1;
            assert!(e.latency_ns() > 0.0 && e.latency_ns() < 10_000.0, "{e:?}");
        }
    }
    // 60 datagrams through 4 buffers of 2 KiB: the buffers went round several times.
    assert!(buffers > 4, "{buffers} buffers");
    assert_eq!(clop.held(), 0);
    assert_eq!(counter(&dev.rx_counters().unwrap(), "committed"), 60);
    assert_eq!(counter(&dev.port_counters(0).unwrap(), "forwarded"), 60);
    clop.deregister().unwrap();
    assert_no_faults(&dev);
}

#[test]
fn a_partly_filled_buffer_is_flushed_by_its_timeout() {
    let dev = open();
    let clop = dev
        .register(
            &ClopConfig::new(1, 6000)
                .buffers(2, 64 << 10)
                .flush_timeout(Some(Duration::from_micros(5))),
        )
        .unwrap();
    send(&dev, 1, 6000, b"lonely datagram");
    let e = next_event(&dev, &clop, "a timeout flush");
    assert_eq!(e.kind, EventKind::TimeoutFlush);
    assert_eq!((e.packets, e.first_seq, e.last_seq), (1, 0, 0));
    let buf = clop.take(&e).unwrap();
    let p: Vec<_> = buf.packets().unwrap().collect();
    assert_eq!(p.len(), 1);
    assert_eq!(p[0].payload, b"lonely datagram");
    buf.release().unwrap();
    assert_no_faults(&dev);
}

#[test]
fn raw_layout_concatenates_payloads() {
    let dev = open();
    let clop = dev
        .register(
            &ClopConfig::new(2, 7000)
                .buffers(2, 1000)
                .layout(Layout::Raw)
                .flush_timeout(None),
        )
        .unwrap();
    // Ten 100-byte datagrams fill a 1000-byte buffer exactly.
    let sent = payloads(2, 10, 100..101);
    for p in &sent {
        send(&dev, 2, 7000, p);
    }
    let e = next_event(&dev, &clop, "buffer full");
    assert_eq!(
        (e.kind, e.packets, e.bytes),
        (EventKind::BufferFull, 10, 1000)
    );
    let buf = clop.take(&e).unwrap();
    assert_eq!(buf.data(), &sent.concat()[..]);
    assert!(buf.packets().is_err(), "raw buffers have no headers");
}

#[test]
fn a_host_that_keeps_its_buffers_gets_no_free_buffer_and_drops() {
    let dev = open();
    let clop = dev
        .register(
            &ClopConfig::new(0, 5001)
                .buffers(2, 256)
                .flush_timeout(None)
                .when_full(FullPolicy::Drop),
        )
        .unwrap();
    // 100-byte payloads take 128 bytes with their header: two per buffer; the two buffers
    // hold four, the fifth has nowhere to go.
    for p in payloads(3, 8, 100..101) {
        send(&dev, 0, 5001, &p);
    }
    dev.sim().unwrap().wait_links_idle().unwrap();
    let mut kinds = vec![];
    let mut held = vec![];
    // Each event follows its frame within a few hundred card cycles: 10 us without one, no more.
    while let Some(e) = event_within(&dev, &clop, 2_500) {
        kinds.push(e.kind);
        if e.is_buffer() {
            held.push(e.buffer);
        }
    }
    assert_eq!(
        kinds,
        [
            EventKind::BufferFull,
            EventKind::BufferFull,
            EventKind::NoFreeBuffer
        ],
        "two buffers closed, then one report of the starvation"
    );
    assert_eq!(clop.held(), 2);
    assert_eq!(
        counter(&dev.rx_counters().unwrap(), "drop_no_free_buffer"),
        4
    );
    // Released buffers (never taken) go back, once.
    for b in &held {
        clop.release(*b).unwrap();
        assert!(matches!(clop.release(*b), Err(Error::NotHeld { .. })));
    }
    assert!(matches!(clop.release(1000), Err(Error::NotHeld { .. })));
    // The card fills them again, once it has the releases.
    dev.flush_writes().unwrap();
    for p in payloads(4, 2, 100..101) {
        send(&dev, 0, 5001, &p);
    }
    let e = next_event(&dev, &clop, "buffer full again");
    assert_eq!(e.kind, EventKind::BufferFull);
    assert_no_faults(&dev);
}

/// A burst of releases far beyond the card's release queue (16 entries) while the CLOP engine is
/// busy (another CLOP's datagrams into memory that takes a write beat in one cycle of fifty): the
/// library writes no more than the queue has room for by the card's `releases_taken`, keeps the
/// rest and writes them as room comes (as it polls, or in `flush_writes`), so none is lost
/// (`release_overflow` stays 0) and every buffer is filled again. (Mutation: the library writing
/// every release at once loses 80 of the first 96. The library's waiting releases themselves are
/// tested on the synthetic card, where the engine takes releases when the test says.)
#[test]
fn a_burst_of_releases_while_the_engine_is_busy_loses_none() {
    const BUFFERS: u32 = 96;
    let dev = open_with("stall=0.98");
    let clop = dev
        .register(
            &ClopConfig::new(0, 5002)
                .buffers(BUFFERS, 128)
                .flush_timeout(None)
                .when_full(FullPolicy::Drop),
        )
        .unwrap();
    let busy = dev
        .register(
            &ClopConfig::new(1, 5003)
                .buffers(64, 2048)
                .flush_timeout(None)
                .when_full(FullPolicy::Drop),
        )
        .unwrap();
    // 112-byte payloads take a 128-byte buffer each with their header; sent eight at a time,
    // as the slow memory takes them (the port's FIFO would overflow).
    let fill = |seed: u64| {
        let mut held = vec![];
        for batch in payloads(seed, BUFFERS as usize, 112..113).chunks(8) {
            for p in batch {
                send(&dev, 0, 5002, p);
            }
            for _ in batch {
                let e = next_event(&dev, &clop, "a buffer full");
                assert_eq!(e.kind, EventKind::BufferFull, "{e:?}");
                held.push(e.buffer);
            }
        }
        held
    };
    let taken_before = counter(&dev.rx_counters().unwrap(), "releases_taken");
    let held = fill(5);
    assert_eq!(clop.held(), BUFFERS as usize);
    // The other CLOP's datagrams keep the engine busy while the releases come.
    let keep_busy = |seed: u64| {
        for p in payloads(seed, 64, 1472..1473) {
            send(&dev, 1, 5003, &p);
        }
        let_card_run(&dev, 2_000);
    };
    keep_busy(7);
    for &b in &held {
        clop.release(b).unwrap();
    }
    assert_eq!(clop.held(), 0, "released, whether written yet or not");
    // Waits until the card took `n` releases since the start, polling meanwhile (the library
    // writes what it kept as polls find room).
    let taken = |n: u32| {
        let mut seen = (u64::MAX, Instant::now());
        let start = card_cycles(&dev, &mut seen);
        while counter(&dev.rx_counters().unwrap(), "releases_taken") - taken_before < n {
            assert!(
                clop.poll().unwrap().is_none(),
                "no traffic for this CLOP meanwhile"
            );
            if card_cycles(&dev, &mut seen) - start > CARD_WAIT_CYCLES {
                let c = dev.rx_counters().unwrap();
                panic!(
                    "{} of {n} releases taken, {} lost (release_overflow)",
                    counter(&c, "releases_taken") - taken_before,
                    counter(&c, "release_overflow")
                );
            }
        }
    };
    taken(BUFFERS);
    let counters = dev.rx_counters().unwrap();
    assert_eq!(counter(&counters, "release_overflow"), 0);
    assert_eq!(counter(&counters, "bad_release"), 0);
    assert!(
        counter(&counters, "committed") > BUFFERS,
        "the other CLOP's datagrams were written meanwhile"
    );
    // Every buffer back with the card: a second round fills them all, none dropped.
    let mut again = fill(6);
    again.sort_unstable();
    assert_eq!(again, (0..BUFFERS as u16).collect::<Vec<_>>());
    assert_eq!(
        counter(&dev.rx_counters().unwrap(), "drop_no_free_buffer"),
        0
    );
    // The other CLOP's buffers back, the engine busy again, and the burst released once more:
    // `flush_writes` returns once the card has every release.
    let mut others = 0;
    while let Some(e) = busy.poll().unwrap() {
        if e.is_buffer() {
            busy.release(e.buffer).unwrap();
            others += 1;
        }
    }
    keep_busy(8);
    for &b in &again {
        clop.release(b).unwrap();
    }
    dev.flush_writes().unwrap();
    assert_eq!(dev.releases_waiting(), 0, "flush_writes wrote them all");
    taken(2 * BUFFERS + others);
    assert_eq!(counter(&dev.rx_counters().unwrap(), "release_overflow"), 0);
    drop(busy);
}

#[test]
fn deregistering_while_traffic_flows_leaves_no_write_behind() {
    // Slow memory keeps the card's writes queued, so that the acknowledgement comes while the
    // last ones are still on their way.
    let dev = open_with("stall=0.98");
    // Rounds until one shows writes in flight at the acknowledgement (whether the host's read
    // catches them depends on how the host's thread and the card's interleave): at least 3.
    let mut in_flight_at_ack = 0;
    for round in 0..8u64 {
        if round >= 3 && in_flight_at_ack > 0 {
            break;
        }
        let clop = dev
            .register(
                &ClopConfig::new(3, 8000)
                    .buffers(16, 16384)
                    .when_full(FullPolicy::SkipHeld),
            )
            .unwrap();
        for p in payloads(10 + round, 200, 64..1400) {
            send(&dev, 3, 8000, &p);
        }
        // Let part of it land, keep a buffer, and deregister in the middle of the stream.
        let e = next_event(&dev, &clop, "some traffic landed");
        let _kept = e;
        let started = dev.sim().unwrap().stats().core_cycles;
        clop.deregister().unwrap();
        // The memory is unmapped now: a single later write would be an IOMMU fault. It was
        // unmapped at the acknowledgement (the read that found the disable done, with no register
        // access between) and nothing landed in it after that read; writes issued before the
        // acknowledgement became visible only while that read was on its way.
        let unmapped = dev.sim().unwrap().stats().unmapped.back().cloned();
        let u = unmapped.expect("the CLOP's memory was unmapped");
        assert!(
            u.last_write_cycle > started && u.at_cycle >= u.last_write_cycle,
            "round {round}: deregistration began at cycle {started}; {u:?}"
        );
        assert_eq!(
            (
                u.register_writes_since_last_read,
                u.writes_landed_after_last_read
            ),
            (0, 0),
            "round {round}: unmapped at the acknowledgement, nothing landed after it; {u:?}"
        );
        in_flight_at_ack += u.writes_landed_during_last_read;
    }
    assert!(
        in_flight_at_ack > 0,
        "in no round was a write of the card's in flight when it acknowledged the deregistration"
    );
    dev.sim().unwrap().wait_links_idle().unwrap();
    let_card_run(&dev, 10_000);
    assert_no_faults(&dev);
    let rx = dev.rx_counters().unwrap();
    let no_stream = counter(&dev.port_counters(3).unwrap(), "drop_no_stream");
    assert!(
        no_stream + counter(&rx, "drop_no_clop") > 0,
        "datagrams after deregistration were dropped and counted"
    );
}

#[test]
fn many_clops_on_four_ports_each_get_their_own_stream() {
    let dev = open();
    let mut clops = vec![];
    for port in 0..4u8 {
        for k in 0..4u16 {
            let c = ClopConfig::new(port, 9000 + k)
                .buffers(2, 8192)
                .flush_timeout(Some(Duration::from_micros(10)));
            clops.push(dev.register(&c).unwrap());
        }
        // The card's Multi-Stream table says what was registered.
        let table = dev.streams(port).unwrap();
        let ids: Vec<(u8, u16)> = clops[clops.len() - 4..]
            .iter()
            .map(|c| (c.id(), c.config().udp_port))
            .collect();
        assert_eq!(table, ids);
    }
    let mut sent = vec![];
    for (i, c) in clops.iter().enumerate() {
        let p = payloads(100 + i as u64, 3, 16..200);
        for x in &p {
            send(&dev, c.config().port, c.config().udp_port, x);
        }
        sent.push(p);
    }
    for (c, want) in clops.iter().zip(&sent) {
        let mut got = vec![];
        while got.len() < want.len() {
            let e = next_event(&dev, c, "events for every CLOP");
            let buf = c.take(&e).unwrap();
            got.extend(buf.packets().unwrap().map(|p| p.payload.to_vec()));
        }
        assert_eq!(&got, want, "CLOP {}", c.id());
    }
    assert_no_faults(&dev);
}

#[test]
fn invalid_use_is_refused_and_changes_nothing() {
    let dev = open();
    let ok = ClopConfig::new(0, 5000).buffers(4, 4096);
    let bad = [
        ok.clone().buffers(0, 4096),
        ok.clone().buffers(4, 0),
        ok.clone().buffers(257, 4096),
        ok.clone().buffers(4, 4004), // header layout: a multiple of 16
        ok.clone().flush_timeout(Some(Duration::from_secs(60))),
        ClopConfig::new(4, 5000),
        ClopConfig::new(0, 0),
    ];
    for c in &bad {
        let e = dev
            .register(c)
            .err()
            .unwrap_or_else(|| panic!("{c:?} accepted"));
        assert!(
            matches!(e, Error::InvalidClop(_) | Error::NoSuchPort { .. }),
            "{e}"
        );
    }
    // 256 buffers of 64 KiB in 4 KiB pages: 4096 TLB entries.
    let e = dev
        .register(
            &ok.clone()
                .buffers(256, 64 << 10)
                .page(nanet::PageSize::Page4K),
        )
        .err()
        .unwrap();
    assert!(matches!(e, Error::TlbFull { .. }), "{e}");
    let first = dev.register(&ok).unwrap();
    let e = dev.register(&ok).err().unwrap();
    assert!(
        matches!(e, Error::UdpPortTaken { udp_port: 5000, .. }),
        "{e}"
    );
    // Sixteen entries per port: the seventeenth is refused.
    let more: Vec<_> = (1..16)
        .map(|k| {
            dev.register(&ClopConfig::new(0, 5000 + k).buffers(1, 4096))
                .unwrap()
        })
        .collect();
    let e = dev
        .register(&ClopConfig::new(0, 6000).buffers(1, 4096))
        .err()
        .unwrap();
    assert!(matches!(e, Error::NoStreamEntry(0)), "{e}");
    drop(more);
    // Nothing was changed by the failures: the first CLOP still works.
    send(&dev, 0, 5000, b"still here");
    let e = next_event(&dev, &first, "an event");
    let buf = first.take(&e).unwrap();
    assert_eq!(
        buf.packets().unwrap().next().unwrap().payload,
        b"still here"
    );
    // An event of one CLOP cannot take another's buffer.
    let other = dev.register(&ClopConfig::new(1, 5000)).unwrap();
    assert!(matches!(other.take(&e), Err(Error::WrongClop { .. })));
    drop(buf);
    assert!(Device::open("nonsense").is_err());
    assert!(Device::open("sim:engine=spice").is_err());
    assert_no_faults(&dev);
}

/// Receives `n` datagrams from a CLOP and returns their payloads.
fn receive(dev: &Device, clop: &Clop, n: usize) -> Vec<Vec<u8>> {
    let mut got = vec![];
    while got.len() < n {
        let e = next_event(dev, clop, "datagrams keep coming");
        let buf = clop.take(&e).unwrap();
        got.extend(buf.packets().unwrap().map(|p| p.payload.to_vec()));
    }
    got
}

#[test]
fn traffic_named_in_the_options_arrives_once_the_program_registers() {
    let dev = open_with("traffic=2:5555:100@5x50");
    let clop = dev
        .register(&ClopConfig::new(2, 5555).flush_timeout(Some(Duration::from_micros(10))))
        .unwrap();
    let got = receive(&dev, &clop, 50);
    let seqs: Vec<u64> = got
        .iter()
        .map(|p| nanet::backend::sim::Generator::sequence_of(p).unwrap())
        .collect();
    assert_eq!(seqs, (0..50).collect::<Vec<_>>());
    assert!(got.iter().all(|p| p.len() == 100));
    // Too late to hold it back now: refused, and said why.
    let e = dev.sim().unwrap().hold_option_traffic().unwrap_err();
    assert!(e.to_string().contains("already started"), "{e}");
    assert_no_faults(&dev);
}

#[test]
fn generated_streams_start_on_every_link_in_the_same_cycle() {
    // Several `traffic=` streams (as `nanetctl rx --sim-traffic` starts them) enter their ports in
    // the same cycle, whatever the host thread's timing, so a run's figures (`make demo`'s
    // latencies) are those of every run: the card's SOP stamps of the three first datagrams (one
    // per buffer) are equal.
    let dev = open_with("traffic=0:5000:1024x1+1:5001:1024x1+2:5002:1024x1");
    let sim = dev.sim().unwrap();
    sim.hold_option_traffic().unwrap();
    let clops: Vec<_> = (0..3u8)
        .map(|p| {
            dev.register(&ClopConfig::new(p, 5000 + p as u16).buffers(4, 1024))
                .unwrap()
        })
        .collect();
    sim.start_option_traffic(&dev).unwrap();
    let sops: Vec<u32> = clops
        .iter()
        .map(|c| {
            next_event(&dev, c, "the stream's datagram")
                .times
                .sop_at_mac
        })
        .collect();
    assert!(sops.iter().all(|s| *s == sops[0]), "SOP stamps {sops:?}");
    assert_no_faults(&dev);
}

#[test]
fn a_pcap_file_is_replayed_into_a_clop() {
    let dir = std::env::temp_dir().join(format!("nanet-pcap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("in.pcap");
    let sent = payloads(9, 10, 1..1000);
    let frames: Vec<_> = sent
        .iter()
        .enumerate()
        .map(|(i, p)| nanet_sim::traffic::pcap::CapturedFrame {
            time_ns: i as u64 * 1000,
            bytes: udp_frame(&PEER, &card_endpoint(1), 4242, 6000, p),
        })
        .collect();
    nanet_sim::traffic::pcap::write_pcap(&path, &frames).unwrap();
    let dev = open_with(&format!("pcap={}@1", path.display()));
    let clop = dev
        .register(&ClopConfig::new(1, 6000).flush_timeout(Some(Duration::from_micros(10))))
        .unwrap();
    assert_eq!(receive(&dev, &clop, 10), sent);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_simulated_card_of_two_ports_has_two_ports_everywhere() {
    // The gateware generated with two ports (`make verilog PORTS=2`), behind the same library.
    let dev = open_with("ports=2");
    assert_eq!(dev.ports(), 2);
    // The Gen2 card (the default variant).
    assert_eq!(dev.sim().unwrap().stats().datapath_bits, 128);
    let e = dev.register(&ClopConfig::new(2, 5000)).err().unwrap();
    assert!(matches!(e, Error::NoSuchPort { port: 2, ports: 2 }), "{e}");
    let e = dev.sim().unwrap().send_frame(3, vec![0; 60]).err().unwrap();
    assert!(e.to_string().contains("ports 0..2"), "{e}");
    let clop = dev
        .register(&ClopConfig::new(1, 5000).flush_timeout(Some(Duration::from_micros(10))))
        .unwrap();
    let sent = payloads(23, 20, 100..800);
    for p in &sent {
        send(&dev, 1, 5000, p);
    }
    assert_eq!(receive(&dev, &clop, sent.len()), sent);
    assert_no_faults(&dev);
}

#[test]
fn bad_options_are_explained() {
    for (opts, want) in [
        ("engine=spice", "engines"),
        ("memory=gen9", "presets"),
        ("pcie=gen4", "PCIe variants: gen2, gen3"),
        (
            "pcie=gen3,ports=2",
            "the simulated Gen3 card has [1, 4] ports",
        ),
        ("stall=2", "probability"),
        ("ports=8", "4 ports"),
        ("ports=2,traffic=3:5000:100", "ports 0..2"),
        ("loopback=0:2,ports=2", "ports 0..2"),
        ("traffic=0:5000", "PORT:UDP_PORT:BYTES"),
        ("traffic=0:5000:2000", "1472"),
        ("pcap=x.pcap", "FILE@PORT"),
        ("pcap=x.pcap@0:fast", "only pcap flag is raw"),
        ("colour=blue", "unknown option"),
        ("tap=7", "port \"7\": 0..4"),
        ("tap=0,tap=0@other", "TAP device already"),
        ("tap=0,tap=1@nanet-p0", "another port's already"),
        ("tap=1,traffic=1:5000:100", "the Linux kernel (tap)"),
        ("tap=0,loopback=0:1", "cannot also go to the Linux kernel"),
        ("ports=2,tap=3", "ports 0..2"),
        ("tap=0@../etc", "not a usable name"),
    ] {
        let e = Device::open(&format!("sim:{opts}"))
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains(want), "{opts}: {e}");
    }
}

/// A provider that knows bus addresses itself (as a kernel helper calling `nvidia_p2p_get_pages`
/// would): host memory whose 64 KiB pages the card reaches at scattered bus addresses (in reverse
/// order), as a GPU's pages are scattered over its BAR.
struct ScatteredPages {
    sim: std::sync::Arc<nanet::backend::sim::SimBackend>,
    memory: std::sync::Mutex<Vec<u8>>,
    va: u64,
    unpinned: std::sync::atomic::AtomicBool,
}

const PAGE64K: u64 = 64 << 10;
const GPU_VA: u64 = 0x7f00_0000_0000;
const GPU_BUS: u64 = 0x38_0000_0000;

impl ScatteredPages {
    fn bus(&self, va: u64, len: u64, i: u64) -> u64 {
        let pages = len / PAGE64K;
        GPU_BUS + (va - self.va) + (pages - 1 - i) * PAGE64K
    }
}

// SAFETY: each bus address maps its own 64 KiB page of `memory`, until `unpin`.
unsafe impl nanet::MemoryProvider for ScatteredPages {
    fn page_size(&self) -> nanet::PageSize {
        nanet::PageSize::Page64K
    }
    fn pin(&self, va: u64, len: u64, _: &nanet::memory::CardDma) -> nanet::Result<Vec<u64>> {
        use nanet::backend::{Backend, DmaMap};
        let mut m = self.memory.lock().unwrap();
        let base = m.as_mut_ptr();
        (0..len / PAGE64K)
            .map(|i| {
                let bus = self.bus(va, len, i);
                let host = unsafe { base.add((va - self.va + i * PAGE64K) as usize) };
                unsafe {
                    self.sim
                        .map_dma(host, PAGE64K as usize, bus, DmaMap::CARD_WRITES)?
                };
                Ok(bus)
            })
            .collect()
    }
    fn unpin(&self, va: u64, len: u64, _: &nanet::memory::CardDma) -> nanet::Result<()> {
        use nanet::backend::Backend;
        for i in 0..len / PAGE64K {
            self.sim.unmap_dma(self.bus(va, len, i), PAGE64K as usize)?;
        }
        self.unpinned
            .store(true, std::sync::atomic::Ordering::SeqCst);
        Ok(())
    }
}

#[test]
fn provided_memory_is_written_through_its_scattered_page_table() {
    let dev = open();
    let gpu = std::sync::Arc::new(ScatteredPages {
        sim: dev.sim().unwrap(),
        memory: std::sync::Mutex::new(vec![0; 8 * PAGE64K as usize]),
        va: GPU_VA,
        unpinned: false.into(),
    });
    // Four buffers of 96 KiB over 6 pages: buffers straddle pages, pages are in reverse order.
    let config = ClopConfig::new(0, 5400)
        .buffers(4, 96 << 10)
        .layout(Layout::Raw)
        .flush_timeout(Some(Duration::from_micros(20)));
    // Unaligned and overlapping memory are refused and change nothing.
    let e = dev
        .register_provided(&config, gpu.clone(), GPU_VA + 4096)
        .err()
        .unwrap();
    assert!(e.to_string().contains("not aligned"), "{e}");
    let clop = dev.register_provided(&config, gpu.clone(), GPU_VA).unwrap();
    let other = ClopConfig::new(1, 5400).buffers(1, 4096);
    let e = dev
        .register_provided(&other, gpu.clone(), GPU_VA + PAGE64K)
        .err()
        .unwrap();
    assert!(e.to_string().contains("overlaps CLOP"), "{e}");
    // A datagram stream that crosses page boundaries inside buffer 0 and 1.
    let sent = payloads(21, 120, 1000..1001);
    for p in &sent {
        send(&dev, 0, 5400, p);
    }
    let mut got = vec![];
    while got.len() < sent.concat().len() {
        let e = next_event(&dev, &clop, "events");
        assert!(matches!(clop.take(&e), Err(Error::NotHostMemory(_))));
        let at = (clop.device_address(e.buffer).unwrap() - GPU_VA) as usize;
        got.extend_from_slice(&gpu.memory.lock().unwrap()[at..at + e.bytes as usize]);
        clop.release(e.buffer).unwrap();
    }
    assert_eq!(got, sent.concat());
    clop.deregister().unwrap();
    assert!(
        gpu.unpinned.load(std::sync::atomic::Ordering::SeqCst),
        "unpinned after the card let go"
    );
    assert_no_faults(&dev);
}

/// Receives `sent` into `clop`, whose buffers are device memory of the stand-in `driver`: each
/// buffer handed out only after the card's writes were flushed to the GPU.
fn receive_into_gpu(dev: &Device, clop: &Clop, driver: &HostGpu, sent: &[Vec<u8>]) -> Vec<u8> {
    let mut got = vec![];
    while got.len() < sent.concat().len() {
        let flushed = driver.flushes();
        let e = next_event(dev, clop, "events");
        assert_eq!(
            driver.flushes(),
            flushed + 1,
            "a flush before the buffer is handed out"
        );
        assert!(matches!(clop.take(&e), Err(Error::NotHostMemory(_))));
        let mut bytes = vec![0; e.bytes as usize];
        driver
            .copy_to_host(clop.device_address(e.buffer).unwrap(), &mut bytes)
            .unwrap();
        got.extend_from_slice(&bytes);
        clop.release(e.buffer).unwrap();
    }
    got
}

#[test]
fn gpu_memory_receives_datagrams_and_is_freed_only_after_deregistration() {
    let dev = open();
    let driver = Arc::new(HostGpu::new());
    let gpu = GpuMemory::new(driver.clone());
    let config = ClopConfig::new(2, 5500)
        .buffers(4, 96 << 10)
        .layout(Layout::Raw)
        .flush_timeout(Some(Duration::from_micros(20)));
    let memory = gpu.alloc(4 * (96 << 10)).unwrap();
    let va = memory.device_address();
    let e = dev
        .register_provided(&config, gpu.clone(), va + GPU_PAGE)
        .err()
        .unwrap();
    assert!(
        e.to_string()
            .contains("not aligned to the provider's 2048 KiB pages"),
        "{e}"
    );
    let e = dev
        .register_provided(&config, gpu.clone(), va + GPU_CLOP_PAGE)
        .err()
        .unwrap();
    assert!(
        e.to_string().contains("not inside one live allocation"),
        "{e}"
    );
    let clop = dev.register_provided(&config, gpu.clone(), va).unwrap();
    // The application lets go of its handle: the CLOP keeps the memory.
    drop(memory);
    assert_eq!(driver.allocated(), GPU_CLOP_PAGE, "one 2 MiB page");
    let sent = payloads(22, 150, 900..1400);
    for p in &sent {
        send(&dev, 2, 5500, p);
    }
    assert_eq!(receive_into_gpu(&dev, &clop, &driver, &sent), sent.concat());
    clop.deregister().unwrap();
    assert_eq!(driver.allocated(), 0, "freed once the card let go");
    assert_eq!(gpu.pinned_ranges(), 0);
    let alloc = format!("alloc {va:#x}+{GPU_CLOP_PAGE:#x}");
    let free = format!("free {va:#x}");
    assert_eq!(
        driver.calls(),
        [&*alloc, "pin 1", "map 1", "unmap 1", "unpin 1", &*free]
    );
    assert!(driver.violations().is_empty(), "{:?}", driver.violations());
    assert_no_faults(&dev);
}

#[test]
fn gpu_clops_take_2_mib_tlb_pages_so_a_card_reaches_256_mib_of_them() {
    let dev = open();
    let driver = Arc::new(HostGpu::new());
    let gpu = GpuMemory::new(driver.clone());
    // 128 TLB entries of 2 MiB: two CLOPs of 128 MiB (256 buffers of 512 KiB) fill them.
    let memory = gpu.alloc(256 << 20).unwrap();
    let va = memory.device_address();
    let half = 128u64 << 20;
    let config = |udp| {
        ClopConfig::new(0, udp)
            .buffers(256, 512 << 10)
            .layout(Layout::Raw)
    };
    let first = dev
        .register_provided(&config(5001), gpu.clone(), va)
        .unwrap();
    let second = dev
        .register_provided(&config(5002), gpu.clone(), va + half)
        .unwrap();
    let more = gpu.alloc(GPU_CLOP_PAGE).unwrap();
    let small = ClopConfig::new(0, 5003).buffers(1, 4096);
    match dev.register_provided(&small, gpu.clone(), more.device_address()) {
        Err(Error::TlbFull { needed: 1, free: 0 }) => {}
        other => panic!("the 129th 2 MiB page: {:?}", other.err()),
    }
    // Datagrams land in the second CLOP's last megabytes as anywhere.
    let sent = payloads(23, 4, 1000..1400);
    for p in &sent {
        send(&dev, 0, 5002, p);
    }
    assert_eq!(
        receive_into_gpu(&dev, &second, &driver, &sent),
        sent.concat()
    );
    drop(first);
    drop(second);
    assert_eq!(gpu.pinned_ranges(), 0);
    assert!(driver.violations().is_empty(), "{:?}", driver.violations());
    assert_no_faults(&dev);
}

/// The stand-in GPU with a BAR too small to map anything.
struct NoBarSpace(HostGpu);

impl GpuDriver for NoBarSpace {
    fn describe(&self) -> String {
        self.0.describe()
    }
    fn alloc(&self, len: u64) -> nanet::Result<u64> {
        self.0.alloc(len)
    }
    fn free(&self, dptr: u64) -> nanet::Result<()> {
        self.0.free(dptr)
    }
    fn copy_to_host(&self, dptr: u64, out: &mut [u8]) -> nanet::Result<()> {
        self.0.copy_to_host(dptr, out)
    }
    fn pin(&self, dptr: u64, len: u64) -> nanet::Result<u64> {
        self.0.pin(dptr, len)
    }
    fn map(&self, _: u64, _: u64) -> nanet::Result<*mut u8> {
        Err(Error::Gpu("the BAR has no room left".into()))
    }
    unsafe fn unmap(&self, handle: u64, ptr: *mut u8, len: u64) -> nanet::Result<()> {
        unsafe { self.0.unmap(handle, ptr, len) }
    }
    fn unpin(&self, handle: u64) -> nanet::Result<()> {
        self.0.unpin(handle)
    }
    fn flush_card_writes(&self) -> nanet::Result<()> {
        self.0.flush_card_writes()
    }
}

#[test]
fn a_gpu_that_cannot_map_changes_nothing() {
    let dev = open();
    let driver = Arc::new(NoBarSpace(HostGpu::new()));
    let gpu = GpuMemory::new(driver.clone());
    let memory = gpu.alloc(GPU_PAGE).unwrap();
    let config = ClopConfig::new(1, 5600).buffers(1, 4096);
    let e = dev
        .register_provided(&config, gpu.clone(), memory.device_address())
        .err()
        .unwrap();
    assert!(e.to_string().contains("no room"), "{e}");
    assert_eq!(gpu.pinned_ranges(), 0);
    assert_eq!(driver.0.calls()[1..], ["pin 1", "unpin 1"]);
    // The UDP port, stream entry and TLB entries are still free.
    dev.register(&config).unwrap();
    drop(memory);
    assert_eq!(driver.0.allocated(), 0);
    assert!(
        driver.0.violations().is_empty(),
        "{:?}",
        driver.0.violations()
    );
}

#[test]
fn the_arp_cache_reads_back_what_was_learned_and_added() {
    let dev = open();
    // The peer asks port 0 for its address: the card answers and learns the peer.
    let request = nanet_sim::traffic::packets::arp_request(&PEER, card_endpoint(0).ip);
    dev.sim().unwrap().send_frame(0, request).unwrap();
    dev.sim().unwrap().wait_links_idle().unwrap();
    let stat = nanet::ArpEntry {
        ip: [10, 0, 0, 77],
        mac: [0x02, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE],
    };
    dev.add_arp_entry(1, stat).unwrap();
    let learned = nanet::ArpEntry {
        ip: PEER.ip,
        mac: PEER.mac,
    };
    assert_eq!(dev.arp_table(0).unwrap(), [learned]);
    assert_eq!(dev.arp_table(1).unwrap(), [stat]);
    assert!(dev.arp_table(2).unwrap().is_empty());
    let replies = dev.sim().unwrap().take_transmitted(0).unwrap();
    assert_eq!(replies.len(), 1, "the card answered the ARP request");
    dev.flush_arp(1).unwrap();
    assert!(dev.arp_table(1).unwrap().is_empty());
}

#[test]
fn the_event_fd_wakes_a_sleeping_application() {
    let dev = open();
    let clop = dev
        .register(&ClopConfig::new(3, 5300).flush_timeout(Some(Duration::from_micros(5))))
        .unwrap();
    // Nothing pending: arm, and the fd stays quiet.
    assert!(dev.poll().unwrap().is_none());
    dev.arm_interrupt().unwrap();
    let mut p = libc::pollfd {
        fd: dev.event_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    assert_eq!(
        unsafe { libc::poll(&mut p, 1, 50) },
        0,
        "no interrupt without an event"
    );
    send(&dev, 3, 5300, b"wake up");
    // The card's interrupt makes the fd readable; the event is then there to poll.
    assert_eq!(
        unsafe { libc::poll(&mut p, 1, 20_000) },
        1,
        "the interrupt arrives"
    );
    let e = clop
        .poll()
        .unwrap()
        .expect("the event behind the interrupt");
    assert_eq!(e.kind, EventKind::TimeoutFlush);
    let buf = clop.take(&e).unwrap();
    assert_eq!(buf.packets().unwrap().next().unwrap().payload, b"wake up");
}

/// Ports 0 and 1 cabled together, and a CLOP on port 1 for UDP port 5000 large enough (256 KiB)
/// for everything a test sends through the cable, so no test depends on how fast this program
/// releases buffers beside the simulated card.
fn cabled_receiver(extra: &str) -> (Checked, nanet::Clop) {
    let dev = open_with(&format!("loopback=0:1,{extra}"));
    let clop = dev
        .register(
            &ClopConfig::new(1, 5000)
                .buffers(32, 8192)
                .flush_timeout(Some(Duration::from_micros(5))),
        )
        .unwrap();
    (dev, clop)
}

#[test]
fn the_generator_loops_back_into_a_clop_and_times_its_flight() {
    use nanet::GenConfig;
    use nanet_contract::rx::gen_payload;
    // Ports 0 and 1 cabled together: port 0's generator sends to port 1 (after resolving it by
    // ARP over the cable), port 1 delivers into a CLOP.
    let (dev, clop) = cabled_receiver("");
    let bad = GenConfig::new(card_endpoint(1).ip, 5000, 8);
    assert!(matches!(
        dev.start_generator(0, &bad),
        Err(Error::InvalidGenerator(_))
    ));
    let config = GenConfig::new(card_endpoint(1).ip, 5000, 300)
        .count(25)
        .rate_gbps(5.0);
    dev.start_generator(0, &config).unwrap();
    let mut seq = 0u64;
    while seq < 25 {
        let e = next_event(&dev, &clop, "the generator's datagrams");
        let buf = clop.take(&e).unwrap();
        for p in buf.packets().unwrap() {
            let tx_time = u32::from_le_bytes(p.payload[8..12].try_into().unwrap());
            assert_eq!(
                p.payload,
                &gen_payload(seq, tx_time, 300)[..],
                "datagram {seq}"
            );
            assert_eq!(p.header.src_port, 4000);
            assert_eq!(p.header.src_ip, card_endpoint(0).ip);
            let flight = p.header.sop_time.wrapping_sub(tx_time);
            assert!(flight < 20 || seq == 0, "time of flight {flight} cycles");
            seq += 1;
        }
    }
    let s = dev.generator_status(0).unwrap();
    assert_eq!((s.running, s.sent), (false, 25));
    assert_no_faults(&dev);
}

#[test]
fn a_traffic_source_on_a_cabled_port_is_refused() {
    let e = Device::open("sim:loopback=0:1,traffic=1:5000:64")
        .err()
        .expect("refused");
    assert!(e.to_string().contains("cabled"), "{e}");
    let e = Device::open("sim:loopback=2:2").err().expect("refused");
    assert!(e.to_string().contains("two different ports"), "{e}");
}

#[test]
fn sent_datagrams_cross_a_cable_into_a_clop_byte_exact() {
    // Port 0 sends from host memory through its transmit ring; port 1, cabled to it,
    // delivers into a CLOP. More datagrams than the ring holds, so slots are reused.
    let (dev, clop) = cabled_receiver("");
    let to = across_the_cable();
    for bad in [vec![], vec![0; 1473]] {
        assert!(matches!(dev.send(0, to, &bad), Err(Error::InvalidSend(_))));
    }
    assert!(matches!(
        dev.send(9, to, b"x"),
        Err(Error::NoSuchPort { .. })
    ));
    let sent = payloads(7, 300, 1..1473);
    let got = send_across_the_cable(&dev, &clop, &sent, 1);
    assert_eq!(got, sent, "every datagram, byte-exact, in order");
    assert_eq!(dev.tx_progress(0).unwrap(), (300, 300));
    assert_eq!(counter(&dev.tx_ring_counters(0).unwrap(), "tx_sent"), 300);
    assert_no_faults(&dev);
}

/// Port 0's datagrams to port 1's UDP port 5000 (a [`cabled_receiver`]), from UDP port 4200.
fn across_the_cable() -> nanet::SendTo {
    nanet::SendTo {
        dst_ip: card_endpoint(1).ip,
        dst_port: 5000,
        src_port: 4200,
    }
}

/// Sends `sent` [`across_the_cable`], `batch` datagrams a call (`send` for 1, else
/// `send_batch`), and returns what landed in `clop`, each datagram's sender checked.
fn send_across_the_cable(
    dev: &Device,
    clop: &nanet::Clop,
    sent: &[Vec<u8>],
    batch: usize,
) -> Vec<Vec<u8>> {
    let to = across_the_cable();
    let mut got: Vec<Vec<u8>> = vec![];
    let take = |e: &Event, got: &mut Vec<Vec<u8>>| {
        let buf = clop.take(e).unwrap();
        for p in buf.packets().unwrap() {
            assert_eq!(
                (p.header.src_ip, p.header.src_port),
                (card_endpoint(0).ip, to.src_port)
            );
            got.push(p.payload.to_vec());
        }
    };
    for chunk in sent.chunks(batch) {
        if batch == 1 {
            dev.send(0, to, &chunk[0]).unwrap();
        } else {
            let datagrams: Vec<nanet::Datagram> = chunk
                .iter()
                .map(|p| nanet::Datagram {
                    port: 0,
                    to,
                    payload: p,
                })
                .collect();
            dev.send_batch(&datagrams).unwrap();
        }
        while let Some(e) = clop.poll().unwrap() {
            take(&e, &mut got);
        }
    }
    while got.len() < sent.len() {
        let e = next_event(dev, clop, "the rest of the datagrams");
        take(&e, &mut got);
    }
    got
}

#[test]
fn the_gen3_card_sends_and_receives_behind_the_same_library() {
    // The Gen3 x8 card (`make verilog PCIE=gen3`: the 256-bit datapath behind the Gen3 link),
    // driven by the library unchanged: datagrams of every size sent from host memory on port 0,
    // in batches of 8 (`send_batch`), cross the cable into a CLOP on port 1; datagrams from port
    // 2's far end land in their own.
    let (dev, clop) = cabled_receiver("pcie=gen3");
    assert_eq!(dev.ports(), 4);
    assert_eq!(dev.sim().unwrap().stats().datapath_bits, 256);
    assert_eq!(
        dev.pcie().unwrap(),
        Some(nanet::PcieVariant::Gen3x8),
        "the card says"
    );
    let sent = payloads(8, 120, 1..1473);
    assert_eq!(
        send_across_the_cable(&dev, &clop, &sent, 8),
        sent,
        "every datagram, byte-exact, in order"
    );
    let other = dev
        .register(&ClopConfig::new(2, 6000).flush_timeout(Some(Duration::from_micros(10))))
        .unwrap();
    let from_peer = payloads(9, 40, 1..1473);
    for p in &from_peer {
        send(&dev, 2, 6000, p);
    }
    assert_eq!(receive(&dev, &other, from_peer.len()), from_peer);
    assert_eq!(counter(&dev.tx_counters().unwrap(), "tx_sent"), 120);
    assert_no_faults(&dev);
}

/// A device closed in the middle of sending (port 0's transmit ring full of datagrams the card
/// has not sent): the library stops the ring and waits until the card holds nothing of it before
/// it frees the ring's memory. The card sends what it was reading, whole; discards what it had
/// fetched and not started (`tx_discarded`), fetches no more; never reads the freed memory (no
/// read error, no fault). Checked through the simulated card after the device is gone and the
/// card ran 20,000 cycles more.
/// (Mutation: the ring's memory freed without the stop: the card reads on, from memory no longer
/// mapped, and fails those reads, `tx_read_error`.)
#[test]
fn a_device_closed_mid_send_frees_its_ring_only_after_the_card_let_go() {
    use nanet::backend::Backend;
    use nanet::{ArpEntry, SendTo};
    use nanet_contract::bar0;
    use nanet_contract::tx::TxReg;
    let dev = open();
    let sim = dev.sim().unwrap();
    dev.add_arp_entry(
        0,
        ArpEntry {
            ip: PEER.ip,
            mac: PEER.mac,
        },
    )
    .unwrap();
    let to = SendTo {
        dst_ip: PEER.ip,
        dst_port: 9000,
        src_port: 9001,
    };
    let sent = payloads(11, 64, 1000..1473);
    for p in &sent {
        dev.send(0, to, p).unwrap();
    }
    // About a quarter of them on the wire (a datagram takes about 250 core cycles at line rate).
    let started = sim.stats().core_cycles;
    let_card_run(&dev, 4_000);
    let before_close = sim.stats().core_cycles;
    // The last handle: the device closes (its transmit rings stopped, then freed).
    let last = Device::clone(&dev);
    drop(dev);
    drop(last);
    // The card runs on (a card whose ring had not been stopped would read the freed memory now).
    let closed_at = sim.stats().core_cycles;
    let mut seen = (u64::MAX, Instant::now());
    while sim.stats().core_cycles < closed_at + 20_000 {
        let now = sim.stats().core_cycles;
        if now != seen.0 {
            seen = (now, Instant::now());
        }
        assert!(
            seen.1.elapsed() < Duration::from_secs(60),
            "the card's time stood still"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    let read = |r: TxReg| sim.read32(bar0::tx_ring(0, r.word())).unwrap();
    let (sent_n, discarded) = (read(TxReg::Sent), read(TxReg::Discarded));
    eprintln!(
        "closed mid-send: {sent_n} sent, {discarded} discarded, sent from card cycle {started}"
    );
    assert!(
        sent_n > 0 && sent_n < 64 && sent_n + discarded <= 64,
        "closed while the card still had datagrams to send: {sent_n} sent, {discarded} discarded \
         (bad tails {}, sent from card cycle {started}, closed at {closed_at})",
        read(TxReg::BadTail)
    );
    assert_eq!(read(TxReg::ReadError), 0, "a read of freed memory");
    assert_eq!(read(TxReg::Status), nanet_contract::tx::TX_STATUS_IDLE);
    let s = sim.stats();
    assert!(s.faults.is_empty(), "the card faulted: {:?}", s.faults);
    assert!(
        s.unmapped.iter().all(|u| u.at_cycle > before_close),
        "unmapped before the close"
    );
    // What went out is the first datagrams, whole and in order.
    let frames = sim.take_transmitted(0).unwrap();
    let payloads_out: Vec<Vec<u8>> = frames.iter().map(|f| udp_payload(f)).collect();
    assert_eq!(payloads_out, sent[..sent_n as usize]);
}

/// The UDP payload of a frame the card transmitted.
fn udp_payload(frame: &[u8]) -> Vec<u8> {
    let p = etherparse::SlicedPacket::from_ethernet(frame).expect("a whole frame");
    match p.transport {
        Some(etherparse::TransportSlice::Udp(u)) => u.payload().to_vec(),
        other => panic!("not UDP: {other:?}"),
    }
}

/// One batch over ports 0 and 2 goes into their two transmit rings: each port sends its own
/// datagrams, whole and in order; each ring's progress and counters count its own, the other
/// rings' nothing. (Mutation: the library posting every datagram into ring 0: the card refuses
/// port 2's there as another port's.)
#[test]
fn a_batch_over_two_ports_leaves_each_port_from_its_own_ring_in_order() {
    use nanet::{ArpEntry, Datagram, SendTo};
    let dev = open();
    let sim = dev.sim().unwrap();
    for p in [0, 2] {
        let peer = ArpEntry {
            ip: PEER.ip,
            mac: PEER.mac,
        };
        dev.add_arp_entry(p, peer).unwrap();
    }
    let to = SendTo {
        dst_ip: PEER.ip,
        dst_port: 9000,
        src_port: 9001,
    };
    let sent = payloads(12, 40, 1..1473);
    let port_of = |i: usize| if i % 3 == 1 { 2 } else { 0 };
    let batch: Vec<Datagram> = (0..sent.len())
        .map(|i| Datagram {
            port: port_of(i),
            to,
            payload: &sent[i],
        })
        .collect();
    dev.send_batch(&batch).unwrap();
    let from = |p: u8| -> Vec<Vec<u8>> {
        let mine = (0..sent.len()).filter(|i| port_of(*i) == p);
        mine.map(|i| sent[i].clone()).collect()
    };
    let mut out = [vec![], vec![]];
    let mut seen = (u64::MAX, Instant::now());
    let start = card_cycles(&dev, &mut seen);
    while out[0].len() + out[1].len() < sent.len() {
        assert!(
            card_cycles(&dev, &mut seen) - start < CARD_WAIT_CYCLES,
            "{} of {} datagrams sent",
            out[0].len() + out[1].len(),
            sent.len()
        );
        for (got, p) in out.iter_mut().zip([0, 2]) {
            let frames = sim.take_transmitted(p).unwrap();
            got.extend(frames.iter().map(|f| udp_payload(f)));
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    for (got, p) in out.iter().zip([0, 2]) {
        let want = from(p);
        assert_eq!(*got, want, "port {p}'s datagrams, in order");
        let n = want.len() as u16;
        assert_eq!(dev.tx_progress(p).unwrap(), (n, n), "ring {p}");
        let ring = dev.tx_ring_counters(p).unwrap();
        assert_eq!(counter(&ring, "tx_sent"), n as u32, "ring {p}");
        assert_eq!(counter(&ring, "tx_bad_descriptor"), 0, "ring {p}");
    }
    for p in [1, 3] {
        assert_eq!(dev.tx_progress(p).unwrap(), (0, 0), "ring {p}");
        assert_eq!(counter(&dev.tx_ring_counters(p).unwrap(), "tx_sent"), 0);
    }
    assert_eq!(counter(&dev.tx_counters().unwrap(), "tx_sent"), 40);
}

/// A barrier for test threads that lets the others go on when one of them panics (a plain
/// barrier would leave them waiting for it forever).
struct Together {
    count: usize,
    arrived: std::sync::Mutex<(usize, u64)>,
    changed: std::sync::Condvar,
}

struct PanicReleases<'a>(&'a Together);

impl Drop for PanicReleases<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let mut a = self.0.arrived.lock().unwrap_or_else(|p| p.into_inner());
            a.1 = u64::MAX;
            self.0.changed.notify_all();
        }
    }
}

impl Together {
    fn new(count: usize) -> Self {
        Self {
            count,
            arrived: Default::default(),
            changed: Default::default(),
        }
    }

    fn on_panic_release_the_others(&self) -> PanicReleases<'_> {
        PanicReleases(self)
    }

    /// Waits until every thread arrived, or one panicked.
    fn wait(&self) {
        let mut a = self.arrived.lock().unwrap();
        let generation = a.1;
        if generation == u64::MAX {
            return;
        }
        a.0 += 1;
        if a.0 == self.count {
            *a = (0, generation.wrapping_add(1));
            self.changed.notify_all();
            return;
        }
        while a.1 == generation {
            a = self.changed.wait(a).unwrap();
        }
    }
}

/// A datagram that says where it was sent: port, UDP port, and its number, then filler.
fn tagged(port: u8, udp_port: u16, n: u32, len: usize) -> Vec<u8> {
    let mut p = vec![0xA5; len.max(8)];
    p[0] = port;
    p[1..3].copy_from_slice(&udp_port.to_be_bytes());
    p[3] = 0x5A;
    p[4..8].copy_from_slice(&n.to_be_bytes());
    p
}

/// Until `stop`, every `every` card cycles, one tagged datagram to each (port, UDP port): light
/// traffic (the links never queue), so every round of a test sees its datagrams within microseconds.
fn feed(dev: &Device, to: &[(u8, u16)], every: u64, stop: &std::sync::atomic::AtomicBool) {
    let sim = dev.sim().unwrap();
    let mut last = 0u64;
    let mut n = 0u32;
    let mut seen = (u64::MAX, Instant::now());
    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
        let now = card_cycles(dev, &mut seen);
        if now >= last + every {
            last = now;
            for &(port, udp) in to {
                let len = 64 + (n as usize * 37 + udp as usize) % 400;
                send(dev, port, udp, &tagged(port, udp, n, len));
            }
            n += 1;
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    sim.wait_links_idle().unwrap();
}

/// Several threads register, take, release and deregister CLOPs at once, each its own (port, UDP
/// port), while all four ports deliver: every datagram lands in its own CLOP's buffers and
/// nowhere else (no buffer holds another stream's datagram, no TLB miss, no command refused, no
/// DMA outside the mappings). The CLOPs span 16 TLB pages each, so each registration is 80
/// staging writes and commands that other threads' would interleave with. (Mutation: without
/// the command lock, the card commits one thread's TLB entries under another's slot, or refuses
/// a command written while another was pending.)
#[test]
fn threads_registering_at_once_never_get_each_others_datagrams() {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    let dev = open();
    const WORKERS: u8 = 6;
    const ROUNDS: u32 = 12;
    let streams: Vec<(u8, u16)> = (0..WORKERS).map(|w| (w % 4, 7100 + w as u16)).collect();
    let stop = AtomicBool::new(false);
    let buffers_checked = AtomicU64::new(0);
    // Every round's registrations, and deregistrations, start together.
    let together = Together::new(WORKERS as usize);
    std::thread::scope(|s| {
        let feeder = s.spawn(|| feed(&dev, &streams, 2_000, &stop));
        let workers: Vec<_> = streams
            .iter()
            .enumerate()
            .map(|(w, &(port, udp))| {
                let (dev, buffers_checked, together) = (&dev, &buffers_checked, &together);
                s.spawn(move || {
                    let _leaving = together.on_panic_release_the_others();
                    for round in 0..ROUNDS {
                        // 16 pages of 4 KiB, or one of 64 KiB, so that CLOPs move over the TLB.
                        let page = if (round + w as u32).is_multiple_of(2) {
                            nanet::PageSize::Page4K
                        } else {
                            nanet::PageSize::Page64K
                        };
                        let c = ClopConfig::new(port, udp)
                            .buffers(4, 16384)
                            .page(page)
                            .flush_timeout(Some(Duration::from_micros(8)));
                        together.wait();
                        let clop = dev.register(&c).unwrap_or_else(|e| {
                            panic!("worker {w} round {round}: registering: {e}")
                        });
                        let mut got = 0;
                        while got < 3 {
                            let e = next_event(dev, &clop, "a buffer of the worker's stream");
                            assert!(
                                e.is_buffer() || e.kind == EventKind::NoFreeBuffer,
                                "worker {w} round {round}: {e:?}"
                            );
                            if !e.is_buffer() {
                                continue;
                            }
                            let buf = clop.take(&e).unwrap();
                            for p in buf.packets().unwrap() {
                                assert_eq!(
                                    (
                                        p.payload[0],
                                        u16::from_be_bytes([p.payload[1], p.payload[2]])
                                    ),
                                    (port, udp),
                                    "worker {w} round {round}: CLOP {} got another stream's \
                                     datagram",
                                    clop.id()
                                );
                            }
                            got += 1;
                        }
                        buffers_checked.fetch_add(got, Ordering::Relaxed);
                        together.wait();
                        clop.deregister().unwrap_or_else(|e| {
                            panic!("worker {w} round {round}: deregistering: {e}")
                        });
                    }
                })
            })
            .collect();
        let results: Vec<_> = workers.into_iter().map(|w| w.join()).collect();
        stop.store(true, Ordering::Relaxed);
        feeder.join().unwrap();
        for r in results {
            if let Err(p) = r {
                std::panic::resume_unwind(p);
            }
        }
    });
    assert_eq!(
        buffers_checked.load(Ordering::Relaxed),
        WORKERS as u64 * ROUNDS as u64 * 3
    );
    let rx = dev.rx_counters().unwrap();
    for name in ["drop_tlb_miss", "bad_clop_command"] {
        assert_eq!(counter(&rx, name), 0, "{name}");
    }
    assert_no_faults(&dev);
}

/// One thread stops reading its CLOP while another reads its own: the stopped CLOP's records wait
/// up to its limit (then are dropped, counted, and their buffers given back to the card, which
/// goes on filling them, skipping the held ones), so the reading thread's work and the library's memory stay bounded and
/// the other stream loses nothing.
#[test]
fn a_clop_nobody_reads_keeps_at_most_its_limit_and_the_others_lose_nothing() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let dev = open();
    let idle = dev
        .register(
            &ClopConfig::new(1, 7200)
                .buffers(8, 2048)
                .parked_events(3)
                .when_full(FullPolicy::SkipHeld)
                .flush_timeout(Some(Duration::from_micros(4))),
        )
        .unwrap();
    let read = dev
        .register(
            &ClopConfig::new(2, 7201)
                .buffers(8, 2048)
                .flush_timeout(Some(Duration::from_micros(4))),
        )
        .unwrap();
    let stop = AtomicBool::new(false);
    let mut numbers = vec![];
    let mut most_waiting = 0;
    std::thread::scope(|s| {
        let feeder = s.spawn(|| feed(&dev, &[(1, 7200), (2, 7201)], 1_500, &stop));
        while numbers.len() < 60 {
            let e = next_event(&dev, &read, "the read CLOP's buffer");
            assert!(e.is_buffer(), "{e:?}");
            let buf = read.take(&e).unwrap();
            for p in buf.packets().unwrap() {
                numbers.push(u32::from_be_bytes(p.payload[4..8].try_into().unwrap()));
            }
            most_waiting = most_waiting.max(idle.events_waiting());
        }
        stop.store(true, Ordering::Relaxed);
        feeder.join().unwrap();
    });
    // Drain what is still in the ring (for both), then look at the idle CLOP.
    while read.poll().unwrap().is_some() {}
    assert_eq!(
        most_waiting, 3,
        "the idle CLOP's records waited up to its limit"
    );
    assert_eq!(idle.events_waiting(), 3);
    // One record per datagram (each buffer flushed before the next datagram), three kept.
    let dropped = idle.events_dropped();
    assert!(dropped >= 50, "{dropped} records dropped");
    // Nothing was lost on the read stream: its datagrams in order, from the first.
    let want: Vec<u32> = (0..numbers.len() as u32).collect();
    assert_eq!(numbers, want);
    // The idle CLOP's dropped records gave their buffers back: it holds only the waiting ones,
    // and reading on it gets them, then fresh ones.
    assert_eq!(idle.held(), 3);
    for _ in 0..3 {
        let e = idle.poll().unwrap().expect("a waiting record");
        idle.release(e.buffer).unwrap();
    }
    assert_eq!((idle.held(), idle.events_waiting()), (0, 0));
    assert_no_faults(&dev);
}

/// The root complex lets each write's 8-byte words land apart (the odd ones 2000 cycles late;
/// writes stay in order), and the application polls the ring without pause: it sees records
/// whose first word has landed and the rest not yet, and takes none of them before all of it is
/// there: every record's packet count, byte count, sequence numbers and stamps agree with the
/// buffer it reports. (Mutation: the library taking a record on its first word's phase, as it
/// once did, reads a packet count of 0 or stale stamps and fails here.)
#[test]
fn a_record_is_never_taken_before_all_of_it_has_landed() {
    let dev = open_with("tear=2000");
    let clop = dev
        .register(
            &ClopConfig::new(0, 7300)
                .buffers(8, 4096)
                .flush_timeout(Some(Duration::from_micros(2))),
        )
        .unwrap();
    // Six batches at least; more while no look has found a record partly landed (whether one
    // does depends on when this thread runs beside the simulator's: on a busy machine it can
    // miss a few 8 us windows), up to thirty.
    let sent = payloads(73, 180, 16..600);
    let (mut received, mut records) = (0usize, 0);
    let mut seen = (u64::MAX, Instant::now());
    for (k, batch) in sent.chunks(6).enumerate() {
        if k >= 6 && dev.incomplete_record_looks() > 0 {
            break;
        }
        dev.flush_writes().unwrap();
        for p in batch {
            send(&dev, 0, 7300, p);
        }
        let start = card_cycles(&dev, &mut seen);
        let want = received + batch.len();
        while received < want {
            assert!(
                card_cycles(&dev, &mut seen) - start < CARD_WAIT_CYCLES,
                "no record for datagram {received}"
            );
            // Polled without sleeping, so that the ring is looked at while records land.
            let Some(e) = clop.poll().unwrap() else {
                continue;
            };
            records += 1;
            assert!(e.is_buffer(), "{e:?}");
            let buf = clop.take(&e).unwrap();
            let packets: Vec<_> = buf.packets().unwrap().collect();
            assert_eq!(packets.len(), e.packets as usize, "{e:?}");
            let bytes: usize = packets
                .iter()
                .map(|p| nanet::PacketHeader::record_bytes(p.payload.len()))
                .sum();
            assert_eq!(bytes, e.bytes as usize, "{e:?}");
            assert_eq!(packets.first().unwrap().header.seq, e.first_seq, "{e:?}");
            assert_eq!(packets.last().unwrap().header.seq, e.last_seq, "{e:?}");
            let t = e.times;
            let stages = [
                t.header_parsed.wrapping_sub(t.sop_at_mac),
                t.first_dma_beat.wrapping_sub(t.header_parsed),
                t.last_dma_beat.wrapping_sub(t.first_dma_beat),
            ];
            assert!(stages.iter().all(|d| *d < 100_000), "{e:?}");
            for p in &packets {
                assert_eq!(p.payload, &sent[received][..], "datagram {received}");
                received += 1;
            }
        }
    }
    let incomplete = dev.incomplete_record_looks();
    assert!(
        incomplete > 0,
        "in {records} records the library never looked at one partly landed"
    );
    eprintln!("{records} records; {incomplete} looks found one partly landed");
}

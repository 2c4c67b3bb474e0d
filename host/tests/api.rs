//! The host library's API against the simulated card (Verilator on the generated Verilog unless
//! `NANET_HOST_SIM` gives other options, e.g. `engine=model`).

use std::collections::VecDeque;
use std::time::Duration;

use nanet::{ClopConfig, Device, Error, EventKind, FullPolicy, Layout, PortConfig};
use nanet_sim::packets::{udp_frame, Endpoint};
use rand::{Rng, SeedableRng};

const PEER: Endpoint = Endpoint::new([0x02, 0, 0, 0, 0, 0x99], [10, 0, 0, 99]);
const WAIT: Duration = Duration::from_secs(20);

fn card_endpoint(port: u8) -> Endpoint {
    Endpoint::new([0x02, 0, 0, 0, 1, port], [10, 0, 0, 10 + port])
}

fn open() -> Device {
    let opts = std::env::var("NANET_HOST_SIM").unwrap_or_default();
    let dev = Device::open(&format!("sim:{opts}")).unwrap_or_else(|e| panic!("{e}"));
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
    dev
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
    for p in &sent {
        send(&dev, 0, 5000, p);
    }
    let mut want: VecDeque<&Vec<u8>> = sent.iter().collect();
    let mut buffers = 0;
    while !want.is_empty() {
        let e = clop.wait(WAIT).unwrap().expect("an event");
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
    // 60 datagrams through 4 buffers of 2 KiB: the buffers went round several times.
    assert!(buffers > 4, "{buffers} buffers");
    assert_eq!(clop.held(), 0);
    assert_eq!(counter(&dev.rx_counters().unwrap(), "committed"), 60);
    assert_eq!(counter(&dev.port_counters(0).unwrap(), "forwarded"), 60);
    clop.deregister().unwrap();
    assert_no_faults(&dev);
}

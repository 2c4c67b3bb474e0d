use etherparse::{NetSlice, SlicedPacket, TransportSlice};
use nanet_hdl::offload::udp_tx::UdpTx;
use nanet_sim::check::reference::{classify_rx, RxOutcome};
use nanet_sim::engine::driver::{CycleDriver, NET_CLOCK_PS};
use nanet_sim::testbench::stream_bfm::{StreamSinkBfm, StreamSourceBfm};
use nanet_sim::traffic::packets::Endpoint;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rust_hdl::core::prelude::*;

const US: Endpoint = Endpoint::new([0x02, 0, 0, 0, 0, 0x01], [10, 0, 0, 1]);
const PEER: Endpoint = Endpoint::new([0x02, 0, 0, 0, 0, 0x02], [10, 0, 0, 2]);

struct Req {
    sport: u16,
    dport: u16,
    payload: Vec<u8>,
    declared_len: u16,
}

/// Sends the requests (payloads with random stalls), collects the frames (random stalls).
fn run(reqs: &[Req], stall: f64, seed: u64) -> Vec<Vec<u8>> {
    let mut d = CycleDriver::new(UdpTx::default()).unwrap();
    let clk = d.add_clock("net", NET_CLOCK_PS, |u, v| u.clock.next = Clock::from(v));
    d.uut.our_mac.next = US.mac_u64().into();
    d.uut.our_ip.next = (US.ip_u32() as u64).into();
    d.uut.dst_mac.next = PEER.mac_u64().into();
    d.uut.dst_ip.next = (PEER.ip_u32() as u64).into();
    d.uut.udp_checksum.next = 0.into();
    d.reset(clk, 2, |u, v| u.reset.next = v);
    let mut src = StreamSourceBfm::new(stall, seed);
    let mut sink = StreamSinkBfm::new(stall, seed + 1);
    let mut rng = StdRng::seed_from_u64(seed + 2);
    let mut next = 0;
    for r in reqs {
        src.push_packet(&r.payload, false);
    }
    let mut cycles = 0;
    while sink.packets.len() < reqs.len() {
        let starting = next < reqs.len() && !rng.gen_bool(stall);
        d.uut.start.next = starting;
        if next < reqs.len() {
            let r = &reqs[next];
            d.uut.src_port.next = (r.sport as u64).into();
            d.uut.dst_port.next = (r.dport as u64).into();
            d.uut.payload_len.next = (r.declared_len as u64).into();
        }
        src.drive_port(&mut d.uut.payload);
        sink.drive_port(&mut d.uut.out);
        d.settle();
        if starting && d.uut.start_ready.val() {
            next += 1;
        }
        src.sample_port(&d.uut.payload);
        sink.sample_port(&d.uut.out);
        d.tick(clk);
        cycles += 1;
        assert!(
            cycles < 100_000,
            "transmitter wedged after {} frames",
            sink.packets.len()
        );
    }
    assert!(src.is_idle(), "payload beats left unconsumed");
    sink.packets
        .iter()
        .map(|p| {
            assert!(!p.error);
            p.bytes.clone()
        })
        .collect()
}

fn payload(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(13) ^ seed)
        .collect()
}

#[test]
fn datagrams_of_every_size_leave_as_valid_frames() {
    let mut reqs: Vec<Req> = (0..=80)
        .map(|n| Req {
            sport: 1000 + n as u16,
            dport: 2000,
            payload: payload(n, n as u8),
            declared_len: n as u16,
        })
        .collect();
    reqs.push(Req {
        sport: 7,
        dport: 9,
        payload: payload(1472, 3),
        declared_len: 1472,
    });
    for (stall, seed) in [(0.0, 1), (0.3, 2)] {
        let frames = run(&reqs, stall, seed);
        for (r, f) in reqs.iter().zip(&frames) {
            assert_eq!(f.len(), (42 + r.payload.len()).max(60), "frame length");
            let p = SlicedPacket::from_ethernet(f).expect("etherparse parses the frame");
            let Some(NetSlice::Ipv4(ip)) = &p.net else {
                panic!("not IPv4")
            };
            let h = ip.header().to_header();
            assert_eq!(
                h.header_checksum,
                h.calc_header_checksum(),
                "IPv4 header checksum"
            );
            assert_eq!(
                (h.source, h.destination, h.time_to_live),
                (US.ip, PEER.ip, 64)
            );
            let Some(TransportSlice::Udp(u)) = &p.transport else {
                panic!("not UDP")
            };
            assert_eq!(
                (u.source_port(), u.destination_port(), u.checksum()),
                (r.sport, r.dport, 0)
            );
            assert_eq!(u.payload(), &r.payload[..]);
            assert!(
                f[42 + r.payload.len()..].iter().all(|b| *b == 0),
                "padding must be zeros"
            );
            // The peer's view: a datagram for it.
            match classify_rx(f, false, PEER.mac, PEER.ip_u32()) {
                RxOutcome::Udp { payload, .. } => assert_eq!(payload, r.payload),
                other => panic!("peer would drop it: {other:?}"),
            }
        }
    }
}

#[test]
fn a_payload_longer_or_shorter_than_declared_never_desynchronises_the_stream() {
    let reqs = vec![
        Req {
            sport: 1,
            dport: 2,
            payload: payload(100, 1),
            declared_len: 40,
        },
        Req {
            sport: 1,
            dport: 2,
            payload: payload(10, 2),
            declared_len: 64,
        },
        Req {
            sport: 1,
            dport: 2,
            payload: payload(33, 3),
            declared_len: 33,
        },
    ];
    let frames = run(&reqs, 0.2, 9);
    assert_eq!(frames[0].len(), 82);
    assert_eq!(&frames[0][42..], &reqs[0].payload[..40]);
    assert_eq!(frames[1].len(), 106);
    assert_eq!(&frames[1][42..52], &reqs[1].payload[..]);
    assert!(frames[1][52..].iter().all(|b| *b == 0));
    assert_eq!(&frames[2][42..], &reqs[2].payload[..]);
}

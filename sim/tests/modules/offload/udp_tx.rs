//! UDP transmitter: requests with random stalls on the start handshake, the payload and the
//! output; every frame parses as the datagram asked for, and a payload longer or shorter than
//! declared never desynchronises the stream. On the rust-hdl model and its Verilog in lockstep.

use etherparse::{NetSlice, SlicedPacket, TransportSlice};
use nanet_hdl::offload::udp_tx::UdpTx;
use nanet_sim::check::reference::{classify_rx, RxOutcome};
use nanet_sim::design_ports;
use nanet_sim::engine::clocks::NET_CLOCK_PS;
use nanet_sim::engine::pins::{StreamIn, StreamOut};
use nanet_sim::engine::{DesignSim, EngineKind};
use nanet_sim::testbench::stream_bfm::{StreamSinkBfm, StreamSourceBfm};
use nanet_sim::traffic::packets::Endpoint;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

#[derive(Clone, Default)]
pub struct UdpTxIn {
    reset: bool,
    our_mac: u64,
    our_ip: u32,
    ttl: u8,
    start: bool,
    dst_mac: u64,
    dst_ip: u32,
    src_port: u16,
    dst_port: u16,
    payload_len: u16,
    udp_checksum: u16,
    payload: StreamIn,
    out_ready: bool,
}

#[derive(Clone, Default, Debug)]
pub struct UdpTxOut {
    start_ready: bool,
    payload_ready: bool,
    out: StreamOut,
}

design_ports! {
    pub UdpTxDesign for UdpTx, top "nanet_udp_tx", inputs UdpTxIn, outputs UdpTxOut,
    clocks { clock }
    inputs {
        reset => reset, our_mac => our_mac, our_ip => our_ip, ttl => ttl, start => start,
        dst_mac => dst_mac, dst_ip => dst_ip, src_port => src_port, dst_port => dst_port,
        payload_len => payload_len, udp_checksum => udp_checksum,
        payload.data => payload.data, payload.keep => payload.keep, payload.last => payload.last,
        payload.error => payload.error, payload.valid => payload.valid,
        out_ready => out.ready,
    }
    outputs {
        start_ready => start_ready, payload_ready => payload.ready,
        out.data => out.data, out.keep => out.keep, out.last => out.last,
        out.error => out.error, out.valid => out.valid,
    }
}

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
    let mut d = DesignSim::<UdpTxDesign>::new(EngineKind::Both).unwrap_or_else(|e| panic!("{e}"));
    let clk = d.add_clock("net", 0, NET_CLOCK_PS);
    let i = &mut d.inputs;
    i.our_mac = US.mac_u64();
    i.our_ip = US.ip_u32();
    i.ttl = 64;
    i.dst_mac = PEER.mac_u64();
    i.dst_ip = PEER.ip_u32();
    i.udp_checksum = 0;
    i.reset = true;
    d.tick(clk);
    d.tick(clk);
    d.inputs.reset = false;
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
        let i = &mut d.inputs;
        i.start = starting;
        if next < reqs.len() {
            let r = &reqs[next];
            i.src_port = r.sport;
            i.dst_port = r.dport;
            i.payload_len = r.declared_len;
        }
        src.drive(&mut i.payload);
        sink.drive(&mut i.out_ready);
        let o = d.settle().clone();
        if starting && o.start_ready {
            next += 1;
        }
        src.sample(o.payload_ready);
        sink.sample(&o.out);
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
            match classify_rx(f, false, PEER.mac, PEER.ip_u32(), 0xFFFF_FF00) {
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

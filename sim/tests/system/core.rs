//! The assembled offload core on its own: registers, ARP cache behaviour, transmit paths, and every
//! drop reason counted once through the whole core.

use etherparse::{SlicedPacket, TransportSlice};
use nanet_contract::offload::{
    mac_from_regs, mac_to_regs, ArpRead, Counter, Reg, ARP_COMMAND_ADD_STATIC, ARP_COMMAND_FLUSH,
    ARP_READ_DONE, ARP_READ_VALID, ARP_RETRIES_DEFAULT, ARP_RETRY_INTERVAL_DEFAULT,
    CONTROL_UDP_TX_CHECKSUM, ID_VALUE, TTL_DEFAULT, VERSION_VALUE,
};
use nanet_contract::DropReason;
use nanet_sim::check::reference::{classify_rx, RxOutcome};
use nanet_sim::testbench::core::{CoreBench, TxDatagram};
use nanet_sim::traffic::packets::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const CARD: Endpoint = Endpoint::new([0x02, 0x4E, 0x41, 0x4E, 0x45, 0x01], [10, 1, 0, 10]);
const PEER: Endpoint = Endpoint::new([0x02, 0x00, 0x00, 0x00, 0x00, 0x20], [10, 1, 0, 20]);
const GATEWAY: Endpoint = Endpoint::new([0x02, 0x00, 0x00, 0x00, 0x00, 0x01], [10, 1, 0, 1]);

fn card(stall: f64, seed: u64) -> CoreBench {
    let mut b = CoreBench::new(stall, seed);
    b.configure(&CARD, [255, 255, 255, 0], GATEWAY.ip);
    b
}

/// Hosts on the link that answer the card's ARP requests for them, as real hosts would.
struct Hosts {
    hosts: Vec<Endpoint>,
    seen: usize,
}

impl Hosts {
    fn new(hosts: &[Endpoint]) -> Self {
        Self {
            hosts: hosts.to_vec(),
            seen: 0,
        }
    }
    fn answer(&mut self, b: &mut CoreBench) {
        while self.seen < b.link_tx.frames.len() {
            let f = b.link_tx.frames[self.seen].bytes.clone();
            self.seen += 1;
            if f[12..14] == [0x08, 0x06] && f[21] == 1 {
                if let Some(h) = self.hosts.iter().find(|h| f[38..42] == h.ip) {
                    b.link_rx.push(arp_reply(h, &CARD), false);
                }
            }
        }
    }
}

/// A static ARP cache entry for `host`.
fn add_static(b: &mut CoreBench, host: &Endpoint) {
    let (hi, lo) = mac_to_regs(host.mac);
    b.write_reg(Reg::ArpStaticIp.word(), host.ip_u32());
    b.write_reg(Reg::ArpStaticMacHi.word(), hi);
    b.write_reg(Reg::ArpStaticMacLo.word(), lo);
    b.write_reg(Reg::ArpCommand.word(), ARP_COMMAND_ADD_STATIC);
}

fn udp_frames_to(b: &CoreBench, mac: [u8; 6]) -> Vec<Vec<u8>> {
    b.link_tx
        .frames
        .iter()
        .filter(|f| f.bytes[0..6] == mac && f.bytes[12..14] == [8, 0])
        .map(|f| f.bytes.clone())
        .collect()
}

#[test]
fn registers_read_back_through_the_contract() {
    let mut b = CoreBench::new(0.0, 1);
    assert_eq!(b.read_reg(Reg::Id.word()), ID_VALUE);
    assert_eq!(b.read_reg(Reg::Version.word()), VERSION_VALUE);
    assert_eq!(
        b.read_reg(Reg::ArpRetryInterval.word()),
        ARP_RETRY_INTERVAL_DEFAULT
    );
    assert_eq!(b.read_reg(Reg::ArpRetries.word()), ARP_RETRIES_DEFAULT);
    assert_eq!(b.read_reg(Reg::Ttl.word()), TTL_DEFAULT);
    assert_eq!(
        b.read_reg(Reg::Status.word()),
        0,
        "flush after reset finished"
    );
    let values = [
        (Reg::MacHi, 0x0000_0211),
        (Reg::MacLo, 0x2233_4455),
        (Reg::Ip, 0x0A01_000A),
        (Reg::Netmask, 0xFFFF_FF00),
        (Reg::Gateway, 0x0A01_0001),
        (Reg::Control, CONTROL_UDP_TX_CHECKSUM),
        (Reg::ArpStaticIp, 0x0A01_0063),
        (Reg::ArpStaticMacHi, 0x0000_0A0B),
        (Reg::ArpStaticMacLo, 0x0C0D_0E0F),
        (Reg::ArpRetryInterval, 1234),
        (Reg::ArpRetries, 7),
        (Reg::Ttl, 17),
    ];
    for (r, v) in values {
        b.write_reg(r.word(), v);
    }
    // A TTL of 0 is refused: the register keeps its value.
    b.write_reg(Reg::Ttl.word(), 0x100);
    for (r, v) in values {
        assert_eq!(b.read_reg(r.word()), v, "{}", r.name());
    }
    for c in Counter::ALL {
        assert_eq!(b.counter(c), 0, "{} after reset", c.name());
    }
}

#[test]
fn static_entry_skips_arp_and_flush_forgets_it() {
    let mut b = card(0.0, 2);
    add_static(&mut b, &PEER);
    b.send(TxDatagram {
        dst_ip: PEER.ip_u32(),
        src_port: 1,
        dst_port: 2,
        payload: vec![1; 20],
    });
    assert!(b.run_until(2_000, |b| udp_frames_to(b, PEER.mac).len() == 1));
    assert_eq!(b.counter(Counter::ArpRequestsOut), 0);

    b.write_reg(Reg::ArpCommand.word(), ARP_COMMAND_FLUSH);
    assert_eq!(b.read_reg(Reg::Status.word()) & 1, 1, "flush in progress");
    b.run(300);
    assert_eq!(b.read_reg(Reg::Status.word()) & 1, 0);
    b.send(TxDatagram {
        dst_ip: PEER.ip_u32(),
        src_port: 1,
        dst_port: 2,
        payload: vec![2; 20],
    });
    assert!(b.run_until(2_000, |b| b
        .link_tx
        .frames
        .iter()
        .any(|f| f.bytes[12..14] == [8, 6])));
    assert_eq!(
        b.counter(Counter::ArpRequestsOut),
        1,
        "the flushed entry must be asked for again"
    );
    let mut hosts = Hosts::new(&[PEER]);
    assert!(b.run_until(5_000, |b| {
        hosts.answer(b);
        udp_frames_to(b, PEER.mac).len() == 2
    }));
}

/// Reads ARP cache entry `index` through the readout registers.
fn read_arp_entry(b: &mut CoreBench, index: u32) -> Option<([u8; 4], [u8; 6])> {
    b.write_reg(ArpRead::Command.word(), index);
    for _ in 0..100 {
        let v = b.read_reg(ArpRead::Command.word());
        if v & ARP_READ_DONE != 0 {
            assert_eq!(v & 0xFF, index);
            if v & ARP_READ_VALID == 0 {
                return None;
            }
            let ip = b.read_reg(ArpRead::Ip.word()).to_be_bytes();
            let hi = b.read_reg(ArpRead::MacHi.word());
            let lo = b.read_reg(ArpRead::MacLo.word());
            return Some((ip, mac_from_regs(hi, lo)));
        }
    }
    panic!("the readout of entry {index} never completed");
}

#[test]
fn the_arp_cache_reads_back_while_the_transmitter_looks_it_up() {
    let mut b = card(0.2, 8);
    let hosts: Vec<Endpoint> = (0..8u8)
        .map(|i| Endpoint::new([0x02, 0, 0, 0, 0x30, i], [10, 1, 0, 30 + i]))
        .collect();
    for h in &hosts {
        add_static(&mut b, h);
    }
    for k in 0..48usize {
        b.send(TxDatagram {
            dst_ip: hosts[k % 8].ip_u32(),
            src_port: 1,
            dst_port: 2,
            payload: vec![k as u8; 64],
        });
    }
    // Read the whole cache twice while the transmitter resolves every datagram.
    for _ in 0..2 {
        let table: Vec<_> = (0..256).filter_map(|i| read_arp_entry(&mut b, i)).collect();
        let want: Vec<_> = hosts.iter().map(|h| (h.ip, h.mac)).collect();
        assert_eq!(table, want);
    }
    assert!(b.run_until(50_000, |b| b.tx_pending() == 0));
    b.run(2_000);
    for (i, h) in hosts.iter().enumerate() {
        let to_h = udp_frames_to(&b, h.mac);
        assert_eq!(to_h.len(), 6, "host {i}");
        assert!(
            to_h.iter().all(|f| f[30..34] == h.ip),
            "each went to its own MAC"
        );
    }
    assert_eq!(b.counter(Counter::ArpRequestsOut), 0, "every lookup hit");
}

#[test]
fn unanswered_arp_drops_within_the_bound_and_never_stalls_other_traffic_longer() {
    let mut b = card(0.0, 3);
    let interval = 2_000u32;
    b.write_reg(Reg::ArpRetryInterval.word(), interval);
    b.write_reg(Reg::ArpRetries.word(), 3);
    let ghost = [10, 1, 0, 99];
    b.send(TxDatagram {
        dst_ip: u32::from_be_bytes(ghost),
        src_port: 1,
        dst_port: 2,
        payload: vec![9; 100],
    });
    b.send(TxDatagram {
        dst_ip: PEER.ip_u32(),
        src_port: 1,
        dst_port: 2,
        payload: vec![7; 100],
    });
    let start = b.cycle_count();
    let mut hosts = Hosts::new(&[PEER]);
    assert!(b.run_until(20 * interval as u64, |b| {
        hosts.answer(b);
        udp_frames_to(b, PEER.mac).len() == 1
    }));
    let waited = b.cycle_count() - start;
    assert!(
        waited <= 3 * interval as u64 + 1_000,
        "traffic to the peer waited {waited} cycles"
    );
    assert_eq!(b.counter(Counter::TxDropArpTimeout), 1);
    assert_eq!(b.counter(Counter::TxPackets), 1);
    let ghost_requests = b
        .link_tx
        .frames
        .iter()
        .filter(|f| f.bytes[12..14] == [8, 6] && f.bytes[38..42] == ghost)
        .count();
    assert_eq!(ghost_requests, 3, "bounded retries");
    assert_eq!(b.counter(Counter::ArpRequestsOut), 4);
}

#[test]
fn destinations_outside_the_subnet_go_through_the_gateway() {
    let mut b = card(0.0, 4);
    let far = u32::from_be_bytes([192, 0, 2, 77]);
    b.send(TxDatagram {
        dst_ip: far,
        src_port: 5,
        dst_port: 6,
        payload: b"far away".to_vec(),
    });
    let mut hosts = Hosts::new(&[GATEWAY]);
    assert!(b.run_until(5_000, |b| {
        hosts.answer(b);
        udp_frames_to(b, GATEWAY.mac).len() == 1
    }));
    let f = &udp_frames_to(&b, GATEWAY.mac)[0];
    assert_eq!(
        f[30..34],
        [192, 0, 2, 77],
        "IP destination stays the far host"
    );
    let arp = b
        .link_tx
        .frames
        .iter()
        .find(|f| f.bytes[12..14] == [8, 6])
        .unwrap();
    assert_eq!(arp.bytes[38..42], GATEWAY.ip, "ARP asks for the gateway");
    // Limited broadcast needs no ARP at all.
    b.send(TxDatagram {
        dst_ip: u32::MAX,
        src_port: 5,
        dst_port: 6,
        payload: b"all".to_vec(),
    });
    assert!(b.run_until(2_000, |b| udp_frames_to(b, BROADCAST).len() == 1));
}

#[test]
fn transmit_checksum_when_enabled_and_zero_otherwise() {
    let mut b = card(0.3, 5);
    let mut hosts = Hosts::new(&[PEER]);
    let payloads: Vec<Vec<u8>> = [0usize, 1, 17, 18, 255, 1000, 1472]
        .iter()
        .map(|n| (0..*n).map(|i| (i * 7 + n) as u8).collect())
        .collect();
    for enabled in [false, true] {
        b.write_reg(
            Reg::Control.word(),
            if enabled { CONTROL_UDP_TX_CHECKSUM } else { 0 },
        );
        let before = udp_frames_to(&b, PEER.mac).len();
        for p in &payloads {
            b.send(TxDatagram {
                dst_ip: PEER.ip_u32(),
                src_port: 100,
                dst_port: 200,
                payload: p.clone(),
            });
        }
        assert!(b.run_until(100_000, |b| {
            hosts.answer(b);
            udp_frames_to(b, PEER.mac).len() == before + payloads.len()
        }));
        for (f, p) in udp_frames_to(&b, PEER.mac)[before..].iter().zip(&payloads) {
            let s = SlicedPacket::from_ethernet(f).unwrap();
            let Some(TransportSlice::Udp(u)) = s.transport else {
                panic!()
            };
            assert_eq!(u.payload(), &p[..]);
            if enabled {
                assert_ne!(u.checksum(), 0);
                assert!(
                    matches!(
                        classify_rx(f, false, PEER.mac, PEER.ip_u32(), 0xFFFF_FF00),
                        RxOutcome::Udp { .. }
                    ),
                    "checksum verifies"
                );
                let mut bad = f.clone();
                bad[42 + p.len() / 2] ^= if p.is_empty() { 0 } else { 1 };
                if !p.is_empty() {
                    assert_eq!(
                        classify_rx(&bad, false, PEER.mac, PEER.ip_u32(), 0xFFFF_FF00),
                        RxOutcome::Drop(DropReason::UdpChecksum)
                    );
                }
            } else {
                assert_eq!(u.checksum(), 0);
            }
        }
    }
    b.send(TxDatagram {
        dst_ip: PEER.ip_u32(),
        src_port: 1,
        dst_port: 2,
        payload: vec![0; 1473],
    });
    assert!(b.run_until(10_000, |b| b.tx_pending() == 0));
    // (With the checksum on, the request is taken first; its payload is stored, then drained.)
    b.run(2000);
    assert_eq!(b.counter(Counter::TxDropLength), 1);
}

/// Every drop reason, sent through the whole core: each counter counts exactly its frames, nothing
/// bad reaches the RX output, and good traffic still flows afterwards.
#[test]
fn every_drop_reason_is_counted_once_through_the_core() {
    use DropReason::*;
    let mut b = card(0.2, 6);
    let good = udp_frame(&PEER, &CARD, 7, 8, &[0x5A; 40]);
    let mut cases: Vec<(Vec<u8>, bool, DropReason)> = vec![
        (good.clone(), true, MacError),
        (good[..50].to_vec(), false, Runt),
    ];
    cases.push((
        udp_frame(&PEER, &CARD, 1, 2, &vec![1; 1500]),
        false,
        Oversize,
    ));
    let mut f = good.clone();
    f[5] ^= 1;
    cases.push((f, false, NotForUs));
    let mut f = good.clone();
    f[14] = 0x46;
    fix_ipv4_checksum(&mut f);
    cases.push((f, false, IpVersionIhl));
    let mut f = good.clone();
    f[24] ^= 0x80;
    cases.push((f, false, IpChecksum));
    cases.push((good[..good.len() - 5].to_vec(), false, IpLength));
    let mut f = good.clone();
    f[20] |= 0x20;
    fix_ipv4_checksum(&mut f);
    cases.push((f, false, Fragment));
    let mut f = good.clone();
    f[38] = 0xFF;
    cases.push((f, false, UdpLength));
    let mut f = good.clone();
    f[60] ^= 0x01;
    cases.push((f, false, UdpChecksum));
    let mut f = good.clone();
    f[23] = 47;
    fix_ipv4_checksum(&mut f);
    cases.push((f, false, UnknownProtocol));
    let mut f = icmp_echo_request(&PEER, &CARD, 1, 1, b"bad");
    f[37] ^= 0x10;
    cases.push((f, false, IcmpInvalid));
    for (f, e, r) in &cases {
        assert_eq!(
            classify_rx(f, *e, CARD.mac, CARD.ip_u32(), 0xFFFF_FF00),
            RxOutcome::Drop(*r)
        );
        b.link_rx.push(f.clone(), *e);
    }
    assert!(b.run_until(50_000, |b| b.link_rx.is_idle()));
    b.run(100);
    for r in DropReason::ALL {
        let want = cases.iter().filter(|c| c.2 == r).count() as u32;
        assert_eq!(b.counter(r.counter()), want, "{}", r.name());
    }
    assert!(b.rx.iter().all(|d| d.error), "a bad frame was delivered");
    assert_eq!(b.counter(Counter::RxPackets), 0);
    b.link_rx.push(good.clone(), false);
    assert!(b.run_until(2_000, |b| b.rx.iter().any(|d| !d.error)));
}

/// Echo requests arriving faster than replies can go: the extra ones are dropped and counted as
/// busy, the others answered exactly.
#[test]
fn an_echo_flood_is_answered_or_counted_busy() {
    let mut b = card(0.0, 7);
    let n = 20;
    for i in 0..n {
        b.link_rx.push(
            icmp_echo_request(&PEER, &CARD, 9, i, &vec![i as u8; 1000]),
            false,
        );
    }
    // Replies need the peer's MAC: it is learned from nothing here, the reply goes to the
    // requester's MAC straight from the request.
    assert!(b.run_until(100_000, |b| b.link_rx.is_idle()));
    b.run(2_000);
    let replies = b.counter(Counter::IcmpEchoReplies);
    let busy = b.counter(Counter::DropIcmpBusy);
    assert_eq!(
        replies + busy,
        n as u32,
        "every request answered or counted"
    );
    assert!(replies >= 1 && busy >= 1, "replies {replies}, busy {busy}");
    for f in b
        .link_tx
        .frames
        .iter()
        .filter(|f| f.bytes[12..14] == [8, 0])
    {
        let p = SlicedPacket::from_ethernet(&f.bytes).unwrap();
        assert!(p.net.is_some());
        let seq = u16::from_be_bytes([f.bytes[40], f.bytes[41]]);
        assert!(
            f.bytes[42..].iter().all(|x| *x == seq as u8),
            "reply {seq} carries its own data"
        );
    }
}

/// Echo replies and UDP datagrams leave with the port's TTL (64 after reset, then what `ttl` says),
/// never the request's (1 and 200 here), with a valid IPv4 header checksum; a reply carries the
/// request's identifier, sequence and data.
#[test]
fn replies_and_datagrams_leave_with_the_ports_own_ttl() {
    let mut b = card(0.2, 8);
    let mut hosts = Hosts::new(&[PEER]);
    for ttl in [TTL_DEFAULT as u8, 9] {
        b.write_reg(Reg::Ttl.word(), ttl as u32);
        let before = b.link_tx.frames.len();
        let before_ip = udp_frames_to(&b, PEER.mac).len();
        for (i, req_ttl) in [1u8, 200].into_iter().enumerate() {
            let mut f = icmp_echo_request(&PEER, &CARD, 0x1234, 40 + i as u16, &[i as u8; 30]);
            f[22] = req_ttl;
            fix_ipv4_checksum(&mut f);
            b.link_rx.push(f, false);
            assert!(b.run_until(100_000, |b| b.link_tx.frames.len() > before + i));
        }
        b.send(TxDatagram {
            dst_ip: PEER.ip_u32(),
            src_port: 100,
            dst_port: 200,
            payload: vec![5; 20],
        });
        assert!(b.run_until(100_000, |b| {
            hosts.answer(b);
            udp_frames_to(b, PEER.mac).len() > before_ip + 2
        }));
        let sent: Vec<Vec<u8>> = udp_frames_to(&b, PEER.mac)[before_ip..].to_vec();
        assert_eq!(sent.len(), 3);
        for (k, f) in sent.iter().enumerate() {
            assert_eq!(f[22], ttl, "frame {k}: TTL");
            assert_eq!(
                ones_complement_sum(&f[14..34]),
                0xFFFF,
                "frame {k}: header checksum"
            );
            if k < 2 {
                assert_eq!(f[23], 1, "an echo reply");
                assert_eq!(f[34], 0, "type echo reply");
                assert_eq!(
                    &f[38..42],
                    &[0x12, 0x34, 0, 40 + k as u8],
                    "identifier, sequence"
                );
                assert_eq!(&f[42..72], &[k as u8; 30]);
                assert_eq!(ones_complement_sum(&f[34..72]), 0xFFFF, "ICMP checksum");
            } else {
                assert_eq!(f[23], 17, "the UDP datagram");
            }
        }
    }
}

/// Random mix of good and bad frames with random stalls on the user's side: the scoreboard checks
/// every delivered datagram against the reference model, in order, byte-exact.
#[test]
fn random_traffic_mix_against_the_reference_model() {
    let mut b = card(0.3, 8);
    let mut rng = StdRng::seed_from_u64(8);
    let mut expected = vec![];
    for i in 0..150u32 {
        let len = rng.gen_range(0..600);
        let payload: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
        let mut f = udp_frame(&PEER, &CARD, 1000 + i as u16, 2000, &payload);
        let mut err = false;
        match rng.gen_range(0..10) {
            0 => err = true,
            1 => {
                let k = rng.gen_range(14..f.len());
                f[k] ^= 1 << rng.gen_range(0..8);
            }
            2 => f.truncate(rng.gen_range(1..f.len())),
            _ => {}
        }
        if let RxOutcome::Udp {
            payload, src_port, ..
        } = classify_rx(&f, err, CARD.mac, CARD.ip_u32(), 0xFFFF_FF00)
        {
            expected.push((src_port, payload));
        }
        b.link_rx.push(f, err);
    }
    assert!(b.run_until(400_000, |b| b.link_rx.is_idle()));
    b.run(500);
    let got: Vec<_> =
        b.rx.iter()
            .filter(|d| !d.error)
            .map(|d| (d.src_port, d.payload.clone()))
            .collect();
    assert_eq!(got.len(), expected.len());
    assert_eq!(got, expected);
    assert_eq!(b.counter(Counter::RxPackets), expected.len() as u32);
}

/// ARP requests from many hosts while the transmitter is busy with long datagrams: every request
/// is either answered or counted as a dropped reply, never lost silently.
#[test]
fn arp_requests_while_the_transmitter_is_busy_are_answered_or_counted() {
    let mut b = card(0.0, 9);
    add_static(&mut b, &PEER);
    for _ in 0..6 {
        b.send(TxDatagram {
            dst_ip: PEER.ip_u32(),
            src_port: 1,
            dst_port: 2,
            payload: vec![3; 1472],
        });
    }
    let hosts: Vec<Endpoint> = (0..8u8)
        .map(|i| Endpoint::new([0x02, 0, 0, 0, 1, i], [10, 1, 0, 100 + i]))
        .collect();
    b.run(50);
    for h in &hosts {
        b.link_rx.push(arp_request(h, CARD.ip), false);
    }
    assert!(b.run_until(20_000, |b| b.tx_pending() == 0 && b.link_rx.is_idle()));
    b.run(2_000);
    let (asked, answered, dropped) = (
        b.counter(Counter::ArpRequestsIn),
        b.counter(Counter::ArpRepliesOut),
        b.counter(Counter::ArpRepliesDropped),
    );
    assert_eq!(asked, 8);
    assert_eq!(
        answered + dropped,
        asked,
        "answered {answered}, dropped {dropped}"
    );
    assert!(
        dropped > 0,
        "the burst was meant to overrun the single pending reply"
    );
    let replies: Vec<_> = b
        .link_tx
        .frames
        .iter()
        .filter(|f| f.bytes[12..14] == [8, 6] && f.bytes[21] == 2)
        .collect();
    assert_eq!(replies.len() as u32, answered);
    for r in replies {
        assert!(
            hosts
                .iter()
                .any(|h| r.bytes[0..6] == h.mac && r.bytes[38..42] == h.ip),
            "reply to a requester"
        );
    }
}

/// Hostile input on the link: VLAN-tagged frames (802.1Q and 802.1ad, an IPv4 datagram and an ARP
/// request for us behind the tag) are not ours to parse and are counted as unknown protocol;
/// unsolicited ARP replies teach the cache exactly what its documented policy says (the sender of
/// every well-formed ARP packet for our address, whether we asked or not; a reply for another
/// address teaches nothing and is counted as not for us). The core keeps working afterwards.
#[test]
fn vlan_tags_and_unsolicited_arp_replies_follow_the_documented_policy() {
    use DropReason::*;
    let mut b = card(0.0, 11);
    let good = udp_frame(&PEER, &CARD, 7, 8, &[0x3C; 40]);
    let tagged = |f: &[u8], tpid: [u8; 2]| {
        let mut t = f[..12].to_vec();
        t.extend_from_slice(&tpid);
        t.extend_from_slice(&[0x00, 0x05]); // priority 0, VLAN 5
        t.extend_from_slice(&f[12..]);
        t
    };
    let stranger = Endpoint::new([0x02, 0, 0, 0, 0, 0x30], [10, 1, 0, 30]);
    let liar = Endpoint::new([0x02, 0, 0, 0, 0, 0x40], [10, 1, 0, 40]);
    let elsewhere = Endpoint::new(CARD.mac, [10, 1, 0, 99]);
    let cases: Vec<(Vec<u8>, Option<DropReason>)> = vec![
        (tagged(&good, [0x81, 0x00]), Some(UnknownProtocol)),
        (tagged(&good, [0x88, 0xA8]), Some(UnknownProtocol)),
        (
            tagged(&arp_request(&PEER, CARD.ip), [0x81, 0x00]),
            Some(UnknownProtocol),
        ),
        // Unsolicited: the card never asked for 10.1.0.30.
        (arp_reply(&stranger, &CARD), None),
        // For another address on our MAC: teaches nothing.
        (arp_reply(&liar, &elsewhere), Some(NotForUs)),
    ];
    for (f, want) in &cases {
        let outcome = classify_rx(f, false, CARD.mac, CARD.ip_u32(), 0xFFFF_FF00);
        match want {
            Some(r) => assert_eq!(outcome, RxOutcome::Drop(*r)),
            None => assert!(matches!(outcome, RxOutcome::Arp { request: false, .. })),
        }
        b.link_rx.push(f.clone(), false);
    }
    assert!(b.run_until(20_000, |b| b.link_rx.is_idle()));
    b.run(100);
    assert_eq!(b.counter(UnknownProtocol.counter()), 3);
    assert_eq!(b.counter(NotForUs.counter()), 1);
    assert_eq!(b.counter(Counter::ArpRepliesIn), 1);
    assert_eq!(
        b.counter(Counter::ArpRepliesOut),
        0,
        "a tagged request is not answered"
    );
    assert!(b.rx.is_empty(), "nothing tagged was delivered");
    assert_eq!(
        read_arp_entry(&mut b, 30),
        Some((stranger.ip, stranger.mac)),
        "the unsolicited reply for us is learned"
    );
    assert_eq!(
        read_arp_entry(&mut b, 40),
        None,
        "the reply for another address is not"
    );
    // The learned entry is used without asking; the core still receives.
    b.send(TxDatagram {
        dst_ip: stranger.ip_u32(),
        src_port: 1,
        dst_port: 2,
        payload: vec![9; 20],
    });
    assert!(b.run_until(2_000, |b| udp_frames_to(b, stranger.mac).len() == 1));
    assert_eq!(b.counter(Counter::ArpRequestsOut), 0);
    // A static entry is an entry like the others: a later ARP packet for us from its address
    // replaces it (documented in docs/architecture.md).
    add_static(&mut b, &PEER);
    b.run(10);
    assert_eq!(read_arp_entry(&mut b, 20), Some((PEER.ip, PEER.mac)));
    let impostor = Endpoint::new([0x02, 0, 0, 0, 0, 0x66], PEER.ip);
    b.link_rx.push(arp_reply(&impostor, &CARD), false);
    assert!(b.run_until(2_000, |b| b.link_rx.is_idle()));
    b.run(20);
    assert_eq!(read_arp_entry(&mut b, 20), Some((PEER.ip, impostor.mac)));
    b.link_rx.push(good, false);
    assert!(b.run_until(2_000, |b| b
        .rx
        .iter()
        .any(|d| !d.error && d.payload == [0x3C; 40])));
}

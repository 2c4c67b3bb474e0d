//! The offload core against smoltcp, a real and independent IPv4 stack.

use etherparse::SlicedPacket;
use nanet_contract::Counter;
use nanet_sim::testbench::core::TxDatagram;
use nanet_sim::testbench::session::{Dir, PeerSession};
use nanet_sim::traffic::packets::Endpoint;

const CARD: Endpoint = Endpoint::new([0x02, 0x4E, 0x41, 0x4E, 0x45, 0x01], [192, 168, 7, 10]);
const PEER: Endpoint = Endpoint::new([0x02, 0x00, 0x5E, 0x10, 0x00, 0x02], [192, 168, 7, 20]);
const PEER_PORT: u16 = 9000;
const CARD_PORT: u16 = 4000;

fn session() -> PeerSession {
    PeerSession::new(CARD, PEER, 24, [192, 168, 7, 1], PEER_PORT)
}

fn assert_card_frames_parse(s: &PeerSession) {
    let mut n = 0;
    for f in s.frames(Dir::CardToPeer) {
        SlicedPacket::from_ethernet(&f.bytes)
            .unwrap_or_else(|e| panic!("card frame does not parse: {e}: {:02x?}", f.bytes));
        assert!(f.bytes.len() >= 60, "card sent a runt");
        n += 1;
    }
    assert!(n > 0, "the card sent nothing");
    assert_eq!(
        s.card.link_tx.framing_errors, 0,
        "Avalon-ST startofpacket/endofpacket out of step"
    );
}

#[test]
fn card_resolves_the_peer_by_arp_and_sends_it_udp() {
    let mut s = session();
    let payloads: Vec<Vec<u8>> = (0..5)
        .map(|i| (0..(100 * i + 7)).map(|b| (b * 31 + i) as u8).collect())
        .collect();
    for p in &payloads {
        s.card.send(TxDatagram {
            dst_ip: PEER.ip_u32(),
            src_port: CARD_PORT,
            dst_port: PEER_PORT,
            payload: p.clone(),
        });
    }
    let mut got = vec![];
    assert!(
        s.run_until(200_000, |s| {
            while let Some(d) = s.peer.recv_udp() {
                got.push(d);
            }
            got.len() == payloads.len()
        }),
        "peer received {} of {} datagrams",
        got.len(),
        payloads.len()
    );
    for (g, p) in got.iter().zip(&payloads) {
        assert_eq!(g, &(CARD.ip, CARD_PORT, p.clone()));
    }
    assert_eq!(
        s.card.counter(Counter::ArpRequestsOut),
        1,
        "one ARP request resolves the peer"
    );
    assert_eq!(s.card.counter(Counter::TxPackets), 5);
    assert_eq!(
        s.card.counter(Counter::TxBytes),
        payloads.iter().map(|p| p.len() as u32).sum::<u32>()
    );
    assert_card_frames_parse(&s);
}

#[test]
fn peer_resolves_the_card_by_arp_and_sends_it_udp() {
    let mut s = session();
    let payloads: Vec<Vec<u8>> = (0..6).map(|i| vec![i as u8; 1 + 250 * i]).collect();
    for p in &payloads {
        s.peer.send_udp(CARD.ip, CARD_PORT, p);
    }
    assert!(
        s.run_until(200_000, |s| s.card.rx.len() == payloads.len()),
        "card received {} datagrams",
        s.card.rx.len()
    );
    for (d, p) in s.card.rx.iter().zip(&payloads) {
        assert!(!d.error);
        assert_eq!(
            (d.src_ip, d.src_port, d.dst_port),
            (PEER.ip_u32(), PEER_PORT, CARD_PORT)
        );
        assert_eq!(&d.payload, p);
    }
    assert_eq!(s.card.counter(Counter::ArpRequestsIn), 1);
    assert_eq!(s.card.counter(Counter::ArpRepliesOut), 1);
    assert_eq!(s.card.counter(Counter::RxPackets), 6);
    assert_card_frames_parse(&s);
}

#[test]
fn udp_both_ways_and_ping_replies() {
    let mut s = session();
    s.peer.send_udp(CARD.ip, CARD_PORT, b"hello card");
    assert!(s.run_until(100_000, |s| !s.card.rx.is_empty()));
    let d = s.card.rx.pop_front().unwrap();
    assert_eq!(d.payload, b"hello card");
    // Answer to where the datagram came from; the card learned the peer from its ARP request.
    s.card.send(TxDatagram {
        dst_ip: d.src_ip,
        src_port: d.dst_port,
        dst_port: d.src_port,
        payload: b"hello peer".to_vec(),
    });
    let mut reply = None;
    assert!(s.run_until(100_000, |s| {
        reply = s.peer.recv_udp();
        reply.is_some()
    }));
    assert_eq!(reply.unwrap(), (CARD.ip, CARD_PORT, b"hello peer".to_vec()));
    assert_eq!(
        s.card.counter(Counter::ArpRequestsOut),
        0,
        "learned from the peer's request, no need to ask"
    );

    for seq in 0..4u16 {
        let data: Vec<u8> = (0..(seq as usize * 300)).map(|i| i as u8).collect();
        s.peer.ping(CARD.ip, seq, &data);
        let mut echo = None;
        assert!(
            s.run_until(100_000, |s| {
                echo = s.peer.recv_echo_reply();
                echo.is_some()
            }),
            "no echo reply to seq {seq}"
        );
        assert_eq!(echo.unwrap(), (CARD.ip, seq, data));
    }
    assert_eq!(s.card.counter(Counter::IcmpEchoReplies), 4);
    assert_card_frames_parse(&s);
}

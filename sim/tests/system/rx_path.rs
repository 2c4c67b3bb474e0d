//! The whole receive path: four 10G links at line rate with real Ethernet/IPv4/UDP frames, four
//! CLOPs per port, good datagrams mixed with bad checksums, MAC errors, unknown UDP ports, other
//! hosts' frames, IP options and fragments; random stalls on the memory side. Every good payload
//! must land exactly once, in order per stream, byte-exact; nothing else may be reported
//! (engine from `NANET_ENGINE`).

use nanet_contract::offload::{Counter, Reg};
use nanet_contract::rx::{port, PageSize, RxCounter};
use nanet_sim::check::rx_host::{payload, ClopSpec, RxCard};
use nanet_sim::engine::EngineKind;
use nanet_sim::testbench::rx_path::{
    port_endpoint, stream_udp_port, FourPortBench, RxPath256Design, RxPathBench, RxPathBenchAt,
    RxPathDesign, RxPathWidth, PEER,
};
use nanet_sim::traffic::packets::{fix_ipv4_checksum, pad, udp_frame, Endpoint};
use nanet_sim::world::host_mem::MemoryPreset;
use nanet_sim::world::peer::SmoltcpPeer;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

fn bench(preset: MemoryPreset, stall: f64, seed: u64) -> RxPathBench {
    bench_at(preset, stall, seed)
}

/// The receive path at `D`'s width.
fn bench_at<D: RxPathWidth>(preset: MemoryPreset, stall: f64, seed: u64) -> RxPathBenchAt<D> {
    let kind = EngineKind::from_env().unwrap_or_else(|e| panic!("{e}"));
    RxPathBenchAt::new(kind, preset, stall, seed).unwrap_or_else(|e| panic!("{e}"))
}

/// A frame for `port` that the card must drop before any payload moves, and the counter that
/// says why: `kind` 0 for another host, 1 IP options, 2 a fragment, 3 a runt (modulo 4). Edited
/// headers get their checksum recomputed, so each is dropped for its own reason.
fn hostile(rng: &mut StdRng, port: u8, kind: usize) -> (Vec<u8>, Counter) {
    let us = port_endpoint(port as usize);
    let len = rng.gen_range(1..200);
    let body = payload(rng, len);
    match kind % 4 {
        // For another host's IP.
        0 => {
            let mut other = us;
            other.ip[3] ^= 0x40;
            let f = udp_frame(&PEER, &other, 1, stream_udp_port(0), &body);
            (f, Counter::DropNotForUs)
        }
        // IP options (IHL 6): not supported, dropped and counted.
        1 => {
            let mut f = udp_frame(&PEER, &us, 1, stream_udp_port(0), &body);
            f[14] = 0x46;
            fix_ipv4_checksum(&mut f);
            (f, Counter::DropIpVersionIhl)
        }
        // A fragment (more-fragments flag).
        2 => {
            let mut f = udp_frame(&PEER, &us, 1, stream_udp_port(0), &body);
            f[20] |= 0x20;
            fix_ipv4_checksum(&mut f);
            (f, Counter::DropFragment)
        }
        // A runt.
        _ => (vec![0x55; 30], Counter::DropRunt),
    }
}

#[test]
fn four_ports_four_streams_each_every_good_payload_lands_once() {
    // Gen3 x8 with random stalls; the links run at about half of line rate on average (random
    // gaps), below what the core domain moves, so no datagram may be lost.
    four_ports_mix(bench(MemoryPreset::gen3_x8(), 0.2, 21), 240);
}

#[test]
fn four_ports_at_256_bits_every_good_payload_lands_once() {
    // The same traffic through the receive path at 256 bits (the Gen3 x8 card's width): its
    // bad checksums end datagrams early with an error at every place in a 256-bit word.
    four_ports_mix(
        bench_at::<RxPath256Design>(MemoryPreset::gen3_x8(), 0.2, 21),
        240,
    );
}

/// Four ports, four CLOPs each, `packets` random good and bad datagrams: every good payload lands
/// once, in order, byte-exact; every drop is counted where it belongs.
/// Returns the bench for the caller's further checks.
pub fn four_ports_mix<B: FourPortBench>(mut b: B, packets: usize) -> B {
    let mut rng = StdRng::seed_from_u64(21);
    b.event_ring(8);
    for p in 0..4u8 {
        for e in 0..4u8 {
            b.map_stream(p, e);
            b.register(
                ClopSpec {
                    port: p,
                    stream: e,
                    buf_size: [2048, 4096, 8192, 1536][e as usize],
                    buf_count: 4,
                    page: if p == 2 {
                        PageSize::Page64K
                    } else {
                        PageSize::Page4K
                    },
                    header: (p + e) % 2 == 0,
                    skip_held: false,
                    timeout: 3000,
                },
                &[],
            );
        }
    }
    let mut good = 0u64;
    let mut bad_checksum = [0u32; 4];
    let mut unknown_port = [0u32; 4];
    let mut hostile_drops = std::collections::BTreeMap::<(u8, u32), u32>::new();
    // The hostile frames take the four kinds in turn, and the mix starts with one of each.
    let mut hostiles = 0;
    for k in 0..packets {
        let p = rng.gen_range(0..4u8);
        match if k < 4 { 2 } else { rng.gen_range(0..20) } {
            0 => {
                bad_checksum[p as usize] += 1;
                let len = rng.gen_range(1..1472);
                let body = payload(&mut rng, len);
                b.send(p, stream_udp_port(rng.gen_range(0..4)), &body, true);
            }
            1 => {
                unknown_port[p as usize] += 1;
                let len = rng.gen_range(1..300);
                let body = payload(&mut rng, len);
                b.send(p, 6000, &body, false);
            }
            2 => {
                let (f, why) = hostile(&mut rng, p, hostiles);
                hostiles += 1;
                *hostile_drops.entry((p, why.word())).or_default() += 1;
                b.send_frame(p, f, false);
            }
            3 => {
                // A frame the MAC flags bad at its end.
                let len = rng.gen_range(1..1472);
                let body = payload(&mut rng, len);
                let f = udp_frame(
                    &PEER,
                    &port_endpoint(p as usize),
                    1,
                    stream_udp_port(1),
                    &body,
                );
                b.send_frame(p, f, true);
            }
            _ => {
                good += 1;
                let len = if rng.gen_bool(0.05) {
                    0
                } else if rng.gen_bool(0.3) {
                    rng.gen_range(1..=64)
                } else {
                    rng.gen_range(1..=1472)
                };
                let body = payload(&mut rng, len);
                let gap = rng.gen_range(0..2 * (len as u64 + 66));
                b.send_with_gap(p, stream_udp_port(rng.gen_range(0..4)), &body, false, gap);
            }
        }
    }
    b.drain(5000, 2_000_000);
    b.host().check_held();
    assert_eq!(
        b.host().totals.delivered,
        good,
        "every good datagram delivered"
    );
    assert_eq!(b.counter(RxCounter::Committed) as u64, good);
    for p in 0..4u8 {
        for e in 0..4u8 {
            assert_eq!(b.host().outstanding(p * 16 + e), 0);
        }
        assert_eq!(
            b.port_read(p, port::DROP_NO_STREAM),
            unknown_port[p as usize]
        );
        assert_eq!(b.port_read(p, port::DROP_FIFO_FULL), 0);
        assert_eq!(
            b.port_read(p, Counter::DropUdpChecksum.word()),
            bad_checksum[p as usize]
        );
        assert_eq!(
            b.port_read(p, Reg::Ip.word()),
            port_endpoint(p as usize).ip_u32()
        );
        // Each hostile frame counted under its own reason, and nothing under the IP checksum.
        for why in [
            Counter::DropNotForUs,
            Counter::DropIpVersionIhl,
            Counter::DropFragment,
            Counter::DropRunt,
            Counter::DropIpChecksum,
        ] {
            let want = hostile_drops.get(&(p, why.word())).copied().unwrap_or(0);
            assert_eq!(b.port_read(p, why.word()), want, "port {p}: {why:?}");
        }
    }
    // Every kind of hostile frame was among them (the mix is random).
    for why in [
        Counter::DropNotForUs,
        Counter::DropIpVersionIhl,
        Counter::DropFragment,
        Counter::DropRunt,
    ] {
        let sent: u32 = (0..4u8)
            .filter_map(|p| hostile_drops.get(&(p, why.word())))
            .sum();
        assert!(sent > 0, "no {why:?} frame in the mix");
    }
    b
}

#[test]
fn an_overflowing_port_fifo_drops_whole_datagrams_and_counts_them() {
    // Host memory far slower than one port's line rate: the port FIFO fills up and datagrams
    // are dropped whole at its entrance, never cut.
    let mut rng = StdRng::seed_from_u64(22);
    let mut preset = MemoryPreset::gen2_x8();
    preset.bytes_per_cycle = 1.0;
    let mut b = bench(preset, 0.0, 22);
    b.host.exact = false;
    b.event_ring(8);
    b.map_stream(1, 3);
    b.register(
        ClopSpec {
            port: 1,
            stream: 3,
            buf_size: 1472,
            buf_count: 64,
            page: PageSize::Page4K,
            header: false,
            skip_held: false,
            timeout: 0,
        },
        &[],
    );
    for _ in 0..40 {
        let body = payload(&mut rng, 1472);
        b.send(1, stream_udp_port(3), &body, false);
    }
    b.drain(5000, 3_000_000);
    let dropped = b.port_read(1, port::DROP_FIFO_FULL) as u64;
    let forwarded = b.port_read(1, port::FORWARDED) as u64;
    assert!(dropped > 0, "the FIFO never overflowed");
    assert_eq!(forwarded + dropped, 40);
    assert_eq!(b.host.totals.delivered, forwarded);
    assert_eq!(
        b.host.totals.delivered + b.host.totals.skipped + b.host.outstanding(0x13) as u64,
        40
    );
}

#[test]
fn the_card_timestamps_every_stage_of_a_packet() {
    let mut rng = StdRng::seed_from_u64(23);
    let mut b = bench(MemoryPreset::ideal(), 0.0, 23);
    b.event_ring(6);
    b.map_stream(0, 0);
    b.register(
        ClopSpec {
            port: 0,
            stream: 0,
            buf_size: 1472,
            buf_count: 8,
            page: PageSize::Page4K,
            header: false,
            skip_held: false,
            timeout: 0,
        },
        &[],
    );
    let body = payload(&mut rng, 1472);
    b.send(0, stream_udp_port(0), &body, false);
    b.drain(2000, 200_000);
    let r = b.host.records[0];
    let t = r.times;
    // SOP at the MAC, 7 network cycles (11 core cycles) to the header, then cut-through.
    let hdr = t.header_parsed.wrapping_sub(t.sop_at_mac);
    assert!(
        (8..=16).contains(&hdr),
        "SOP to header parsed: {hdr} cycles"
    );
    let first = t.first_dma_beat.wrapping_sub(t.header_parsed);
    assert!(first < 40, "header to first DMA beat: {first} cycles");
    // The last beat follows the frame's end (1514 bytes: 190 network cycles, 303 core cycles).
    let last = t.last_dma_beat.wrapping_sub(t.sop_at_mac);
    assert!(
        (303..340).contains(&last),
        "SOP to last DMA beat: {last} cycles"
    );
}

/// Empty datagrams (UDP length 8) through the whole receive path (offload core, Multi-Stream,
/// packer, clock crossing, CLOP engine, DMA writer, event records): a
/// raw CLOP on port 0 counts each, a header-layout CLOP on port 1 gets a header of length 0 for
/// each; mixed with short payloads, and empty ones with a bad UDP checksum, which are dropped at
/// their end and counted.
#[test]
fn empty_datagrams_cross_the_receive_path_into_both_layouts() {
    empty_datagrams::<RxPathDesign>(MemoryPreset::gen2_x8());
}

#[test]
fn empty_datagrams_cross_the_receive_path_at_256_bits() {
    empty_datagrams::<RxPath256Design>(MemoryPreset::gen3_x8());
}

fn empty_datagrams<D: RxPathWidth>(preset: MemoryPreset) {
    let mut rng = StdRng::seed_from_u64(24);
    let mut b = bench_at::<D>(preset, 0.2, 24);
    b.event_ring(6);
    for (p, header) in [(0u8, false), (1, true)] {
        b.map_stream(p, 0);
        b.register(
            ClopSpec {
                port: p,
                stream: 0,
                buf_size: 256,
                buf_count: 4,
                page: PageSize::Page4K,
                header,
                skip_held: false,
                timeout: 3000,
            },
            &[],
        );
    }
    let (mut good, mut empty, mut bad) = (0u64, 0u64, [0u32; 2]);
    for _ in 0..40 {
        let p = rng.gen_range(0..2u8);
        let len = if rng.gen_bool(0.6) {
            0
        } else {
            rng.gen_range(1..=24)
        };
        let body = payload(&mut rng, len);
        let is_bad = rng.gen_bool(0.15);
        if is_bad {
            bad[p as usize] += 1;
        } else {
            good += 1;
            empty += (len == 0) as u64;
        }
        b.send(p, stream_udp_port(0), &body, is_bad);
    }
    b.drain(5000, 1_000_000);
    b.host().check_held();
    assert!(empty >= 15, "{empty} empty datagrams");
    assert_eq!(
        b.host().totals.delivered,
        good,
        "every good datagram delivered"
    );
    assert_eq!(b.counter(RxCounter::Committed) as u64, good);
    // A bad checksum is found at the datagram's end: those the core forwarded before it (cut
    // through) end badly in the CLOP engine; the rest never left the port.
    let forwarded: u32 = (0..2u8).map(|p| b.port_read(p, port::FORWARDED)).sum();
    assert_eq!(b.counter(RxCounter::DropBadEnd), forwarded - good as u32);
    for p in 0..2u8 {
        assert_eq!(b.host().outstanding(p * 16), 0);
        assert_eq!(
            b.port_read(p, Counter::DropUdpChecksum.word()),
            bad[p as usize]
        );
    }
}

#[test]
fn a_real_ip_stack_resolves_the_card_and_its_datagrams_land_in_clops() {
    real_ip_stack_into_clops(bench(MemoryPreset::gen2_x8(), 0.1, 24));
}

/// smoltcp on port 2's link: it must ARP for the card (the card answers), then its UDP
/// datagrams to two streams land in their CLOPs, byte-exact, with its address in the headers.
pub fn real_ip_stack_into_clops<B: FourPortBench>(mut b: B) {
    let mut rng = StdRng::seed_from_u64(24);
    b.event_ring(6);
    let card = port_endpoint(2);
    let me = Endpoint::new([0x02, 0x11, 0x22, 0x33, 0x44, 0x55], [10, 0, 0, 77]);
    let mut peer = SmoltcpPeer::new(me, 24, 7777);
    for e in 0..2u8 {
        b.map_stream(2, e);
        b.register(
            ClopSpec {
                port: 2,
                stream: e,
                buf_size: 4096,
                buf_count: 8,
                page: PageSize::Page4K,
                header: true,
                skip_held: false,
                timeout: 2000,
            },
            &[],
        );
    }
    let mut sent = 0;
    for k in 0..30 {
        let e = (k % 2) as u8;
        let len = rng.gen_range(1..1472);
        let body = payload(&mut rng, len);
        peer.send_udp(card.ip, stream_udp_port(e), &body);
        b.host().expect(&nanet_sim::check::rx_host::RxPacket {
            port: 2,
            stream: e,
            payload: body,
            src_ip: me.ip,
            src_port: 7777,
            bad: false,
            unchecked: 0..0,
        });
        sent += 1;
    }
    let mut cycles = 0u64;
    while b.host().totals.delivered < sent && cycles < 400_000 {
        b.step();
        cycles += 1;
        while let Some(f) = b.transmitted()[2].frames.pop_front() {
            peer.link.to_peer.push_back(f.bytes);
        }
        if cycles.is_multiple_of(64) {
            peer.poll(cycles * 4);
            while let Some(f) = peer.link.from_peer.pop_front() {
                b.send_frame(2, pad(f), false);
            }
        }
    }
    assert_eq!(
        b.host().totals.delivered,
        sent,
        "every datagram of the real stack delivered"
    );
    assert!(
        b.port_read(2, Counter::ArpRepliesOut.word()) >= 1,
        "the card answered ARP"
    );
}

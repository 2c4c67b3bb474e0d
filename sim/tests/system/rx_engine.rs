//! The receive engine against the host model: CLOPs on four ports, good and bad packets, random
//! stalls on the packet and memory sides; timeouts, starved CLOPs under both full policies, TLB
//! misses, deregistration under traffic, interrupt moderation (engine from `NANET_ENGINE`). The
//! mixed traffic and the empty datagrams also at 256 bits (Gen3 x8).

use nanet_contract::events::EventKind;
use nanet_contract::rx::{PageSize, RxCounter, RxReg};
use nanet_sim::check::rx_host::{payload, ClopSpec, ReleasePolicy, RxCard, RxPacket};
use nanet_sim::engine::EngineKind;
use nanet_sim::testbench::rx_engine::{
    RxEngine256Design, RxEngineBench, RxEngineBenchAt, RxEngineDesign, RxEngineWidth,
};
use nanet_sim::world::host_mem::MemoryPreset;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

fn bench(preset: MemoryPreset, mem_stall: f64, seed: u64) -> RxEngineBench {
    bench_at(preset, mem_stall, seed)
}

fn bench_at<D: RxEngineWidth>(
    preset: MemoryPreset,
    mem_stall: f64,
    seed: u64,
) -> RxEngineBenchAt<D> {
    let kind = EngineKind::from_env().unwrap_or_else(|e| panic!("{e}"));
    RxEngineBenchAt::new(kind, preset, mem_stall, seed).unwrap_or_else(|e| panic!("{e}"))
}

fn spec(port: u8, stream: u8) -> ClopSpec {
    ClopSpec {
        port,
        stream,
        buf_size: 4096,
        buf_count: 64,
        page: PageSize::Page4K,
        header: false,
        skip_held: false,
        timeout: 2000,
    }
}

fn packet(rng: &mut StdRng, port: u8, stream: u8, len: usize, bad: bool) -> RxPacket {
    RxPacket {
        port,
        stream,
        payload: payload(rng, len),
        src_ip: [10, 0, port, stream],
        src_port: 4000 + stream as u16,
        bad,
        unchecked: 0..0,
    }
}

#[test]
fn sixteen_clops_every_good_payload_lands_once_in_order() {
    sixteen_clops::<RxEngineDesign>(MemoryPreset::gen2_x8(), 2, 11);
}

/// The same at 256 bits: behind a header the payload is shifted by half a word, with a beat more
/// after the last word when its lower half holds payload bytes. Four buffers per CLOP: a packet
/// takes half the cycles it takes at 128 bits, and with two the host's releases fall behind (a
/// packet dropped for want of a free buffer, which the exact host model does not allow).
#[test]
fn at_256_bits_sixteen_clops_every_good_payload_lands_once_in_order() {
    sixteen_clops::<RxEngine256Design>(MemoryPreset::gen3_x8(), 4, 21);
}

fn sixteen_clops<D: RxEngineWidth>(preset: MemoryPreset, buffers: u32, seed: u64) {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut b = bench_at::<D>(preset, 0.2, seed);
    b.in_stall = 0.2;
    b.event_ring(6);
    let mut specs = vec![];
    for port in 0..4 {
        for stream in 0..4u8 {
            let mut s = spec(port, stream);
            // A mix of layouts, buffer sizes and page sizes.
            s.header = stream % 2 == 1;
            s.buf_size = [2048, 4096, 3072, 8192][stream as usize];
            s.buf_count = buffers;
            s.page = if port == 3 {
                PageSize::Page64K
            } else {
                PageSize::Page4K
            };
            specs.push(s);
        }
    }
    for s in &specs {
        b.register(s.clone(), &[]);
    }
    let mut good = 0u64;
    let mut bad = 0u64;
    for _ in 0..400 {
        let port = rng.gen_range(0..4);
        let stream = rng.gen_range(0..4);
        let len = if rng.gen_bool(0.05) {
            0
        } else if rng.gen_bool(0.3) {
            rng.gen_range(1..=64)
        } else {
            rng.gen_range(1..=1472)
        };
        let is_bad = rng.gen_bool(0.1);
        good += !is_bad as u64;
        bad += is_bad as u64;
        b.send(packet(&mut rng, port, stream, len, is_bad));
        // Packets for no CLOP (stream 9 is never registered).
        if rng.gen_bool(0.05) {
            b.send(packet(&mut rng, port, 9, 100, false));
        }
    }
    b.drain(4000, 3_000_000);
    every_good_packet_landed(&mut b, &specs, good, bad);
    assert!(b.counter(RxCounter::DropNoClop) > 0);
    assert_eq!(b.counter(RxCounter::DropNoFreeBuffer), 0);
    assert_eq!(
        b.counter(RxCounter::EventsWritten) as u64,
        b.host.records.len() as u64
    );
    assert!(
        b.host
            .totals
            .events
            .get("timeout_flush")
            .copied()
            .unwrap_or(0)
            > 0
    );
    assert!(
        b.host
            .totals
            .events
            .get("buffer_full")
            .copied()
            .unwrap_or(0)
            > 0
    );
}

/// Empty datagrams (UDP length 8, a payload of one placeholder word): a header-layout CLOP gets a
/// 16-byte header of length 0 for each, a raw one counts each (packets and sequence, no bytes);
/// one that ends in error is dropped and counted as any other. Mixed with short payloads, random
/// stalls on both sides.
#[test]
fn empty_datagrams_land_in_raw_and_header_clops() {
    empty_datagrams::<RxEngineDesign>(MemoryPreset::gen2_x8(), 13);
}

#[test]
fn at_256_bits_empty_datagrams_land_in_raw_and_header_clops() {
    empty_datagrams::<RxEngine256Design>(MemoryPreset::gen3_x8(), 23);
}

fn empty_datagrams<D: RxEngineWidth>(preset: MemoryPreset, seed: u64) {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut b = bench_at::<D>(preset, 0.2, seed);
    b.in_stall = 0.3;
    b.event_ring(6);
    let mut raw = spec(0, 0);
    raw.buf_size = 256;
    raw.buf_count = 4;
    let mut hdr = raw.clone();
    hdr.port = 1;
    hdr.header = true;
    b.register(raw.clone(), &[]);
    b.register(hdr.clone(), &[]);
    let (mut good, mut bad, mut empty) = (0u64, 0u64, 0u64);
    for _ in 0..160 {
        let port = rng.gen_range(0..2);
        let len = if rng.gen_bool(0.5) {
            0
        } else {
            rng.gen_range(1..=40)
        };
        let is_bad = rng.gen_bool(0.1);
        good += !is_bad as u64;
        bad += is_bad as u64;
        empty += (!is_bad && len == 0) as u64;
        b.send(packet(&mut rng, port, 0, len, is_bad));
    }
    b.drain(4000, 2_000_000);
    assert!(empty > 50, "{empty} empty datagrams");
    every_good_packet_landed(&mut b, &[raw, hdr], good, bad);
}

/// Every one of the `good` packets sent landed in its CLOP (none missing, no buffer written while
/// held), the card committed them and their bytes, and counted the `bad` ones as ending badly.
fn every_good_packet_landed<D: RxEngineWidth>(
    b: &mut RxEngineBenchAt<D>,
    specs: &[ClopSpec],
    good: u64,
    bad: u64,
) {
    b.host.check_held();
    for s in specs {
        assert_eq!(
            b.host.outstanding(s.id()),
            0,
            "clop {} has packets missing",
            s.id()
        );
    }
    assert_eq!(b.host.totals.delivered, good);
    assert_eq!(b.counter(RxCounter::Committed) as u64, good);
    assert_eq!(
        b.counter(RxCounter::CommittedBytes) as u64,
        b.host.totals.delivered_bytes
    );
    assert_eq!(b.counter(RxCounter::DropBadEnd) as u64, bad);
}

#[test]
fn a_timeout_flushes_a_partly_filled_buffer_after_its_first_packet() {
    let mut rng = StdRng::seed_from_u64(12);
    let mut b = bench(MemoryPreset::ideal(), 0.0, 12);
    b.event_ring(4);
    let mut s = spec(1, 2);
    s.timeout = 500;
    b.register(s.clone(), &[]);
    let start = b.host.port.cycle;
    b.send(packet(&mut rng, 1, 2, 200, false));
    b.run(300);
    assert!(b.host.records.is_empty(), "flushed before the timeout");
    b.drain(1000, 20_000);
    assert_eq!(b.host.records.len(), 1);
    let r = b.host.records[0];
    assert_eq!(r.kind, EventKind::TimeoutFlush);
    assert_eq!((r.packets, r.bytes, r.buffer), (1, 200, 0));
    // Flushed within the timeout plus one scan of the 64 CLOPs and the event write.
    let flushed = r.times.last_dma_beat as u64 + 500;
    assert!(b.host.port.cycle > flushed && flushed - start < 1000);
}

#[test]
fn a_host_that_stops_releasing_gets_no_free_buffer_and_drops_are_counted() {
    let mut rng = StdRng::seed_from_u64(13);
    let mut b = bench(MemoryPreset::gen2_x8(), 0.1, 13);
    b.event_ring(6);
    b.host.release = ReleasePolicy::Never;
    b.host.exact = false;
    let mut s = spec(0, 0);
    s.buf_size = 1024;
    s.buf_count = 4;
    s.header = true;
    b.register(s, &[]);
    for _ in 0..60 {
        b.send(packet(&mut rng, 0, 0, 300, false));
    }
    b.drain(3000, 500_000);
    b.host.check_held();
    let dropped = b.counter(RxCounter::DropNoFreeBuffer) as u64;
    // Four buffers of three 320-byte records each, then nothing: the rest was dropped.
    assert_eq!(b.host.totals.delivered, 12);
    assert_eq!(dropped, 48);
    assert_eq!(b.host.outstanding(0), 48);
    assert_eq!(
        b.host.totals.events.get("no_free_buffer"),
        Some(&1),
        "one event per starvation"
    );
    // Released buffers fill again, in order, with later packets.
    b.host.release = ReleasePolicy::After(0);
    b.release_all();
    for _ in 0..6 {
        b.send(packet(&mut rng, 0, 0, 300, false));
    }
    b.drain(3000, 500_000);
    b.host.check_held();
    assert_eq!(b.host.totals.delivered, 18);
    assert_eq!(b.host.totals.skipped, 48);
}

#[test]
fn the_skip_policy_skips_buffers_the_host_holds() {
    let mut rng = StdRng::seed_from_u64(14);
    let mut b = bench(MemoryPreset::ideal(), 0.0, 14);
    b.event_ring(6);
    b.host.release = ReleasePolicy::Never;
    let mut s = spec(2, 5);
    s.buf_size = 256;
    s.buf_count = 8;
    s.skip_held = true;
    b.register(s, &[]);
    // Fill all eight; the host keeps them.
    for _ in 0..8 {
        b.send(packet(&mut rng, 2, 5, 256, false));
    }
    b.drain(500, 50_000);
    assert_eq!(b.host.records.len(), 8);
    // Give back 2 and 6 only: the next two packets skip the held ones.
    for buf in [2, 6] {
        b.release_buffer(0x25, buf);
    }
    b.run(20);
    for _ in 0..2 {
        b.send(packet(&mut rng, 2, 5, 256, false));
    }
    b.drain(500, 50_000);
    let bufs: Vec<u16> = b.host.records[8..].iter().map(|r| r.buffer).collect();
    assert_eq!(bufs, vec![2, 6]);
    b.host.check_held();
    // A third packet finds nothing free: dropped, reported once.
    b.send(packet(&mut rng, 2, 5, 256, false));
    b.drain(500, 50_000);
    assert_eq!(b.counter(RxCounter::DropNoFreeBuffer), 1);
    assert_eq!(b.host.records.last().unwrap().kind, EventKind::NoFreeBuffer);
    // Releasing a buffer that is not held is refused and counted.
    b.write(RxReg::Release, 3 << 8 | 0x25);
    b.run(10);
    b.write(RxReg::Release, 3 << 8 | 0x25);
    b.run(10);
    assert_eq!(b.counter(RxCounter::BadRelease), 1);
    // A packet larger than a buffer can never fit: dropped and counted.
    b.send(packet(&mut rng, 2, 5, 300, false));
    b.drain(500, 50_000);
    assert_eq!(b.counter(RxCounter::DropTooBig), 1);
    let last = b.host.records.last().unwrap();
    assert_eq!((last.kind, last.bytes), (EventKind::Error, 300));
}

/// Every buffer of a configured CLOP starts free, the last one included (the CLOP engine's
/// ownership sweep): a CLOP deregistered while the host held all five of its buffers, configured
/// again, fills all five once more. (Mutation: the sweep ending a buffer early drops the second
/// round's fifth packet.)
#[test]
fn a_clop_configured_again_starts_with_every_buffer_free() {
    let mut rng = StdRng::seed_from_u64(21);
    let mut b = bench(MemoryPreset::ideal(), 0.0, 21);
    b.event_ring(6);
    // The host never releases: it holds every buffer that was filled.
    b.host.release = ReleasePolicy::Never;
    for round in 1..=2 {
        let mut s = spec(1, 3);
        s.buf_size = 256;
        s.buf_count = 5;
        b.register(s, &[]);
        for _ in 0..5 {
            b.send(packet(&mut rng, 1, 3, 256, false));
        }
        b.drain(500, 50_000);
        b.host.check_held();
        assert_eq!(b.host.totals.delivered, 5 * round, "round {round}");
        assert_eq!(b.counter(RxCounter::DropNoFreeBuffer), 0, "round {round}");
        b.deregister(0x13);
    }
}

#[test]
fn a_full_event_ring_holds_the_card_back_and_loses_nothing() {
    let mut rng = StdRng::seed_from_u64(18);
    let mut b = bench(MemoryPreset::ideal(), 0.0, 18);
    b.event_ring(2);
    let mut s = spec(0, 3);
    s.buf_size = 128;
    b.register(s, &[]);
    // A host that does not look at its ring: four records fill it, then the card waits.
    b.host.paused = true;
    for _ in 0..12 {
        b.send(packet(&mut rng, 0, 3, 128, false));
    }
    b.run(3000);
    assert_eq!(b.read(RxReg::EventQueueTail), 4);
    assert_eq!(b.counter(RxCounter::EventsWritten), 4);
    // It catches up: every record arrives, in order, with the phase of its lap.
    b.host.paused = false;
    b.drain(1000, 50_000);
    assert_eq!(b.host.records.len(), 12);
    assert_eq!(b.host.totals.delivered, 12);
    let seqs: Vec<u16> = b.host.records.iter().map(|r| r.first_seq).collect();
    assert_eq!(seqs, (0..12).collect::<Vec<u16>>());
}

/// Every second packet fills its buffer, whose record is made right after the packet's last write
/// request went into the DMA writer's output slice; the write port stalls most cycles, so that
/// request often still waits there when the record arrives. The record must not overtake it: the
/// host reads a buffer as soon as its record is visible.
#[test]
fn a_record_never_overtakes_the_payload_it_announces() {
    let mut rng = StdRng::seed_from_u64(13);
    let mut b = bench(MemoryPreset::gen2_x8(), 0.75, 13);
    b.event_ring(6);
    let mut s = spec(0, 0);
    s.buf_size = 32;
    b.register(s.clone(), &[]);
    for _ in 0..300 {
        b.send(packet(&mut rng, 0, 0, 16, false));
    }
    b.drain(4000, 1_000_000);
    assert_eq!(b.host.outstanding(s.id()), 0, "packets missing");
    assert_eq!(b.host.totals.delivered, 300);
    assert_eq!(b.host.totals.events.get("buffer_full").copied(), Some(150));
}

#[test]
fn a_tlb_miss_drops_the_packet_and_reports_it() {
    tlb_miss::<RxEngineDesign>(MemoryPreset::gen2_x8(), false, 15);
}

/// At 256 bits behind a header: 1400-byte packets owe a beat after their last word (its lower
/// half holds payload bytes), which the writer drains with the rest on a miss.
#[test]
fn at_256_bits_a_tlb_miss_behind_a_header_drops_the_packet_and_reports_it() {
    tlb_miss::<RxEngine256Design>(MemoryPreset::gen3_x8(), true, 25);
}

fn tlb_miss<D: RxEngineWidth>(preset: MemoryPreset, header: bool, seed: u64) {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut b = bench_at::<D>(preset, 0.1, seed);
    b.event_ring(6);
    b.host.exact = false;
    let mut s = spec(3, 1);
    s.buf_size = 4096;
    s.buf_count = 4;
    s.timeout = 0;
    s.header = header;
    // Buffer 1 (page 1) has no translation.
    b.register(s, &[1]);
    for _ in 0..8 {
        b.send(packet(&mut rng, 3, 1, 1400, false));
    }
    b.drain(2000, 200_000);
    let misses = b.counter(RxCounter::DropTlbMiss);
    assert!(misses >= 2, "{misses} misses");
    assert_eq!(
        b.host.totals.events.get("tlb_miss").copied().unwrap_or(0),
        misses as u64
    );
    // Every packet either landed or missed; the missed ones never appear in a buffer.
    assert_eq!(b.host.totals.delivered + misses as u64, 8);
    assert_eq!(
        b.host.totals.skipped + b.host.outstanding(0x31) as u64,
        misses as u64
    );
}

#[test]
fn no_write_reaches_a_clop_after_its_deregistration_is_acknowledged() {
    let mut rng = StdRng::seed_from_u64(16);
    // Host memory refuses 60% of the beats: the DMA writer's output slice often still holds a
    // packet's last beats when the command comes, which the acknowledgement must wait for.
    let mut b = bench(MemoryPreset::gen2_x8(), 0.6, 16);
    b.in_stall = 0.1;
    b.event_ring(8);
    b.host.exact = false;
    for stream in 0..2 {
        b.register(spec(1, stream), &[]);
    }
    let mut on_the_way = vec![];
    for round in 0..3 {
        let dropped = b.counter(RxCounter::DropNoClop);
        for _ in 0..40 {
            let stream = rng.gen_range(0..2);
            let len = rng.gen_range(64..1472);
            b.send(packet(&mut rng, 1, stream, len, false));
        }
        // Deregister stream 0 while its packets are still queued and its writes on their way: its
        // memory is released in the cycle the command is acknowledged, so a write issued after
        // that fails the run (those issued before may land).
        b.run(rng.gen_range(100..600));
        on_the_way.push(b.deregister(0x10));
        b.drain(3000, 500_000);
        assert!(
            b.counter(RxCounter::DropNoClop) > dropped,
            "round {round}: no packet for the deregistered stream came after it"
        );
        // Register it again (fresh memory) and go on.
        b.register(spec(1, 0), &[]);
    }
    assert!(
        on_the_way.iter().all(|n| *n > 0),
        "writes into the CLOP on their way at each acknowledgement: {on_the_way:?}"
    );
}

#[test]
fn interrupts_fire_armed_and_moderated() {
    let mut rng = StdRng::seed_from_u64(17);
    let mut b = bench(MemoryPreset::ideal(), 0.0, 17);
    b.event_ring(6);
    let mut s = spec(0, 1);
    s.buf_size = 128;
    s.buf_count = 64;
    b.register(s, &[]);
    b.write(RxReg::IrqCount, 4);
    b.write(RxReg::IrqMinInterval, 2000);
    // Not armed: no interrupt.
    for _ in 0..3 {
        b.send(packet(&mut rng, 0, 1, 128, false));
    }
    b.drain(500, 50_000);
    assert_eq!(b.host.totals.irqs, 0);
    // Armed with three records pending: fires once the oldest has waited the interval.
    b.write(RxReg::IrqArm, 1);
    b.run(100);
    assert_eq!(b.host.totals.irqs, 0, "fired before the interval");
    b.run(2500);
    assert_eq!(b.host.totals.irqs, 1);
    assert_eq!(b.read(RxReg::IrqArm), 0, "firing disarms");
    // Re-armed: a burst fires once, not per record.
    b.write(RxReg::IrqArm, 1);
    for _ in 0..10 {
        b.send(packet(&mut rng, 0, 1, 128, false));
    }
    b.drain(3000, 50_000);
    assert_eq!(b.host.totals.irqs, 2);
    assert_eq!(b.counter(RxCounter::Interrupts), 2);
}

/// Register misuse on CLOP commands: each staging value out of range, an unknown operation, a
/// configure of an enabled CLOP (whose buffers the host holds) and a staging write while a command
/// waits are refused, read back as `CLOP_COMMAND_REFUSED`, counted once each in
/// `bad_clop_command`, and change nothing: the refused CLOP stays disabled (its packets counted as
/// no-CLOP drops), the enabled one keeps its buffers, its sequence and the host's held buffers.
#[test]
fn clop_commands_out_of_range_or_on_an_enabled_clop_are_refused_and_change_nothing() {
    use nanet_contract::rx::program::ClopProgram;
    use nanet_contract::rx::{CLOP_COMMAND_BUSY, CLOP_COMMAND_REFUSED};
    let mut rng = StdRng::seed_from_u64(21);
    let mut b = bench(MemoryPreset::gen2_x8(), 0.1, 21);
    b.event_ring(6);
    b.host.release = ReleasePolicy::Never;
    let mut s = spec(0, 0);
    s.buf_size = 1024;
    s.buf_count = 4;
    b.register(s, &[]);
    // Two buffers of three 300-byte payloads, held by the host.
    for _ in 0..6 {
        b.send(packet(&mut rng, 0, 0, 300, false));
    }
    b.drain(3000, 500_000);
    assert_eq!(b.host.totals.delivered, 6);

    let good = ClopProgram {
        id: 1,
        base: 0x7b00_0000_0000,
        buffer_bytes: 1024,
        buffers: 4,
        first_slot: 100,
        page: PageSize::Page4K,
        header: false,
        skip_held: false,
        timeout: 0,
    };
    let with = |reg: RxReg, value: u32| {
        good.configure()
            .map(|(r, v)| if r == reg { (r, value) } else { (r, v) })
    };
    let mut cases: Vec<(&str, Vec<(RxReg, u32)>)> = vec![
        ("0 buffers", with(RxReg::ClopBufCount, 0).to_vec()),
        ("257 buffers", with(RxReg::ClopBufCount, 257).to_vec()),
        ("512 buffers", with(RxReg::ClopBufCount, 512).to_vec()),
        ("0-byte buffers", with(RxReg::ClopBufSize, 0).to_vec()),
        (
            "2^24-byte buffers",
            with(RxReg::ClopBufSize, 1 << 24).to_vec(),
        ),
        (
            "page size code 3",
            with(RxReg::ClopTlb, 3 << 8 | 100).to_vec(),
        ),
        ("operation 0", with(RxReg::ClopCommand, 1).to_vec()),
        ("operation 3", with(RxReg::ClopCommand, 3 << 8 | 1).to_vec()),
    ];
    // A valid configure of CLOP 0, which is enabled.
    let mut again = good;
    again.id = 0;
    cases.push(("configure of an enabled CLOP", again.configure().to_vec()));
    let mut refused = 0;
    for (what, writes) in &cases {
        for (r, v) in writes {
            b.write(*r, *v);
        }
        b.flush_writes();
        b.run(20);
        let v = b.read(RxReg::ClopCommand);
        assert_eq!(v & CLOP_COMMAND_BUSY, 0, "{what}");
        assert_ne!(v & CLOP_COMMAND_REFUSED, 0, "{what}: not refused");
        refused += 1;
        assert_eq!(b.counter(RxCounter::BadClopCommand), refused, "{what}");
    }
    // A staging write right behind a command (the command waits at least a cycle): ignored.
    b.write(RxReg::ClopCommand, 2 << 8 | 2);
    b.write(RxReg::ClopBufCount, 0);
    b.flush_writes();
    b.run(20);
    assert_eq!(b.counter(RxCounter::BadClopCommand), refused + 1);
    assert_eq!(
        b.read(RxReg::ClopBufCount),
        4,
        "the staging write while a command waited was ignored"
    );

    // CLOP 1 stayed disabled; CLOP 0 kept its buffers and the host's: its next packets fill the
    // two free buffers in sequence (the host model checks sequence and placement).
    let no_clop = b.counter(RxCounter::DropNoClop);
    b.send(packet(&mut rng, 0, 1, 100, false));
    for _ in 0..6 {
        b.send(packet(&mut rng, 0, 0, 300, false));
    }
    b.drain(3000, 500_000);
    assert_eq!(b.counter(RxCounter::DropNoClop), no_clop + 1);
    assert_eq!(b.host.totals.delivered, 12);
    b.host.check_held();
    // After a disable, CLOP 0 can be configured again, and a valid CLOP 1 is taken.
    b.host.release = ReleasePolicy::After(0);
    b.release_all();
    b.deregister(0);
    b.register(spec(0, 0), &[]);
    b.register(spec(0, 1), &[]);
    b.send(packet(&mut rng, 0, 0, 100, false));
    b.send(packet(&mut rng, 0, 1, 100, false));
    b.drain(3000, 500_000);
    assert_eq!(b.host.totals.delivered, 14);
}

/// Register misuse on the event ring: a head written beyond the tail, or behind the current head,
/// is ignored and counted in `bad_event_head`; the card goes on writing records into free slots
/// only (the host model checks every record and every buffer it announces).
#[test]
fn an_event_head_beyond_the_tail_or_moved_back_is_refused_and_counted() {
    let mut rng = StdRng::seed_from_u64(23);
    let mut b = bench(MemoryPreset::gen2_x8(), 0.1, 23);
    b.event_ring(4);
    let mut s = spec(0, 0);
    s.buf_size = 256;
    b.register(s, &[]);
    for _ in 0..20 {
        b.send(packet(&mut rng, 0, 0, 256, false));
    }
    b.drain(2000, 500_000);
    assert_eq!(b.host.totals.delivered, 20);
    let head = b.read(RxReg::EventQueueHead);
    let tail = b.read(RxReg::EventQueueTail);
    assert_eq!(head, tail, "the host consumed every record");
    for bad in [tail + 5, head.wrapping_sub(1) & 0xFFFF, tail + 0x8000] {
        b.write(RxReg::EventQueueHead, bad);
        b.flush_writes();
        b.run(5);
        assert_eq!(b.read(RxReg::EventQueueHead), head, "head {bad} was taken");
    }
    assert_eq!(b.counter(RxCounter::BadEventHead), 3);
    // The ring (16 records) keeps working for more than a lap.
    for _ in 0..40 {
        b.send(packet(&mut rng, 0, 0, 256, false));
    }
    b.drain(2000, 500_000);
    assert_eq!(b.host.totals.delivered, 60);
    assert_eq!(b.counter(RxCounter::BadEventHead), 3);
}

/// Register misuse on the event ring: disabling it during traffic. Records made meanwhile are
/// discarded and counted; records pending before the disable raise no interrupt after the ring
/// is set up again (the host has forgotten them); the next record does.
#[test]
fn disabling_the_event_ring_drops_and_counts_records_and_forgets_pending_interrupts() {
    let mut rng = StdRng::seed_from_u64(19);
    let mut b = bench(MemoryPreset::ideal(), 0.0, 19);
    b.event_ring(6);
    b.host.exact = false;
    let mut s = spec(0, 1);
    s.buf_size = 128;
    s.buf_count = 64;
    b.register(s, &[]);
    b.write(RxReg::IrqCount, 1);
    b.write(RxReg::IrqMinInterval, 0);
    // Three records pending, no interrupt armed.
    for _ in 0..3 {
        b.send(packet(&mut rng, 0, 1, 128, false));
    }
    b.drain(500, 50_000);
    assert_eq!(b.host.totals.irqs, 0);
    // Disabled: packets too big for their buffers make error records, which are dropped.
    b.write(RxReg::EventQueueSize, 0);
    for _ in 0..5 {
        b.send(packet(&mut rng, 0, 1, 200, false));
    }
    b.drain(500, 50_000);
    assert_eq!(b.counter(RxCounter::EventsDropped), 5);
    // Set up again and armed: nothing pending, so no interrupt until a new record.
    b.event_ring(6);
    b.write(RxReg::IrqArm, 1);
    b.run(300);
    assert_eq!(
        b.host.totals.irqs, 0,
        "an interrupt for records made before the disable"
    );
    b.send(packet(&mut rng, 0, 1, 128, false));
    b.drain(500, 50_000);
    assert_eq!(b.host.totals.irqs, 1);
    assert_eq!(b.host.totals.delivered, 4);
}

/// Register misuse: releases faster than the CLOP engine takes them. The engine waits with a
/// record for a full event ring while the host gives back 20 buffers in 20 cycles: the release
/// queue keeps the first 16, the last 4 are lost and counted (`release_overflow`), and nothing is
/// written into those 4. The card goes on: under the skip policy the next datagrams fill exactly
/// the 16 buffers that came back, then starve; the 4 given back again take datagrams once more.
/// (Mutation: a release queue of 32 entries loses none and fails it.)
#[test]
fn releases_beyond_the_release_queue_are_lost_counted_and_written_nowhere() {
    const A: u8 = 0x01;
    let mut rng = StdRng::seed_from_u64(23);
    let mut b = bench(MemoryPreset::ideal(), 0.0, 23);
    b.event_ring(2);
    b.host.release = ReleasePolicy::Never;
    b.host.exact = false;
    let a = ClopSpec {
        buf_size: 128,
        buf_count: 32,
        skip_held: true,
        ..spec(0, 1)
    };
    b.register(a, &[]);
    b.register(
        ClopSpec {
            buf_size: 128,
            buf_count: 16,
            ..spec(1, 2)
        },
        &[],
    );
    // Every buffer of A filled and held.
    for _ in 0..32 {
        b.send(packet(&mut rng, 0, 1, 128, false));
    }
    b.drain(500, 100_000);
    assert_eq!(b.host.records.len(), 32);
    // The host stops reading its ring (4 records): the other CLOP's records fill it and the
    // stages after the engine, and the engine waits with one.
    b.host.paused = true;
    for _ in 0..8 {
        b.send(packet(&mut rng, 1, 2, 128, false));
    }
    b.run(2000);
    assert_eq!(b.counter(RxCounter::EventsWritten), 36);
    let lost: Vec<u16> = (16..20).collect();
    let before: Vec<Vec<u8>> = lost.iter().map(|&k| b.host.buffer_bytes(A, k)).collect();
    for k in 0..20 {
        b.host.release_now(Some((A, k)));
    }
    b.flush_writes();
    assert_eq!(b.counter(RxCounter::ReleaseOverflow), 4);
    // The host reads its ring again; the engine takes the 16 releases.
    b.host.paused = false;
    b.drain(500, 100_000);
    assert_eq!(b.host.records.len(), 40);
    for _ in 0..20 {
        b.send(packet(&mut rng, 0, 1, 128, false));
    }
    b.drain(500, 100_000);
    let after: Vec<(EventKind, u16)> = b.host.records[40..]
        .iter()
        .map(|r| (r.kind, r.buffer))
        .collect();
    let mut want: Vec<(EventKind, u16)> = (0..16).map(|k| (EventKind::BufferFull, k)).collect();
    // (The starvation record names the last buffer tried: the skip walked all 32 from 16.)
    want.push((EventKind::NoFreeBuffer, 15));
    assert_eq!(
        after, want,
        "the 16 buffers that came back, then nothing free"
    );
    assert_eq!(b.counter(RxCounter::DropNoFreeBuffer), 4);
    assert_eq!(b.counter(RxCounter::BadRelease), 0);
    b.host.check_held();
    for (k, bytes) in lost.iter().zip(&before) {
        assert_eq!(
            &b.host.buffer_bytes(A, *k),
            bytes,
            "lost release {k}: written"
        );
    }
    // Given back again, the lost four take datagrams (the card held them for the host).
    for &k in &lost {
        b.write(RxReg::Release, (k as u32) << 8 | A as u32);
        b.run(10);
    }
    for _ in 0..4 {
        b.send(packet(&mut rng, 0, 1, 128, false));
    }
    b.drain(500, 100_000);
    let last: Vec<u16> = b.host.records[57..].iter().map(|r| r.buffer).collect();
    assert_eq!(last, lost);
    assert_eq!(b.counter(RxCounter::BadRelease), 0);
    assert_eq!(b.counter(RxCounter::ReleaseOverflow), 4);
}

/// The CLOP engine's pace, raw layout, memory that never stalls and no gap in the input: a
/// datagram of N >= 3 payload beats takes N + 3 core cycles (its DMA command's cycle, its outcome
/// and `Decide`), a one-beat one 4, whether each datagram is another CLOP's (four CLOPs in turn,
/// one per port: the row is read in `Decide`) or the CLOP's just committed into (one CLOP: the
/// working copy stays); docs/performance.md, "Receive path into host memory". Measured as the
/// difference of a run of 200 datagrams and one of 100, so the first datagram's way in and the
/// buffers' closes at the end (each run fills its buffers exactly) cancel. (With an engine per
/// port the card's goodput does not rest on this pace: a port offers a 16-byte datagram every
/// 16.8 cycles.) A cycle more per datagram fails here, and a cycle won must tighten it.
#[test]
fn the_clop_engine_takes_a_datagram_of_n_beats_in_n_plus_3_cycles() {
    for clops in [4, 1] {
        for (len, want) in [(16usize, 4.0), (64, 7.0), (256, 19.0)] {
            let per =
                (cycles_to_take(len, 200, clops) - cycles_to_take(len, 100, clops)) as f64 / 100.0;
            assert!(
                (per - want).abs() < 0.05,
                "{clops} CLOPs, {len} bytes: {per:.2} cycles per datagram, want {want}"
            );
        }
    }
}

/// Cycles until the engine has taken `n` datagrams of `len` bytes into `clops` CLOPs in turn, one
/// per port (after which every one must be delivered, the buffers filled exactly).
fn cycles_to_take(len: usize, n: usize, clops: usize) -> u64 {
    let mut rng = StdRng::seed_from_u64(len as u64);
    let mut b = bench(MemoryPreset::ideal(), 0.0, len as u64);
    b.event_ring(8);
    for port in 0..clops {
        let mut s = spec(port as u8, 0);
        s.buf_size = (n / clops * len) as u32;
        s.buf_count = 2;
        s.timeout = 0;
        b.register(s, &[]);
    }
    for k in 0..n {
        b.send(packet(&mut rng, (k % clops) as u8, 0, len, false));
    }
    let mut cycles = 0u64;
    while !b.input_empty() {
        b.step();
        cycles += 1;
        assert!(cycles < 100_000, "the input never drained");
    }
    b.drain(500, 100_000);
    b.host.check_held();
    assert_eq!(
        b.host.totals.delivered as usize, n,
        "{len} bytes: delivered"
    );
    cycles
}

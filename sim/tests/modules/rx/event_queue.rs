//! Event queue: 100 records through an 8-record ring with random stalls on the event source and
//! the write port, and a host that lags behind (the ring fills up): every record lands in order in
//! its slot with the phase of its lap, the card never gets more than a ring ahead of the host nor
//! starts a record into a full ring, and events are discarded (and flagged) while the queue is
//! disabled. An MSI request covers the records done before it and no others. At 128 bits (a
//! record in two beats) and 256 (in one), on the rust-hdl model and its Verilog in lockstep.

use nanet_contract::events::{EVENT_BYTES, PHASE_BYTES};
use nanet_hdl::rx::event_queue::EventQueue;
use nanet_sim::engine::clocks::CORE_CLOCK_PS;
use nanet_sim::engine::{ClockId, DesignSim, EngineKind};
use nanet_sim::world::dma_port::{WriteBeat, WriteRequestSink};
use nanet_sim::world::host_mem::{MemoryPort, MemoryPreset};
use nanet_sim::world::tlp::BeatData;
use nanet_sim::{design_ports, width_designs};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

#[derive(Clone, Default)]
pub struct EqIn {
    reset: bool,
    enable: bool,
    base: u64,
    size_log2: u8,
    head: u16,
    irq_arm: bool,
    irq_min_interval: u32,
    irq_count: u16,
    msi_covers: bool,
    ev_valid: bool,
    ev_lo: u128,
    ev_hi: u128,
    wr_ready: bool,
}

#[derive(Clone, Default, Debug)]
pub struct EqOut<T> {
    tail: u16,
    irq: bool,
    armed: bool,
    ev_ready: bool,
    wr_valid: bool,
    /// The write-request beat on offer (with `wr_valid`).
    wr: WriteBeat<T>,
    written: bool,
    dropped: bool,
}

macro_rules! queue_design {
    ($design:ident, $bits:literal, $data:ty, $top:literal) => {
        design_ports! {
            pub $design for EventQueue<$bits>, top $top, inputs EqIn, outputs EqOut<$data>,
            clocks { clock }
            inputs {
                reset => reset, enable => enable, base => base, size_log2 => size_log2,
                head => head, irq_arm => irq_arm, irq_min_interval => irq_min_interval,
                irq_count => irq_count, msi_covers => msi_covers, ev_valid => ev_valid,
                ev_lo => ev_lo, ev_hi => ev_hi, wr_ready => wr.ready,
            }
            outputs {
                tail => tail, irq => irq, armed => armed, ev_ready => ev_ready,
                wr_valid => wr.valid, wr.sop => wr.sop, wr.eop => wr.eop, wr.addr => wr.addr,
                wr.len => wr.len, wr.data => wr.data, written => written, dropped => dropped,
            }
        }
    };
}
queue_design!(Queue128, 128, u128, "nanet_event_queue");
queue_design!(Queue256, 256, [u64; 4], "nanet_event_queue_256");

width_designs! {
    trait Width: In = EqIn, Out = EqOut<Self::Beat>;
    Queue128 => u128, Queue256 => [u64; 4]
}

/// The ring's base: its eight records straddle a 2 MiB boundary (bit 21 of their addresses
/// carries out of the slot's add).
const BASE: u64 = 0x2_001F_FF80;

/// Record `k`: kind 1 in byte 0, `k` in bytes 4..7 and 16..19.
fn record(k: u32) -> (u128, u128) {
    (1 | (k as u128) << 32, k as u128 | 0xABCD << 64)
}

#[test]
fn records_land_in_order_with_their_phase_and_never_overrun_the_host() {
    records_land::<Queue128>();
    records_land::<Queue256>();
}

fn records_land<D: Width>() {
    let mut rng = StdRng::seed_from_u64(4);
    let mut d = DesignSim::<D>::new(EngineKind::Both).unwrap_or_else(|e| panic!("{e}"));
    let clk = d.add_clock("core", 0, CORE_CLOCK_PS);
    let mut port = MemoryPort::new(MemoryPreset::gen2_x8(), 0.3, 4).for_variant(D::Beat::VARIANT);
    port.memory
        .register(BASE, 8 * EVENT_BYTES as u64, "ring")
        .unwrap();
    let mut sink = WriteRequestSink::default();
    d.inputs.reset = true;
    d.tick(clk);
    d.inputs.reset = false;
    // Disabled: events are taken and flagged as dropped, nothing is written.
    d.inputs.ev_valid = true;
    let o = d.settle().clone();
    assert!(o.ev_ready && o.dropped && !o.wr_valid);
    d.tick(clk);
    d.inputs.ev_valid = false;
    d.inputs.base = BASE;
    d.inputs.size_log2 = 3;
    d.inputs.enable = true;
    let (n, mut sent, mut head, mut cycles, mut full_cycles) = (100u32, 0u32, 0u16, 0u64, 0u64);
    while (head as u32) < n {
        let (lo, hi) = record(sent);
        d.inputs.ev_valid = sent < n && !rng.gen_bool(0.3);
        d.inputs.ev_lo = lo;
        d.inputs.ev_hi = hi;
        d.inputs.wr_ready = port.ready();
        d.inputs.head = head;
        let o = d.settle().clone();
        assert!(
            o.tail.wrapping_sub(head) <= 8,
            "the card is more than a ring ahead"
        );
        // A record starts only into a free slot (a half-written record would hold the write
        // port, which the payloads share, until the host makes room).
        assert!(
            !(o.wr_valid && o.wr.sop) || o.tail.wrapping_sub(head) < 8,
            "a record started into a full ring"
        );
        full_cycles += (o.tail.wrapping_sub(head) == 8 && d.inputs.ev_valid) as u64;
        if d.inputs.ev_valid && o.ev_ready {
            sent += 1;
        }
        if o.wr_valid && d.inputs.wr_ready {
            let beat = o.wr;
            sink.beat(&beat, &mut port);
        }
        port.tick();
        d.tick(clk);
        sink.assert_clean();
        port.assert_clean();
        // The host: sometimes away for a while (the ring fills up), then reads what is there.
        if cycles % 200 < 120 {
            let slot = head as u64 % 8;
            let lap = head as u64 / 8;
            let b = port
                .memory
                .read(BASE + slot * EVENT_BYTES as u64, EVENT_BYTES);
            let phase = lap.is_multiple_of(2);
            if (b[0] & 0x80 != 0) == phase && b[0] & 0x0F == 1 {
                // The phase in every 8-byte word.
                for at in PHASE_BYTES {
                    assert_eq!(b[at] >> 7, phase as u8, "record {head}: bit 7 of byte {at}");
                }
                let k = u32::from_le_bytes([b[4], b[5], b[6], b[7]]);
                assert_eq!(k, head as u32, "record {head} in slot {slot}");
                assert_eq!(u32::from_le_bytes([b[16], b[17], b[18], b[19]]), k);
                head += 1;
            }
        }
        cycles += 1;
        assert!(cycles < 100_000, "event queue wedged at {head} records");
    }
    assert_eq!(d.settle().tail, 100);
    assert!(
        full_cycles > 20,
        "the ring was full with an event waiting ({full_cycles} cycles)"
    );
}

/// A queue just out of reset, the ring (8 records at `BASE`) enabled from the next cycle on, the
/// write port always ready, record 0 on the event input (not yet valid).
fn after_reset<D: Width>() -> (DesignSim<D>, ClockId) {
    let mut d = DesignSim::<D>::new(EngineKind::Both).unwrap_or_else(|e| panic!("{e}"));
    let clk = d.add_clock("core", 0, CORE_CLOCK_PS);
    d.inputs.reset = true;
    d.tick(clk);
    d.inputs.reset = false;
    let (lo, hi) = record(0);
    let i = &mut d.inputs;
    (i.base, i.size_log2, i.enable) = (BASE, 3, true);
    (i.ev_lo, i.ev_hi, i.wr_ready) = (lo, hi, true);
    (d, clk)
}

/// An event waiting when the ring is enabled, its base set in that same cycle: the record goes to
/// that base (the first of each of its beats), never to the base from before.
#[test]
fn the_first_record_goes_to_the_base_set_with_enable() {
    first_record::<Queue128>(&[BASE, BASE + 16]);
    first_record::<Queue256>(&[BASE]);
}

fn first_record<D: Width>(beat_addrs: &[u64]) {
    let (mut d, clk) = after_reset::<D>();
    d.inputs.ev_valid = true;
    let mut beats = vec![];
    for _ in 0..6 {
        let o = d.settle().clone();
        if o.wr_valid {
            beats.push(o.wr.addr);
        }
        d.tick(clk);
        // Taken at this edge: not offered again.
        if o.written {
            d.inputs.ev_valid = false;
        }
    }
    assert_eq!(beats, beat_addrs);
}

/// Six cycles of a queue out of reset with event 0 offered from the third: the beats written
/// (`sop`, `eop`, address), events taken and discarded, the cycle of the record's last beat and of
/// the first discard. The ring is disabled from the cycle after one whose output `disables`.
struct DisabledRun {
    beats: Vec<(bool, bool, u64)>,
    taken: u32,
    dropped: u32,
    written_at: Option<u32>,
    first_drop: Option<u32>,
}

fn disabled_after<D: Width>(disables: impl Fn(&EqOut<D::Beat>) -> bool) -> DisabledRun {
    let (mut d, clk) = after_reset::<D>();
    d.tick(clk);
    d.tick(clk);
    d.inputs.ev_valid = true;
    let mut run = DisabledRun {
        beats: vec![],
        taken: 0,
        dropped: 0,
        written_at: None,
        first_drop: None,
    };
    let mut disabled = false;
    for cycle in 0..6u32 {
        d.inputs.enable = !disabled;
        let o = d.settle().clone();
        if o.wr_valid {
            run.beats.push((o.wr.sop, o.wr.eop, o.wr.addr));
        }
        if o.written {
            run.written_at = Some(cycle);
        }
        if o.dropped && run.first_drop.is_none() {
            run.first_drop = Some(cycle);
        }
        run.taken += o.ev_ready as u32;
        run.dropped += o.dropped as u32;
        disabled |= disables(&o);
        d.tick(clk);
    }
    // The record's event once, then (still offered, ring disabled) one discarded each cycle.
    assert!(
        run.taken >= 2 && run.dropped == run.taken - 1,
        "taken {}, dropped {}",
        run.taken,
        run.dropped
    );
    run
}

/// The ring disabled between a record's two beats: the record is finished (a write request is
/// never left half sent), the event taken once, and what comes after is discarded. (At 128 bits:
/// at 256 a record is one beat.)
#[test]
fn a_record_started_is_finished_when_the_ring_is_disabled() {
    let run = disabled_after::<Queue128>(|o| o.wr_valid);
    assert_eq!(run.beats, [(true, false, BASE), (false, true, BASE + 16)]);
}

/// At 256 bits (a record in one beat) the ring disabled in the rest cycle after a record: that
/// cycle takes and discards nothing, the next discards.
#[test]
fn a_ring_disabled_in_the_rest_cycle_discards_from_the_cycle_after() {
    let run = disabled_after::<Queue256>(|o| o.written);
    assert_eq!(run.beats, [(true, true, BASE)]);
    let w = run.written_at.expect("the record written");
    assert_eq!(
        run.first_drop,
        Some(w + 2),
        "the rest cycle discards nothing"
    );
}

/// Record 0 raises the interrupt (one record is enough, no minimum interval); the card's MSI
/// request starts at cycle `c` and tells the queue in the next (`msi_covers` at `c + 1`); record 1
/// is done at cycle `w`, near it; the host re-arms a few cycles later. Returns whether the queue
/// raised a second interrupt (record 1 still pending), and `w`.
fn second_interrupt<D: Width>(covers_at: impl Fn(u64) -> u64) -> (bool, u64) {
    let (mut d, clk) = after_reset::<D>();
    (d.inputs.irq_count, d.inputs.irq_min_interval) = (1, 0);
    d.tick(clk);
    d.inputs.irq_arm = true;
    d.tick(clk);
    d.inputs.irq_arm = false;
    d.inputs.ev_valid = true;
    let (mut written, mut irqs, mut covers, mut rearm) = (vec![], 0, None, None);
    let mut predicted = None;
    for cycle in 0..80u64 {
        let (lo, hi) = record(written.len() as u32);
        (d.inputs.ev_lo, d.inputs.ev_hi) = (lo, hi);
        d.inputs.msi_covers = covers == Some(cycle);
        d.inputs.irq_arm = rearm == Some(cycle);
        let o = d.settle().clone();
        d.tick(clk);
        // What the queue did in this cycle decides the inputs from the next one on.
        if o.written {
            written.push(cycle);
            d.inputs.ev_valid = false;
        }
        if o.irq {
            irqs += 1;
            if irqs == 1 {
                // Record 1 is offered from the next cycle on; it will be done as long after
                // its offer as record 0 was (the write port is always ready).
                d.inputs.ev_valid = true;
                let w = cycle + 1 + written[0];
                predicted = Some(w);
                covers = Some(covers_at(w));
                rearm = Some(covers_at(w).max(w) + 3);
            }
        }
    }
    assert_eq!(written.len(), 2, "both records written: {written:?}");
    assert_eq!(Some(written[1]), predicted, "record 1 done when expected");
    assert!((1..=2).contains(&irqs), "{irqs} interrupts");
    (irqs == 2, written[1])
}

#[test]
fn an_msi_request_covers_the_records_done_before_it_and_no_others() {
    msi_covers::<Queue128>();
    msi_covers::<Queue256>();
}

fn msi_covers<D: Width>() {
    // `msi_covers` at cycle k: the request started at k - 1, and records done before k - 1 left
    // ahead of it (announced, no longer pending); those done at k - 1 or k are behind it (still
    // pending: the re-arm raises an interrupt for them).
    for (offset, pending) in [(3, false), (2, false), (1, true), (0, true), (-1, true)] {
        let (second, w) = second_interrupt::<D>(|w| w.checked_add_signed(offset).unwrap());
        assert_eq!(
            second,
            pending,
            "record done at cycle {w}, msi_covers at {}: {}",
            w as i64 + offset,
            if pending {
                "no interrupt for it after the re-arm"
            } else {
                "an interrupt for a record the MSI announced"
            }
        );
    }
}

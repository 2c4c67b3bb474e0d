//! DMA reads: 400 reads of random length (1 to 256 bytes) at random 16-byte aligned addresses
//! below and above 4 GiB, from the root complex model with its read latency plus up to 80 cycles
//! of random delay per read (so completions come out of order across tags) and completions split
//! at random read completion boundaries; random stalls on the TLP port, gaps in the completion
//! stream, random stalls of the data consumer; some reads outside host memory (the root complex
//! answers Unsupported Request) and stray completions for tags no read holds. Scoreboard: each
//! read becomes one well-formed MRd TLP, the data come back in issue order, byte-exact, a failed
//! read's beats carry `error`, every stray completion is reported and changes nothing. On the
//! rust-hdl model and its Verilog in lockstep, at 128 bits and at 256 (where a completion's first
//! line rides in its header beat); the timeout's tests, whose logic has no width, at 128.

use std::collections::VecDeque;

use nanet_hdl::pcie::read::{PcieRead, READ_TAGS};
use nanet_sim::engine::clocks::CORE_CLOCK_PS;
use nanet_sim::engine::{ClockId, DesignSim, EngineKind};
use nanet_sim::world::host_mem::{MemoryPort, MemoryPreset};
use nanet_sim::world::root_complex::{ReadModel, RootComplex};
use nanet_sim::world::tlp::{expected_empty, from_pins, BeatData, CplStatus, Pins, Tlp};
use nanet_sim::{design_ports, width_designs};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

#[derive(Clone, Default)]
pub struct RIn<T> {
    reset: bool,
    requester_id: u16,
    req_valid: bool,
    req_addr: u64,
    req_len: u16,
    tx_ready: bool,
    cpl_data: T,
    cpl_sop: bool,
    cpl_eop: bool,
    cpl_empty: u8,
    cpl_valid: bool,
    rd_ready: bool,
}

#[derive(Clone, Default, Debug)]
pub struct ROut<T> {
    req_ready: bool,
    tx_data: T,
    tx_sop: bool,
    tx_eop: bool,
    tx_empty: u8,
    tx_valid: bool,
    cpl_ready: bool,
    rd_data: T,
    rd_last: bool,
    rd_error: bool,
    rd_valid: bool,
    unexpected: bool,
    timed_out: bool,
    idle: bool,
    tags_full: bool,
}

/// The completion timeout of the engine under test: shorter than the card's `TIMEOUT_CYCLES`
/// (50,000), so the tests that wait for it run in a fraction of the time; longer than any wait
/// of the random tests (which fail on a timeout: its read's beats carry `error`).
const TIMEOUT_CYCLES: u64 = 2_000;

macro_rules! read_design {
    ($design:ident, $bits:literal, $data:ty, $top:literal) => {
design_ports! {
    pub $design for PcieRead<$bits> = PcieRead::<$bits>::with_timeout(TIMEOUT_CYCLES), top $top,
    inputs RIn<$data>, outputs ROut<$data>,
    clocks { clock }
    inputs {
        reset => reset, requester_id => requester_id, req_valid => req_valid,
        req_addr => req_addr, req_len => req_len, tx_ready => tx.ready, cpl_data => cpl.data,
        cpl_sop => cpl.sop, cpl_eop => cpl.eop, cpl_empty => cpl.empty, cpl_valid => cpl.valid,
        rd_ready => rd_ready,
    }
    outputs {
        req_ready => req_ready, tx_data => tx.data, tx_sop => tx.sop, tx_eop => tx.eop,
        tx_empty => tx.empty, tx_valid => tx.valid, cpl_ready => cpl.ready, rd_data => rd_data,
        rd_last => rd_last, rd_error => rd_error, rd_valid => rd_valid, unexpected => unexpected,
        timed_out => timed_out, idle => idle, tags_full => tags_full,
    }
}
    };
}
read_design!(Read128, 128, u128, "nanet_pcie_read");
read_design!(Read256, 256, [u64; 4], "nanet_pcie_read_256");

width_designs! {
    trait Width: In = RIn<Self::Beat>, Out = ROut<Self::Beat>;
    Read128 => u128, Read256 => [u64; 4]
}

/// Beats of a read of `len` bytes at `D`'s width.
fn beat_count<D: Width>(len: usize) -> usize {
    len.div_ceil(D::Beat::VARIANT.beat_bytes())
}

/// The tag byte of an MRd on the TLP port (dword 1, bits 15:8).
fn mrd_tag<T: BeatData>(data: &T) -> u8 {
    (data.dword(1) >> 8) as u8
}

const CARD: u16 = 0x0300;
const HIGH: u64 = 0x1_0000_0000;
const LOW: u64 = 0x8000_0000;
const REGION: u64 = 64 << 10;
/// The read engine's tags (the MRd tag's bits 4:0; bits 7:5 are zero).
const TAGS: u8 = READ_TAGS as u8;

/// The read engine on both engines, out of reset, with the card's requester ID; the TLP stream
/// ready (a test may stall it).
fn reset_engine<D: Width>() -> (DesignSim<D>, ClockId) {
    let mut d = DesignSim::<D>::new(EngineKind::Both).unwrap_or_else(|e| panic!("{e}"));
    let clk = d.add_clock("core", 0, CORE_CLOCK_PS);
    d.inputs.requester_id = CARD;
    d.inputs.tx_ready = true;
    d.inputs.reset = true;
    d.tick(clk);
    d.tick(clk);
    d.inputs.reset = false;
    (d, clk)
}

#[test]
fn reads_come_back_in_order_byte_exact_under_reordering_and_splitting() {
    reads_under_reordering_and_splitting::<Read128>();
    reads_under_reordering_and_splitting::<Read256>();
}

fn reads_under_reordering_and_splitting<D: Width>() {
    let mut rng = StdRng::seed_from_u64(31);
    let (mut d, clk) = reset_engine::<D>();

    let mut preset = MemoryPreset::gen2_x8();
    preset.latency_cycles = 40;
    let mut mem = MemoryPort::new(preset, 0.0, 1);
    let mut rc = RootComplex::new(D::Beat::VARIANT, 0xF7A0_0000, CARD);
    rc.reads = ReadModel::new(0.5, 80, 32);
    for base in [HIGH, LOW] {
        mem.memory.register(base, REGION, "buffers").unwrap();
        let bytes: Vec<u8> = (0..REGION).map(|_| rng.gen()).collect();
        mem.memory
            .write(base, &bytes, &vec![true; bytes.len()])
            .unwrap();
    }

    // Requests: (address, length, fails).
    let mut to_issue: VecDeque<(u64, u16, bool)> = (0..400)
        .map(|_| {
            let len: u16 = rng.gen_range(1..=256);
            let fails = rng.gen_bool(0.03);
            let base = if fails {
                0x3_0000_0000
            } else if rng.gen_bool(0.5) {
                HIGH
            } else {
                LOW
            };
            // 16-byte aligned, not crossing 4 KiB.
            let page = rng.gen_range(0..REGION / 4096) * 4096;
            let off = rng.gen_range(0..=(4096 - len as u64) / 16) * 16;
            (base + page + off, len, fails)
        })
        .collect();
    let mut issued: VecDeque<(u64, u16, bool)> = VecDeque::new();
    // Requests taken whose MRd has not gone out yet (each leaves a cycle after it was taken, or
    // later under backpressure), in order.
    let mut awaiting_tlp: VecDeque<(u64, u16)> = VecDeque::new();
    let mut beats = vec![];
    let beats_of = beat_count::<D>;
    let (mut done, mut strays, mut unexpected) = (0, 0, 0);
    for cycle in 0..300_000u64 {
        let i = &mut d.inputs;
        i.req_valid = false;
        if let Some((addr, len, _)) = to_issue.front() {
            if rng.gen_bool(0.6) {
                i.req_valid = true;
                i.req_addr = *addr;
                i.req_len = *len;
            }
        }
        i.tx_ready = rng.gen_bool(0.7);
        i.rd_ready = rng.gen_bool(0.6);
        i.cpl_valid = false;
        // A stray completion now and then, for a tag no read holds (from `TAGS` on none is:
        // bits 7:5 are never set); half of them with only bit 5 set, the tag's low bits one a
        // read may hold.
        if rng.gen_bool(0.002) {
            let stray = Tlp::Completion {
                completer: 0,
                status: CplStatus::Success,
                byte_count: 16,
                requester: CARD,
                tag: if rng.gen() {
                    rng.gen_range(TAGS..2 * TAGS)
                } else {
                    rng.gen_range(2 * TAGS..=255)
                },
                lower_addr: 0,
                data: vec![0xDEAD; 4],
            };
            rc.queue(&stray, 0);
            strays += 1;
        }
        if rng.gen_bool(0.8) {
            if let Some((b, _)) = rc.drive_rx(true) {
                i.cpl_valid = true;
                i.cpl_data = D::Beat::from_dwords(&b.dwords);
                i.cpl_sop = b.sop;
                i.cpl_eop = b.eop;
                i.cpl_empty = b.empty;
            }
        }
        let o = d.settle().clone();
        assert!(o.cpl_ready, "completions are always taken");
        assert!(!o.timed_out, "cycle {cycle}: a read timed out");
        unexpected += o.unexpected as u32;
        if d.inputs.req_valid && o.req_ready {
            let req = to_issue.pop_front().unwrap();
            awaiting_tlp.push_back((req.0, req.1));
            issued.push_back(req);
        }
        if o.tx_valid && d.inputs.tx_ready {
            assert!(o.tx_sop && o.tx_eop, "an MRd is one beat");
            let pins = Pins::<D::Beat> {
                data: o.tx_data,
                sop: true,
                eop: true,
                empty: o.tx_empty,
            };
            let (h, data) = from_pins(&[pins]);
            assert_eq!(
                o.tx_empty,
                expected_empty(&h, D::Beat::VARIANT),
                "the MRd's empty"
            );
            let t = Tlp::decode(&h, &data);
            let (addr, len) = awaiting_tlp.pop_front().expect("a TLP for a request taken");
            match &t {
                Tlp::MemRead {
                    requester,
                    addr: a,
                    len_dw,
                    ..
                } => {
                    assert_eq!((*requester, *a), (CARD, addr));
                    assert_eq!(*len_dw as u64, (len as u64).div_ceil(4));
                    assert_eq!(h.len(), if addr >> 32 != 0 { 4 } else { 3 });
                }
                other => panic!("not a memory read: {other:?}"),
            }
            rc.take_tlp(t, &mut mem);
        }
        if o.rd_valid && d.inputs.rd_ready {
            beats.push((o.rd_data, o.rd_error));
            if o.rd_last {
                let (addr, len, fails) = issued.pop_front().expect("data for an issued read");
                assert_eq!(beats.len(), beats_of(len as usize), "read {done} beats");
                if fails {
                    assert!(
                        beats.iter().all(|b| b.1),
                        "read {done}: error on every beat"
                    );
                } else {
                    assert!(beats.iter().all(|b| !b.1), "read {done} failed");
                    let got: Vec<u8> = beats.iter().flat_map(|b| b.0.to_le_bytes()).collect();
                    assert_eq!(
                        got[..len as usize],
                        mem.memory.read(addr, len as usize)[..],
                        "read {done}: {len} bytes at {addr:#x}"
                    );
                }
                beats.clear();
                done += 1;
            }
        }
        d.tick(clk);
        mem.tick();
        rc.end_cycle(&mut mem);
        if done == 400 {
            break;
        }
    }
    assert_eq!(done, 400, "reads completed");
    assert_eq!(unexpected, strays, "every stray completion reported");
    assert_eq!(
        rc.violations.len(),
        issued.len() + 400 - rc.card_reads as usize,
        "only the reads outside host memory are violations: {:?}",
        rc.violations
    );
    assert!(d.settle().idle);
}

/// Requests are taken one per cycle while the TLP stream is ready (the MRd register empties as
/// it fills), each MRd leaves two cycles after its request (the input slice, then the MRd
/// register), one per tag, and the two requests after them wait in the slice for a free tag.
#[test]
fn a_read_per_tag_issues_back_to_back_then_requests_wait_for_a_tag() {
    a_read_per_tag_then_requests_wait::<Read128>();
    a_read_per_tag_then_requests_wait::<Read256>();
}

fn a_read_per_tag_then_requests_wait<D: Width>() {
    let (mut d, clk) = reset_engine::<D>();
    d.inputs.rd_ready = true;
    let (mut taken, mut sent, mut tags_full) = (vec![], vec![], vec![]);
    for cycle in 0..TAGS as u64 + 4 {
        d.inputs.req_valid = true;
        d.inputs.req_addr = LOW + 0x100 * taken.len() as u64;
        d.inputs.req_len = 64;
        let o = d.settle().clone();
        if o.req_ready {
            taken.push(cycle);
        }
        if o.tags_full {
            tags_full.push(cycle);
        }
        if o.tx_valid {
            let (h, data) = from_pins(&[Pins::<D::Beat> {
                data: o.tx_data,
                sop: true,
                eop: true,
                empty: o.tx_empty,
            }]);
            match Tlp::decode(&h, &data) {
                Tlp::MemRead { addr, tag, .. } => sent.push((cycle, addr, tag)),
                other => panic!("not a memory read: {other:?}"),
            }
        }
        d.tick(clk);
    }
    // One per tag issued, two more waiting in the input slice for a tag.
    assert_eq!(
        taken,
        (0..TAGS as u64 + 2).collect::<Vec<_>>(),
        "cycles a request was taken"
    );
    let expected: Vec<(u64, u64, u8)> = (0..TAGS as u64)
        .map(|k| (k + 2, LOW + 0x100 * k, k as u8))
        .collect();
    assert_eq!(sent, expected, "(cycle, address, tag) of each MRd");
    // The last tag's read is in flight from the cycle after its issue, and the next request
    // waits at the slice's output from then on.
    assert_eq!(
        tags_full,
        (TAGS as u64 + 1..TAGS as u64 + 4).collect::<Vec<_>>(),
        "cycles a request waited for a tag"
    );
}

#[test]
fn a_request_waits_for_a_tag_only_while_every_tag_is_in_flight() {
    tags_full_only_while_a_request_waits::<Read128>();
    tags_full_only_while_a_request_waits::<Read256>();
}

/// Every tag in flight and no request: no wait; one request more: it waits from the cycle it
/// leaves the input slice; its tag's completion frees it.
fn tags_full_only_while_a_request_waits<D: Width>() {
    let (mut d, clk) = reset_engine::<D>();
    d.inputs.rd_ready = true;
    for k in 0..TAGS as u64 {
        request(&mut d, clk, LOW + 0x100 * k, 16);
    }
    for _ in 0..4 {
        assert!(!d.settle().tags_full, "no request waits, yet tags_full");
        d.tick(clk);
    }
    let at = request(&mut d, clk, LOW + 0x100 * TAGS as u64, 16);
    assert_eq!(at, 0, "the input slice takes the request at once");
    for _ in 0..4 {
        assert!(d.settle().tags_full, "the request waits for a tag");
        d.tick(clk);
    }
    // Tag 0's read completes and is handed on: the request waits through the completion, issues
    // in the cycle `tags_full` falls, and its MRd leaves the cycle after, on tag 0.
    let mut beats = success(0, 16, words(4, 0)).pins::<D::Beat>().into_iter();
    let mut fell = None;
    for cycle in 0..40u64 {
        let i = &mut d.inputs;
        i.cpl_valid = false;
        if let Some(b) = beats.next() {
            (i.cpl_valid, i.cpl_data, i.cpl_sop, i.cpl_eop, i.cpl_empty) =
                (true, b.data, b.sop, b.eop, b.empty);
        }
        let o = d.settle().clone();
        match fell {
            None if !o.tags_full => fell = Some(cycle),
            None => {}
            Some(f) => {
                assert!(!o.tags_full, "tags_full again at cycle {cycle}");
                if cycle == f + 1 {
                    assert!(
                        o.tx_valid && mrd_tag(&o.tx_data) == 0,
                        "the waiting request's MRd, on tag 0, the cycle after"
                    );
                }
            }
        }
        d.tick(clk);
    }
    assert!(
        fell.is_some(),
        "the request still waits after tag 0 was freed"
    );
}

/// Sends one request for `len` bytes at `addr` and ticks until it is taken; returns the cycles.
fn request<D: Width>(d: &mut DesignSim<D>, clk: ClockId, addr: u64, len: u16) -> u64 {
    d.inputs.req_valid = true;
    d.inputs.req_addr = addr;
    d.inputs.req_len = len;
    for cycle in 0..100 {
        let taken = d.settle().req_ready;
        d.tick(clk);
        if taken {
            d.inputs.req_valid = false;
            return cycle;
        }
    }
    panic!("request for {len} bytes at {addr:#x} not taken");
}

/// Drives `tlp`'s beats, one a cycle; returns how many cycles had `unexpected` set.
fn drive<D: Width>(d: &mut DesignSim<D>, clk: ClockId, tlp: &Tlp) -> u32 {
    let mut unexpected = 0;
    for b in tlp.pins::<D::Beat>() {
        let i = &mut d.inputs;
        (i.cpl_valid, i.cpl_data, i.cpl_sop, i.cpl_eop, i.cpl_empty) =
            (true, b.data, b.sop, b.eop, b.empty);
        unexpected += d.settle().unexpected as u32;
        d.tick(clk);
    }
    d.inputs.cpl_valid = false;
    unexpected
}

/// Ticks until one read's beats are out (ready always); returns (data bytes, error on each).
fn collect_read<D: Width>(
    d: &mut DesignSim<D>,
    clk: ClockId,
    unexpected: &mut u32,
) -> (Vec<u8>, Vec<bool>) {
    d.inputs.rd_ready = true;
    let (mut bytes, mut errors) = (vec![], vec![]);
    for _ in 0..200 {
        let o = d.settle().clone();
        *unexpected += o.unexpected as u32;
        d.tick(clk);
        if o.rd_valid {
            bytes.extend(o.rd_data.to_le_bytes());
            errors.push(o.rd_error);
            if o.rd_last {
                return (bytes, errors);
            }
        }
    }
    panic!("no read data came out");
}

/// Collects one read (as `collect_read`) and checks it: no beat with `error`, as many beats as
/// its bytes take, and its bytes those of the completion data `data`.
fn expect_read<D: Width>(
    d: &mut DesignSim<D>,
    clk: ClockId,
    unexpected: &mut u32,
    data: &[u32],
    what: &str,
) {
    let (bytes, errors) = collect_read(d, clk, unexpected);
    assert!(errors.iter().all(|e| !e), "{what}: a beat with error");
    let want: Vec<u8> = data.iter().flat_map(|w| w.to_le_bytes()).collect();
    assert_eq!(errors.len(), beat_count::<D>(want.len()), "{what}: beats");
    assert_eq!(bytes[..want.len()], want[..], "{what}: not byte-exact");
}

fn success(tag: u8, byte_count: u16, data: Vec<u32>) -> Tlp {
    Tlp::Completion {
        completer: 0,
        status: CplStatus::Success,
        byte_count,
        requester: CARD,
        tag,
        lower_addr: 0,
        data,
    }
}

/// `n` dwords of completion data, distinct per `seed`.
fn words(n: u32, seed: u32) -> Vec<u32> {
    (0..n).map(|k| seed.wrapping_mul(0x9E37_79B9) ^ k).collect()
}

/// Hostile completions: one whose length runs past its read's end fails the read (its beats
/// all carry `error`) and the next read with the same tag is unharmed; one arriving in the very
/// cycle its tag is issued belongs to no read yet (the tag's length is its last read's) and is
/// dropped and reported, and the read it raced still completes byte-exact.
#[test]
fn completions_past_a_reads_end_or_before_its_issue_are_refused() {
    completions_past_the_end_or_before_issue::<Read128>();
    completions_past_the_end_or_before_issue::<Read256>();
}

fn completions_past_the_end_or_before_issue<D: Width>() {
    let (mut d, clk) = reset_engine::<D>();
    let mut unexpected = 0;

    // A read of 64 bytes on every tag; tag 0's completion carries 20 dwords for a byte count
    // of 64.
    for k in 0..TAGS as u64 {
        request(&mut d, clk, LOW + 0x100 * k, 64);
    }
    unexpected += drive(&mut d, clk, &success(0, 64, words(20, 1)));
    for tag in 1..TAGS {
        unexpected += drive(&mut d, clk, &success(tag, 64, words(16, tag as u32)));
    }
    let (_, errors) = collect_read(&mut d, clk, &mut unexpected);
    assert_eq!(
        errors,
        vec![true; beat_count::<D>(64)],
        "read 0 fails on every beat"
    );
    for tag in 1..TAGS as u32 {
        expect_read(
            &mut d,
            clk,
            &mut unexpected,
            &words(16, tag),
            &format!("read {tag}"),
        );
    }
    assert_eq!(unexpected, 0, "nothing was stray so far");

    // Tag 0 again (the read after one per tag): its completion's header beat arrives in the cycle the
    // request leaves the input slice and is issued (the cycle after it is taken).
    let early = success(0, 32, words(8, 99)).pins::<D::Beat>();
    assert!(
        early.len() >= 2,
        "a 32-byte completion has a beat after its header"
    );
    d.inputs.req_valid = true;
    d.inputs.req_addr = LOW;
    d.inputs.req_len = 32;
    assert!(d.settle().req_ready, "the request is taken");
    d.tick(clk);
    d.inputs.req_valid = false;
    for (k, b) in early.iter().enumerate() {
        let i = &mut d.inputs;
        (i.cpl_valid, i.cpl_data, i.cpl_sop, i.cpl_eop, i.cpl_empty) =
            (true, b.data, b.sop, b.eop, b.empty);
        let o = d.settle().clone();
        assert_eq!(
            o.tx_valid,
            k == 1,
            "beat {k}: the MRd is formed in the header's cycle and leaves the next"
        );
        unexpected += o.unexpected as u32;
        d.tick(clk);
    }
    d.inputs.cpl_valid = false;
    unexpected += drive(&mut d, clk, &success(0, 32, words(8, 7)));
    let (bytes, errors) = collect_read(&mut d, clk, &mut unexpected);
    assert_eq!(unexpected, 1, "the early completion is reported once");
    assert_eq!(
        errors,
        vec![false; beat_count::<D>(32)],
        "the raced read does not fail"
    );
    let want: Vec<u8> = words(8, 7).iter().flat_map(|w| w.to_le_bytes()).collect();
    assert_eq!(
        bytes, want,
        "the raced read's data are its own completion's"
    );
    assert!(d.settle().idle);
}

/// A completion for a read already handed on (a duplicate, or one for a tag not in use) is
/// refused and reported, and the reads still outstanding get their own data.
#[test]
fn a_completion_for_a_read_already_handed_on_is_refused() {
    a_completion_for_a_read_handed_on::<Read128>();
    a_completion_for_a_read_handed_on::<Read256>();
}

fn a_completion_for_a_read_handed_on<D: Width>() {
    let (mut d, clk) = reset_engine::<D>();
    let mut unexpected = 0;
    request(&mut d, clk, LOW, 64);
    request(&mut d, clk, LOW + 0x100, 64);
    unexpected += drive(&mut d, clk, &success(0, 64, words(16, 1)));
    let (_, errors) = collect_read(&mut d, clk, &mut unexpected);
    assert_eq!(errors, vec![false; beat_count::<D>(64)], "read 0");
    assert_eq!(unexpected, 0);
    // Tag 0 again, after its read was handed on; and tag 5, never used.
    unexpected += drive(&mut d, clk, &success(0, 64, words(16, 2)));
    unexpected += drive(&mut d, clk, &success(5, 64, words(16, 3)));
    assert_eq!(unexpected, 2, "both refused and reported");
    unexpected += drive(&mut d, clk, &success(1, 64, words(16, 4)));
    expect_read(&mut d, clk, &mut unexpected, &words(16, 4), "read 1");
    assert_eq!(unexpected, 2);
    assert!(d.settle().idle);
}

/// A duplicate completion for a read arriving in any cycle around its read's hand-on, with every
/// tag outstanding and a request waiting for one: the hand-on frees the tag and the waiting read
/// takes it at once. A duplicate ending by the hand-on belongs to the read handed on; one
/// arriving from the hand-on's cycle on (refused on the input) or still coming after it (its
/// rest dropped) is reported. Either way the tag's next read waits for its own completion and
/// gets its own data. The duplicate, of a one-line and of a four-line read (its data beats
/// straddling the hand-on), is swept over the cycles up to the next read's MRd, found by a first
/// run.
#[test]
fn a_duplicate_completion_around_its_reads_hand_on_never_reaches_the_tags_next_read() {
    for len in [16, 64] {
        duplicate_at_the_hand_on::<Read128>(len);
        duplicate_at_the_hand_on::<Read256>(len);
    }
}

fn duplicate_at_the_hand_on<D: Width>(len: u16) {
    // Every tag's read issued (tag 0's of `len` bytes), a request waiting; tag 0's completion,
    // and `dup_at` cycles after it starts a duplicate of it. Then the reads on tags 1 to 31, and
    // tag 0's next read once its own completion came. Returns the cycle the waiting request's
    // MRd went out, the stray completions reported, and the waiting read's data.
    let run = |dup_at: Option<u64>| -> (u64, u32, Vec<u8>) {
        let (mut d, clk) = reset_engine::<D>();
        let tags: Vec<u8> = (0..TAGS as u64)
            .map(|k| issue_and_tag(&mut d, clk, LOW + 0x100 * k, if k == 0 { len } else { 16 }))
            .collect();
        assert_eq!(tags, (0..TAGS).collect::<Vec<_>>());
        (d.inputs.req_valid, d.inputs.req_addr, d.inputs.req_len) = (true, LOW + 0x4000, 16);
        let dwords = len as u32 / 4;
        let mut first = success(0, len, words(dwords, 1))
            .pins::<D::Beat>()
            .into_iter();
        let mut dup = success(0, len, words(dwords, 0xD0))
            .pins::<D::Beat>()
            .into_iter();
        let (mut mrd_at, mut unexpected) = (None, 0);
        for cycle in 0..40 {
            let i = &mut d.inputs;
            i.cpl_valid = false;
            let beat = if dup_at.is_some_and(|at| cycle >= at) {
                dup.next()
            } else {
                first.next()
            };
            if let Some(b) = beat {
                (i.cpl_valid, i.cpl_data, i.cpl_sop, i.cpl_eop, i.cpl_empty) =
                    (true, b.data, b.sop, b.eop, b.empty);
            }
            let o = d.settle().clone();
            unexpected += o.unexpected as u32;
            if o.tx_valid {
                assert_eq!(mrd_tag(&o.tx_data), 0, "the waiting read takes tag 0");
                mrd_at = Some(cycle);
            }
            d.tick(clk);
            if o.req_ready {
                d.inputs.req_valid = false;
            }
        }
        // (Tag 0's first read: its completion's data or, a duplicate ending before the
        // hand-on, the duplicate's.)
        collect_read(&mut d, clk, &mut unexpected);
        d.inputs.rd_ready = false;
        let what = format!("{len}-byte duplicate at cycle {dup_at:?}");
        reads_on_tags_1_to_31_then_tag_0_waits(&mut d, clk, &mut unexpected, &what);
        unexpected += drive(&mut d, clk, &success(0, 16, words(4, 99)));
        let (bytes, _) = collect_read(&mut d, clk, &mut unexpected);
        (
            mrd_at.expect("the waiting read went out"),
            unexpected,
            bytes,
        )
    };
    let (mrd_at, unexpected, bytes) = run(None);
    let own: Vec<u8> = words(4, 99).iter().flat_map(|w| w.to_le_bytes()).collect();
    assert_eq!(unexpected, 0);
    assert_eq!(bytes[..16], own[..], "the waiting read's own data");
    let beats = success(0, len, words(len as u32 / 4, 0))
        .pins::<D::Beat>()
        .len() as u64;
    // From a duplicate whose last beat is judged two cycles before the hand-on (the first
    // completion whole before it).
    assert!(
        mrd_at - 4 - beats >= beats,
        "the first completion ends before the duplicate"
    );
    for dup_at in mrd_at - 4 - beats..mrd_at {
        let (_, unexpected, bytes) = run(Some(dup_at));
        assert_eq!(
            bytes[..16],
            own[..],
            "{len}-byte duplicate at cycle {dup_at} (the next MRd at {mrd_at}): the tag's next \
             read took it"
        );
        // The hand-on frees tag 0 two cycles before the waiting read's MRd leaves (the issue,
        // then the MRd register). A completion's beats are judged a cycle after they arrive: a
        // duplicate whose last beat is judged after the hand-on's cycle is reported, one ending
        // by it belongs to the read handed on.
        let hand_on = mrd_at - 2;
        let last_judged = dup_at + beats;
        let reported = last_judged > hand_on;
        assert_eq!(
            unexpected, reported as u32,
            "{len}-byte duplicate at cycle {dup_at}, its last beat judged at {last_judged} (the \
             hand-on at {hand_on}): reported {unexpected} times"
        );
    }
}

/// A completion that ends (`eop`) before the beats its length says fails its read, at every
/// place it can end: at 128 bits on its header beat or a data beat, at 256 on its header beat
/// (whose upper half holds its first line) or a data beat; its beats carry `error` and nothing is
/// reported as stray.
#[test]
fn a_completion_ending_short_of_its_length_fails_its_read() {
    completions_ending_short::<Read128>();
    completions_ending_short::<Read256>();
}

fn completions_ending_short<D: Width>() {
    let full = success(0, 80, words(20, 5)).pins::<D::Beat>();
    for cut in 1..full.len() {
        let (mut d, clk) = reset_engine::<D>();
        request(&mut d, clk, LOW, 80);
        // (Until the MRd is out: a completion racing its read's issue is stray.)
        for _ in 0..4 {
            d.tick(clk);
        }
        let mut unexpected = 0;
        for (k, b) in full[..cut].iter().enumerate() {
            let i = &mut d.inputs;
            (i.cpl_valid, i.cpl_data, i.cpl_sop, i.cpl_eop, i.cpl_empty) =
                (true, b.data, b.sop, k + 1 == cut, b.empty);
            unexpected += d.settle().unexpected as u32;
            d.tick(clk);
        }
        d.inputs.cpl_valid = false;
        let (_, errors) = collect_read(&mut d, clk, &mut unexpected);
        let what = format!("ended after {cut} of {} beats", full.len());
        assert_eq!(
            errors,
            vec![true; beat_count::<D>(80)],
            "{what}: the read fails"
        );
        assert_eq!(unexpected, 0, "{what}: not stray");
        assert!(d.settle().idle);
    }
}

/// The completion timeout counts from the MRd leaving: a read whose MRd the TLP stream holds
/// back for longer than the timeout does not fail, and once sent and never answered it times
/// out after `TIMEOUT_CYCLES` and its beats carry `error`. Once it is handed on no read is
/// issued for another `TIMEOUT_CYCLES`, and the late completion, arriving meanwhile, is refused;
/// then the tags go on in turn (tag 0 last) and the reads after it get their own data.
#[test]
fn the_completion_timeout_starts_when_the_mrd_leaves() {
    let (mut d, clk) = reset_engine::<Read128>();
    d.inputs.tx_ready = false;
    request(&mut d, clk, LOW, 16);
    for cycle in 0..TIMEOUT_CYCLES + 100 {
        let o = d.settle().clone();
        assert!(
            !o.timed_out,
            "cycle {cycle}: timed out with its MRd still held"
        );
        assert!(
            o.tx_valid || cycle == 0,
            "the MRd waits (formed a cycle after the request)"
        );
        d.tick(clk);
    }
    d.inputs.tx_ready = true;
    let mut sent_at = None;
    let mut timed_out_at = None;
    let mut timeout_pulse = 0;
    for cycle in 0..TIMEOUT_CYCLES + 100 {
        let o = d.settle().clone();
        if o.tx_valid {
            assert!(sent_at.is_none(), "one MRd");
            sent_at = Some(cycle);
        }
        if o.timed_out {
            assert!(timed_out_at.is_none(), "one timeout");
            timed_out_at = Some(cycle);
            timeout_pulse = d.cycles(clk);
        }
        d.tick(clk);
    }
    let (sent, out) = (
        sent_at.expect("the MRd left"),
        timed_out_at.expect("the read timed out"),
    );
    assert!(
        (TIMEOUT_CYCLES..TIMEOUT_CYCLES + 4).contains(&(out - sent)),
        "timed out {} cycles after the MRd left",
        out - sent
    );
    let mut unexpected = 0;
    let (_, errors) = collect_read(&mut d, clk, &mut unexpected);
    assert_eq!(
        errors,
        vec![true],
        "the timed-out read's beat carries error"
    );
    // (The reads below stay in the engine until collected.)
    d.inputs.rd_ready = false;
    let late = success(0, 16, words(4, 0xDEAD));
    unexpected += drive(&mut d, clk, &late);
    assert_eq!(
        unexpected, 1,
        "the late completion, its read handed on, is refused"
    );
    let (tag, mrd_at) = issue_waiting(&mut d, clk, LOW + 0x100, 16);
    assert_eq!(tag, 1, "the next tag in turn");
    let after = mrd_at - timeout_pulse;
    assert!(
        (TIMEOUT_CYCLES + 4..TIMEOUT_CYCLES + 20).contains(&after),
        "the first read after the timeout went out {after} cycles after the timeout (the pause \
         is {TIMEOUT_CYCLES} cycles from the timed-out read's hand-on, a few cycles later)"
    );
    unexpected += drive(&mut d, clk, &late);
    assert_eq!(
        unexpected, 2,
        "the late completion is refused with another tag outstanding"
    );
    let mut tags = vec![tag];
    tags.extend((2..=TAGS as u64).map(|k| issue_and_tag(&mut d, clk, LOW + 0x100 * k, 16)));
    let want: Vec<u8> = (1..TAGS).chain([0]).collect();
    assert_eq!(tags, want, "tags in turn, tag 0 last");
    for (k, tag) in tags.iter().enumerate() {
        unexpected += drive(&mut d, clk, &success(*tag, 16, words(4, k as u32)));
    }
    for k in 0..TAGS as u32 {
        let what = format!("read {k} after the timeout");
        expect_read(&mut d, clk, &mut unexpected, &words(4, k), &what);
    }
    assert_eq!(unexpected, 2);
    assert!(d.settle().idle);
}

/// A completion that arrives for a read just before it times out is taken, and its last beat
/// comes after the read was handed on: its bytes count toward no read, its end is reported as
/// stray, and the tag's next read (after the pause, the tags in turn) waits for its own data.
#[test]
fn a_completion_straddling_its_reads_timeout_does_not_complete_the_tags_next_read() {
    let (mut d, clk) = reset_engine::<Read128>();
    d.inputs.rd_ready = true;
    request(&mut d, clk, LOW, 256);
    while !d.settle().timed_out {
        d.tick(clk);
    }
    // From the timeout on: the 256-byte completion's header (its read not handed on yet), the
    // failed read's 16 beats out, then the completion's 16 data beats (a gap inside it).
    let mut late = success(0, 256, words(64, 0xDEAD))
        .pins::<u128>()
        .into_iter();
    let (mut failed_beats, mut unexpected, mut late_end, mut handed_on_at) = (0, 0, None, None);
    for cycle in 0..200 {
        let i = &mut d.inputs;
        i.cpl_valid = false;
        let next = if cycle == 0 || handed_on_at.is_some() {
            late.next()
        } else {
            None
        };
        if let Some(b) = next {
            (i.cpl_valid, i.cpl_data, i.cpl_sop, i.cpl_eop, i.cpl_empty) =
                (true, b.data, b.sop, b.eop, b.empty);
            if b.eop {
                late_end = Some(cycle);
            }
        }
        let o = d.settle().clone();
        unexpected += o.unexpected as u32;
        assert!(!o.tx_valid, "no MRd: none requested");
        if o.rd_valid {
            assert!(o.rd_error, "only the timed-out read comes out");
            failed_beats += 1;
            if o.rd_last {
                handed_on_at = Some(cycle);
            }
        }
        d.tick(clk);
    }
    assert_eq!(failed_beats, 16, "the timed-out read's beats, with error");
    assert_eq!(
        unexpected, 1,
        "the completion was taken (its read not handed on yet) and its end, after the hand-on, \
         reported"
    );
    assert!(
        late_end.expect("the completion was sent") > handed_on_at.expect("the read was handed on"),
        "the completion ends after its read was handed on"
    );
    d.inputs.rd_ready = false;
    let mut tags = vec![issue_waiting(&mut d, clk, LOW + 0x100, 16).0];
    tags.extend((2..=TAGS as u64).map(|k| issue_and_tag(&mut d, clk, LOW + 0x100 * k, 16)));
    assert_eq!(tags, (1..TAGS).chain([0]).collect::<Vec<_>>());
    reads_on_tags_1_to_31_then_tag_0_waits(
        &mut d,
        clk,
        &mut unexpected,
        "the straddling completion",
    );
    unexpected += drive(&mut d, clk, &success(0, 16, words(4, 99)));
    expect_read(
        &mut d,
        clk,
        &mut unexpected,
        &words(4, 99),
        "the next read on tag 0",
    );
    assert_eq!(unexpected, 1);
    assert!(d.settle().idle);
}

/// With reads outstanding on every tag and tag 0's the last issued: completes tags 1 to 31 and
/// checks their reads, then that tag 0's read gives nothing for 50 cycles (it waits for its own
/// completion: `after` names what must not have completed it).
fn reads_on_tags_1_to_31_then_tag_0_waits<D: Width>(
    d: &mut DesignSim<D>,
    clk: ClockId,
    unexpected: &mut u32,
    after: &str,
) {
    for tag in 1..TAGS {
        *unexpected += drive(d, clk, &success(tag, 16, words(4, tag as u32)));
    }
    for tag in 1..TAGS as u32 {
        let what = format!("read on tag {tag}");
        expect_read(d, clk, unexpected, &words(4, tag), &what);
    }
    for _ in 0..50 {
        let o = d.settle().clone();
        assert!(
            !o.rd_valid,
            "{after}: tag 0's next read came out before its completion"
        );
        *unexpected += o.unexpected as u32;
        d.tick(clk);
    }
}

/// Sends one request (the TLP port ready) and ticks until its MRd goes out, through a pause
/// after a timeout; returns the MRd's tag byte and the cycle (`DesignSim::cycles`) it went in.
fn issue_waiting<D: Width>(d: &mut DesignSim<D>, clk: ClockId, addr: u64, len: u16) -> (u8, u64) {
    d.inputs.req_valid = true;
    d.inputs.req_addr = addr;
    d.inputs.req_len = len;
    for _ in 0..TIMEOUT_CYCLES + 100 {
        let o = d.settle().clone();
        d.tick(clk);
        if o.req_ready {
            d.inputs.req_valid = false;
        }
        if o.tx_valid {
            return (mrd_tag(&o.tx_data), d.cycles(clk) - 1);
        }
    }
    panic!("no MRd for the request at {addr:#x}");
}

/// Sends one request (the TLP port ready) and returns the tag byte of the MRd it becomes.
fn issue_and_tag<D: Width>(d: &mut DesignSim<D>, clk: ClockId, addr: u64, len: u16) -> u8 {
    request(d, clk, addr, len);
    for _ in 0..4 {
        let o = d.settle().clone();
        d.tick(clk);
        if o.tx_valid {
            return mrd_tag(&o.tx_data);
        }
    }
    panic!("no MRd for the request at {addr:#x}");
}

/// A failed completion (UR) for the second read, judged in any cycle around the first read's
/// timeout, including the very cycle the timeout fails the first: both reads fail at once (the
/// second's beats carry `error` right after the first's), the second never waits for a timeout
/// of its own. (Before, a failure judged in the timeout's cycle was overwritten by it.) The UR's
/// header is swept over the cycles around the timeout found by a first run.
#[test]
fn a_failed_completion_judged_in_the_cycle_of_a_timeout_still_fails_its_read() {
    // Both reads issued, the TLP port always ready; then `ur_at` cycles later the UR's beat.
    let run = |ur_at: Option<u64>| -> (u64, Vec<bool>) {
        let (mut d, clk) = reset_engine::<Read128>();
        let tag_a = issue_and_tag(&mut d, clk, LOW, 16);
        let tag_b = issue_and_tag(&mut d, clk, LOW + 0x100, 16);
        assert_eq!((tag_a, tag_b), (0, 1));
        let ur = Tlp::Completion {
            completer: 0,
            status: CplStatus::Unsupported,
            byte_count: 16,
            requester: CARD,
            tag: tag_b,
            lower_addr: 0,
            data: vec![],
        }
        .pins::<u128>();
        assert_eq!(ur.len(), 1, "a completion without data is one beat");
        d.inputs.rd_ready = true;
        let (mut timed_out_at, mut errors) = (None, vec![]);
        for cycle in 0..TIMEOUT_CYCLES + 400 {
            let i = &mut d.inputs;
            i.cpl_valid = ur_at == Some(cycle);
            (i.cpl_data, i.cpl_sop, i.cpl_eop, i.cpl_empty) =
                (ur[0].data, ur[0].sop, ur[0].eop, ur[0].empty);
            let o = d.settle().clone();
            assert!(!o.unexpected, "cycle {cycle}: the UR was refused");
            if o.timed_out {
                assert!(timed_out_at.is_none(), "cycle {cycle}: a second timeout");
                timed_out_at = Some(cycle);
            }
            if o.rd_valid {
                errors.push(o.rd_error);
            }
            d.tick(clk);
        }
        (timed_out_at.expect("the first read timed out"), errors)
    };
    // Without the UR: the first read times out and fails, the second waits on.
    let (timeout, errors) = run(None);
    assert_eq!(errors, vec![true], "only the timed-out read came out");
    for ur_at in timeout - 4..=timeout + 4 {
        let (at, errors) = run(Some(ur_at));
        assert_eq!(at, timeout, "the UR moved the timeout");
        assert_eq!(
            errors,
            vec![true, true],
            "UR at cycle {ur_at} (the timeout at {timeout}): both reads fail at once"
        );
    }
}

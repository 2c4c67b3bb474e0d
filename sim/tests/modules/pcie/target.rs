//! BAR0 target: a root complex sends a random mix of register reads and writes, unsupported and
//! malformed requests, with random stalls on the receive side (under the Hard IP's ready latency
//! of 2), on the completion side and on the register bus (slow reads, busy after writes).
//! Scoreboard: every supported write reaches the register it names, every supported read is
//! completed with the register's value, no access starts while the register side is busy, every
//! unsupported read-type request gets an Unsupported Request completion and touches nothing, other
//! posted traffic is dropped and counted; completions leave without a gap inside a TLP, their last
//! beat's `empty` as the Hard IP expects. At 128 and 256 bits, on the rust-hdl model and its
//! Verilog in lockstep.

use std::collections::{HashMap, VecDeque};

use nanet_hdl::pcie::target::{PcieTarget, REG_WRITE_SPACING};
use nanet_sim::design_ports;
use nanet_sim::engine::clocks::CORE_CLOCK_PS;
use nanet_sim::engine::{Design, DesignSim, EngineKind};
use nanet_sim::world::tlp::{expected_empty, from_pins, to_pins, BeatData, CplStatus, Pins, Tlp};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

#[derive(Clone, Default)]
pub struct TIn<T> {
    reset: bool,
    completer_id: u16,
    rx: Pins<T>,
    rx_valid: bool,
    rx_bar: u8,
    tx_ready: bool,
    reg_rdata: u32,
    reg_rvalid: bool,
    reg_busy: bool,
}

#[derive(Clone, Default, Debug)]
pub struct TOut<T> {
    rx_ready: bool,
    tx: Pins<T>,
    tx_valid: bool,
    reg_addr: u16,
    reg_wdata: u32,
    reg_write: bool,
    reg_read: bool,
    unsupported: bool,
    dropped: bool,
}

/// The target at one width.
macro_rules! target_design {
    ($design:ident, $bits:literal, $data:ty, $top:literal) => {
        design_ports! {
            pub $design for PcieTarget<$bits>, top $top, inputs TIn<$data>, outputs TOut<$data>,
            clocks { clock }
            inputs {
                reset => reset, completer_id => completer_id, rx.data => rx.data,
                rx.sop => rx.sop, rx.eop => rx.eop, rx.empty => rx.empty, rx_valid => rx.valid,
                rx_bar => rx.bar, tx_ready => tx.ready, reg_rdata => reg_rdata,
                reg_rvalid => reg_rvalid, reg_busy => reg_busy,
            }
            outputs {
                rx_ready => rx.ready, tx.data => tx.data, tx.sop => tx.sop, tx.eop => tx.eop,
                tx.empty => tx.empty, tx_valid => tx.valid, reg_addr => reg_addr,
                reg_wdata => reg_wdata, reg_write => reg_write, reg_read => reg_read,
                unsupported => unsupported, dropped => dropped,
            }
        }
    };
}
target_design!(Target128, 128, u128, "nanet_pcie_target");
target_design!(Target256, 256, [u64; 4], "nanet_pcie_target_256");

const COMPLETER: u16 = 0x0300;
const BAR0_BASE: u64 = 0xF7A0_0000;
const BAR0_BASE_64: u64 = 0x38_0000_0000;

/// What the target must do with a request.
#[derive(Debug)]
enum Expect {
    Write { word: u16, value: u32 },
    Read { word: u16, tag: u8, lower: u8 },
    Unsupported { tag: u8 },
    Dropped,
}

/// A random request, its BAR hit, and what it must cause.
fn request(rng: &mut impl Rng, tag: u8) -> (Tlp, u8, Expect) {
    let word: u16 = rng.gen_range(0..64);
    let base = if rng.gen_bool(0.3) {
        BAR0_BASE_64
    } else {
        BAR0_BASE
    };
    let addr = base + word as u64 * 4;
    let lower = (addr & 0x7F) as u8;
    let read = |len_dw, first_be| Tlp::MemRead {
        requester: 0,
        tag,
        addr,
        len_dw,
        first_be,
        last_be: if len_dw > 1 { 0xF } else { 0 },
    };
    let write = |data: Vec<u32>, first_be| Tlp::MemWrite {
        requester: 0,
        tag,
        addr,
        first_be,
        last_be: if data.len() > 1 { 0xF } else { 0 },
        data,
    };
    // A header of another kind: `fmt_type` in dword 0's top byte, one dword of length.
    let other = |fmt_type: u32, data: Vec<u32>, bar: u8, expect: Expect| {
        let (mut h, _) = read(1, 0xF).encode();
        h[0] = (h[0] & 0x20FF_FFFF) | (fmt_type << 24); // keeps the 4-dword bit
        (Tlp::Other { header: h, data }, bar, expect)
    };
    match rng.gen_range(0..27) {
        0..=6 => (read(1, 0xF), 1, Expect::Read { word, tag, lower }),
        7..=13 => {
            let value = rng.gen();
            (write(vec![value], 0xF), 1, Expect::Write { word, value })
        }
        // Unsupported reads: longer, partial, to another BAR, locked, I/O.
        14 => (read(2, 0xF), 1, Expect::Unsupported { tag }),
        15 => (read(1, 0x3), 1, Expect::Unsupported { tag }),
        16 => (read(1, 0xF), 4, Expect::Unsupported { tag }),
        17 => {
            let (mut h, _) = read(1, 0xF).encode();
            h[0] |= if rng.gen() { 1 << 24 } else { 2 << 24 }; // MRdLk or IORd
            (
                Tlp::Other {
                    header: h,
                    data: vec![],
                },
                1,
                Expect::Unsupported { tag },
            )
        }
        // Hostile requests: a poisoned write (EP), a write whose beats carry more than its one
        // dword or lack it, AtomicOps, configuration and I/O requests, a completion nobody asked
        // for. And TD set on a request whose digest the Hard IP stripped: taken as without it.
        19 | 20 => {
            let value = rng.gen();
            let (mut h, d) = write(vec![value], 0xF).encode();
            // Its dword missing: only where it would not share a qword with the header's last
            // dword (slot 4 or 5), else `empty` cannot tell.
            let data_late = base == BAR0_BASE_64 || addr & 4 == 0;
            match rng.gen_range(0..4) {
                3 if data_late => {
                    let data = vec![]; // length 1, no dword
                    (Tlp::Other { header: h, data }, 1, Expect::Dropped)
                }
                0 | 3 => {
                    h[0] |= 1 << 14; // EP
                    (Tlp::Other { header: h, data: d }, 1, Expect::Dropped)
                }
                1 => {
                    let data = vec![d[0], rng.gen(), rng.gen()]; // length 1, three dwords
                    (Tlp::Other { header: h, data }, 1, Expect::Dropped)
                }
                _ => {
                    h[0] |= 1 << 15; // TD
                    (
                        Tlp::Other { header: h, data: d },
                        1,
                        Expect::Write { word, value },
                    )
                }
            }
        }
        21 => {
            let (mut h, _) = read(1, 0xF).encode();
            h[0] |= 1 << 15; // TD
            let data = vec![];
            (
                Tlp::Other { header: h, data },
                1,
                Expect::Read { word, tag, lower },
            )
        }
        22 => {
            // FetchAdd, Swap (one dword each) or CAS (two), 32-bit address.
            let kind = rng.gen_range(0x0C..=0x0E);
            let n = if kind == 0x0E { 2 } else { 1 };
            other(
                0x40 | kind,
                (0..n).map(|_| rng.gen()).collect(),
                1,
                Expect::Unsupported { tag },
            )
        }
        23 => {
            // CfgRd0/CfgRd1, CfgWr0/CfgWr1 (no BAR hit).
            let kind = rng.gen_range(4..=5);
            if rng.gen() {
                other(kind, vec![], 0, Expect::Unsupported { tag })
            } else {
                other(0x40 | kind, vec![rng.gen()], 0, Expect::Unsupported { tag })
            }
        }
        24 => other(0x42, vec![rng.gen()], 0, Expect::Unsupported { tag }), // IOWr
        25 => other(0x4A, vec![rng.gen()], 1, Expect::Dropped),             // CplD
        // Posted traffic the target does not take: long or partial writes, a message.
        18 => {
            let n = rng.gen_range(2..9);
            (write((0..n).collect(), 0xF), 1, Expect::Dropped)
        }
        _ => {
            if rng.gen() {
                (write(vec![1], 0x1), 1, Expect::Dropped)
            } else {
                let msg = vec![0x3400_0000, 0, 0, 0]; // Msg, 4-dword header, no data
                (
                    Tlp::Other {
                        header: msg,
                        data: vec![],
                    },
                    1,
                    Expect::Dropped,
                )
            }
        }
    }
}

#[test]
fn register_accesses_complete_and_unsupported_requests_change_nothing() {
    accesses::<Target128, u128>();
}

#[test]
fn register_accesses_complete_and_unsupported_requests_change_nothing_at_256_bits() {
    accesses::<Target256, [u64; 4]>();
}

fn accesses<D: Design<In = TIn<T>, Out = TOut<T>>, T: BeatData>() {
    let mut rng = StdRng::seed_from_u64(11);
    let mut d = DesignSim::<D>::new(EngineKind::Both).unwrap_or_else(|e| panic!("{e}"));
    let clk = d.add_clock("core", 0, CORE_CLOCK_PS);
    d.inputs.completer_id = COMPLETER;
    d.inputs.reset = true;
    d.tick(clk);
    d.tick(clk);
    d.inputs.reset = false;

    let mut regs: HashMap<u16, u32> = HashMap::new();
    let mut expect: VecDeque<Expect> = VecDeque::new();
    let mut to_send: VecDeque<(Pins<T>, u8)> = VecDeque::new();
    let mut rx_ready_hist = [false; 2];
    let mut tx_beats: Vec<Pins<T>> = vec![];
    // A read's answer: (cycles left, value).
    let mut pending_read: Option<(u32, u32)> = None;
    // The register side stays busy for a while after a write (a register in another domain).
    let mut busy_left = 0u32;
    // The cycle of the last register write.
    let mut last_write: Option<u32> = None;
    let (mut reads, mut writes, mut urs, mut drops, mut requests) = (0, 0, 0, 0, 0u32);
    let mut completions: VecDeque<Tlp> = VecDeque::new();

    for cycle in 0..40_000u32 {
        if to_send.is_empty() && requests < 1500 {
            let (tlp, bar, e) = request(&mut rng, requests as u8);
            let (h, data) = tlp.encode();
            to_send.extend(to_pins::<T>(&h, &data).into_iter().map(|b| (b, bar)));
            expect.push_back(e);
            requests += 1;
        }
        // The Hard IP may send a beat only if rx_ready was high two cycles ago.
        let i = &mut d.inputs;
        i.rx_valid = false;
        if rx_ready_hist[1] && rng.gen_bool(0.7) {
            if let Some((b, bar)) = to_send.front() {
                (i.rx_valid, i.rx, i.rx_bar) = (true, *b, *bar);
            }
        }
        i.tx_ready = rng.gen_bool(0.6);
        i.reg_rvalid = false;
        if let Some((left, value)) = &mut pending_read {
            if *left == 0 {
                i.reg_rvalid = true;
                i.reg_rdata = *value;
                pending_read = None;
            } else {
                *left -= 1;
            }
        }
        d.inputs.reg_busy = busy_left > 0;
        busy_left = busy_left.saturating_sub(1);
        let o = d.settle().clone();
        assert!(
            !(d.inputs.reg_busy && (o.reg_write || o.reg_read)),
            "cycle {cycle}: a register access while the register side is busy"
        );
        if d.inputs.reg_busy && rng.gen_bool(0.05) {
            busy_left += 1;
        }
        if d.inputs.rx_valid {
            to_send.pop_front();
        }
        // A TLP source: once a completion started, every cycle offers its next beat.
        assert!(
            o.tx_valid || tx_beats.is_empty(),
            "cycle {cycle}: a gap inside a completion"
        );
        if o.tx_valid && d.inputs.tx_ready {
            tx_beats.push(o.tx);
            if o.tx.eop {
                let (h, data) = from_pins(&tx_beats);
                assert_eq!(
                    o.tx.empty,
                    expected_empty(&h, T::VARIANT),
                    "cycle {cycle}: the completion's empty"
                );
                completions.push_back(Tlp::decode(&h, &data));
                tx_beats.clear();
            }
        }
        // The register bus, checked against the request it must come from.
        if o.reg_write || o.reg_read || o.unsupported || o.dropped {
            let e = expect
                .pop_front()
                .unwrap_or_else(|| panic!("cycle {cycle}: unrequested {o:?}"));
            match e {
                Expect::Write { word, value } => {
                    assert!(o.reg_write, "cycle {cycle}: expected a write, got {o:?}");
                    if let Some(last) = last_write.replace(cycle) {
                        assert!(
                            (cycle - last) as u64 >= REG_WRITE_SPACING,
                            "cycle {cycle}: a register write {} cycles after the last",
                            cycle - last
                        );
                    }
                    assert_eq!((o.reg_addr, o.reg_wdata), (word, value));
                    regs.insert(word, value);
                    busy_left = rng.gen_range(0..10);
                    writes += 1;
                }
                Expect::Read { word, tag, lower } => {
                    assert!(o.reg_read, "cycle {cycle}: expected a read, got {o:?}");
                    assert_eq!(o.reg_addr, word);
                    let value = *regs.get(&word).unwrap_or(&0);
                    pending_read = Some((rng.gen_range(0..6), value));
                    completions_expected_push(&mut completions, tag, lower, value);
                    reads += 1;
                }
                Expect::Unsupported { tag } => {
                    assert!(
                        o.unsupported && !o.reg_read && !o.reg_write,
                        "cycle {cycle}: {o:?}"
                    );
                    completions_expected_push_ur(&mut completions, tag);
                    urs += 1;
                }
                Expect::Dropped => {
                    assert!(
                        o.dropped && !o.reg_read && !o.reg_write,
                        "cycle {cycle}: {o:?}"
                    );
                    drops += 1;
                }
            }
        }
        rx_ready_hist = [o.rx_ready, rx_ready_hist[0]];
        d.tick(clk);
    }
    // Every expected completion arrived, in order, as expected.
    let mut got = completions.into_iter();
    let mut checked = 0;
    while let Some(want) = got.next() {
        let Tlp::Other { .. } = want else {
            panic!("completion before it was expected: {want:?}")
        };
        let actual = got
            .next()
            .expect("a completion for every request that needs one");
        assert_eq!(actual, expected_of(&want), "completion {checked}");
        checked += 1;
    }
    assert!(expect.is_empty(), "{} requests never handled", expect.len());
    assert_eq!(
        reads + writes + urs + drops,
        1500,
        "every request made and handled within the cycles run"
    );
    assert!(
        reads > 300 && writes > 300 && urs > 100 && drops > 50,
        "{reads} {writes} {urs} {drops}"
    );
    assert_eq!(checked, reads + urs);
}

// The scoreboard keeps the expected completion in the same queue as the actual ones, wrapped in a
// marker, so that order is checked too: marker, then the completion the target sent.
fn completions_expected_push(q: &mut VecDeque<Tlp>, tag: u8, lower: u8, value: u32) {
    q.push_back(marker(Tlp::Completion {
        completer: COMPLETER,
        status: CplStatus::Success,
        byte_count: 4,
        requester: 0,
        tag,
        lower_addr: lower,
        data: vec![value],
    }));
}

fn completions_expected_push_ur(q: &mut VecDeque<Tlp>, tag: u8) {
    q.push_back(marker(Tlp::Completion {
        completer: COMPLETER,
        status: CplStatus::Unsupported,
        byte_count: 4,
        requester: 0,
        tag,
        lower_addr: 0,
        data: vec![],
    }));
}

fn marker(t: Tlp) -> Tlp {
    let (h, d) = t.encode();
    let mut header = vec![u32::MAX];
    header.extend(h);
    Tlp::Other { header, data: d }
}

fn expected_of(m: &Tlp) -> Tlp {
    let Tlp::Other { header, data } = m else {
        unreachable!()
    };
    Tlp::decode(&header[1..], data)
}

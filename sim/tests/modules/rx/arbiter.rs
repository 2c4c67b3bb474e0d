//! Port arbiter: datagrams (meta word, payload words, last) from four FIFOs with random stalls on
//! every input and on the output; each datagram must come out whole from one port, every port's
//! datagrams in order, and with every port backlogged the grants must rotate (no port waits more
//! than one datagram of each other port) with no idle cycle between datagrams. Every promise of
//! the next datagram (`next_*` on a datagram's words) must hold: the next datagram out is from the
//! promised port, with the promised stream and length. The same for cards of three ports and one
//! port. Ports that start offering at random times never wait for more than one datagram of
//! each other port. On the rust-hdl model and its Verilog in lockstep; at 128 bits, and at 256 with
//! four ports (the word's upper half a check pattern).

use std::collections::VecDeque;

use nanet_contract::packed::rx_meta::RxMeta;
use nanet_hdl::rx::arbiter::RxArbiter;
use nanet_sim::design_ports;
use nanet_sim::engine::clocks::CORE_CLOCK_PS;
use nanet_sim::engine::{Design, DesignSim, EngineKind};
use nanet_sim::world::tlp::{BeatData, MAX_BEAT_DWORDS};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

#[derive(Clone, Default)]
pub struct ArbIn<T> {
    reset: bool,
    data: [T; 4],
    flags: [u8; 4],
    valid: [bool; 4],
    out_ready: bool,
}

#[derive(Clone, Default, Debug)]
pub struct ArbOut<T> {
    ready: [bool; 4],
    out_data: T,
    out_meta: bool,
    out_last: bool,
    out_error: bool,
    out_port: u8,
    out_next_valid: bool,
    out_next_port: u8,
    out_next_stream: u8,
    out_next_len: u16,
    out_valid: bool,
}

macro_rules! arbiter_ports {
    ($design:ident, $ports:literal, $bits:literal, $data:ty, $top:literal: $($p:literal),*) => {
        design_ports! {
            pub $design for RxArbiter<$ports, $bits>, top $top, inputs ArbIn<$data>,
            outputs ArbOut<$data>,
            clocks { clock }
            inputs {
                reset => reset,
                $(data[$p] => inp[$p].data, flags[$p] => inp[$p].flags,
                  valid[$p] => inp[$p].valid,)*
                out_ready => out.ready,
            }
            outputs {
                $(ready[$p] => inp[$p].ready,)*
                out_data => out.data, out_meta => out.meta, out_last => out.last,
                out_error => out.error, out_port => out.port, out_valid => out.valid,
                out_next_valid => out.next_valid, out_next_port => out.next_port,
                out_next_stream => out.next_stream, out_next_len => out.next_len,
            }
        }
    };
}
arbiter_ports!(ArbiterDesign, 4, 128, u128, "nanet_rx_arbiter": 0, 1, 2, 3);
arbiter_ports!(Arbiter3Design, 3, 128, u128, "nanet_rx_arbiter_3p": 0, 1, 2);
arbiter_ports!(Arbiter1Design, 1, 128, u128, "nanet_rx_arbiter_1p": 0);
arbiter_ports!(Arbiter256Design, 4, 256, [u64; 4], "nanet_rx_arbiter_256": 0, 1, 2, 3);

/// A FIFO word's low 128 bits and its flags `{meta, last, error}`: bits 127:64 name the word
/// (port, datagram, index) in their low 44 bits, and a meta word carries a stream and a length
/// of its own above them; bits 63:0 repeat them, XOR a constant.
fn word(port: usize, pkt: usize, i: usize, n: usize) -> (u128, u8) {
    let mut hi = (port as u64) << 40 | (pkt as u64) << 16 | i as u64;
    if i == 0 {
        let meta = RxMeta {
            stream: ((pkt * 5 + port) % 16) as u8,
            // Half the two-word datagrams are empty ones (meta word and placeholder): the
            // promise of a datagram of length 0.
            len: if n == 2 && pkt % 2 == 0 {
                0
            } else {
                (pkt * 37 + port * 1000 + 1) as u16
            },
            ..RxMeta::default()
        };
        hi |= (meta.encode() >> 64) as u64;
    }
    let flags = (i == 0) as u8 * 4 + (i + 1 == n) as u8 * 2;
    ((hi as u128) << 64 | (hi as u128 ^ 0x5555), flags)
}

/// The word at the design's width: its low 128 bits, and above them (256 bits) their complement.
fn wide<T: BeatData>(low: u128) -> T {
    let mut dwords = [0u32; MAX_BEAT_DWORDS];
    for (n, d) in dwords.iter_mut().enumerate() {
        let dword = (low >> (32 * (n % 4))) as u32;
        *d = if n < 4 { dword } else { !dword };
    }
    T::from_dwords(&dwords)
}

/// A word's low 128 bits, its upper half checked to be their complement.
fn narrow<T: BeatData>(word: &T) -> u128 {
    let low = (0..4).fold(0u128, |acc, n| acc | (word.dword(n) as u128) << (32 * n));
    for n in 4..T::VARIANT.beat_dwords() {
        assert_eq!(word.dword(n), !word.dword(n % 4), "dword {n} carried whole");
    }
    low
}

/// What came out of a run: the ports in grant order, the cycles after the first word in which
/// words were waiting and the output was ready but no word came out, and the promises checked.
struct Run {
    grants: Vec<u8>,
    idle: usize,
    promises: usize,
    /// The most datagrams of other ports that started while a port waited with a datagram
    /// (`gap` runs only: there a port that offers keeps offering until it is served).
    most_skipped: usize,
}

/// Runs `per_port` datagrams into each of the `ports` ports of design `D`: with `gap` 0 each
/// input stalls at random in any cycle (`in_stall`); else each port offers its datagrams whole,
/// up to `gap` cycles apart.
fn run<T: BeatData + Default + Clone, D: Design<In = ArbIn<T>, Out = ArbOut<T>>>(
    ports: usize,
    per_port: usize,
    in_stall: f64,
    out_stall: f64,
    gap: u64,
    seed: u64,
) -> Run {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut d = DesignSim::<D>::new(EngineKind::Both).unwrap_or_else(|e| panic!("{e}"));
    let clk = d.add_clock("core", 0, CORE_CLOCK_PS);
    d.inputs.reset = true;
    d.tick(clk);
    d.inputs.reset = false;
    let mut queues: Vec<VecDeque<(u128, u8)>> = (0..ports)
        .map(|p| {
            (0..per_port)
                .flat_map(|k| {
                    // 1 to 6 words: a one-word datagram (meta word and last at once) frees
                    // the arbiter the cycle it is granted.
                    let n = 1 + (k * 7 + p * 3) % 6;
                    (0..n).map(move |i| word(p, k, i, n))
                })
                .collect()
        })
        .collect();
    let total: usize = queues.iter().map(|q| q.len()).sum();
    let mut next_pkt = [0usize; 4];
    let mut grants = vec![];
    let mut current: Option<(u8, usize, usize)> = None;
    // The promise shown on the current datagram's words: (port, stream, length).
    let mut promise: Option<(u8, u8, u16)> = None;
    let mut promises = 0;
    let mut got = 0;
    let mut idle = 0;
    let mut cycles = 0u64;
    let mut offer_from = [0u64; 4];
    let mut skipped = [0usize; 4];
    let mut most_skipped = 0;
    while got < total {
        for p in 0..ports {
            let i = &mut d.inputs;
            i.valid[p] = !queues[p].is_empty()
                && !(in_stall > 0.0 && gap == 0 && rng.gen_bool(in_stall))
                && cycles >= offer_from[p];
            if let Some((data, flags)) = queues[p].front() {
                i.data[p] = wide(*data);
                i.flags[p] = *flags;
            }
        }
        d.inputs.out_ready = !(out_stall > 0.0 && rng.gen_bool(out_stall));
        let o = d.settle().clone();
        let offered = (0..ports).any(|p| d.inputs.valid[p]);
        if got > 0 && offered && d.inputs.out_ready && !o.out_valid {
            idle += 1;
        }
        for p in 0..ports {
            if d.inputs.valid[p] && o.ready[p] {
                assert_eq!(
                    o.out_port as usize, p,
                    "ready given to a port that is not selected"
                );
                let (_, flags) = queues[p].pop_front().unwrap();
                if flags & 4 != 0 {
                    // A datagram of `p` starts: every other port offering one was passed over.
                    skipped[p] = 0;
                    for q in (0..ports).filter(|q| *q != p) {
                        let waits =
                            d.inputs.valid[q] && queues[q].front().is_some_and(|w| w.1 & 4 != 0);
                        if waits {
                            skipped[q] += 1;
                            most_skipped = most_skipped.max(skipped[q]);
                        }
                    }
                }
                if flags & 2 != 0 && gap > 0 {
                    offer_from[p] = cycles + 1 + rng.gen_range(0..gap);
                }
            }
        }
        if o.out_valid && d.inputs.out_ready {
            let data = narrow(&o.out_data);
            let hi = (data >> 64) as u64;
            let (port, pkt, i) = (
                (hi >> 40) as u8 & 0xF,
                (hi >> 16) as usize & 0xFFFF,
                hi as usize & 0xFFFF,
            );
            assert_eq!(port, o.out_port);
            assert_eq!(data as u64, hi ^ 0x5555);
            match current {
                None => {
                    assert!(o.out_meta && i == 0, "a datagram starts with its meta word");
                    assert_eq!(
                        pkt, next_pkt[port as usize],
                        "port {port}: datagrams in order"
                    );
                    if let Some(promised) = promise.take() {
                        let meta = RxMeta::decode(data);
                        assert_eq!(
                            (port, meta.stream, meta.len),
                            promised,
                            "the datagram after a promise is the promised one (port, stream, length)"
                        );
                        promises += 1;
                    }
                    grants.push(port);
                    current = Some((port, pkt, 0));
                }
                Some((cp, ck, ci)) => {
                    assert_eq!(
                        (port, pkt, i),
                        (cp, ck, ci + 1),
                        "datagrams never interleave"
                    );
                    current = Some((cp, ck, i));
                }
            }
            if o.out_next_valid {
                let shown = (o.out_next_port, o.out_next_stream, o.out_next_len);
                assert_ne!(shown.0, port, "a promise names another port");
                assert!(
                    promise.is_none() || promise == Some(shown),
                    "a promise holds to the datagram's end ({promise:?}, then {shown:?})"
                );
                promise = Some(shown);
            }
            if o.out_last {
                next_pkt[port as usize] += 1;
                current = None;
            }
            got += 1;
        }
        d.tick(clk);
        cycles += 1;
        assert!(cycles < 50 * total as u64 + 1000, "arbiter wedged");
    }
    Run {
        grants,
        idle,
        promises,
        most_skipped,
    }
}

/// Grants in turn, and no idle cycle: a backlogged arbiter goes from one datagram's last word to
/// the next port's meta word in the next cycle.
fn assert_rotates(run: Run, ports: usize) {
    let grants = &run.grants;
    assert_eq!(run.idle, 0, "idle cycles with every port backlogged");
    for (k, g) in grants.iter().enumerate() {
        assert_eq!(
            *g as usize,
            k % ports,
            "grant {k} went to port {g}: {grants:?}"
        );
    }
}

#[test]
fn every_port_backlogged_grants_rotate() {
    assert_rotates(run::<_, ArbiterDesign>(4, 20, 0.0, 0.0, 0, 1), 4);
    assert_rotates(run::<_, Arbiter3Design>(3, 20, 0.0, 0.0, 0, 3), 3);
    assert_rotates(run::<_, Arbiter1Design>(1, 10, 0.0, 0.0, 0, 4), 1);
    assert_rotates(run::<_, Arbiter256Design>(4, 20, 0.0, 0.0, 0, 7), 4);
}

#[test]
fn datagrams_stay_whole_and_in_order_under_random_stalls() {
    // `run` checks wholeness, order and every promise on every word; every datagram comes out.
    for run in [
        run::<_, ArbiterDesign>(4, 40, 0.3, 0.3, 0, 2),
        run::<_, Arbiter3Design>(3, 40, 0.3, 0.3, 0, 5),
        run::<_, Arbiter256Design>(4, 40, 0.3, 0.3, 0, 6),
    ] {
        assert_eq!(run.grants.len() % 40, 0);
        assert!(
            run.promises > run.grants.len() / 4,
            "{} promises kept in {} datagrams",
            run.promises,
            run.grants.len()
        );
    }
}

/// With every port backlogged, every datagram's promise names the next (a datagram of one word
/// ends before a promise can be made: some are not promised); one port never promises.
#[test]
fn backlogged_ports_are_promised_ahead() {
    let four = run::<_, ArbiterDesign>(4, 20, 0.0, 0.0, 0, 1);
    assert!(
        four.promises >= 60,
        "{} promises in 80 datagrams",
        four.promises
    );
    assert_eq!(run::<_, Arbiter1Design>(1, 10, 0.0, 0.0, 0, 4).promises, 0);
}

/// Ports that start offering at random times (each offers its datagrams whole, up to 12 cycles
/// apart, the output stalling at random): a port offering a datagram sees at most one datagram
/// of each other port start before its own, as with round robin alone. A promise made before the
/// port began to offer can take the turn round robin would have given it, but then the rotation
/// goes on from the promised port and reaches it before any port's second turn.
#[test]
fn a_port_that_starts_offering_waits_at_most_one_datagram_of_each_other_port() {
    let mut worst = [0usize; 2];
    for (k, seed) in [11u64, 12, 13].into_iter().enumerate() {
        let four = run::<_, ArbiterDesign>(4, 60, 0.0, 0.3, 12, seed);
        let three = run::<_, Arbiter3Design>(3, 60, 0.0, 0.3, 12, seed + 10);
        assert!(
            four.most_skipped <= 3,
            "run {k}: four ports, {} skips",
            four.most_skipped
        );
        assert!(
            three.most_skipped <= 2,
            "run {k}: three ports, {} skips",
            three.most_skipped
        );
        assert!(four.promises > 20, "run {k}: {} promises", four.promises);
        worst = [
            worst[0].max(four.most_skipped),
            worst[1].max(three.most_skipped),
        ];
    }
    // The bound is reached: ports did wait for every other one.
    assert_eq!(worst, [3, 2]);
}

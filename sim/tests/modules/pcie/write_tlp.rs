//! DMA writes as memory-write TLPs: random requests (random byte offsets and lengths up to 256
//! bytes, inside 256-byte blocks and across them, never across 4 KiB; addresses below and above
//! 4 GiB), junk in the lanes their beats do not carry,
//! random stalls on both sides, busy and sparse phases, a quarter one-beat requests; no gap inside
//! a TLP (a TLP source for `pcie/tx_arbiter.rs`). Every TLP is decoded with the root complex's
//! model (`nanet_sim::world::tlp`): header form, address, length, byte enables, every payload
//! byte, and a padding slot of the header beat (zero). At 128 and 256 bits (every lane of a
//! 256-bit beat: the payload moves forwards, backwards, or not at all), on the rust-hdl model and
//! its Verilog in lockstep.

use std::collections::VecDeque;

use nanet_hdl::pcie::write_tlp::PcieWriteTlp;
use nanet_sim::design_ports;
use nanet_sim::engine::clocks::CORE_CLOCK_PS;
use nanet_sim::engine::Design;
use nanet_sim::engine::{ClockId, DesignSim, EngineKind};
use nanet_sim::world::tlp::{from_pins, BeatData, Pins, Tlp};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

#[derive(Clone, Default)]
pub struct WIn<T> {
    reset: bool,
    requester_id: u16,
    valid: bool,
    sop: bool,
    eop: bool,
    addr: u64,
    len: u16,
    data: T,
    tx_ready: bool,
}

#[derive(Clone, Default, Debug)]
pub struct WOut<T> {
    ready: bool,
    tx_data: T,
    tx_sop: bool,
    tx_eop: bool,
    tx_empty: u8,
    tx_valid: bool,
    idle: bool,
}

macro_rules! writer_design {
    ($design:ident, $bits:literal, $data:ty, $top:literal) => {
        design_ports! {
            pub $design for PcieWriteTlp<$bits>, top $top, inputs WIn<$data>,
            outputs WOut<$data>,
            clocks { clock }
            inputs {
                reset => reset, requester_id => requester_id, valid => wr.valid, sop => wr.sop,
                eop => wr.eop, addr => wr.addr, len => wr.len, data => wr.data,
                tx_ready => tx.ready,
            }
            outputs {
                ready => wr.ready, tx_data => tx.data, tx_sop => tx.sop, tx_eop => tx.eop,
                tx_empty => tx.empty, tx_valid => tx.valid, idle => idle,
            }
        }
    };
}
writer_design!(Writer128, 128, u128, "nanet_pcie_write_tlp");
writer_design!(Writer256, 256, [u64; 4], "nanet_pcie_write_tlp_256");

const REQUESTER: u16 = 0x0300;

/// One input beat: address of its first byte, data, sop/len, eop.
struct InBeat<T> {
    addr: u64,
    data: T,
    sop: bool,
    len: u16,
    eop: bool,
}

/// The beats of a request, with random bytes in the lanes it does not carry.
fn beats<T: BeatData>(rng: &mut impl Rng, addr: u64, payload: &[u8]) -> Vec<InBeat<T>> {
    let lanes = T::VARIANT.beat_bytes();
    let mut out = vec![];
    let mut at = 0usize;
    while at < payload.len() {
        let a = addr + at as u64;
        let lane = (a % lanes as u64) as usize;
        let n = (lanes - lane).min(payload.len() - at);
        let mut bytes = vec![0u8; lanes];
        rng.fill(&mut bytes[..]);
        bytes[lane..lane + n].copy_from_slice(&payload[at..at + n]);
        out.push(InBeat {
            addr: a,
            data: T::from_le_bytes(&bytes),
            sop: at == 0,
            len: payload.len() as u16,
            eop: at + n == payload.len(),
        });
        at += n;
    }
    out
}

/// The bytes a memory write puts in memory: address of the first, and the bytes.
fn written(t: &Tlp) -> (u64, Vec<u8>) {
    let (addr, bytes, strobes) = t
        .write_strobes()
        .unwrap_or_else(|| panic!("not a memory write: {t:?}"));
    let first = strobes.iter().position(|s| *s).expect("some byte enabled");
    let enabled = bytes.iter().zip(&strobes).filter(|(_, s)| **s);
    (addr + first as u64, enabled.map(|(b, _)| *b).collect())
}

/// The writer in lockstep (model and Verilog), after reset, with its core clock.
fn writer_after_reset<D: Design<In = WIn<T>, Out = WOut<T>>, T: BeatData + Default + Copy>(
) -> (DesignSim<D>, ClockId) {
    let mut d = DesignSim::<D>::new(EngineKind::Both).unwrap_or_else(|e| panic!("{e}"));
    let clk = d.add_clock("core", 0, CORE_CLOCK_PS);
    d.inputs.requester_id = REQUESTER;
    d.inputs.reset = true;
    d.tick(clk);
    d.tick(clk);
    d.inputs.reset = false;
    (d, clk)
}

#[test]
fn every_request_becomes_one_exact_memory_write() {
    writes::<Writer128, u128>();
}

#[test]
fn every_request_becomes_one_exact_memory_write_at_256_bits() {
    writes::<Writer256, [u64; 4]>();
}

fn writes<D: Design<In = WIn<T>, Out = WOut<T>>, T: BeatData + Default + Copy>() {
    let mut rng = StdRng::seed_from_u64(21);
    let (mut d, clk) = writer_after_reset::<D, T>();

    let lanes = T::VARIANT.beat_bytes() as u64;
    let mut queue: VecDeque<InBeat<T>> = VecDeque::new();
    let mut expected: VecDeque<(u64, Vec<u8>)> = VecDeque::new();
    let mut tlp: Vec<Pins<T>> = vec![];
    let (mut done, mut wide, mut made, mut crossing) = (0, 0, 0, 0);
    // Requests whose first beat went in and whose TLP has not ended.
    let mut held = 0u32;
    for cycle in 0..60_000u32 {
        if queue.len() < 4 && made < 1200 {
            let block = if rng.gen_bool(0.4) {
                0x38_0000_0000u64
            } else {
                0x8000_0000u64
            } + rng.gen_range(0..64u64) * 256;
            let start = rng.gen_range(0..256u64);
            // A quarter are one-beat requests (they complete with their head); of the rest, half
            // end inside their 256-byte block, half may run on to 256 bytes (within the page).
            let page_left = 4096 - (block + start) % 4096;
            let len = if rng.gen_bool(0.25) {
                rng.gen_range(1..=lanes - start % lanes) as usize
            } else if rng.gen() {
                rng.gen_range(1..=256 - start) as usize
            } else {
                rng.gen_range(1..=256.min(page_left)) as usize
            };
            crossing += (start + len as u64 > 256) as u32;
            let payload: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
            queue.extend(beats(&mut rng, block + start, &payload));
            expected.push_back((block + start, payload));
            made += 1;
        }
        // Busy and sparse phases: in the sparse one requests reach an idle, empty writer.
        let offer = rng.gen_bool(if cycle % 4000 < 2000 { 0.75 } else { 0.1 });
        let i = &mut d.inputs;
        i.valid = false;
        if let (true, Some(b)) = (offer, queue.front()) {
            i.valid = true;
            i.addr = b.addr;
            i.data = b.data;
            i.sop = b.sop;
            i.eop = b.eop;
            i.len = if b.sop { b.len } else { 0 };
        }
        i.tx_ready = rng.gen_bool(0.7);
        let o = d.settle().clone();
        assert!(
            !(o.idle && held > 0),
            "cycle {cycle}: idle with {held} requests held"
        );
        if d.inputs.valid && o.ready {
            held += d.inputs.sop as u32;
            queue.pop_front();
        }
        // Once a TLP started, every cycle offers its next beat.
        assert!(
            o.tx_valid || tlp.is_empty(),
            "cycle {cycle}: a gap in the middle of a TLP"
        );
        if o.tx_valid && d.inputs.tx_ready {
            assert_eq!(
                o.tx_sop,
                tlp.is_empty(),
                "cycle {cycle}: sop on the first beat only"
            );
            tlp.push(Pins {
                data: o.tx_data,
                sop: o.tx_sop,
                eop: o.tx_eop,
                empty: o.tx_empty,
            });
            if o.tx_eop {
                let (want_addr, want) = expected.pop_front().expect("a TLP for a request");
                let (h, data) = from_pins(&tlp);
                let t = Tlp::decode(&h, &data);
                // The layout the Hard IP expects: re-encoding the decoded TLP gives these beats.
                assert_eq!(
                    t.pins::<T>().len(),
                    tlp.len(),
                    "cycle {cycle}: beats of {t:?}"
                );
                assert_eq!(t.pins::<T>().last().unwrap().empty, o.tx_empty);
                assert_eq!(
                    h.len() == 4,
                    want_addr >> 32 != 0,
                    "4-dword header above 4 GiB only"
                );
                // A padding slot before a qword-aligned payload, when in the header beat, is zero.
                let pad = match (h.len(), want_addr & 4 != 0) {
                    (3, false) => Some(3),
                    (4, true) => Some(4),
                    _ => None,
                };
                if let Some(slot) = pad.filter(|s| *s < lanes as usize / 4) {
                    assert_eq!(
                        tlp[0].data.dword(slot),
                        0,
                        "cycle {cycle}: padding slot {slot}"
                    );
                }
                if let Tlp::MemWrite { requester, .. } = &t {
                    assert_eq!(*requester, REQUESTER);
                }
                assert_eq!(written(&t), (want_addr, want), "cycle {cycle}");
                wide += (h.len() == 4) as u32;
                done += 1;
                held -= 1;
                tlp.clear();
            }
        }
        d.tick(clk);
    }
    assert!(
        expected.is_empty() && queue.is_empty(),
        "{} requests left",
        expected.len()
    );
    assert!(
        done == 1200 && wide > 300 && crossing > 150,
        "{done} TLPs, {wide} with 4-dword headers, {crossing} across a 256-byte block"
    );
}

#[test]
fn whole_requests_leave_back_to_back() {
    back_to_back::<Writer128, u128>();
}

#[test]
fn whole_requests_leave_back_to_back_at_256_bits() {
    back_to_back::<Writer256, [u64; 4]>();
}

/// Four requests collected whole while the port is not ready leave, once it is, as TLPs back to
/// back: each TLP's first beat in the cycle after the last beat of the one before (the writer
/// starts a request in the cycle its predecessor's last beat goes out), or a cycle later for a
/// payload that moves backwards (at 256 bits, from dword lane 6 or 7 behind a 4-dword header:
/// its first beat goes into the carry in a cycle of its own). Requests of 4 to 7
/// beats' worth at any lane (five output beats or more, so the next head is decoded while one
/// goes out; four fill at most the 32-beat FIFO and the 4-entry head queue); every TLP checked
/// byte-exact. Twenty rounds, each from an empty writer.
fn back_to_back<D: Design<In = WIn<T>, Out = WOut<T>>, T: BeatData + Default + Copy>() {
    let mut rng = StdRng::seed_from_u64(5);
    let (mut d, clk) = writer_after_reset::<D, T>();
    let lanes = T::VARIANT.beat_bytes();
    for round in 0..20 {
        let mut queue = VecDeque::new();
        let mut expected = VecDeque::new();
        for k in 0..4u64 {
            let addr = 0x38_0000_0000 + k * 512 + rng.gen_range(0..lanes as u64);
            let len = rng.gen_range(4 * lanes..=7 * lanes);
            let payload: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
            queue.extend(beats::<T>(&mut rng, addr, &payload));
            expected.push_back((addr, payload));
        }
        d.inputs.tx_ready = false;
        for _ in 0..100 {
            let i = &mut d.inputs;
            i.valid = false;
            if let Some(b) = queue.front() {
                (i.valid, i.addr, i.data, i.sop, i.eop) = (true, b.addr, b.data, b.sop, b.eop);
                i.len = if b.sop { b.len } else { 0 };
            }
            let o = d.settle().clone();
            if d.inputs.valid && o.ready {
                queue.pop_front();
            }
            d.tick(clk);
        }
        assert!(
            queue.is_empty(),
            "round {round}: the writer took {} beats too few",
            queue.len()
        );
        d.inputs.valid = false;
        d.inputs.tx_ready = true;
        let preloads: Vec<bool> = expected
            .iter()
            .map(|(addr, _)| lanes == 32 && addr % 32 / 4 >= 6)
            .collect();
        let mut tlp: Vec<Pins<T>> = vec![];
        let (mut last_eop, mut sent) = (None, 0);
        for cycle in 0..200u32 {
            let o = d.settle().clone();
            if o.tx_valid {
                if let (true, Some(eop)) = (o.tx_sop, last_eop) {
                    assert_eq!(
                        cycle,
                        eop + 1 + preloads[sent] as u32,
                        "round {round}: TLP {sent} did not follow the one before at once"
                    );
                }
                tlp.push(Pins {
                    data: o.tx_data,
                    sop: o.tx_sop,
                    eop: o.tx_eop,
                    empty: o.tx_empty,
                });
                if o.tx_eop {
                    let (h, data) = from_pins(&tlp);
                    let want = expected.pop_front().expect("a request for every TLP");
                    assert_eq!(written(&Tlp::decode(&h, &data)), want, "round {round}");
                    tlp.clear();
                    (last_eop, sent) = (Some(cycle), sent + 1);
                }
            } else {
                assert!(tlp.is_empty(), "round {round}: a gap inside TLP {sent}");
            }
            d.tick(clk);
        }
        assert_eq!(sent, 4, "round {round}: every request sent");
        assert!(d.settle().idle, "round {round}: the writer idle at the end");
    }
}

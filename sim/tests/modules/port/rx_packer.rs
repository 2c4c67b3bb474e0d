//! Packer: datagrams from the offload core (64-bit beats, a beat per cycle, at least six idle
//! cycles between datagrams as the header takes, the datagram's fields shown from the last of
//! them) with random FIFO fill levels: a datagram goes into the FIFO whole (meta word, then the
//! payload, `W / 64` beats per word, the last word flagged, `error` kept) only if all of its words
//! fit, else it is dropped whole with `drop_full`; the packer never holds the core off. At 128 and
//! 256 bits, on the rust-hdl model and its Verilog in lockstep.

use std::collections::VecDeque;

use nanet_contract::packed::rx_meta::RxMeta;
use nanet_hdl::port::rx_packer::RxPacker;
use nanet_sim::design_ports;
use nanet_sim::engine::clocks::NET_CLOCK_PS;
use nanet_sim::engine::{Design, DesignSim, EngineKind};
use nanet_sim::world::tlp::BeatData;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

#[derive(Clone, Default)]
pub struct PkIn {
    reset: bool,
    data: u64,
    keep: u8,
    last: bool,
    error: bool,
    valid: bool,
    in_stream: u8,
    in_len: u16,
    in_src_ip: u32,
    in_src_port: u16,
    sop_time: u32,
    now: u32,
    fifo_used: u16,
}

#[derive(Clone, Default, Debug)]
pub struct PkOut<T> {
    ready: bool,
    fifo_data: T,
    fifo_flags: u8,
    fifo_valid: bool,
    drop_full: bool,
    forwarded: bool,
}

macro_rules! packer_design {
    ($design:ident, $bits:literal, $data:ty, $top:literal) => {
        design_ports! {
            pub $design for RxPacker<$bits>, top $top, inputs PkIn, outputs PkOut<$data>,
            clocks { clock }
            inputs {
                reset => reset, data => inp.data, keep => inp.keep, last => inp.last,
                error => inp.error, valid => inp.valid, in_stream => in_stream, in_len => in_len,
                in_src_ip => in_src_ip, in_src_port => in_src_port, sop_time => sop_time,
                now => now, fifo_used => fifo_used,
            }
            outputs {
                ready => inp.ready, fifo_data => fifo_data, fifo_flags => fifo_flags,
                fifo_valid => fifo_valid, drop_full => drop_full, forwarded => forwarded,
            }
        }
    };
}
packer_design!(Packer128, 128, u128, "nanet_rx_packer");
packer_design!(Packer256, 256, [u64; 4], "nanet_rx_packer_256");

/// A FIFO word: (data, meta, last, error).
type Word<T> = (T, bool, bool, bool);

#[test]
fn datagrams_enter_whole_or_are_dropped_whole() {
    enter_whole::<_, Packer128>();
    enter_whole::<_, Packer256>();
}

fn enter_whole<T: BeatData + Default + Clone, D: Design<In = PkIn, Out = PkOut<T>>>() {
    let word_bytes = T::VARIANT.beat_bytes();
    let mut rng = StdRng::seed_from_u64(6);
    let mut d = DesignSim::<D>::new(EngineKind::Both).unwrap_or_else(|e| panic!("{e}"));
    let clk = d.add_clock("net", 0, NET_CLOCK_PS);
    d.inputs.reset = true;
    d.tick(clk);
    d.inputs.reset = false;
    let mut expected: VecDeque<Word<T>> = VecDeque::new();
    let mut got: Vec<Word<T>> = vec![];
    let (mut dropped, mut forwarded, mut want_dropped) = (0, 0, 0);
    for k in 0..300u32 {
        let len = if rng.gen_bool(0.2) {
            rng.gen_range(0..=8)
        } else {
            rng.gen_range(1..=1472)
        };
        let bad = rng.gen_bool(0.1);
        // The FIFO words it takes: the meta word and at least one payload word (an empty datagram
        // still ends with a word flagged `last`).
        let need = 1 + (len as u16).div_ceil(word_bytes as u16).max(1);
        // Often right at the edge: exactly room, or one word short.
        let used = match rng.gen_range(0..4) {
            0 => 512 - need,
            1 => 513 - need,
            _ => rng.gen_range(0..=512u16),
        };
        let payload: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
        let mut beats: Vec<u64> = payload
            .chunks(8)
            .map(|c| {
                let mut b = [0u8; 8];
                b[..c.len()].copy_from_slice(c);
                u64::from_be_bytes(b)
            })
            .collect();
        if beats.is_empty() {
            // The core closes an empty datagram with an empty beat.
            beats.push(0);
        }
        let (stream, ip, sport, sop) = (k as u8 & 15, 0x0A00_0000 | k, 4000 + k as u16, 1000 * k);
        if used + need <= 512 {
            let meta = RxMeta {
                stream,
                len: len as u16,
                src_ip: ip,
                src_port: sport,
                sop_time: sop,
                hdr_delta: 7,
            }
            .encode();
            expected.push_back((T::from_low128(meta), true, false, false));
            // The payload words: the beats in network order, zeros after the last.
            let per_word = word_bytes / 8;
            let words = beats.chunks(per_word).count();
            for (i, group) in beats.chunks(per_word).enumerate() {
                let last = i + 1 == words;
                let bytes: Vec<u8> = group.iter().flat_map(|b| b.to_be_bytes()).collect();
                expected.push_back((T::from_network_bytes(&bytes), false, last, last && bad));
            }
        } else {
            want_dropped += 1;
        }
        // The core shows a datagram's fields from its header's last beat on, a cycle or more
        // before the first payload beat (the last idle cycle here), and holds them.
        {
            let inp = &mut d.inputs;
            inp.valid = false;
            inp.in_stream = stream;
            inp.in_len = len as u16;
            inp.in_src_ip = ip;
            inp.in_src_port = sport;
            inp.sop_time = sop;
            inp.now = sop + 7;
            inp.fifo_used = used;
            let o = d.settle().clone();
            if o.fifo_valid {
                got.push(word(&o));
            }
            d.tick(clk);
        }
        for (i, b) in beats.iter().enumerate() {
            let inp = &mut d.inputs;
            inp.valid = true;
            inp.data = *b;
            inp.keep = if len == 0 { 0 } else { 0xFF };
            inp.last = i + 1 == beats.len();
            inp.error = inp.last && bad;
            // The datagram's fields, set above, held.
            let o = d.settle().clone();
            assert!(o.ready, "the packer never holds the core off");
            dropped += o.drop_full as u32;
            forwarded += o.forwarded as u32;
            if o.fifo_valid {
                got.push(word(&o));
            }
            d.tick(clk);
        }
        // The header of the next datagram: at least six idle cycles (the last one below).
        d.inputs.valid = false;
        for _ in 0..rng.gen_range(5..9) {
            let o = d.settle().clone();
            if o.fifo_valid {
                got.push(word(&o));
            }
            d.tick(clk);
        }
    }
    assert_eq!(dropped, want_dropped);
    assert_eq!(forwarded + dropped, 300);
    assert!(
        want_dropped > 20 && forwarded > 100,
        "a real mix: {want_dropped} dropped"
    );
    assert_eq!(got.len(), expected.len());
    for (i, (g, e)) in got.iter().zip(&expected).enumerate() {
        assert_eq!(g, e, "word {i}");
    }
}

fn word<T: Clone>(o: &PkOut<T>) -> Word<T> {
    let flags = o.fifo_flags;
    (
        o.fifo_data.clone(),
        flags & 4 != 0,
        flags & 2 != 0,
        flags & 1 != 0,
    )
}

//! Packer: datagrams from the offload core (64-bit beats, a beat per cycle, at least six idle
//! cycles between datagrams as the header takes, the datagram's fields shown from the last of
//! them) with random FIFO fill levels: a datagram goes into the FIFO whole (meta word, then two beats per word, the last word flagged, `error` kept) only if
//! all of its words fit, else it is dropped whole with `drop_full`; the packer never holds the core
//! off. On the rust-hdl model and its Verilog in lockstep.

use std::collections::VecDeque;

use nanet_contract::packed::rx_meta::RxMeta;
use nanet_hdl::port::rx_packer::RxPacker;
use nanet_sim::design_ports;
use nanet_sim::engine::clocks::NET_CLOCK_PS;
use nanet_sim::engine::{DesignSim, EngineKind};
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
pub struct PkOut {
    ready: bool,
    fifo_hi: u64,
    fifo_meta: u128,
    fifo_valid: bool,
    drop_full: bool,
    forwarded: bool,
}

design_ports! {
    pub PackerDesign for RxPacker, top "nanet_rx_packer", inputs PkIn, outputs PkOut,
    clocks { clock }
    inputs {
        reset => reset, data => inp.data, keep => inp.keep, last => inp.last, error => inp.error,
        valid => inp.valid, in_stream => in_stream, in_len => in_len, in_src_ip => in_src_ip,
        in_src_port => in_src_port, sop_time => sop_time, now => now, fifo_used => fifo_used,
    }
    outputs {
        ready => inp.ready, fifo_hi => fifo_hi, fifo_meta => fifo_meta, fifo_valid => fifo_valid,
        drop_full => drop_full, forwarded => forwarded,
    }
}

/// A FIFO word: (bits 127:64, bits 63:0, meta, last, error).
type Word = (u64, u64, bool, bool, bool);

#[test]
fn datagrams_enter_whole_or_are_dropped_whole() {
    let mut rng = StdRng::seed_from_u64(6);
    let mut d = DesignSim::<PackerDesign>::new(EngineKind::Both).unwrap_or_else(|e| panic!("{e}"));
    let clk = d.add_clock("net", 0, NET_CLOCK_PS);
    d.inputs.reset = true;
    d.tick(clk);
    d.inputs.reset = false;
    let mut expected: VecDeque<Word> = VecDeque::new();
    let mut got: Vec<Word> = vec![];
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
        let need = 1 + (len as u16).div_ceil(16).max(1);
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
            let (hi, lo) = ((meta >> 64) as u64, meta as u64);
            expected.push_back((hi, lo, true, false, false));
            let words = beats.chunks(2).count();
            for (i, pair) in beats.chunks(2).enumerate() {
                let last = i + 1 == words;
                expected.push_back((
                    pair[0],
                    *pair.get(1).unwrap_or(&0),
                    false,
                    last,
                    last && bad,
                ));
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

fn word(o: &PkOut) -> Word {
    let flags = (o.fifo_meta >> 64) as u8;
    (
        o.fifo_hi,
        o.fifo_meta as u64,
        flags & 4 != 0,
        flags & 2 != 0,
        flags & 1 != 0,
    )
}

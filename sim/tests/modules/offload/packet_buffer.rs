//! Store-and-forward packet buffer: random stalls on both sides, packets replayed byte-exact with
//! their ones' complement sum, error-ended packets discarded (or, with `keep_errors`, replayed with
//! their error), and with `drop_when_full` a packet
//! arriving while one is held is dropped whole and reported. On the rust-hdl model and its Verilog
//! in lockstep.

use nanet_hdl::offload::packet_buffer::PacketBuffer;
use nanet_sim::design_ports;
use nanet_sim::engine::clocks::NET_CLOCK_PS;
use nanet_sim::engine::pins::{StreamIn, StreamOut};
use nanet_sim::engine::{ClockId, DesignSim, EngineKind};
use nanet_sim::testbench::stream_bfm::{StreamSinkBfm, StreamSourceBfm};
use nanet_sim::traffic::packets::ones_complement_sum;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

#[derive(Clone, Default)]
pub struct BufIn {
    reset: bool,
    inp: StreamIn,
    out_ready: bool,
    play: bool,
    drop_when_full: bool,
    keep_errors: bool,
}

#[derive(Clone, Default, Debug)]
pub struct BufOut {
    inp_ready: bool,
    out: StreamOut,
    full: bool,
    dropped: bool,
    sum: u32,
}

design_ports! {
    pub BufferDesign for PacketBuffer, top "nanet_packet_buffer", inputs BufIn, outputs BufOut,
    clocks { clock }
    inputs {
        reset => reset,
        inp.data => inp.data, inp.keep => inp.keep, inp.last => inp.last,
        inp.error => inp.error, inp.valid => inp.valid,
        out_ready => out.ready, play => play, drop_when_full => drop_when_full,
        keep_errors => keep_errors,
    }
    outputs {
        inp_ready => inp.ready,
        out.data => out.data, out.keep => out.keep, out.last => out.last,
        out.error => out.error, out.valid => out.valid,
        full => full, dropped => dropped, sum => sum,
    }
}

struct Bench {
    d: DesignSim<BufferDesign>,
    clk: ClockId,
    src: StreamSourceBfm,
    sink: StreamSinkBfm,
    sums: Vec<u16>,
    /// Cycles the current packet has been held, counting this one.
    full_cycles: u32,
    dropped: usize,
}

impl Bench {
    fn new(stall: f64, drop_when_full: bool, keep_errors: bool, seed: u64) -> Self {
        let mut d =
            DesignSim::<BufferDesign>::new(EngineKind::Both).unwrap_or_else(|e| panic!("{e}"));
        let clk = d.add_clock("net", 0, NET_CLOCK_PS);
        d.inputs.drop_when_full = drop_when_full;
        d.inputs.keep_errors = keep_errors;
        d.inputs.reset = true;
        d.tick(clk);
        d.tick(clk);
        d.inputs.reset = false;
        Self {
            d,
            clk,
            src: StreamSourceBfm::new(stall, seed),
            sink: StreamSinkBfm::new(stall, seed + 1),
            sums: vec![],
            full_cycles: 0,
            dropped: 0,
        }
    }

    fn cycle(&mut self, play: bool) {
        let i = &mut self.d.inputs;
        self.src.drive(&mut i.inp);
        self.sink.drive(&mut i.out_ready);
        i.play = play;
        let o = self.d.settle().clone();
        self.src.sample(o.inp_ready);
        self.sink.sample(&o.out);
        // The held packet's sum, read at the earliest cycle it is promised: one after `full` rose.
        if o.full {
            self.full_cycles += 1;
            if self.full_cycles == 2 {
                let s = o.sum;
                let folded = (s & 0xFFFF) + (s >> 16);
                self.sums.push(((folded & 0xFFFF) + (folded >> 16)) as u16);
            }
        } else {
            self.full_cycles = 0;
        }
        if o.dropped {
            self.dropped += 1;
        }
        self.d.tick(self.clk);
    }
}

/// Packets of random lengths, every seventh ending with `error`: discarded, or with
/// `keep_errors` replayed in turn with `error` on their last beat (the UDP transmit checksum's
/// mode; mutation: the error bit not stored fails the second run).
#[test]
fn packets_are_replayed_byte_exact_with_their_sum_under_random_stalls() {
    for keep_errors in [false, true] {
        let mut rng = StdRng::seed_from_u64(4);
        let mut b = Bench::new(0.3, false, keep_errors, 4);
        let mut want = vec![];
        for i in 0..40 {
            let len = rng.gen_range(0..1500);
            let p: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
            let bad = i % 7 == 3;
            b.src.push_packet(&p, bad);
            if !bad || keep_errors {
                want.push((p, bad));
            }
        }
        let mut cycles = 0;
        while b.sink.packets.len() < want.len() {
            b.cycle(true);
            cycles += 1;
            assert!(cycles < 100_000, "buffer wedged");
        }
        for _ in 0..100 {
            b.cycle(true);
        }
        assert_eq!(
            b.sink.packets.len(),
            want.len(),
            "keep_errors {keep_errors}"
        );
        assert_eq!(b.sums.len(), want.len(), "one sum per held packet");
        for (i, (got, (p, bad))) in b.sink.packets.iter().zip(&want).enumerate() {
            assert_eq!(&got.bytes, p, "packet {i}, keep_errors {keep_errors}");
            assert_eq!(
                got.error, *bad,
                "packet {i}'s error, keep_errors {keep_errors}"
            );
            assert_eq!(b.sums[i], ones_complement_sum(p), "sum of packet {i}");
        }
    }
}

#[test]
fn a_packet_arriving_while_one_is_held_is_dropped_whole() {
    let mut b = Bench::new(0.0, true, false, 5);
    let first = vec![1u8; 100];
    b.src.push_packet(&first, false);
    b.src.push_packet(&[2u8; 50], false);
    b.src.push_packet(&[3u8; 9], false);
    for _ in 0..100 {
        b.cycle(false); // nothing is replayed: the first packet stays held
    }
    assert!(
        b.src.is_idle(),
        "with drop_when_full the input never stalls"
    );
    assert_eq!(b.dropped, 2);
    while b.sink.packets.is_empty() {
        b.cycle(true);
    }
    assert_eq!(b.sink.packets[0].bytes, first);
    b.src.push_packet(&[4u8; 20], false);
    for _ in 0..50 {
        b.cycle(true);
    }
    assert_eq!(
        b.sink.packets.len(),
        2,
        "the buffer takes packets again once empty"
    );
    assert_eq!(b.sink.packets[1].bytes, vec![4u8; 20]);
}

#[test]
fn an_overlong_packet_is_truncated_and_the_replay_still_ends() {
    let mut b = Bench::new(0.0, false, false, 6);
    let long: Vec<u8> = (0..3000).map(|i| i as u8).collect();
    b.src.push_packet(&long, false);
    b.src.push_packet(&[7u8; 16], false);
    let mut cycles = 0;
    while b.sink.packets.len() < 2 {
        b.cycle(true);
        cycles += 1;
        assert!(cycles < 10_000, "replay never ended");
    }
    assert_eq!(b.sink.packets[0].bytes, long[..2048].to_vec());
    assert_eq!(b.sink.packets[1].bytes, vec![7u8; 16]);
}

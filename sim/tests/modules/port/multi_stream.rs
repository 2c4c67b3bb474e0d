//! Multi-Stream: datagrams mapped to streams by destination port, unknown ports dropped whole and
//! counted, random stalls on both sides, table rewritten between datagrams. As the offload core
//! does, the bench shows a datagram's port from the cycle before its first beat on: it idles a
//! cycle after each datagram. On the rust-hdl model and its Verilog in lockstep.

use nanet_hdl::port::multi_stream::MultiStream;
use nanet_sim::design_ports;
use nanet_sim::engine::clocks::NET_CLOCK_PS;
use nanet_sim::engine::pins::{StreamIn, StreamOut};
use nanet_sim::engine::{ClockId, DesignSim, EngineKind};
use nanet_sim::testbench::stream_bfm::{StreamSinkBfm, StreamSourceBfm};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

#[derive(Clone, Default)]
pub struct MsIn {
    reset: bool,
    inp: StreamIn,
    in_dst_port: u16,
    out_ready: bool,
    tbl_write: bool,
    tbl_index: u8,
    tbl_port: u16,
    tbl_valid: bool,
}

#[derive(Clone, Default, Debug)]
pub struct MsOut {
    inp_ready: bool,
    out: StreamOut,
    out_stream: u8,
    drop_unknown_port: bool,
    tbl_read_valid: bool,
    tbl_read_port: u16,
}

design_ports! {
    pub MultiStreamDesign for MultiStream, top "nanet_multi_stream", inputs MsIn, outputs MsOut,
    clocks { clock }
    inputs {
        reset => reset,
        inp.data => inp.data, inp.keep => inp.keep, inp.last => inp.last,
        inp.error => inp.error, inp.valid => inp.valid,
        in_dst_port => in_dst_port, out_ready => out.ready,
        tbl_write => tbl_write, tbl_index => tbl_index, tbl_port => tbl_port,
        tbl_valid => tbl_valid,
    }
    outputs {
        inp_ready => inp.ready,
        out.data => out.data, out.keep => out.keep, out.last => out.last,
        out.error => out.error, out.valid => out.valid,
        out_stream => out_stream, drop_unknown_port => drop_unknown_port,
        tbl_read_valid => tbl_read_valid, tbl_read_port => tbl_read_port,
    }
}

struct Bench {
    d: DesignSim<MultiStreamDesign>,
    clk: ClockId,
    src: StreamSourceBfm,
    sink: StreamSinkBfm,
    /// Destination port of each queued datagram, and how many have been fully accepted.
    ports: Vec<u16>,
    accepted: usize,
    streams: Vec<u8>,
    drops: usize,
    /// The source idles this cycle (the next datagram's port is shown first).
    gap: bool,
}

impl Bench {
    fn new(stall: f64, seed: u64) -> Self {
        let mut d =
            DesignSim::<MultiStreamDesign>::new(EngineKind::Both).unwrap_or_else(|e| panic!("{e}"));
        let clk = d.add_clock("net", 0, NET_CLOCK_PS);
        d.inputs.reset = true;
        d.tick(clk);
        d.tick(clk);
        d.inputs.reset = false;
        Self {
            d,
            clk,
            src: StreamSourceBfm::new(stall, seed),
            sink: StreamSinkBfm::new(stall, seed + 1),
            ports: vec![],
            accepted: 0,
            streams: vec![],
            drops: 0,
            gap: true,
        }
    }

    fn set_entry(&mut self, index: u8, port: u16, valid: bool) {
        let i = &mut self.d.inputs;
        i.tbl_index = index;
        i.tbl_port = port;
        i.tbl_valid = valid;
        i.tbl_write = true;
        self.d.tick(self.clk);
        self.d.inputs.tbl_write = false;
        // A write applies to datagrams from two cycles on.
        self.gap = true;
    }

    fn entry(&mut self, index: u8) -> (bool, u16) {
        self.d.inputs.tbl_index = index;
        let o = self.d.settle();
        (o.tbl_read_valid, o.tbl_read_port)
    }

    fn send(&mut self, port: u16, payload: &[u8]) {
        self.send_ending(port, payload, false);
    }

    /// A datagram that ends with `error` when `bad` (the core found it bad at its end).
    fn send_ending(&mut self, port: u16, payload: &[u8], bad: bool) {
        self.ports.push(port);
        self.src.push_packet(payload, bad);
    }

    fn cycle(&mut self) {
        let gap = std::mem::take(&mut self.gap);
        let i = &mut self.d.inputs;
        i.inp = StreamIn::default();
        if !gap {
            self.src.drive(&mut i.inp);
        }
        i.in_dst_port = self.ports.get(self.accepted).copied().unwrap_or(0);
        self.sink.drive(&mut i.out_ready);
        let o = self.d.settle().clone();
        if !gap && self.src.sample(o.inp_ready) && self.d.inputs.inp.last {
            self.accepted += 1;
            self.gap = true;
        }
        let first = !self.sink.in_packet();
        if self.sink.sample(&o.out).is_some() && first {
            self.streams.push(o.out_stream);
        }
        if o.drop_unknown_port {
            self.drops += 1;
        }
        self.d.tick(self.clk);
    }

    fn drain(&mut self) {
        let mut n = 0;
        while !self.src.is_idle() || self.sink.in_packet() {
            self.cycle();
            n += 1;
            assert!(n < 100_000, "Multi-Stream wedged");
        }
        for _ in 0..4 {
            self.cycle();
        }
    }
}

#[test]
fn datagrams_go_to_the_stream_of_their_port_and_unknown_ports_are_dropped() {
    let mut rng = StdRng::seed_from_u64(3);
    for (stall, seed) in [(0.0, 1), (0.4, 2)] {
        let mut b = Bench::new(stall, seed);
        let table = [
            (0u8, 1000u16, true),
            (3, 2000, true),
            (15, 3000, true),
            (7, 4000, false),
        ];
        for (i, p, v) in table {
            b.set_entry(i, p, v);
        }
        assert_eq!(b.entry(3), (true, 2000));
        assert_eq!(b.entry(7), (false, 4000));
        assert_eq!(b.entry(9), (false, 0));
        let mut want = vec![];
        let mut unknown = 0;
        for n in 0..200 {
            let port = [1000, 2000, 3000, 4000, 5000][rng.gen_range(0..5)];
            let payload: Vec<u8> = (0..rng.gen_range(1..120)).map(|i| (i + n) as u8).collect();
            // A tenth end in error: passed on as they are, and for an unknown port not counted
            // (the core counts them under the reason they ended badly).
            let bad = rng.gen_bool(0.1);
            match table.iter().find(|e| e.1 == port && e.2) {
                Some(e) => want.push((e.0, payload.clone())),
                None => unknown += !bad as usize,
            }
            b.send_ending(port, &payload, bad);
        }
        b.drain();
        let got: Vec<(u8, Vec<u8>)> = b
            .streams
            .iter()
            .copied()
            .zip(b.sink.packets.iter().map(|p| p.bytes.clone()))
            .collect();
        assert_eq!(got, want);
        assert_eq!(b.drops, unknown, "every unknown port counted once");
    }
}

#[test]
fn a_table_change_between_datagrams_applies_to_the_next_one() {
    let mut b = Bench::new(0.2, 5);
    b.set_entry(2, 7777, true);
    b.send(7777, &[1; 40]);
    b.drain();
    b.set_entry(2, 7777, false);
    b.set_entry(5, 7777, true);
    b.send(7777, &[2; 40]);
    b.send(7777, &[3; 8]);
    b.drain();
    b.set_entry(5, 0, false);
    b.send(7777, &[4; 16]);
    b.drain();
    assert_eq!(b.streams, vec![2, 5, 5]);
    assert_eq!(b.sink.packets.len(), 3);
    assert_eq!(b.drops, 1);
}

#[test]
fn reset_invalidates_every_entry() {
    let mut b = Bench::new(0.0, 6);
    b.set_entry(4, 1234, true);
    b.d.inputs.reset = true;
    b.d.tick(b.clk);
    b.d.inputs.reset = false;
    assert!(!b.entry(4).0);
}

/// Every one of the 16 entries maps its own port to its own stream id, and when entries repeat a
/// port (a table the host library never writes) the highest of them wins, as documented: for
/// every entry as the highest, with random lower ones repeating its port.
#[test]
fn every_entry_decides_its_stream_and_the_highest_of_repeated_ports_wins() {
    let mut rng = StdRng::seed_from_u64(11);
    let mut b = Bench::new(0.3, 9);
    for i in 0..16u8 {
        b.set_entry(i, 100 + i as u16, true);
    }
    let mut want = vec![];
    for round in 0..3u8 {
        for i in 0..16u8 {
            want.push(i);
            b.send(100 + i as u16, &[round * 16 + i; 20]);
        }
    }
    b.drain();
    for top in 0..16u8 {
        for i in 0..16u8 {
            let repeats = i == top || (i < top && rng.gen_bool(0.5));
            b.set_entry(i, 9000, repeats);
        }
        want.push(top);
        b.send(9000, &[top; 20]);
        b.drain();
    }
    assert_eq!(b.streams, want);
}

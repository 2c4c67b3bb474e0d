//! The packet-stream slice (`StreamSkid`, `common/stream.rs`): random packets (some flagged in
//! error) through it with random stalls on both sides; every packet comes out once, unchanged and
//! in order, and everything it drives is a flip-flop (its outputs do not follow this cycle's
//! inputs). On the rust-hdl model and its Verilog in lockstep.

use nanet_hdl::common::stream::StreamSkid;
use nanet_sim::design_ports;
use nanet_sim::engine::clocks::NET_CLOCK_PS;
use nanet_sim::engine::pins::{StreamIn, StreamOut};
use nanet_sim::engine::{DesignSim, EngineKind};
use nanet_sim::testbench::stream_bfm::{StreamSinkBfm, StreamSourceBfm};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

#[derive(Clone, Default)]
pub struct SkidIn {
    reset: bool,
    inp: StreamIn,
    out_ready: bool,
}

#[derive(Clone, Default, Debug, PartialEq)]
pub struct SkidOut {
    in_ready: bool,
    out: StreamOut,
}

design_ports! {
    pub SkidDesign for StreamSkid, top "nanet_stream_skid", inputs SkidIn, outputs SkidOut,
    clocks { clock }
    inputs {
        reset => reset, inp.data => inp.data, inp.keep => inp.keep, inp.last => inp.last,
        inp.error => inp.error, inp.valid => inp.valid, out_ready => out.ready,
    }
    outputs {
        in_ready => inp.ready, out.data => out.data, out.keep => out.keep, out.last => out.last,
        out.error => out.error, out.valid => out.valid,
    }
}

#[test]
fn packets_pass_unchanged_and_in_order_under_stalls_from_flip_flops() {
    let mut rng = StdRng::seed_from_u64(7);
    let packets: Vec<(Vec<u8>, bool)> = (0..400)
        .map(|_| {
            let len = rng.gen_range(1..200);
            ((0..len).map(|_| rng.gen()).collect(), rng.gen_bool(0.1))
        })
        .collect();
    let mut d = DesignSim::<SkidDesign>::new(EngineKind::Both).unwrap_or_else(|e| panic!("{e}"));
    let clk = d.add_clock("net", 0, NET_CLOCK_PS);
    d.inputs.reset = true;
    d.tick(clk);
    d.inputs.reset = false;
    let mut src = StreamSourceBfm::new(0.3, 1);
    let mut sink = StreamSinkBfm::new(0.3, 2);
    for (p, e) in &packets {
        src.push_packet(p, *e);
    }
    for cycle in 0..40_000 {
        src.drive(&mut d.inputs.inp);
        sink.drive(&mut d.inputs.out_ready);
        let o = d.settle().clone();
        // Outputs from flip-flops: other inputs in the same cycle change nothing.
        let saved = d.inputs.clone();
        d.inputs.inp.valid = !saved.inp.valid;
        d.inputs.inp.data = !saved.inp.data;
        d.inputs.inp.keep = !saved.inp.keep;
        d.inputs.inp.last = !saved.inp.last;
        d.inputs.inp.error = !saved.inp.error;
        d.inputs.out_ready = !saved.out_ready;
        assert_eq!(d.settle(), &o, "cycle {cycle}: an output follows an input");
        d.inputs = saved;
        d.settle();
        src.sample(o.in_ready);
        sink.sample(&o.out);
        d.tick(clk);
        if sink.packets.len() == packets.len() {
            break;
        }
    }
    let out: Vec<(Vec<u8>, bool)> = sink
        .packets
        .iter()
        .map(|p| (p.bytes.clone(), p.error))
        .collect();
    assert_eq!(out, packets, "packets unchanged and in order");
}

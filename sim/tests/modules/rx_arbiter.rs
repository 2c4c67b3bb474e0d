//! Port arbiter: datagrams (meta word, payload words, last) from four FIFOs with random stalls on
//! every input and on the output; each datagram must come out whole from one port, every port's
//! datagrams in order, and with every port backlogged the grants must rotate (no port waits more
//! than one datagram of each other port). On the rust-hdl model and its Verilog in lockstep.

use std::collections::VecDeque;

use nanet_hdl::rx_arbiter::RxArbiter;
use nanet_sim::design_ports;
use nanet_sim::driver::CORE_CLOCK_PS;
use nanet_sim::engine::{DesignSim, EngineKind};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

#[derive(Clone, Default)]
pub struct ArbIn {
    reset: bool,
    hi: [u64; 4],
    meta: [u128; 4],
    valid: [bool; 4],
    out_ready: bool,
}

#[derive(Clone, Default, Debug)]
pub struct ArbOut {
    ready: [bool; 4],
    out_data: u128,
    out_meta: bool,
    out_last: bool,
    out_error: bool,
    out_port: u8,
    out_valid: bool,
}

macro_rules! arbiter_ports {
    ($($p:literal),*) => {
        design_ports! {
            pub ArbiterDesign for RxArbiter, top "nanet_rx_arbiter", inputs ArbIn, outputs ArbOut,
            clocks { clock }
            inputs {
                reset => reset,
                $(hi[$p] => inp[$p].hi, meta[$p] => inp[$p].meta, valid[$p] => inp[$p].valid,)*
                out_ready => out.ready,
            }
            outputs {
                $(ready[$p] => inp[$p].ready,)*
                out_data => out.data, out_meta => out.meta, out_last => out.last,
                out_error => out.error, out_port => out.port, out_valid => out.valid,
            }
        }
    };
}
arbiter_ports!(0, 1, 2, 3);

/// A FIFO word: (hi, {meta, last, error, lo}).
fn word(port: usize, pkt: usize, i: usize, n: usize) -> (u64, u128) {
    let hi = (port as u64) << 48 | (pkt as u64) << 16 | i as u64;
    let flags = (i == 0) as u128 * 4 + (i + 1 == n) as u128 * 2;
    (hi, flags << 64 | (hi as u128 ^ 0x5555))
}

/// Runs `per_port` datagrams per port; returns the ports in grant order.
fn run(per_port: usize, in_stall: f64, out_stall: f64, seed: u64) -> Vec<u8> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut d = DesignSim::<ArbiterDesign>::new(EngineKind::Both).unwrap_or_else(|e| panic!("{e}"));
    let clk = d.add_clock("core", 0, CORE_CLOCK_PS);
    d.inputs.reset = true;
    d.tick(clk);
    d.inputs.reset = false;
    let mut queues: Vec<VecDeque<(u64, u128)>> = (0..4)
        .map(|p| {
            (0..per_port)
                .flat_map(|k| {
                    let n = 2 + (k * 7 + p * 3) % 5;
                    (0..n).map(move |i| word(p, k, i, n))
                })
                .collect()
        })
        .collect();
    let total: usize = queues.iter().map(|q| q.len()).sum();
    let mut next_pkt = [0usize; 4];
    let mut grants = vec![];
    let mut current: Option<(u8, usize, usize)> = None;
    let mut got = 0;
    let mut cycles = 0;
    while got < total {
        for p in 0..4 {
            let i = &mut d.inputs;
            i.valid[p] = !queues[p].is_empty() && !(in_stall > 0.0 && rng.gen_bool(in_stall));
            if let Some((hi, meta)) = queues[p].front() {
                i.hi[p] = *hi;
                i.meta[p] = *meta;
            }
        }
        d.inputs.out_ready = !(out_stall > 0.0 && rng.gen_bool(out_stall));
        let o = d.settle().clone();
        for p in 0..4 {
            if d.inputs.valid[p] && o.ready[p] {
                assert_eq!(
                    o.out_port as usize, p,
                    "ready given to a port that is not selected"
                );
                queues[p].pop_front();
            }
        }
        if o.out_valid && d.inputs.out_ready {
            let hi = (o.out_data >> 64) as u64;
            let (port, pkt, i) = (
                (hi >> 48) as u8,
                (hi >> 16) as usize & 0xFFFF,
                hi as usize & 0xFFFF,
            );
            assert_eq!(port, o.out_port);
            assert_eq!(o.out_data as u64, hi ^ 0x5555);
            match current {
                None => {
                    assert!(o.out_meta && i == 0, "a datagram starts with its meta word");
                    assert_eq!(
                        pkt, next_pkt[port as usize],
                        "port {port}: datagrams in order"
                    );
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
            if o.out_last {
                next_pkt[port as usize] += 1;
                current = None;
            }
            got += 1;
        }
        d.tick(clk);
        cycles += 1;
        assert!(cycles < 50 * total + 1000, "arbiter wedged");
    }
    grants
}

#[test]
fn every_port_backlogged_grants_rotate() {
    let grants = run(20, 0.0, 0.0, 1);
    for (k, g) in grants.iter().enumerate() {
        assert_eq!(*g as usize, k % 4, "grant {k} went to port {g}: {grants:?}");
    }
}

#[test]
fn datagrams_stay_whole_and_in_order_under_random_stalls() {
    // `run` checks wholeness and order on every word; every datagram comes out.
    let grants = run(40, 0.3, 0.3, 2);
    assert_eq!(grants.len(), 160);
}

//! A port's transmit feeder, at 128 and 256 bits: host datagrams as the transmit engine writes
//! them into the port's FIFO (a header entry, payload entries of the width, the last one's tag
//! with its byte count and `error`; `nanet_contract::packed::tx_entry`), each counted whole only
//! once its last entry is in, interleaved with the packet generator's datagrams; random stalls on
//! the core's request and payload ports. Scoreboard: the core sees every datagram once, in the
//! order each source offered them, its request's fields and its payload byte-exact in the
//! stream's order (first byte in `data[63:56]`, `keep` from the top), `error` on a failed host
//! datagram's last beat only; no host datagram starts before it is whole. On the rust-hdl model
//! and its Verilog in lockstep.

use std::collections::VecDeque;

use nanet_contract::packed::tx_entry;
use nanet_hdl::port::tx_feeder::TxFeeder;
use nanet_sim::design_ports;
use nanet_sim::engine::clocks::NET_CLOCK_PS;
use nanet_sim::engine::{DesignSim, EngineKind};
use nanet_sim::width_designs;
use nanet_sim::world::tlp::BeatData;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

#[derive(Clone, Default)]
pub struct FIn<T> {
    reset: bool,
    q_data: T,
    q_tag: u8,
    q_valid: bool,
    q_whole: u32,
    gen_req_valid: bool,
    gen_dst_ip: u32,
    gen_src_port: u16,
    gen_dst_port: u16,
    gen_len: u16,
    gen_data: u64,
    gen_keep: u8,
    gen_last: bool,
    gen_valid: bool,
    generator_busy: bool,
    req_ready: bool,
    ready: bool,
}

#[derive(Clone, Default, Debug)]
pub struct FOut {
    q_ready: bool,
    gen_req_ready: bool,
    gen_ready: bool,
    req_valid: bool,
    dst_ip: u32,
    src_port: u16,
    dst_port: u16,
    len: u16,
    data: u64,
    keep: u8,
    last: bool,
    error: bool,
    valid: bool,
}

macro_rules! feeder_design {
    ($design:ident, $bits:literal, $data:ty, $top:literal) => {
design_ports! {
    pub $design for TxFeeder<$bits>, top $top, inputs FIn<$data>, outputs FOut,
    clocks { clock }
    inputs {
        reset => reset, q_data => q_data, q_tag => q_tag, q_valid => q_valid,
        q_whole => q_whole, gen_req_valid => generator.req_valid,
        gen_dst_ip => generator.dst_ip, gen_src_port => generator.src_port,
        gen_dst_port => generator.dst_port, gen_len => generator.len,
        gen_data => generator.payload.data, gen_keep => generator.payload.keep,
        gen_last => generator.payload.last, gen_valid => generator.payload.valid,
        generator_busy => generator_busy, req_ready => out.req_ready,
        ready => out.payload.ready,
    }
    outputs {
        q_ready => q_ready, gen_req_ready => generator.req_ready,
        gen_ready => generator.payload.ready, req_valid => out.req_valid, dst_ip => out.dst_ip,
        src_port => out.src_port, dst_port => out.dst_port, len => out.len,
        data => out.payload.data, keep => out.payload.keep, last => out.payload.last,
        error => out.payload.error, valid => out.payload.valid,
    }
}
    };
}
feeder_design!(Feeder128, 128, u128, "nanet_tx_feeder");
feeder_design!(Feeder256, 256, [u64; 4], "nanet_tx_feeder_256");

width_designs! {
    trait Width: In = FIn<Self::Beat>, Out = FOut;
    Feeder128 => u128, Feeder256 => [u64; 4]
}

/// A datagram as the core must see it.
#[derive(Clone, Debug, PartialEq)]
struct Datagram {
    dst_ip: u32,
    src_port: u16,
    dst_port: u16,
    payload: Vec<u8>,
    error: bool,
}

/// A host datagram's FIFO entries: `(entry, tag)`.
fn host_entries<T: BeatData>(dg: &Datagram) -> Vec<(T, u8)> {
    use tx_entry::tag;
    let header = tx_entry::DST_PORT.put(dg.dst_port as u128)
        | tx_entry::SRC_PORT.put(dg.src_port as u128)
        | tx_entry::DST_IP.put(dg.dst_ip as u128)
        | tx_entry::LEN.put(dg.payload.len() as u128);
    let mut entries = vec![(T::from_low128(header), tag::HEADER)];
    let chunks: Vec<&[u8]> = dg.payload.chunks(T::VARIANT.beat_bytes()).collect();
    for (k, chunk) in chunks.iter().enumerate() {
        let t = if k + 1 == chunks.len() {
            (tag::KIND.put(tag::LAST as u128)
                | tag::LAST_BYTES_M1.put(chunk.len() as u128 - 1)
                | tag::ERROR.put(dg.error as u128)) as u8
        } else {
            tag::PAYLOAD
        };
        entries.push((T::from_le_bytes(chunk), t));
    }
    entries
}

#[test]
fn host_and_generator_datagrams_reach_the_core_whole_and_in_order() {
    feeder_run::<Feeder128>(5);
    feeder_run::<Feeder256>(6);
}

fn feeder_run<D: Width>(seed: u64) {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut d = DesignSim::<D>::new(EngineKind::Both).unwrap_or_else(|e| panic!("{e}"));
    let clk = d.add_clock("net", 0, NET_CLOCK_PS);
    d.inputs.reset = true;
    d.tick(clk);
    d.tick(clk);
    d.inputs.reset = false;

    let mut random_datagram = |host: bool| {
        // Lengths around the width's multiples, and any length up to 1472.
        let len = match rng.gen_range(0..4) {
            0 => rng.gen_range(1..=40),
            1 => 32 * rng.gen_range(1..=10) + rng.gen_range(0..3) - 1,
            _ => rng.gen_range(1..=1472),
        };
        Datagram {
            dst_ip: rng.gen(),
            src_port: rng.gen(),
            // Host datagrams to ports below 30000, the generator's above 40000.
            dst_port: if host {
                rng.gen_range(0..30000)
            } else {
                rng.gen_range(40000..=65535)
            },
            payload: (0..len).map(|_| rng.gen()).collect(),
            error: host && rng.gen_bool(0.15),
        }
    };
    const N_HOST: usize = 150;
    const N_GEN: usize = 40;
    let host: Vec<Datagram> = (0..N_HOST).map(|_| random_datagram(true)).collect();
    let gen: Vec<Datagram> = (0..N_GEN).map(|_| random_datagram(false)).collect();

    // The FIFO: entries the engine has written, and how many datagrams are whole in it.
    let mut fifo: VecDeque<(D::Beat, u8)> = VecDeque::new();
    let (mut written, mut whole) = (0usize, 0u32);
    let mut pending: VecDeque<(D::Beat, u8)> = VecDeque::new();
    // The generator: the next datagram, its payload's beats once its request is taken.
    let (mut gen_next, mut gen_beats) = (0usize, VecDeque::<(u64, u8, bool)>::new());
    let mut got: Vec<Datagram> = vec![];
    let mut current: Option<Datagram> = None;
    // Host datagrams taken by the feeder (header entries), against those whole at the time.
    let mut headers_taken = 0u32;
    let mut gen_taken = false;
    for cycle in 0..400_000u64 {
        // The engine writes a datagram's entries into the FIFO at its own pace; the count of
        // whole datagrams follows the last entry a few cycles late (a synchronizer).
        if pending.is_empty() && written < N_HOST && fifo.len() < 200 && rng.gen_bool(0.3) {
            pending.extend(host_entries::<D::Beat>(&host[written]));
            written += 1;
        }
        if !pending.is_empty() && rng.gen_bool(0.7) {
            let e = pending.pop_front().unwrap();
            fifo.push_back(e);
            if tx_entry::tag::KIND.get(e.1 as u128) == tx_entry::tag::LAST as u128 {
                whole += 1;
            }
        }
        let i = &mut d.inputs;
        if cycle % 3 == 0 {
            i.q_whole = whole;
        }
        i.q_valid = !fifo.is_empty();
        if let Some((data, tag)) = fifo.front() {
            (i.q_data, i.q_tag) = (*data, *tag);
        }
        // The generator offers a request now and then; its payload follows once taken.
        i.generator_busy = !gen_beats.is_empty();
        // (A request, once offered, stays until taken.)
        i.gen_req_valid |= gen_beats.is_empty() && gen_next < N_GEN && cycle % 500 < 50;
        if gen_next < N_GEN {
            let g = &gen[gen_next];
            (i.gen_dst_ip, i.gen_src_port, i.gen_dst_port) = (g.dst_ip, g.src_port, g.dst_port);
            i.gen_len = g.payload.len() as u16;
        }
        i.gen_valid = false;
        if let Some((data, keep, last)) = gen_beats.front() {
            (i.gen_data, i.gen_keep, i.gen_last) = (*data, *keep, *last);
            i.gen_valid = rng.gen_bool(0.9);
        }
        i.req_ready = rng.gen_bool(0.5);
        i.ready = rng.gen_bool(0.8);
        let o = d.settle().clone();
        let i = &d.inputs;
        if o.q_ready && i.q_valid {
            let (_, tag) = fifo.pop_front().unwrap();
            if tag == tx_entry::tag::HEADER {
                headers_taken += 1;
                assert!(
                    headers_taken <= i.q_whole,
                    "cycle {cycle}: a host datagram started before it was whole"
                );
            }
        }
        if o.gen_req_ready && i.gen_req_valid {
            let g = &gen[gen_next];
            for (k, chunk) in g.payload.chunks(8).enumerate() {
                let mut b = [0u8; 8];
                b[..chunk.len()].copy_from_slice(chunk);
                let keep = (0xFF00u16 >> chunk.len()) as u8;
                let last = (k + 1) * 8 >= g.payload.len();
                gen_beats.push_back((u64::from_be_bytes(b), keep, last));
            }
            gen_next += 1;
            gen_taken = true;
        }
        if o.gen_ready && i.gen_valid {
            gen_beats.pop_front();
        }
        if o.req_valid && i.req_ready {
            assert!(
                current.is_none(),
                "cycle {cycle}: a request inside a datagram"
            );
            current = Some(Datagram {
                dst_ip: o.dst_ip,
                src_port: o.src_port,
                dst_port: o.dst_port,
                payload: Vec::with_capacity(o.len as usize),
                error: false,
            });
            // The request's length, kept in the payload's capacity's place: checked at the end.
            got.push(Datagram {
                payload: vec![0; o.len as usize],
                ..current.clone().unwrap()
            });
        }
        if o.valid && i.ready {
            let dg = current
                .as_mut()
                .unwrap_or_else(|| panic!("cycle {cycle}: payload outside a datagram"));
            assert!(
                o.last || o.keep == 0xFF,
                "cycle {cycle}: a partial beat not last"
            );
            assert!(
                !o.error || o.last,
                "cycle {cycle}: error on a beat not last"
            );
            let n = o.keep.leading_ones() as usize;
            assert_eq!(
                o.keep,
                (0xFF00u16 >> n) as u8,
                "cycle {cycle}: keep not from the top"
            );
            dg.payload.extend_from_slice(&o.data.to_be_bytes()[..n]);
            if o.last {
                let mut dg = current.take().unwrap();
                dg.error = o.error;
                let req = got.last_mut().unwrap();
                assert_eq!(req.payload.len(), dg.payload.len(), "request length");
                *req = dg;
            }
        }
        if std::mem::take(&mut gen_taken) {
            d.inputs.gen_req_valid = false;
        }
        d.tick(clk);
        if got.len() == N_HOST + N_GEN && current.is_none() {
            break;
        }
    }
    let (got_host, got_gen): (Vec<Datagram>, Vec<Datagram>) =
        got.into_iter().partition(|dg| dg.dst_port < 30000);
    assert_eq!(got_gen.len(), N_GEN, "generator datagrams");
    assert_eq!(got_host.len(), N_HOST, "host datagrams");
    for (k, (g, w)) in got_gen.iter().zip(&gen).enumerate() {
        assert_eq!(g, w, "generator datagram {k}");
    }
    for (k, (g, w)) in got_host.iter().zip(&host).enumerate() {
        assert_eq!(g, w, "host datagram {k}");
    }
    assert!(host.iter().any(|dg| dg.error), "no failed host datagram");
}

//! The differential check itself: the rust-hdl model and its generated Verilog (Verilator) run in
//! lockstep, every output compared after every settle.

use nanet_sim::check::reference::{classify_rx, RxOutcome};
use nanet_sim::design_ports;
use nanet_sim::engine::{DesignSim, EngineKind};
use nanet_sim::testbench::core::{CoreBench, TxDatagram};
use nanet_sim::traffic::packets::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rust_hdl::prelude::*;

/// `(a & b) == c` in Rust, `a & (b == c)` in Verilog: rust-hdl writes the expression without
/// parentheses, so the two disagree.
#[derive(LogicBlock, Default)]
pub struct Unparenthesised {
    pub clock: Signal<In, Clock>,
    pub a: Signal<In, Bits<8>>,
    pub b: Signal<In, Bits<8>>,
    pub c: Signal<In, Bits<8>>,
    pub y: Signal<Out, Bit>,
    q: DFF<Bit>,
}

impl Logic for Unparenthesised {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, q);
        self.q.d.next = self.a.val() & self.b.val() == self.c.val();
        self.y.next = self.q.q.val();
    }
}

/// The same with the parentheses the rules ask for.
#[derive(LogicBlock, Default)]
pub struct Parenthesised {
    pub clock: Signal<In, Clock>,
    pub a: Signal<In, Bits<8>>,
    pub b: Signal<In, Bits<8>>,
    pub c: Signal<In, Bits<8>>,
    pub y: Signal<Out, Bit>,
    q: DFF<Bit>,
}

impl Logic for Parenthesised {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, q);
        self.q.d.next = (self.a.val() & self.b.val()) == self.c.val();
        self.y.next = self.q.q.val();
    }
}

#[derive(Clone, Default)]
pub struct Abc {
    a: u8,
    b: u8,
    c: u8,
}

#[derive(Clone, Default, Debug)]
pub struct Y {
    y: bool,
}

nanet_hdl::as_block!(Unparenthesised, Parenthesised, TwoDomains);

design_ports! {
    pub UnparenthesisedDesign for Unparenthesised, top "nanet_test_unparenthesised", inputs Abc, outputs Y,
    clocks { clock }
    inputs { a => a, b => b, c => c }
    outputs { y => y }
}

design_ports! {
    pub ParenthesisedDesign for Parenthesised, top "nanet_test_parenthesised", inputs Abc, outputs Y,
    clocks { clock }
    inputs { a => a, b => b, c => c }
    outputs { y => y }
}

#[test]
fn lockstep_catches_a_precedence_bug_and_names_the_signal() {
    let mut d =
        DesignSim::<UnparenthesisedDesign>::new(EngineKind::Both).unwrap_or_else(|e| panic!("{e}"));
    let clk = d.add_clock("clk", 0, 10_000);
    let mut rng = StdRng::seed_from_u64(1);
    let mut mismatch = None;
    for _ in 0..100 {
        d.inputs = Abc {
            a: rng.gen(),
            b: rng.gen(),
            c: rng.gen(),
        };
        if let Err(m) = d.try_tick(clk) {
            mismatch = Some(m);
            break;
        }
    }
    let m = mismatch.expect("the differential run must catch the precedence bug");
    assert_eq!(m.signal, "y");
    assert_ne!(m.rusthdl, m.verilator);
    let text = m.to_string();
    assert!(text.contains("cycle") && text.contains("`y`"), "{text}");
}

#[test]
fn lockstep_is_quiet_on_the_correct_design() {
    let mut d =
        DesignSim::<ParenthesisedDesign>::new(EngineKind::Both).unwrap_or_else(|e| panic!("{e}"));
    let clk = d.add_clock("clk", 0, 10_000);
    let mut rng = StdRng::seed_from_u64(1);
    for _ in 0..500 {
        let a: u8 = rng.gen();
        // Make equality happen often.
        d.inputs = Abc {
            a,
            b: rng.gen(),
            c: if rng.gen_bool(0.5) { a } else { rng.gen() },
        };
        d.try_tick(clk).unwrap_or_else(|m| panic!("{m}"));
    }
}

/// A long random mix through the whole offload core, on both engines in lockstep: good and
/// malformed frames, back to back, ARP and ping, user-side stalls, and transmissions.
#[test]
fn offload_core_model_and_verilog_agree_on_a_long_random_mix() {
    let us = Endpoint::new([0x02, 0x4E, 0x41, 0x4E, 0x45, 0x01], [10, 1, 0, 10]);
    let peer = Endpoint::new([0x02, 0, 0, 0, 0, 0x20], [10, 1, 0, 20]);
    let mut b = CoreBench::with_engine(EngineKind::Both, 0.3, 42);
    b.configure(&us, [255, 255, 255, 0], [10, 1, 0, 1]);
    let mut rng = StdRng::seed_from_u64(42);
    let mut expected = 0;
    for i in 0..600u32 {
        let len = rng.gen_range(0..700);
        let payload: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
        let (mut f, mut err) = match rng.gen_range(0..12) {
            0 => (arp_request(&peer, us.ip), false),
            1 => (
                icmp_echo_request(&peer, &us, 1, i as u16, &payload[..len.min(200)]),
                false,
            ),
            2 => (
                (0..rng.gen_range(1..120)).map(|_| rng.gen()).collect(),
                false,
            ),
            _ => (
                udp_frame(&peer, &us, 1000 + i as u16, 2000, &payload),
                false,
            ),
        };
        match rng.gen_range(0..8) {
            0 => err = true,
            1 => {
                let k = rng.gen_range(0..f.len());
                f[k] ^= 1 << rng.gen_range(0..8);
            }
            2 => f.truncate(rng.gen_range(1..=f.len())),
            _ => {}
        }
        if matches!(
            classify_rx(&f, err, us.mac, us.ip_u32(), 0xFFFF_FF00),
            RxOutcome::Udp { .. }
        ) {
            expected += 1;
        }
        b.link_rx.push(f, err);
        if i % 25 == 0 {
            b.send(TxDatagram {
                dst_ip: peer.ip_u32(),
                src_port: 7,
                dst_port: 8,
                payload: payload[..len.min(300)].to_vec(),
            });
        }
    }
    let done = b.run_until(2_000_000, |b| b.link_rx.is_idle() && b.tx_pending() == 0);
    assert!(done, "traffic did not drain");
    b.run(2_000);
    assert_eq!(b.rx.iter().filter(|d| !d.error).count(), expected);
}

/// A counter per clock domain, crossing into the other domain through a register.
#[derive(LogicBlock, Default)]
pub struct TwoDomains {
    pub net_clock: Signal<In, Clock>,
    pub core_clock: Signal<In, Clock>,
    pub enable: Signal<In, Bit>,
    pub net_count: Signal<Out, Bits<16>>,
    pub core_count: Signal<Out, Bits<16>>,
    pub seen_in_core: Signal<Out, Bits<16>>,
    net: DFF<Bits<16>>,
    core: DFF<Bits<16>>,
    sampled: DFF<Bits<16>>,
}

impl Logic for TwoDomains {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, net_clock, net);
        dff_setup!(self, core_clock, core, sampled);
        if self.enable.val() {
            self.net.d.next = self.net.q.val() + 1;
            self.core.d.next = self.core.q.val() + 1;
        }
        self.sampled.d.next = self.net.q.val();
        self.net_count.next = self.net.q.val();
        self.core_count.next = self.core.q.val();
        self.seen_in_core.next = self.sampled.q.val();
    }
}

#[derive(Clone, Default)]
pub struct Enable {
    enable: bool,
}

#[derive(Clone, Default, Debug)]
pub struct Counts {
    net: u16,
    core: u16,
    seen: u16,
}

design_ports! {
    pub TwoDomainsDesign for TwoDomains, top "nanet_test_two_domains", inputs Enable, outputs Counts,
    clocks { net_clock, core_clock }
    inputs { enable => enable }
    outputs { net => net_count, core => core_count, seen => seen_in_core }
}

#[test]
fn two_clock_domains_step_the_same_on_both_engines() {
    use nanet_sim::engine::clocks::{CORE_CLOCK_PS, NET_CLOCK_PS};
    let mut d =
        DesignSim::<TwoDomainsDesign>::new(EngineKind::Both).unwrap_or_else(|e| panic!("{e}"));
    let net = d.add_clock("net", 0, NET_CLOCK_PS);
    let core = d.add_clock("core", 1, CORE_CLOCK_PS);
    d.inputs.enable = true;
    for _ in 0..1000 {
        d.try_tick(net).unwrap_or_else(|m| panic!("{m}"));
    }
    let o = d.settle().clone();
    // Counting started at the first edge of each domain; the engines agreed at every settle.
    assert_eq!(o.net as u64, d.cycles(net));
    assert_eq!(o.core as u64, d.cycles(core));
    assert_eq!(
        d.cycles(core),
        1599,
        "250 MHz edges during 1000 edges at 156.25 MHz"
    );
    assert!(
        o.seen <= o.net && o.net - o.seen <= 2,
        "the core domain samples the net counter"
    );
}

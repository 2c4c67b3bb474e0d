//! Testbench harness of the receive engine (`RxParser`) alone: a stream source and sink with random
//! stalls, outcome collection and a check against the reference model, on the rust-hdl model and
//! its Verilog in lockstep. Used by the module tests.

use nanet_contract::DropReason;
use nanet_hdl::offload::rx_parser::{RxDrop, RxParser};

use crate::check::drop_reason::drop_reason;
use crate::check::reference::{classify_rx, RxOutcome};
use crate::design_ports;
use crate::engine::clocks::NET_CLOCK_PS;
use crate::engine::pins::{StreamIn, StreamOut};
use crate::engine::{ClockId, DesignSim, EngineKind};
use crate::testbench::stream_bfm::{StreamSinkBfm, StreamSourceBfm};
use crate::traffic::packets::Endpoint;

#[derive(Clone, Default)]
pub struct ParserIn {
    pub reset: bool,
    pub inp: StreamIn,
    pub our_mac: u64,
    pub our_ip: u32,
    pub our_netmask: u32,
    pub out_ready: bool,
}

#[derive(Clone, Default, Debug)]
pub struct ParserOut {
    pub inp_ready: bool,
    pub out: StreamOut,
    pub out_icmp: bool,
    pub out_src_ip: u32,
    pub out_src_port: u16,
    pub out_dst_port: u16,
    pub out_len: u16,
    pub done: bool,
    pub delivered: bool,
    pub arp: bool,
    pub icmp_echo: bool,
    pub dropped: bool,
    pub drop_reason: RxDrop,
    pub arp_is_request: bool,
    pub arp_sender_mac: u64,
    pub arp_sender_ip: u32,
}

design_ports! {
    pub RxParserDesign for RxParser, top "nanet_rx_parser", inputs ParserIn, outputs ParserOut,
    clocks { clock }
    inputs {
        reset => reset,
        inp.data => inp.data, inp.keep => inp.keep, inp.last => inp.last,
        inp.error => inp.error, inp.valid => inp.valid,
        our_mac => our_mac, our_ip => our_ip, our_netmask => our_netmask, out_ready => out.ready,
    }
    outputs {
        inp_ready => inp.ready,
        out.data => out.data, out.keep => out.keep, out.last => out.last,
        out.error => out.error, out.valid => out.valid,
        out_icmp => out_icmp, out_src_ip => out_src_ip, out_src_port => out_src_port,
        out_dst_port => out_dst_port, out_len => out_len,
        done => done, delivered => delivered, arp => arp, icmp_echo => icmp_echo,
        dropped => dropped, drop_reason => drop_reason,
        arp_is_request => arp_is_request, arp_sender_mac => arp_sender_mac,
        arp_sender_ip => arp_sender_ip,
    }
}

/// What the parser reported for one frame.
#[derive(Debug, Clone, PartialEq)]
pub enum Seen {
    Delivered,
    Arp {
        request: bool,
        sender_mac: u64,
        sender_ip: u32,
    },
    Icmp,
    Drop(DropReason),
}

/// The parser bench's subnet: a /24 around its address.
pub const SUBNET_MASK: u32 = 0xFFFF_FF00;

pub struct RxParserBench {
    pub us: Endpoint,
    pub d: DesignSim<RxParserDesign>,
    pub clk: ClockId,
    pub src: StreamSourceBfm,
    pub sink: StreamSinkBfm,
    pub outcomes: Vec<Seen>,
    /// Sideband seen with the first beat of each output packet: (source IP, source port,
    /// destination port, length, is ICMP echo data).
    pub sidebands: Vec<(u32, u16, u16, u16, bool)>,
}

impl RxParserBench {
    pub fn new(us: Endpoint, in_stall: f64, out_stall: f64, seed: u64) -> Self {
        let mut d =
            DesignSim::<RxParserDesign>::new(EngineKind::Both).unwrap_or_else(|e| panic!("{e}"));
        let clk = d.add_clock("net", 0, NET_CLOCK_PS);
        d.inputs.our_mac = us.mac_u64();
        d.inputs.our_ip = us.ip_u32();
        d.inputs.our_netmask = SUBNET_MASK;
        d.inputs.reset = true;
        d.tick(clk);
        d.tick(clk);
        d.inputs.reset = false;
        Self {
            us,
            d,
            clk,
            src: StreamSourceBfm::new(in_stall, seed),
            sink: StreamSinkBfm::new(out_stall, seed ^ 0x5555),
            outcomes: vec![],
            sidebands: vec![],
        }
    }

    pub fn cycle(&mut self) {
        self.src.drive(&mut self.d.inputs.inp);
        self.sink.drive(&mut self.d.inputs.out_ready);
        let o = self.d.settle().clone();
        self.src.sample(o.inp_ready);
        let starting = !self.sink.in_packet();
        if self.sink.sample(&o.out).is_some() && starting {
            self.sidebands.push((
                o.out_src_ip,
                o.out_src_port,
                o.out_dst_port,
                o.out_len,
                o.out_icmp,
            ));
        }
        if o.done {
            let n = [o.delivered, o.arp, o.icmp_echo, o.dropped]
                .iter()
                .filter(|x| **x)
                .count();
            assert_eq!(n, 1, "exactly one outcome per frame");
            self.outcomes.push(if o.delivered {
                Seen::Delivered
            } else if o.arp {
                Seen::Arp {
                    request: o.arp_is_request,
                    sender_mac: o.arp_sender_mac,
                    sender_ip: o.arp_sender_ip,
                }
            } else if o.icmp_echo {
                Seen::Icmp
            } else {
                Seen::Drop(drop_reason(o.drop_reason))
            });
        }
        self.d.tick(self.clk);
    }

    /// Sends every frame and runs until all outcomes are in; returns the cycles spent.
    pub fn run(&mut self, frames: &[(Vec<u8>, bool)]) -> u64 {
        for (f, e) in frames {
            self.src.push_packet(f, *e);
        }
        let start = self.d.cycles(self.clk);
        let limit = 200 + 40 * frames.iter().map(|f| f.0.len() as u64 / 8 + 4).sum::<u64>();
        while self.outcomes.len() < frames.len() || !self.src.is_idle() || self.sink.in_packet() {
            self.cycle();
            assert!(
                self.d.cycles(self.clk) - start < limit,
                "parser wedged: {} of {} outcomes",
                self.outcomes.len(),
                frames.len()
            );
        }
        for _ in 0..8 {
            self.cycle();
        }
        self.d.cycles(self.clk) - start
    }

    /// Checks outcomes and output against the reference model.
    pub fn check(&self, frames: &[(Vec<u8>, bool)]) {
        assert_eq!(self.outcomes.len(), frames.len());
        let good = || {
            self.sidebands
                .iter()
                .zip(self.sink.packets.iter())
                .filter(|(_, p)| !p.error)
        };
        let mut udp = good().filter(|(s, _)| !s.4);
        let mut icmp = good().filter(|(s, _)| s.4);
        for (i, ((f, e), seen)) in frames.iter().zip(&self.outcomes).enumerate() {
            let want = classify_rx(f, *e, self.us.mac, self.us.ip_u32(), SUBNET_MASK);
            match (&want, seen) {
                (
                    RxOutcome::Udp {
                        src_ip,
                        src_port,
                        dst_port,
                        payload,
                    },
                    Seen::Delivered,
                ) => {
                    let (s, p) = udp
                        .next()
                        .expect("delivered datagram missing on the output");
                    assert_eq!(&p.bytes, payload, "frame {i}: payload");
                    assert_eq!(
                        *s,
                        (*src_ip, *src_port, *dst_port, payload.len() as u16, false),
                        "frame {i}: sideband"
                    );
                }
                (
                    RxOutcome::Arp {
                        request,
                        sender_mac,
                        sender_ip,
                    },
                    Seen::Arp {
                        request: r,
                        sender_mac: m,
                        sender_ip: ip,
                    },
                ) => {
                    assert_eq!((request, sender_ip), (r, ip), "frame {i}");
                    assert_eq!(
                        Endpoint::new(*sender_mac, [0; 4]).mac_u64(),
                        *m,
                        "frame {i}"
                    );
                }
                (RxOutcome::IcmpEcho, Seen::Icmp) => {
                    let (_, p) = icmp.next().expect("echo data missing on the output");
                    let total = u16::from_be_bytes([f[16], f[17]]) as usize;
                    assert_eq!(&p.bytes[..], &f[42..14 + total], "frame {i}: echo data");
                }
                (RxOutcome::Drop(r), Seen::Drop(s)) => assert_eq!(r, s, "frame {i}: drop reason"),
                _ => {
                    panic!("frame {i}: model says {want:?}, parser says {seen:?}\nframe: {f:02x?}")
                }
            }
        }
        assert!(
            udp.next().is_none(),
            "more datagrams delivered than expected"
        );
        assert!(
            icmp.next().is_none(),
            "more echo data delivered than expected"
        );
    }
}

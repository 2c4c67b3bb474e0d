//! Testbench harness of the receive engine (`RxParser`) alone: a stream source and sink with random
//! stalls, outcome collection and a check against the reference model. Used by the module tests,
//! the demo and the benchmarks.

use nanet_contract::DropReason;
use nanet_hdl::offload::rx_parser::RxParser;
use rust_hdl::core::prelude::*;

use crate::check::drop_reason::drop_reason;
use crate::check::reference::{classify_rx, RxOutcome};
use crate::engine::driver::{ClockId, CycleDriver, NET_CLOCK_PS};
use crate::testbench::stream_bfm::{StreamSinkBfm, StreamSourceBfm};
use crate::traffic::packets::Endpoint;

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

pub struct RxParserBench {
    pub us: Endpoint,
    pub d: CycleDriver<RxParser>,
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
        let mut d = CycleDriver::new(RxParser::default()).expect("design check");
        let clk = d.add_clock("net", NET_CLOCK_PS, |u, v| u.clock.next = Clock::from(v));
        d.uut.our_mac.next = us.mac_u64().into();
        d.uut.our_ip.next = (us.ip_u32() as u64).into();
        d.reset(clk, 2, |u, v| u.reset.next = v);
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
        self.src.drive_port(&mut self.d.uut.inp);
        self.sink.drive_port(&mut self.d.uut.out);
        self.d.settle();
        self.src.sample_port(&self.d.uut.inp);
        let starting = !self.sink.in_packet();
        if let Some(_) = self.sink.sample_port(&self.d.uut.out) {
            if starting {
                let u = &self.d.uut;
                self.sidebands.push((
                    u.out_src_ip.val().to_u32(),
                    u.out_src_port.val().to_u16(),
                    u.out_dst_port.val().to_u16(),
                    u.out_len.val().to_u16(),
                    u.out_icmp.val(),
                ));
            }
        }
        let u = &self.d.uut;
        if u.done.val() {
            let n = [
                u.delivered.val(),
                u.arp.val(),
                u.icmp_echo.val(),
                u.dropped.val(),
            ]
            .iter()
            .filter(|x| **x)
            .count();
            assert_eq!(n, 1, "exactly one outcome per frame");
            self.outcomes.push(if u.delivered.val() {
                Seen::Delivered
            } else if u.arp.val() {
                Seen::Arp {
                    request: u.arp_is_request.val(),
                    sender_mac: u.arp_sender_mac.val().to_u64(),
                    sender_ip: u.arp_sender_ip.val().to_u32(),
                }
            } else if u.icmp_echo.val() {
                Seen::Icmp
            } else {
                Seen::Drop(drop_reason(u.drop_reason.val()))
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
            let want = classify_rx(f, *e, self.us.mac, self.us.ip_u32());
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

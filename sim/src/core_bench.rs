//! Testbench harness of a whole offload core: the 10G link model on its MAC side, register access
//! through its register bus, and the user's RX output and TX input (with optional random stalls).

use std::collections::{BTreeMap, VecDeque};

use nanet_contract::offload::{mac_to_regs, Counter, Reg};
use nanet_hdl::offload_core::OffloadCore;
use rust_hdl::core::prelude::*;

use crate::driver::{ClockId, CycleDriver, NET_CLOCK_PS};
use crate::link::{LinkRx, LinkTx};
use crate::packets::Endpoint;
use crate::stream_bfm::{StreamSinkBfm, StreamSourceBfm};

/// A datagram delivered on the core's RX output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RxDatagram {
    pub src_ip: u32,
    pub src_port: u16,
    pub dst_port: u16,
    pub len: u16,
    pub payload: Vec<u8>,
    /// The frame ended badly: the consumer must discard it.
    pub error: bool,
    /// Cycle of the first payload beat.
    pub first_beat_cycle: u64,
}

/// A datagram for the core to send.
#[derive(Clone, Debug)]
pub struct TxDatagram {
    pub dst_ip: u32,
    pub src_port: u16,
    pub dst_port: u16,
    pub payload: Vec<u8>,
}

pub struct CoreBench {
    pub d: CycleDriver<OffloadCore>,
    pub clk: ClockId,
    pub link_rx: LinkRx,
    pub link_tx: LinkTx,
    rx_sink: StreamSinkBfm,
    rx_meta: Option<(u32, u16, u16, u16, u64)>,
    pub rx: VecDeque<RxDatagram>,
    tx_src: StreamSourceBfm,
    tx_reqs: VecDeque<TxDatagram>,
    /// Cycle each TX request was first presented, and the cycle it was accepted.
    pub tx_presented: Vec<u64>,
    pub tx_accepted: Vec<u64>,
    front_presented: Option<u64>,
}

impl CoreBench {
    /// A core out of reset; `stall` is the probability of a random stall on the user's RX and TX
    /// sides each cycle (the link side always runs at line rate).
    pub fn new(stall: f64, seed: u64) -> Self {
        let mut d = CycleDriver::new(OffloadCore::default()).expect("offload core design check");
        let clk = d.add_clock("net", NET_CLOCK_PS, |u, v| u.clock.next = Clock::from(v));
        let mut b = Self {
            d,
            clk,
            link_rx: LinkRx::default(),
            link_tx: LinkTx::default(),
            rx_sink: StreamSinkBfm::new(stall, seed),
            rx_meta: None,
            rx: VecDeque::new(),
            tx_src: StreamSourceBfm::new(stall, seed ^ 0xA5A5),
            tx_reqs: VecDeque::new(),
            tx_presented: vec![],
            tx_accepted: vec![],
            front_presented: None,
        };
        b.d.uut.reset.next = true;
        b.cycle();
        b.cycle();
        b.d.uut.reset.next = false;
        // The ARP cache clears itself after reset (256 cycles).
        b.run(260);
        b
    }

    pub fn cycle_count(&self) -> u64 {
        self.d.cycles(self.clk)
    }

    /// One clock cycle: drive every port, settle, sample every handshake, clock edge.
    pub fn cycle(&mut self) {
        let now = self.cycle_count();
        self.link_rx.drive(&mut self.d.uut.mac_rx);
        self.link_tx.drive(&mut self.d.uut.mac_tx);
        self.rx_sink.drive(&mut self.d.uut.rx);
        self.tx_src.drive(&mut self.d.uut.tx);
        match self.tx_reqs.front() {
            Some(r) => {
                self.front_presented.get_or_insert(now);
                let u = &mut self.d.uut;
                u.tx_req_valid.next = true;
                u.tx_dst_ip.next = (r.dst_ip as u64).into();
                u.tx_src_port.next = (r.src_port as u64).into();
                u.tx_dst_port.next = (r.dst_port as u64).into();
                u.tx_len.next = (r.payload.len() as u64).into();
            }
            None => self.d.uut.tx_req_valid.next = false,
        }
        self.d.settle();
        self.link_rx.sample(&self.d.uut.mac_rx, now);
        self.link_tx.sample(&self.d.uut.mac_tx, now);
        self.tx_src.sample(&self.d.uut.tx);
        if self.d.uut.tx_req_valid.val() && self.d.uut.tx_req_ready.val() {
            self.tx_reqs.pop_front();
            self.tx_accepted.push(now);
            self.tx_presented
                .push(self.front_presented.take().unwrap_or(now));
        }
        let starting = !self.rx_sink.in_packet();
        if self.rx_sink.sample(&self.d.uut.rx).is_some() {
            let u = &self.d.uut;
            if starting && self.rx_meta.is_none() {
                self.rx_meta = Some((
                    u.rx_src_ip.val().to_u32(),
                    u.rx_src_port.val().to_u16(),
                    u.rx_dst_port.val().to_u16(),
                    u.rx_len.val().to_u16(),
                    now,
                ));
            }
            if let Some(p) = self.rx_sink.packets.pop_front() {
                let (src_ip, src_port, dst_port, len, first) =
                    self.rx_meta.take().expect("sideband seen");
                self.rx.push_back(RxDatagram {
                    src_ip,
                    src_port,
                    dst_port,
                    len,
                    payload: p.bytes,
                    error: p.error,
                    first_beat_cycle: first,
                });
            }
        }
        self.d.tick(self.clk);
    }

    pub fn run(&mut self, cycles: u64) {
        for _ in 0..cycles {
            self.cycle();
        }
    }

    /// Runs until `done(self)` or `limit` cycles; returns whether `done` became true.
    pub fn run_until(&mut self, limit: u64, mut done: impl FnMut(&mut Self) -> bool) -> bool {
        for _ in 0..limit {
            if done(self) {
                return true;
            }
            self.cycle();
        }
        done(self)
    }

    pub fn write_reg(&mut self, word: u32, value: u32) {
        self.d.uut.reg_addr.next = (word as u64).into();
        self.d.uut.reg_wdata.next = (value as u64).into();
        self.d.uut.reg_write.next = true;
        self.cycle();
        self.d.uut.reg_write.next = false;
    }

    pub fn read_reg(&mut self, word: u32) -> u32 {
        self.d.uut.reg_addr.next = (word as u64).into();
        self.cycle();
        self.d.settle();
        self.d.uut.reg_rdata.val().to_u32()
    }

    /// Sets our MAC and IP, the netmask and the gateway.
    pub fn configure(&mut self, us: &Endpoint, netmask: [u8; 4], gateway: [u8; 4]) {
        let (hi, lo) = mac_to_regs(us.mac);
        self.write_reg(Reg::MacHi.word(), hi);
        self.write_reg(Reg::MacLo.word(), lo);
        self.write_reg(Reg::Ip.word(), us.ip_u32());
        self.write_reg(Reg::Netmask.word(), u32::from_be_bytes(netmask));
        self.write_reg(Reg::Gateway.word(), u32::from_be_bytes(gateway));
    }

    pub fn counter(&mut self, c: Counter) -> u32 {
        self.read_reg(c.word())
    }

    /// Every counter, by name.
    pub fn counters(&mut self) -> BTreeMap<&'static str, u32> {
        Counter::ALL
            .into_iter()
            .map(|c| (c.name(), self.counter(c)))
            .collect()
    }

    /// Queues a datagram for the core to send.
    pub fn send(&mut self, dgram: TxDatagram) {
        self.tx_src.push_packet(&dgram.payload, false);
        self.tx_reqs.push_back(dgram);
    }

    pub fn tx_pending(&self) -> usize {
        self.tx_reqs.len()
    }
}

//! Testbench harness of a whole offload core: the 10G link model on its MAC side, register access
//! through its register bus, and the user's RX output and TX input (with optional random stalls).
//! It runs on any engine: the rust-hdl model, the Verilog under Verilator, or both in lockstep
//! (`NANET_ENGINE`, or [`CoreBench::with_engine`]).

use std::collections::{BTreeMap, VecDeque};

use nanet_contract::offload::{mac_to_regs, Counter, Reg};

use crate::engine::clocks::NET_CLOCK_PS;
use crate::engine::designs::OffloadCoreDesign;
use crate::engine::{ClockId, DesignSim, EngineError, EngineKind};
use crate::testbench::stream_bfm::{StreamSinkBfm, StreamSourceBfm};
use crate::traffic::packets::Endpoint;
use crate::world::link::{LinkRx, LinkTx};

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
    /// Cycle of the last payload beat.
    pub last_beat_cycle: u64,
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
    pub d: DesignSim<OffloadCoreDesign>,
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
    /// A core out of reset on the engine named by `NANET_ENGINE`; `stall` is the probability of a
    /// random stall on the user's RX and TX sides each cycle (the link side always runs at line
    /// rate). Panics with the reason when the engine cannot be had (nothing is skipped silently).
    pub fn new(stall: f64, seed: u64) -> Self {
        let kind = EngineKind::from_env().unwrap_or_else(|e| panic!("{e}"));
        Self::with_engine(kind, stall, seed)
    }

    pub fn with_engine(kind: EngineKind, stall: f64, seed: u64) -> Self {
        Self::try_with_engine(kind, stall, seed).unwrap_or_else(|e| panic!("{e}"))
    }

    /// As [`CoreBench::with_engine`], with the engine's error (Verilator missing, build failed).
    pub fn try_with_engine(kind: EngineKind, stall: f64, seed: u64) -> Result<Self, EngineError> {
        Self::try_traced(kind, stall, seed, None)
    }

    /// As [`CoreBench::try_with_engine`], tracing every signal into the VCD `vcd` from reset on.
    pub fn try_traced(
        kind: EngineKind,
        stall: f64,
        seed: u64,
        vcd: Option<&std::path::Path>,
    ) -> Result<Self, EngineError> {
        let mut d = match vcd {
            Some(p) => DesignSim::<OffloadCoreDesign>::new_traced(kind, p)?,
            None => DesignSim::<OffloadCoreDesign>::new(kind)?,
        };
        let clk = d.add_clock("net", 0, NET_CLOCK_PS);
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
        b.d.inputs.reset = true;
        b.cycle();
        b.cycle();
        b.d.inputs.reset = false;
        // The ARP cache clears itself after reset (256 cycles).
        b.run(260);
        Ok(b)
    }

    pub fn cycle_count(&self) -> u64 {
        self.d.cycles(self.clk)
    }

    /// One clock cycle: drive every port, settle, sample every handshake, clock edge.
    pub fn cycle(&mut self) {
        let now = self.cycle_count();
        let i = &mut self.d.inputs;
        self.link_rx.drive(&mut i.mac_rx);
        self.link_tx.drive(&mut i.mac_tx_ready);
        self.rx_sink.drive(&mut i.rx_ready);
        self.tx_src.drive(&mut i.tx);
        match self.tx_reqs.front() {
            Some(r) => {
                self.front_presented.get_or_insert(now);
                i.tx_req_valid = true;
                i.tx_dst_ip = r.dst_ip;
                i.tx_src_port = r.src_port;
                i.tx_dst_port = r.dst_port;
                i.tx_len = r.payload.len() as u16;
            }
            None => i.tx_req_valid = false,
        }
        let o = self.d.settle().clone();
        let edge = self.d.next_edge_ps();
        self.link_rx.sample(o.mac_rx_ready, now, edge);
        self.link_tx.sample(&o.mac_tx, now, edge);
        // With a gap-free payload source the core must keep its frames gap-free too (with
        // stalls it passes the user's gaps on when the UDP checksum is off: its contract).
        if !self.tx_src.stalls() {
            assert!(
                self.link_tx.faults.is_empty(),
                "MAC transmit interface: {:?}",
                self.link_tx.faults
            );
        }
        self.tx_src.sample(o.tx_ready);
        if self.d.inputs.tx_req_valid && o.tx_req_ready {
            self.tx_reqs.pop_front();
            self.tx_accepted.push(now);
            self.tx_presented
                .push(self.front_presented.take().unwrap_or(now));
        }
        let starting = !self.rx_sink.in_packet();
        if self.rx_sink.sample(&o.rx).is_some() {
            if starting && self.rx_meta.is_none() {
                self.rx_meta = Some((o.rx_src_ip, o.rx_src_port, o.rx_dst_port, o.rx_len, now));
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
                    last_beat_cycle: now,
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
        self.d.inputs.reg_addr = word as u8;
        self.d.inputs.reg_wdata = value;
        self.d.inputs.reg_write = true;
        self.cycle();
        self.d.inputs.reg_write = false;
    }

    pub fn read_reg(&mut self, word: u32) -> u32 {
        self.d.inputs.reg_addr = word as u8;
        self.cycle();
        self.d.settle().reg_rdata
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

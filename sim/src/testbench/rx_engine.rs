//! Testbench of the receive engine with one CLOP engine (`nanet_hdl::rx::engine`, `RxEngine<1, _>`)
//! on any engine: packets of every port go into that one engine, as a source that interleaves the
//! ports would deliver them (meta beat + payload beats; the card's engines take one port each),
//! writes land in the host-memory model, and the host model (`rx_host`) programs the engine, polls the event ring,
//! checks every reported buffer and releases buffers. At 128 bits ([`RxEngineBench`]) and 256
//! ([`RxEngineBench256`]).

use std::collections::VecDeque;

use nanet_contract::packed::rx_meta::RxMeta;
use nanet_hdl::rx::engine::RxEngine;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::check::rx_host::{RxCard, RxHost, RxPacket};
use crate::design_ports;
use crate::engine::clocks::CORE_CLOCK_PS;
use crate::engine::{ClockId, DesignSim, EngineError, EngineKind};
use crate::world::dma_port::{datagram_words, WriteBeat};
use crate::world::host_mem::{MemoryPort, MemoryPreset};
use crate::world::tlp::BeatData;

#[derive(Clone, Debug, Default)]
pub struct RxIn<T = u128> {
    pub reset: bool,
    pub in_data: T,
    pub in_meta: bool,
    pub in_last: bool,
    pub in_error: bool,
    pub in_port: u8,
    pub in_valid: bool,
    pub reg_addr: u8,
    pub reg_wdata: u32,
    pub reg_write: bool,
    pub wr_ready: bool,
}

#[derive(Clone, Debug, Default)]
pub struct RxOut<T = u128> {
    pub now: u32,
    pub in_ready: bool,
    pub reg_rdata: u32,
    pub wr_valid: bool,
    /// The write-request beat on offer (with `wr_valid`).
    pub wr: WriteBeat<T>,
    pub irq: bool,
}

macro_rules! rx_engine_design {
    ($design:ident, $bits:literal, $data:ty, $top:literal) => {
        design_ports! {
            pub $design for RxEngine<1, $bits>, top $top, inputs RxIn<$data>,
            outputs RxOut<$data>,
            clocks { clock }
            inputs {
                reset => reset, in_data => inp[0].data, in_meta => inp[0].meta,
                in_last => inp[0].last, in_error => inp[0].error, in_port => inp[0].port,
                in_valid => inp[0].valid, reg_addr => reg_addr,
                reg_wdata => reg_wdata, reg_write => reg_write, wr_ready => wr.ready,
            }
            outputs {
                now => now, in_ready => inp[0].ready, reg_rdata => reg_rdata, wr_valid => wr.valid,
                wr.sop => wr.sop, wr.eop => wr.eop, wr.addr => wr.addr, wr.len => wr.len,
                wr.data => wr.data, irq => irq,
            }
        }
    };
}
rx_engine_design!(RxEngineDesign, 128, u128, "nanet_rx_engine");
rx_engine_design!(RxEngine256Design, 256, [u64; 4], "nanet_rx_engine_256");

crate::width_designs! {
    pub trait RxEngineWidth: In = RxIn<Self::Beat>, Out = RxOut<Self::Beat>;
    RxEngineDesign => u128, RxEngine256Design => [u64; 4]
}

/// The bench at 128 bits, and at 256.
pub type RxEngineBench = RxEngineBenchAt<RxEngineDesign>;
pub type RxEngineBench256 = RxEngineBenchAt<RxEngine256Design>;

pub struct RxEngineBenchAt<D: RxEngineWidth> {
    pub d: DesignSim<D>,
    clk: ClockId,
    pub host: RxHost,
    rng: StdRng,
    /// Probability that the packet source idles in a cycle.
    pub in_stall: f64,
    input: VecDeque<InWord<D::Beat>>,
}

/// A word as the interleaving source delivers it.
#[derive(Clone, Debug)]
struct InWord<T> {
    data: T,
    meta: bool,
    last: bool,
    error: bool,
    port: u8,
}

impl<D: RxEngineWidth> RxEngineBenchAt<D> {
    pub fn new(
        kind: EngineKind,
        preset: MemoryPreset,
        mem_stall: f64,
        seed: u64,
    ) -> Result<Self, EngineError> {
        let mut d = DesignSim::<D>::new(kind)?;
        let clk = d.add_clock("core", 0, CORE_CLOCK_PS);
        d.inputs.reset = true;
        for _ in 0..2 {
            d.tick(clk);
        }
        d.inputs.reset = false;
        let mut b = Self {
            d,
            clk,
            host: RxHost::new(
                MemoryPort::new(preset, mem_stall, seed).for_variant(D::Beat::VARIANT),
            ),
            rng: StdRng::seed_from_u64(seed ^ 0x5eed),
            in_stall: 0.0,
            input: VecDeque::new(),
        };
        b.start();
        Ok(b)
    }

    /// Queues a packet as the interleaving source delivers it: a meta beat (stream, length, source,
    /// SOP timestamp, 7 cycles to the header) and the payload beats; good ones are expected in
    /// their CLOP.
    pub fn send(&mut self, p: RxPacket) {
        // The frame's SOP at the MAC 7 cycles ago, its header parsed now.
        let meta = RxMeta {
            stream: p.stream,
            len: p.payload.len() as u16,
            src_ip: u32::from_be_bytes(p.src_ip),
            src_port: p.src_port,
            sop_time: self.d.settle().now.wrapping_sub(7),
            hdr_delta: 7,
        }
        .encode();
        let word = |data, meta, last, error| InWord {
            data,
            meta,
            last,
            error,
            port: p.port,
        };
        self.input
            .push_back(word(D::Beat::from_low128(meta), true, false, false));
        let words = datagram_words(&p.payload);
        let n = words.len();
        for (i, w) in words.into_iter().enumerate() {
            let last = i + 1 == n;
            self.input.push_back(word(w, false, last, last && p.bad));
        }
        if !p.bad {
            self.host.expect(&p);
        }
    }
}

impl<D: RxEngineWidth> RxCard for RxEngineBenchAt<D> {
    fn host(&mut self) -> &mut RxHost {
        &mut self.host
    }

    fn input_empty(&self) -> bool {
        self.input.is_empty()
    }

    fn read_word(&mut self, word: u8) -> u32 {
        self.flush_writes();
        // The register file answers three cycles after the address.
        self.d.inputs.reg_addr = word;
        self.step();
        self.step();
        self.step();
        self.d.settle().reg_rdata
    }

    fn step(&mut self) {
        let stall = self.in_stall > 0.0 && self.rng.gen_bool(self.in_stall);
        let i = &mut self.d.inputs;
        i.in_valid = !self.input.is_empty() && !stall;
        if let Some(w) = self.input.front() {
            i.in_data = w.data;
            i.in_meta = w.meta;
            i.in_last = w.last;
            i.in_error = w.error;
            i.in_port = w.port;
        }
        i.reg_write = false;
        if let Some((addr, value)) = self.host.regs.front() {
            i.reg_write = true;
            i.reg_addr = *addr;
            i.reg_wdata = *value;
        }
        i.wr_ready = self.host.port.ready();
        let o = self.d.settle().clone();
        if self.d.inputs.in_valid && o.in_ready {
            self.input.pop_front();
        }
        if self.d.inputs.reg_write {
            self.host.regs.pop_front();
        }
        if o.wr_valid && self.d.inputs.wr_ready {
            self.host.write_beat(&o.wr);
        }
        self.d.tick(self.clk);
        self.host.end_cycle(o.now, o.irq);
    }
}

//! Packet generator: runs of datagrams with random stalls on the transmit request and on the
//! payload stream. Scoreboard: every request carries the configured addresses and the clamped
//! length, every payload is `nanet_contract::rx::gen_payload` of its sequence number and of the
//! time its request was taken, byte-exact with the right `keep`; the count is met, the gap
//! between datagrams is at least the configured one, a stop ends the run after the datagram in
//! progress, and the registers read back. On the rust-hdl model and its Verilog in lockstep.

use nanet_contract::rx::{gen_payload, port, PortReg};
use nanet_hdl::port::packet_gen::PacketGen;
use nanet_sim::design_ports;
use nanet_sim::engine::clocks::NET_CLOCK_PS;
use nanet_sim::engine::{ClockId, DesignSim, EngineKind};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

#[derive(Clone, Default)]
pub struct GIn {
    reset: bool,
    now: u32,
    reg_addr: u8,
    reg_wdata: u32,
    reg_write: bool,
    req_ready: bool,
    ready: bool,
}

#[derive(Clone, Default, Debug)]
pub struct GOut {
    reg_rdata: u32,
    req_valid: bool,
    dst_ip: u32,
    src_port: u16,
    dst_port: u16,
    len: u16,
    data: u64,
    keep: u8,
    last: bool,
    valid: bool,
    error: bool,
    busy: bool,
}

design_ports! {
    pub GenDesign for PacketGen, top "nanet_packet_gen", inputs GIn, outputs GOut,
    clocks { clock }
    inputs {
        reset => reset, now => now, reg_addr => reg_addr, reg_wdata => reg_wdata,
        reg_write => reg_write, req_ready => tx.req_ready, ready => tx.payload.ready,
    }
    outputs {
        reg_rdata => reg_rdata, req_valid => tx.req_valid, dst_ip => tx.dst_ip,
        src_port => tx.src_port, dst_port => tx.dst_port, len => tx.len,
        data => tx.payload.data, keep => tx.payload.keep, last => tx.payload.last,
        valid => tx.payload.valid, error => tx.payload.error, busy => busy,
    }
}

struct Bench {
    d: DesignSim<GenDesign>,
    clk: ClockId,
    rng: StdRng,
    stall: f64,
    /// Datagrams: (request, payload bytes), with the cycle the payload ended.
    sent: Vec<(GOut, u32, Vec<u8>, u64)>,
    partial: Vec<u8>,
    request: Option<(GOut, u32)>,
    cycle: u64,
}

const GEN_WORD0: u32 = port::GEN_CONTROL;

impl Bench {
    fn new(seed: u64, stall: f64) -> Self {
        let mut d = DesignSim::<GenDesign>::new(EngineKind::Both).unwrap_or_else(|e| panic!("{e}"));
        let clk = d.add_clock("net", 0, NET_CLOCK_PS);
        d.inputs.reset = true;
        d.tick(clk);
        d.tick(clk);
        d.inputs.reset = false;
        Self {
            d,
            clk,
            rng: StdRng::seed_from_u64(seed),
            stall,
            sent: vec![],
            partial: vec![],
            request: None,
            cycle: 0,
        }
    }

    fn write(&mut self, r: PortReg, value: u32) {
        let i = &mut self.d.inputs;
        i.reg_addr = (r.word() - GEN_WORD0) as u8;
        i.reg_wdata = value;
        i.reg_write = true;
        self.step();
        self.d.inputs.reg_write = false;
    }

    fn read(&mut self, r: PortReg) -> u32 {
        self.d.inputs.reg_addr = (r.word() - GEN_WORD0) as u8;
        self.step();
        self.d.settle().reg_rdata
    }

    /// One cycle of the consumer: random stalls, the request and the payload beats collected.
    fn step(&mut self) {
        let i = &mut self.d.inputs;
        i.now = self.cycle as u32 * 3 + 7;
        i.req_ready = !self.rng.gen_bool(self.stall);
        i.ready = !self.rng.gen_bool(self.stall);
        let o = self.d.settle().clone();
        if o.req_valid && self.d.inputs.req_ready {
            assert!(
                self.request.is_none(),
                "a second request before the payload"
            );
            self.request = Some((o.clone(), self.d.inputs.now));
        }
        if o.valid && self.d.inputs.ready {
            assert!(self.request.is_some(), "payload before its request");
            for b in 0..8 {
                if o.keep & (0x80 >> b) != 0 {
                    self.partial.push((o.data >> (56 - 8 * b)) as u8);
                }
            }
            if o.last {
                assert!(!o.error, "a generated payload ended with error");
                let (req, t) = self.request.take().unwrap();
                let p = std::mem::take(&mut self.partial);
                self.sent.push((req, t, p, self.cycle));
            } else {
                assert_eq!(o.keep, 0xFF, "a partial beat before the last");
            }
        }
        self.d.tick(self.clk);
        self.cycle += 1;
    }

    fn run_until_idle(&mut self, limit: u64) {
        for n in 0..limit {
            self.step();
            if n % 16 == 0 && self.read(PortReg::GenControl) & port::GEN_RUNNING == 0 {
                return;
            }
        }
        panic!("generator still running after {limit} cycles");
    }

    fn check(&self, from: usize, dst_ip: u32, ports: u32, len: usize, gap: u64) {
        for (k, (req, t, payload, _)) in self.sent[from..].iter().enumerate() {
            assert_eq!(req.dst_ip, dst_ip);
            assert_eq!(
                (req.src_port as u32) << 16 | req.dst_port as u32,
                ports,
                "ports"
            );
            assert_eq!(req.len as usize, len, "request length");
            assert_eq!(
                payload,
                &gen_payload(k as u64, *t, len),
                "datagram {k} payload"
            );
        }
        for w in self.sent[from..].windows(2) {
            assert!(w[1].3 - w[0].3 > gap, "gap shorter than {gap} cycles");
        }
    }
}

#[test]
fn runs_of_datagrams_are_exact_under_stalls() {
    let mut b = Bench::new(5, 0.3);
    let mut rng = StdRng::seed_from_u64(6);
    let mut from = 0;
    for (len, count, gap) in [
        (16u32, 9u32, 0u32),
        (1472, 3, 0),
        (100, 7, 20),
        (5, 4, 3),
        (3000, 2, 0),
    ] {
        let ip: u32 = rng.gen();
        let ports: u32 = rng.gen();
        b.write(PortReg::GenDstIp, ip);
        b.write(PortReg::GenPorts, ports);
        b.write(PortReg::GenLen, len);
        b.write(PortReg::GenCount, count);
        b.write(PortReg::GenGap, gap);
        assert_eq!(b.read(PortReg::GenLen), len);
        assert_eq!(b.read(PortReg::GenPorts), ports);
        b.write(PortReg::GenControl, port::GEN_START);
        b.run_until_idle(20_000);
        let sent_len = len.clamp(port::GEN_MIN_PAYLOAD, port::GEN_MAX_PAYLOAD) as usize;
        assert_eq!(b.sent.len() - from, count as usize, "len {len}");
        assert_eq!(b.read(PortReg::GenSent), count);
        b.check(from, ip, ports, sent_len, gap as u64);
        from = b.sent.len();
    }
    // Endless, then stopped: the datagram in progress completes, and no other follows.
    b.write(PortReg::GenLen, 200);
    b.write(PortReg::GenCount, 0);
    b.write(PortReg::GenGap, 0);
    b.write(PortReg::GenControl, port::GEN_START);
    for _ in 0..500 {
        b.step();
    }
    b.write(PortReg::GenControl, port::GEN_STOP);
    b.run_until_idle(2_000);
    let n = b.sent.len() - from;
    assert!(n >= 3, "only {n} datagrams before the stop");
    assert!(
        b.partial.is_empty() && b.request.is_none(),
        "a cut datagram"
    );
    assert_eq!(b.read(PortReg::GenSent) as usize, n);
    for _ in 0..300 {
        b.step();
    }
    assert_eq!(b.sent.len() - from, n, "datagrams after the stop");
    b.check(
        from,
        b.sent[from].0.dst_ip,
        b.sent[from].0.src_port as u32 * 65536 + b.sent[from].0.dst_port as u32,
        200,
        0,
    );
}

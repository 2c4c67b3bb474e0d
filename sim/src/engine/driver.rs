//! Single-threaded multi-clock cycle driver for any rust-hdl block, for module testbenches that
//! poke the block's signals directly. (System tests go through [`crate::engine::DesignSim`], which
//! steps any engine the same way.)
//!
//! Clocks are square waves with a period in picoseconds ([`ClockSchedule`]); the driver advances
//! time to the next clock transition, sets every clock that changes at that instant, and settles the
//! circuit with repeated `update_all()` passes, exactly as rust-hdl's `simulate()` (the evaluation
//! rust-hdl's own `Simulation` uses, without its per-cycle thread hand-off). Falling edges are
//! settled lazily with the next rising edge, since no flip-flop reacts to them. Testbenches set
//! inputs, call [`CycleDriver::settle`] to see combinational outputs (handshakes are sampled then,
//! before the edge), and [`CycleDriver::tick`] to reach the next rising edge of a clock.

use std::fs::File;
use std::io::BufWriter;
use std::path::Path;

use rust_hdl::core::check_error::check_all;
use rust_hdl::core::prelude::*;
use rust_hdl::core::vcd_probe::{write_vcd_change, write_vcd_dump, write_vcd_header, VCDProbe};

use crate::engine::model::settle_block;
pub use crate::engine::ClockId;
use crate::engine::ClockSchedule;

/// 156.25 MHz, the 10GbE MAC client clock.
pub const NET_CLOCK_PS: u64 = 6_400;
/// 250 MHz, the PCIe/DMA core clock.
pub const CORE_CLOCK_PS: u64 = 4_000;

#[derive(Debug, thiserror::Error)]
pub enum DriverError {
    #[error("design check failed: {0:?}")]
    Check(rust_hdl::core::check_error::CheckError),
    #[error("cannot write VCD {path}: {source}")]
    Vcd {
        path: String,
        source: std::io::Error,
    },
}

pub struct CycleDriver<B: Block> {
    pub uut: B,
    schedule: ClockSchedule,
    setters: Vec<fn(&mut B, bool)>,
    vcd: Option<VCDProbe<BufWriter<File>>>,
}

impl<B: Block> CycleDriver<B> {
    /// Takes a block, connects it and checks the design (undriven signals, logic loops) the way
    /// rust-hdl's `Simulation` does. The block's own inputs are the testbench's to drive.
    pub fn new(mut uut: B) -> Result<Self, DriverError> {
        uut.connect_all();
        check_all(&uut).map_err(DriverError::Check)?;
        Ok(Self {
            uut,
            schedule: ClockSchedule::default(),
            setters: vec![],
            vcd: None,
        })
    }

    /// Adds a clock of `period_ps` (even). `set` drives the clock input(s) of the block.
    pub fn add_clock(&mut self, name: &str, period_ps: u64, set: fn(&mut B, bool)) -> ClockId {
        set(&mut self.uut, false);
        self.setters.push(set);
        self.schedule.add(name, self.setters.len() - 1, period_ps)
    }

    /// Records every signal change to a VCD file from now on.
    pub fn trace_vcd(&mut self, path: &Path) -> Result<(), DriverError> {
        let file = File::create(path).map_err(|source| DriverError::Vcd {
            path: path.display().to_string(),
            source,
        })?;
        let probe = write_vcd_header(BufWriter::new(file), &self.uut);
        self.vcd = Some(write_vcd_dump(probe, &self.uut));
        Ok(())
    }

    /// Propagates input changes through the combinational logic.
    pub fn settle(&mut self) {
        settle_block(&mut self.uut);
    }

    /// Advances to the next clock transition; returns a bit set of clocks that rose.
    pub fn step(&mut self) -> u64 {
        // Inputs (and clock falls not yet propagated) settle before any rising edge.
        if self.schedule.next_rises() {
            self.settle();
        }
        let (uut, setters) = (&mut self.uut, &self.setters);
        let rose = self
            .schedule
            .advance(|input, level| setters[input](uut, level));
        // Nothing but the clock nets changes on a falling edge (every flip-flop is rising-edge
        // triggered), so a fall is settled together with the next rising edge, unless traced.
        if rose != 0 || self.vcd.is_some() {
            self.settle();
        }
        if let Some(mut vcd) = self.vcd.take() {
            // A trace that cannot be written is not worth stopping the simulation for.
            let _ = vcd.timestamp(self.schedule.time_ps());
            self.vcd = Some(write_vcd_change(vcd, &self.uut));
        }
        rose
    }

    /// Runs until the next rising edge of `clock` (other clocks tick as time passes).
    pub fn tick(&mut self, clock: ClockId) {
        while self.step() & (1 << clock.0) == 0 {}
    }

    /// Holds a reset input (set by `set`) for `cycles` rising edges of `clock`, then releases it.
    pub fn reset(&mut self, clock: ClockId, cycles: u64, set: fn(&mut B, bool)) {
        set(&mut self.uut, true);
        self.ticks(clock, cycles);
        set(&mut self.uut, false);
    }

    /// Runs `n` rising edges of `clock`.
    pub fn ticks(&mut self, clock: ClockId, n: u64) {
        for _ in 0..n {
            self.tick(clock);
        }
    }

    /// Rising edges of `clock` so far.
    pub fn cycles(&self, clock: ClockId) -> u64 {
        self.schedule.cycles(clock)
    }

    pub fn clock_name(&self, clock: ClockId) -> &str {
        self.schedule.name(clock)
    }

    pub fn time_ps(&self) -> u64 {
        self.schedule.time_ps()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rust_hdl::prelude::*;

    /// A counter in each of two clock domains.
    #[derive(LogicBlock, Default)]
    struct TwoDomains {
        net_clock: Signal<In, Clock>,
        core_clock: Signal<In, Clock>,
        net_count: Signal<Out, Bits<16>>,
        core_count: Signal<Out, Bits<16>>,
        net: DFF<Bits<16>>,
        core: DFF<Bits<16>>,
    }

    impl Logic for TwoDomains {
        #[hdl_gen]
        fn update(&mut self) {
            dff_setup!(self, net_clock, net);
            dff_setup!(self, core_clock, core);
            self.net.d.next = self.net.q.val() + 1;
            self.core.d.next = self.core.q.val() + 1;
            self.net_count.next = self.net.q.val();
            self.core_count.next = self.core.q.val();
        }
    }

    fn two_domains() -> (CycleDriver<TwoDomains>, ClockId, ClockId) {
        let mut d = CycleDriver::new(TwoDomains::default()).unwrap();
        let net = d.add_clock("net", NET_CLOCK_PS, |u, v| {
            u.net_clock.next = Clock::from(v)
        });
        let core = d.add_clock("core", CORE_CLOCK_PS, |u, v| {
            u.core_clock.next = Clock::from(v)
        });
        (d, net, core)
    }

    #[test]
    fn each_domain_counts_its_own_edges() {
        let (mut d, net, core) = two_domains();
        // Rising edges at half a period, then every period: the 5000th net edge is at 31.9968 us,
        // after 7999 core edges (the 8000th is at 31.998 us).
        d.ticks(net, 5000);
        assert_eq!(d.time_ps(), 5000 * NET_CLOCK_PS - NET_CLOCK_PS / 2);
        assert_eq!(
            d.cycles(core),
            (d.time_ps() - CORE_CLOCK_PS / 2) / CORE_CLOCK_PS + 1
        );
        assert_eq!(d.cycles(core), 7999);
        assert_eq!(d.uut.net_count.val().to_u32() as u64, d.cycles(net));
        assert_eq!(d.uut.core_count.val().to_u32() as u64, d.cycles(core));
        d.ticks(core, 3);
        assert_eq!(d.cycles(core), 8002);
        assert_eq!(d.clock_name(core), "core");
    }

    #[test]
    fn a_vcd_trace_records_both_clocks() {
        let (mut d, net, _) = two_domains();
        let dir = std::env::temp_dir().join(format!("nanet-driver-vcd-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("two.vcd");
        d.trace_vcd(&path).unwrap();
        d.ticks(net, 20);
        drop(d);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.contains("net_clock")
                && text.contains("core_clock")
                && text.contains("core_count")
        );
        assert!(
            text.contains(&format!("#{}", 3 * NET_CLOCK_PS / 2)),
            "a net clock edge time is recorded"
        );
        assert!(
            text.contains(&format!("#{}", 5 * CORE_CLOCK_PS / 2)),
            "a core clock edge time is recorded"
        );
        std::fs::remove_dir_all(&dir).ok();
    }
}

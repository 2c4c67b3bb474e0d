//! Simulation engines behind one interface: the rust-hdl model (settled in `model.rs`), the generated
//! Verilog compiled by Verilator, or both in lockstep (every output compared after every settle).
//!
//! A design's top-level ports are listed once with [`design_ports!`], which gives its typed input
//! and output structs, the port table (Verilog names and widths), the word packing every engine
//! uses, and the binding to the rust-hdl block. [`DesignSim`] drives any engine with the same
//! multi-clock stepping: before a rising edge the inputs are applied and settled, clocks toggle,
//! the design settles again (falling edges settle lazily with the next rising edge, since no
//! flip-flop reacts to them).

use std::fmt;
use std::path::Path;

pub mod clocks;
pub mod designs;
pub mod model;
pub mod pins;
pub mod verilator;

/// Picoseconds; clock periods are in picoseconds.
pub type Ps = u64;

/// A top-level port: its Verilog name (`mac_rx$data`) and width in bits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Port {
    pub name: String,
    pub width: usize,
}

impl Port {
    /// 64-bit words the port takes in the packed form (low word first).
    pub fn words(&self) -> usize {
        self.width.div_ceil(64).max(1)
    }
}

/// Words of the packed form of `ports`.
pub fn word_count(ports: &[Port]) -> usize {
    ports.iter().map(Port::words).sum()
}

/// One engine simulating one design, at the level of packed words (64 bits of a port each, in the
/// order of the design's port tables).
pub trait Engine {
    fn name(&self) -> &'static str;
    fn apply(&mut self, inputs: &[u64]);
    fn set_clock(&mut self, clock: usize, level: bool);
    fn settle(&mut self);
    fn outputs(&mut self, out: &mut [u64]);
    /// Starts a VCD trace of every signal.
    fn trace_vcd(&mut self, path: &Path) -> Result<(), EngineError>;
    /// Records the signals at `time_ps` (when tracing).
    fn trace_sample(&mut self, time_ps: Ps);
}

/// A simulatable top: the port list and the binding to its rust-hdl block.
pub trait Design: 'static {
    /// The rust-hdl block. Its [`AsBlock`](nanet_hdl::as_block::AsBlock) impl is in nanet-hdl (a
    /// test's own block takes one with `nanet_hdl::as_block!`): the model settles, checks and
    /// traces it, and the Verilog is generated, through nanet-hdl's compiled copy of its code.
    type Block: rust_hdl::core::prelude::Block + Default + nanet_hdl::as_block::AsBlock;
    type In: Default + Clone;
    type Out: Default + Clone;
    /// Name of the top module in the generated Verilog.
    const TOP: &'static str;
    fn clocks() -> Vec<Port>;
    fn inputs() -> Vec<Port>;
    fn outputs() -> Vec<Port>;
    fn pack(i: &Self::In, words: &mut [u64]);
    fn unpack(words: &[u64]) -> Self::Out;
    fn apply_model(b: &mut Self::Block, words: &[u64]);
    fn sample_model(b: &Self::Block, words: &mut [u64]);
    fn set_model_clock(b: &mut Self::Block, clock: usize, level: bool);
    /// The block both engines simulate (its `Default` unless the design names a constructor).
    fn block() -> Self::Block;
    /// The design's Verilog, its top module named [`Design::TOP`].
    fn verilog() -> String;
    /// The rust-hdl model as an engine. Every design implements it for its own type
    /// ([`design_ports!`] does), so the engine around the model is compiled once, in the crate
    /// that declares the design (a generic function building it would be compiled again in every
    /// crate that simulates the design: release builds do not share generic code between
    /// crates); the model's own code (the `update_all` of the whole block tree) is nanet-hdl's,
    /// reached through [`AsBlock`](nanet_hdl::as_block::AsBlock).
    fn model() -> Result<Box<dyn Engine>, EngineError>;
}

/// Which engine(s) to run.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum EngineKind {
    /// The rust-hdl model, settled in `model.rs`.
    Rusthdl,
    /// The generated Verilog, compiled by Verilator.
    Verilator,
    /// Both in lockstep: stop at the first output that differs.
    Both,
}

impl EngineKind {
    /// From `NANET_ENGINE` (`rusthdl`, `verilator` or `both`; `rusthdl` when unset).
    pub fn from_env() -> Result<Self, EngineError> {
        match std::env::var("NANET_ENGINE") {
            Err(_) => Ok(EngineKind::Rusthdl),
            Ok(v) => v.parse(),
        }
    }
}

impl std::str::FromStr for EngineKind {
    type Err = EngineError;
    fn from_str(s: &str) -> Result<Self, EngineError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "rusthdl" | "rust-hdl" | "model" => Ok(EngineKind::Rusthdl),
            "verilator" => Ok(EngineKind::Verilator),
            "both" | "lockstep" => Ok(EngineKind::Both),
            other => Err(EngineError::UnknownEngine(other.to_string())),
        }
    }
}

impl fmt::Display for EngineKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            EngineKind::Rusthdl => "rusthdl",
            EngineKind::Verilator => "verilator",
            EngineKind::Both => "both",
        })
    }
}

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("unknown engine {0:?}: NANET_ENGINE / --engine takes rusthdl, verilator or both")]
    UnknownEngine(String),
    #[error("design check failed: {0}")]
    Check(String),
    #[error(
        "`verilator` was not found on PATH ({0}). The Verilator engine needs Verilator 5 and a C++ \
         compiler: run `make test` (it installs them) or `apt-get install verilator g++`"
    )]
    VerilatorMissing(String),
    #[error("building the Verilator model of {top} failed at `{step}`; log: {log}")]
    Build {
        top: String,
        step: String,
        log: String,
    },
    #[error("loading the Verilator model {path}: {msg}")]
    Load { path: String, msg: String },
    #[error("{0}")]
    Io(String),
    /// An engine setting from the environment that cannot be used.
    #[error("{0}")]
    Setting(String),
    #[error("cannot write VCD {path}: {msg}")]
    Vcd { path: String, msg: String },
}

/// The first output that differs between the two engines of a lockstep run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    pub signal: String,
    /// Rising edges of the first clock so far, and simulated time.
    pub cycle: u64,
    pub time_ps: Ps,
    pub rusthdl: u64,
    pub verilator: u64,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "rust-hdl model and Verilog disagree at cycle {} ({} ps): output `{}` is {:#x} in the \
             model and {:#x} in the Verilog",
            self.cycle, self.time_ps, self.signal, self.rusthdl, self.verilator
        )
    }
}

/// Index of a clock added to a schedule.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ClockId(pub usize);

struct ClockState {
    name: String,
    /// Which clock input of the design this drives.
    input: usize,
    half_period_ps: Ps,
    next_toggle_ps: Ps,
    level: bool,
    rising_edges: u64,
}

/// Square-wave clocks: which toggle next, and when.
#[derive(Default)]
pub struct ClockSchedule {
    clocks: Vec<ClockState>,
    time_ps: Ps,
}

impl ClockSchedule {
    /// Adds a clock of `period_ps` (even) driving design clock input `input`; its first rising
    /// edge is half a period from now.
    pub fn add(&mut self, name: &str, input: usize, period_ps: Ps) -> ClockId {
        assert!(
            period_ps >= 2 && period_ps.is_multiple_of(2),
            "clock period must be even, got {period_ps}"
        );
        self.clocks.push(ClockState {
            name: name.to_string(),
            input,
            half_period_ps: period_ps / 2,
            next_toggle_ps: self.time_ps + period_ps / 2,
            level: false,
            rising_edges: 0,
        });
        ClockId(self.clocks.len() - 1)
    }

    /// Whether a clock rises at the next transition.
    pub fn next_rises(&self) -> bool {
        self.next_rising() != 0
    }

    /// The clocks (bit per `ClockId`) that rise at the next transition.
    pub fn next_rising(&self) -> u64 {
        let t = self.next_time();
        self.clocks
            .iter()
            .enumerate()
            .filter(|(_, c)| c.next_toggle_ps == t && !c.level)
            .fold(0, |m, (i, _)| m | 1 << i)
    }

    pub fn next_time(&self) -> Ps {
        self.clocks
            .iter()
            .map(|c| c.next_toggle_ps)
            .min()
            .expect("no clock added")
    }

    /// Moves to the next transition, calling `set(input, level)` for every clock that toggles;
    /// returns the set of clocks (bit per `ClockId`) that rose.
    pub fn advance(&mut self, mut set: impl FnMut(usize, bool)) -> u64 {
        let t = self.next_time();
        self.time_ps = t;
        let mut rose = 0;
        for (i, c) in self.clocks.iter_mut().enumerate() {
            if c.next_toggle_ps == t {
                c.level = !c.level;
                c.next_toggle_ps += c.half_period_ps;
                set(c.input, c.level);
                if c.level {
                    c.rising_edges += 1;
                    rose |= 1 << i;
                }
            }
        }
        rose
    }

    pub fn time_ps(&self) -> Ps {
        self.time_ps
    }
    pub fn cycles(&self, c: ClockId) -> u64 {
        self.clocks[c.0].rising_edges
    }
    pub fn name(&self, c: ClockId) -> &str {
        &self.clocks[c.0].name
    }
}

/// A design simulated by one engine, or by two in lockstep.
pub struct DesignSim<D: Design> {
    engines: Vec<Box<dyn Engine>>,
    clocks: ClockSchedule,
    /// Inputs for the next settle; testbenches write them.
    pub inputs: D::In,
    out: D::Out,
    in_words: Vec<u64>,
    out_words: Vec<u64>,
    other_words: Vec<u64>,
    /// The output port of each packed output word (for mismatch reports).
    word_ports: Vec<String>,
    tracing: bool,
    /// Inputs as last applied, and whether a clock has changed since: a settle with neither
    /// changed is skipped (the outputs cannot have changed).
    applied: Vec<u64>,
    clocks_changed: bool,
}

impl<D: Design> DesignSim<D> {
    pub fn new(kind: EngineKind) -> Result<Self, EngineError> {
        Self::build(kind, None)
    }

    /// A simulation tracing every signal into a VCD from the start: `path` for the first engine,
    /// `path` with `.verilator.vcd` for the second of a lockstep run.
    pub fn new_traced(kind: EngineKind, path: &Path) -> Result<Self, EngineError> {
        Self::build(kind, Some(path))
    }

    fn build(kind: EngineKind, vcd: Option<&Path>) -> Result<Self, EngineError> {
        let mut engines: Vec<Box<dyn Engine>> = vec![];
        if matches!(kind, EngineKind::Rusthdl | EngineKind::Both) {
            engines.push(D::model()?);
        }
        if matches!(kind, EngineKind::Verilator | EngineKind::Both) {
            engines.push(Box::new(verilator::VerilatorEngine::new(
                &verilator::DesignRef::of::<D>(),
                vcd.is_some(),
            )?));
        }
        let outputs = D::outputs();
        let mut sim = Self {
            engines,
            clocks: ClockSchedule::default(),
            inputs: D::In::default(),
            out: D::Out::default(),
            in_words: vec![0; word_count(&D::inputs())],
            out_words: vec![0; word_count(&outputs)],
            other_words: vec![0; word_count(&outputs)],
            word_ports: outputs
                .iter()
                .flat_map(|p| match p.words() {
                    1 => vec![p.name.clone()],
                    n => (0..n)
                        .map(|k| format!("{}[{}:{}]", p.name, 64 * k + 63, 64 * k))
                        .collect(),
                })
                .collect(),
            tracing: false,
            applied: vec![],
            clocks_changed: true,
        };
        if let Some(path) = vcd {
            sim.trace_vcd(path)?;
        }
        Ok(sim)
    }

    /// The engine selected by `NANET_ENGINE`.
    pub fn from_env() -> Result<Self, EngineError> {
        Self::new(EngineKind::from_env()?)
    }

    /// Adds a clock driving the design's clock input `input` (index in [`Design::clocks`]).
    pub fn add_clock(&mut self, name: &str, input: usize, period_ps: Ps) -> ClockId {
        self.clocks_changed = true;
        for e in &mut self.engines {
            e.set_clock(input, false);
        }
        self.clocks.add(name, input, period_ps)
    }

    /// VCD of every engine from now on: `path` for the first, `path` with `.verilator.vcd` for the
    /// second of a lockstep run. A Verilator model traces only if created with
    /// [`DesignSim::new_traced`].
    pub fn trace_vcd(&mut self, path: &Path) -> Result<(), EngineError> {
        for (i, e) in self.engines.iter_mut().enumerate() {
            let p = if i == 0 {
                path.to_path_buf()
            } else {
                path.with_extension("verilator.vcd")
            };
            e.trace_vcd(&p)?;
        }
        self.tracing = true;
        Ok(())
    }

    /// Applies the inputs and settles; in lockstep, compares every output of the two engines.
    pub fn try_settle(&mut self) -> Result<&D::Out, Mismatch> {
        self.settle_engines()?;
        self.out = D::unpack(&self.out_words);
        Ok(&self.out)
    }

    /// Settles every engine and compares their outputs, without unpacking them.
    fn settle_engines(&mut self) -> Result<(), Mismatch> {
        D::pack(&self.inputs, &mut self.in_words);
        if !self.clocks_changed && self.applied == self.in_words {
            return Ok(());
        }
        self.applied.clear();
        self.applied.extend_from_slice(&self.in_words);
        self.clocks_changed = false;
        for e in &mut self.engines {
            e.apply(&self.in_words);
            e.settle();
        }
        self.engines[0].outputs(&mut self.out_words);
        if self.engines.len() == 2 {
            self.engines[1].outputs(&mut self.other_words);
            if let Some(i) =
                (0..self.out_words.len()).find(|&i| self.out_words[i] != self.other_words[i])
            {
                return Err(Mismatch {
                    signal: self.word_ports[i].clone(),
                    cycle: self
                        .clocks
                        .clocks
                        .first()
                        .map(|c| c.rising_edges)
                        .unwrap_or(0),
                    time_ps: self.clocks.time_ps(),
                    rusthdl: self.out_words[i],
                    verilator: self.other_words[i],
                });
            }
        }
        Ok(())
    }

    /// As [`DesignSim::try_settle`]; a lockstep mismatch stops the run with the signal, the cycle
    /// and both values.
    pub fn settle(&mut self) -> &D::Out {
        if let Err(m) = self.try_settle() {
            panic!("{m}");
        }
        &self.out
    }

    /// Advances to the next clock transition; returns the clocks that rose.
    pub fn try_step(&mut self) -> Result<u64, Mismatch> {
        let rises = self.clocks.next_rises();
        if rises {
            self.settle_engines()?;
        }
        let engines = &mut self.engines;
        self.clocks_changed = true;
        let rose = self.clocks.advance(|input, level| {
            for e in engines.iter_mut() {
                e.set_clock(input, level);
            }
        });
        if rose != 0 || self.tracing {
            self.settle_engines()?;
        }
        if self.tracing {
            let t = self.clocks.time_ps();
            for e in &mut self.engines {
                e.trace_sample(t);
            }
        }
        Ok(rose)
    }

    /// Runs to the next rising edge of `clock`.
    pub fn try_tick(&mut self, clock: ClockId) -> Result<(), Mismatch> {
        while self.try_step()? & (1 << clock.0) == 0 {}
        Ok(())
    }

    pub fn tick(&mut self, clock: ClockId) {
        if let Err(m) = self.try_tick(clock) {
            panic!("{m}");
        }
    }

    pub fn cycles(&self, clock: ClockId) -> u64 {
        self.clocks.cycles(clock)
    }

    pub fn time_ps(&self) -> Ps {
        self.clocks.time_ps()
    }

    /// The time of the next transition (when a testbench samples a handshake before it).
    pub fn next_edge_ps(&self) -> Ps {
        self.clocks.next_time()
    }

    /// The clocks (bit per `ClockId`) that rise at the next step: with several clocks, a testbench
    /// samples a side's handshake after settling, when that side's clock is about to rise.
    pub fn next_rising(&self) -> u64 {
        self.clocks.next_rising()
    }
}

/// The width of a rust-hdl signal (used by [`design_ports!`]).
pub fn signal_width<D: rust_hdl::core::prelude::Direction, T: rust_hdl::core::prelude::Synth>(
    _: &rust_hdl::core::prelude::Signal<D, T>,
) -> usize {
    T::BITS
}

/// Verilog name of a field path (`mac_rx . data` as `stringify!` gives it becomes `mac_rx$data`,
/// `mac_rx [2] . data` becomes `mac_rx$2$data`).
pub fn verilog_name(path: &str) -> String {
    path.replace(' ', "")
        .replace(['.', '['], "$")
        .replace(']', "")
}

/// Declares a trait for the designs of one block at several datapath widths: each design's pins
/// are the given input and output types over its beat type (`Self::Beat`: `u128` at 128 bits,
/// `[u64; 4]` at 256), so one generic bench or test serves every width.
///
/// `width_designs! { pub trait Width: In = DwIn<Self::Beat>, Out = DwOut<Self::Beat>;
/// Writer128 => u128, Writer256 => [u64; 4] }`
#[macro_export]
macro_rules! width_designs {
    ($vis:vis trait $name:ident: In = $in:ty, Out = $out:ty; $($design:ty => $beat:ty),+ $(,)?) => {
        /// A design of this block at one width: its beat type.
        $vis trait $name: $crate::engine::Design<In = $in, Out = $out> {
            type Beat: $crate::world::tlp::BeatData + Default + Copy;
        }
        $(impl $name for $design {
            type Beat = $beat;
        })+
    };
}

/// Lists a design's top-level ports once. Left of `=>` is the field of the typed input/output
/// struct, right is the signal of the rust-hdl block (its Verilog name follows from the path). The
/// first segment of either path may be indexed (`mac_rx[2].data`) for arrays of ports.
///
/// The block is built by `Default`, or by the expression after `=` (`for MyBlock =
/// MyBlock::with_timeout(1_000)`), for both engines. Its type needs an
/// [`AsBlock`](nanet_hdl::as_block::AsBlock) impl: a nanet-hdl block at new parameters gets one
/// in `hdl/src/as_block.rs` (the orphan rule keeps it there), a block defined beside the design
/// one from `nanet_hdl::as_block!(MyBlock);`.
///
/// ```ignore
/// design_ports! {
///     pub MyDesign for MyBlock, top "my_top", inputs MyIn, outputs MyOut,
///     clocks { clock }
///     inputs { reset => reset, a.data => a.data }
///     outputs { y => y }
/// }
/// ```
#[macro_export]
macro_rules! design_ports {
    (@block $block:ty) => { <$block>::default() };
    (@block $block:ty, $new:expr) => { $new };
    (
        $vis:vis $design:ident for $block:ty $(= $new:expr)?, top $top:literal, inputs $in_ty:ty, outputs $out_ty:ty,
        clocks { $($($cpath:ident).+),* $(,)? }
        inputs { $($ifh:ident $([$ifi:literal])? $(.$ift:ident)* => $iph:ident $([$ipi:literal])? $(.$ipt:ident)*),* $(,)? }
        outputs { $($ofh:ident $([$ofi:literal])? $(.$oft:ident)* => $oph:ident $([$opi:literal])? $(.$opt:ident)*),* $(,)? }
    ) => {
        $vis struct $design;

        impl $crate::engine::Design for $design {
            type Block = $block;
            type In = $in_ty;
            type Out = $out_ty;
            const TOP: &'static str = $top;

            fn clocks() -> Vec<$crate::engine::Port> {
                vec![$($crate::engine::Port { name: $crate::engine::verilog_name(stringify!($($cpath).+)), width: 1 }),*]
            }
            fn inputs() -> Vec<$crate::engine::Port> {
                let b = <$block>::default();
                vec![$($crate::engine::Port {
                    name: $crate::engine::verilog_name(stringify!($iph $([$ipi])? $(.$ipt)*)),
                    width: $crate::engine::signal_width(&b.$iph $([$ipi])? $(.$ipt)*),
                }),*]
            }
            fn outputs() -> Vec<$crate::engine::Port> {
                let b = <$block>::default();
                vec![$($crate::engine::Port {
                    name: $crate::engine::verilog_name(stringify!($oph $([$opi])? $(.$opt)*)),
                    width: $crate::engine::signal_width(&b.$oph $([$opi])? $(.$opt)*),
                }),*]
            }
            fn pack(i: &$in_ty, words: &mut [u64]) {
                let mut at = 0;
                $($crate::engine::pins::PinValue::put(i.$ifh $([$ifi])? $(.$ift)*, words, &mut at);)*
            }
            fn unpack(words: &[u64]) -> $out_ty {
                let mut o = <$out_ty>::default();
                let mut at = 0;
                $(o.$ofh $([$ofi])? $(.$oft)* = $crate::engine::pins::PinValue::take(words, &mut at);)*
                o
            }
            fn apply_model(b: &mut $block, words: &[u64]) {
                let mut at = 0;
                $(b.$iph $([$ipi])? $(.$ipt)*.next = $crate::engine::pins::SignalWord::take(words, &mut at);)*
            }
            fn sample_model(b: &$block, words: &mut [u64]) {
                let mut at = 0;
                $($crate::engine::pins::SignalWord::put(&b.$oph $([$opi])? $(.$opt)*.val(), words, &mut at);)*
            }
            fn set_model_clock(b: &mut $block, clock: usize, level: bool) {
                let setters: &[fn(&mut $block, bool)] = &[$(|b, v| b.$($cpath).+.next = rust_hdl::core::prelude::Clock::from(v)),*];
                setters[clock](b, level);
            }
            fn block() -> $block {
                $crate::design_ports!(@block $block $(, $new)?)
            }
            fn verilog() -> String {
                let mut b = <Self as $crate::engine::Design>::block();
                nanet_hdl::verilog::generate_dyn(nanet_hdl::as_block::AsBlock::as_block_mut(&mut b), $top)
            }
            fn model() -> Result<Box<dyn $crate::engine::Engine>, $crate::engine::EngineError> {
                $crate::engine::model::model_engine::<Self>()
            }
        }
    };
}

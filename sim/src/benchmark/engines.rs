//! Benchmark of the simulation engines on the offload core: cycles/s of the rust-hdl model and of
//! the Verilog under Verilator on the same stimulus in the same run, bare and with the testbench
//! (link model, bus-functional models, scoreboard collection) in the loop; and the time to rebuild
//! the Verilator model after a gateware change.

use std::time::Instant;

use serde::Serialize;

use crate::benchmark::offload::{speed_engine, EngineSpeed};
use crate::engine::designs::OffloadCoreDesign;
use crate::engine::verilator::{build_verilog_at, BuildReport};
use crate::engine::{Design, EngineError, EngineKind};
use crate::testbench::core::CoreBench;
use crate::traffic::packets::{udp_frame, Endpoint};

const CARD: Endpoint = Endpoint::new([0x02, 0x4E, 0x41, 0x4E, 0x45, 0x01], [10, 9, 0, 1]);
const PEER: Endpoint = Endpoint::new([0x02, 0x00, 0x00, 0x00, 0x00, 0x02], [10, 9, 0, 2]);

#[derive(Serialize, Clone, Debug)]
pub struct HarnessSpeed {
    pub engine: &'static str,
    pub cycles: u64,
    pub seconds: f64,
    pub cycles_per_s: f64,
    pub datagrams_delivered: usize,
}

#[derive(Serialize, Clone, Debug)]
pub struct RebuildTimes {
    /// Generating the core's Verilog from the rust-hdl description.
    pub verilog_generation_s: f64,
    /// Verilator runtime, once per Verilator version.
    pub runtime_build_s: f64,
    /// Verilating and compiling the model after a one-line change of its Verilog (runtime cached).
    pub model_rebuild_s: f64,
    /// Finding the unchanged model in the cache.
    pub cache_hit_s: f64,
    /// Generation plus model rebuild: what a gateware change costs before the next run (cargo's
    /// own incremental compile of the gateware crate comes on top).
    pub rebuild_after_change_s: f64,
}

#[derive(Serialize, Clone, Debug)]
pub struct EnginesReport {
    pub bare: Vec<EngineSpeed>,
    pub verilator_over_rusthdl_ratio: f64,
    pub with_testbench: Vec<HarnessSpeed>,
    pub with_testbench_verilator_over_rusthdl_ratio: f64,
    pub rebuild: RebuildTimes,
}

/// Cycles/s of the whole testbench: line-rate RX traffic through the link model into the core,
/// the RX sink collecting datagrams.
pub fn harness_speed(kind: EngineKind, frames: usize) -> Result<HarnessSpeed, EngineError> {
    let mut b = CoreBench::try_with_engine(kind, 0.0, 1)?;
    b.configure(&CARD, [255, 255, 255, 0], [0, 0, 0, 0]);
    for i in 0..frames {
        b.link_rx.push(
            udp_frame(
                &PEER,
                &CARD,
                1,
                2,
                &vec![i as u8; [18, 64, 256, 512, 1024, 1472][i % 6]],
            ),
            false,
        );
    }
    let start = b.cycle_count();
    let t = Instant::now();
    b.run_until(u64::MAX, |b| b.link_rx.is_idle());
    let seconds = t.elapsed().as_secs_f64();
    let cycles = b.cycle_count() - start;
    b.run(50); // the last datagram leaves after the link is idle (not timed)
    let engine = if kind == EngineKind::Verilator {
        "verilator"
    } else {
        "rusthdl"
    };
    Ok(HarnessSpeed {
        engine,
        cycles,
        seconds,
        cycles_per_s: cycles as f64 / seconds,
        datagrams_delivered: b.rx.len(),
    })
}

/// Build times in a fresh cache: the runtime, a model, the same model after a one-line change of
/// its Verilog, and a cache hit.
pub fn rebuild_times() -> Result<RebuildTimes, EngineError> {
    let root = std::env::temp_dir().join(format!("nanet-rebuild-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let ports = (
        OffloadCoreDesign::clocks(),
        OffloadCoreDesign::inputs(),
        OffloadCoreDesign::outputs(),
    );
    let t = Instant::now();
    let verilog = OffloadCoreDesign::verilog();
    let verilog_generation_s = t.elapsed().as_secs_f64();
    let first: BuildReport =
        build_verilog_at(&root, OffloadCoreDesign::TOP, &verilog, &ports, false)?;
    // The first build includes the runtime; the model alone is timed by the rebuild below.
    let changed = verilog.replacen("\n", "\n// one-line change\n", 1);
    let rebuilt = build_verilog_at(&root, OffloadCoreDesign::TOP, &changed, &ports, false)?;
    let hit = build_verilog_at(&root, OffloadCoreDesign::TOP, &changed, &ports, false)?;
    let _ = std::fs::remove_dir_all(&root);
    assert!(
        rebuilt.built && !hit.built,
        "the cache decides on the Verilog text"
    );
    Ok(RebuildTimes {
        verilog_generation_s,
        runtime_build_s: (first.seconds - rebuilt.seconds).max(0.0),
        model_rebuild_s: rebuilt.seconds,
        cache_hit_s: hit.seconds,
        rebuild_after_change_s: verilog_generation_s + rebuilt.seconds,
    })
}

pub fn run(quick: bool, progress: &mut dyn FnMut(&str)) -> Result<EnginesReport, EngineError> {
    let (model_cycles, vl_cycles, frames) = if quick {
        (2_000, 50_000, 20)
    } else {
        (20_000, 2_000_000, 600)
    };
    progress("engines: rust-hdl model, bare");
    let model = speed_engine(EngineKind::Rusthdl, model_cycles)?;
    progress("engines: Verilator, bare");
    let vl = speed_engine(EngineKind::Verilator, vl_cycles)?;
    progress("engines: rust-hdl model with the testbench");
    let model_tb = harness_speed(EngineKind::Rusthdl, frames / 10)?;
    progress("engines: Verilator with the testbench");
    let vl_tb = harness_speed(EngineKind::Verilator, frames * 50)?;
    progress("engines: rebuild after a change");
    let rebuild = rebuild_times()?;
    Ok(EnginesReport {
        verilator_over_rusthdl_ratio: vl.cycles_per_s / model.cycles_per_s,
        bare: vec![model, vl],
        with_testbench_verilator_over_rusthdl_ratio: vl_tb.cycles_per_s / model_tb.cycles_per_s,
        with_testbench: vec![model_tb, vl_tb],
        rebuild,
    })
}

//! The rust-hdl model as an engine: evaluated with repeated `update_all()` passes until nothing
//! changes, exactly as rust-hdl's `simulate()`.

use std::fs::File;
use std::io::BufWriter;
use std::marker::PhantomData;
use std::path::Path;

use nanet_hdl::as_block::AsBlock;
use rust_hdl::core::check_error::check_all;
use rust_hdl::core::prelude::*;
use rust_hdl::core::vcd_probe::{write_vcd_change, write_vcd_dump, write_vcd_header, VCDProbe};

use super::{Design, Engine, EngineError, Ps};

/// Update passes allowed per settle before the circuit is declared oscillating.
pub const MAX_SETTLE_PASSES: usize = 200;

/// Settles a rust-hdl block; returns the update passes it took. Panics on a circuit that does not settle
/// (a combinational loop).
pub fn settle_block(uut: &mut dyn Block) -> u64 {
    for i in 0..MAX_SETTLE_PASSES {
        uut.update_all();
        if !uut.has_changed() {
            return i as u64 + 1;
        }
    }
    panic!("circuit did not settle within {MAX_SETTLE_PASSES} passes (combinational loop?)");
}

/// The rust-hdl model of `D` as an engine: what every [`Design::model`] returns (called there,
/// for the design's own type, so that the engine's code compiles in the design's crate alone;
/// the block's own code is nanet-hdl's, through `AsBlock`).
pub fn model_engine<D: Design>() -> Result<Box<dyn super::Engine>, EngineError> {
    Ok(Box::new(ModelEngine::<D>::new()?))
}

pub struct ModelEngine<D: Design> {
    pub uut: D::Block,
    vcd: Option<VCDProbe<BufWriter<File>>>,
    _d: PhantomData<D>,
}

impl<D: Design> ModelEngine<D> {
    pub fn new() -> Result<Self, EngineError> {
        let mut uut = D::block();
        uut.as_block_mut().connect_all();
        check_all(uut.as_block()).map_err(|e| EngineError::Check(format!("{e:?}")))?;
        Ok(Self {
            uut,
            vcd: None,
            _d: PhantomData,
        })
    }
}

impl<D: Design> Engine for ModelEngine<D> {
    fn name(&self) -> &'static str {
        "rusthdl"
    }
    fn apply(&mut self, inputs: &[u64]) {
        D::apply_model(&mut self.uut, inputs);
    }
    fn set_clock(&mut self, clock: usize, level: bool) {
        D::set_model_clock(&mut self.uut, clock, level);
    }
    fn settle(&mut self) {
        settle_block(self.uut.as_block_mut());
    }
    fn outputs(&mut self, out: &mut [u64]) {
        D::sample_model(&self.uut, out);
    }
    fn trace_vcd(&mut self, path: &Path) -> Result<(), EngineError> {
        let file = File::create(path).map_err(|e| EngineError::Vcd {
            path: path.display().to_string(),
            msg: e.to_string(),
        })?;
        let probe = write_vcd_header(BufWriter::new(file), self.uut.as_block());
        self.vcd = Some(write_vcd_dump(probe, self.uut.as_block()));
        Ok(())
    }
    fn trace_sample(&mut self, time_ps: Ps) {
        if let Some(mut vcd) = self.vcd.take() {
            // A trace that cannot be written is not worth stopping the simulation for.
            let _ = vcd.timestamp(time_ps);
            self.vcd = Some(write_vcd_change(vcd, self.uut.as_block()));
        }
    }
}

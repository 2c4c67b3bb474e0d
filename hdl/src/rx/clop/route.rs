//! Commands and buffer releases from the register file to the CLOP engine of their CLOP's port
//! (the CLOP id's bits 5:4; a CLOP of a port the card does not have goes to engine 0, where no
//! packet reaches it). With one engine every command and release goes to it. The engines'
//! `ready`s come back through [`ClopGather`](crate::rx::clop::gather::ClopGather).
//!
//! Two blocks because Verilator orders a block as one node unless it is plain assignments: a
//! block that both drove the engines' `valid`s and read their `ready`s (decided in the engines'
//! one block beside the `valid`s) would be a combinational loop to it (UNOPTFLAT). `ClopRoute`
//! is plain assignments only, and reads no `ready`.

use array_init::array_init;
use rust_hdl::prelude::*;

use crate::rx::clop::engine::{ClopFieldsSink, ClopFieldsSource};

/// A buffer release on its way to an engine (`ClopEngine::rel_*`; its `ready` goes back through
/// `ClopGather`).
#[derive(LogicInterface, Default)]
pub struct ClopReleaseSource {
    pub valid: Signal<Out, Bit>,
    pub clop: Signal<Out, Bits<6>>,
    pub buf: Signal<Out, Bits<8>>,
}

/// Commands and releases to the engine of their CLOP's port (see the module doc): plain
/// assignments only.
#[derive(LogicBlock)]
pub struct ClopRoute<const P: usize> {
    pub cfg_valid: Signal<In, Bit>,
    pub cfg: ClopFieldsSink,
    pub to_engine_valid: [Signal<Out, Bit>; P],
    pub to_engine: [ClopFieldsSource; P],
    pub rel_valid: Signal<In, Bit>,
    pub rel_data: Signal<In, Bits<14>>,
    pub release: [ClopReleaseSource; P],

    /// The command's (the release's) CLOP is of a port the card does not have.
    cfg_elsewhere: Signal<Local, Bit>,
    rel_elsewhere: Signal<Local, Bit>,
    ports: Constant<Bits<3>>,
    engine_ids: [Constant<Bits<2>>; P],
}

impl<const P: usize> Default for ClopRoute<P> {
    fn default() -> Self {
        assert!((1..=4).contains(&P), "1 to 4 CLOP engines");
        Self {
            cfg_valid: Default::default(),
            cfg: Default::default(),
            to_engine_valid: array_init(|_| Default::default()),
            to_engine: array_init(|_| Default::default()),
            rel_valid: Default::default(),
            rel_data: Default::default(),
            release: array_init(|_| Default::default()),
            cfg_elsewhere: Default::default(),
            rel_elsewhere: Default::default(),
            ports: Constant::new((P as u64).into()),
            engine_ids: array_init(|i| Constant::new((i as u64).into())),
        }
    }
}

impl<const P: usize> Logic for ClopRoute<P> {
    #[hdl_gen]
    fn update(&mut self) {
        self.cfg_elsewhere.next =
            bit_cast::<3, 2>(self.cfg.clop.val().get_bits::<2>(4)) >= self.ports.val();
        self.rel_elsewhere.next =
            bit_cast::<3, 2>(self.rel_data.val().get_bits::<2>(12)) >= self.ports.val();
        for i in 0..P {
            self.to_engine_valid[i].next = self.cfg_valid.val()
                & ((self.cfg.clop.val().get_bits::<2>(4) == self.engine_ids[i].val())
                    | (self.cfg_elsewhere.val() & (self.engine_ids[i].val() == 0)));
            self.to_engine[i].op.next = self.cfg.op.val();
            self.to_engine[i].clop.next = self.cfg.clop.val();
            self.to_engine[i].base.next = self.cfg.base.val();
            self.to_engine[i].buf_size.next = self.cfg.buf_size.val();
            self.to_engine[i].buf_count.next = self.cfg.buf_count.val();
            self.to_engine[i].slot.next = self.cfg.slot.val();
            self.to_engine[i].page.next = self.cfg.page.val();
            self.to_engine[i].header.next = self.cfg.header.val();
            self.to_engine[i].skip.next = self.cfg.skip.val();
            self.to_engine[i].timeout.next = self.cfg.timeout.val();
            self.release[i].valid.next = self.rel_valid.val()
                & ((self.rel_data.val().get_bits::<2>(12) == self.engine_ids[i].val())
                    | (self.rel_elsewhere.val() & (self.engine_ids[i].val() == 0)));
            self.release[i].clop.next = self.rel_data.val().get_bits::<6>(8);
            self.release[i].buf.next = self.rel_data.val().get_bits::<8>(0);
        }
    }
}

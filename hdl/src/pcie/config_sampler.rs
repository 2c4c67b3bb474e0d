//! The card's PCIe ID from the Stratix V Hard IP's configuration bus.
//!
//! The Hard IP shows its configuration registers one at a time: `tl_cfg_ctl` carries the register
//! `tl_cfg_add` names, and both move on to the next register every four or eight core cycles,
//! with no strobe (the Stratix V Hard IP has no `tl_cfg_ctl_wr`; the paths are multicycle). At
//! address 0xF, `tl_cfg_ctl[12:0]` is the bus number (bits 12:5) and device number (4:0) the root
//! complex gave the card when it enumerated it (0 before). The sampler registers the bus and takes
//! the value when the address has read 0xF on three consecutive cycles: the value taken was then
//! launched at least two cycles after the address changed, well inside the window, whether the
//! Hard IP holds each register for four cycles or eight. (Intel's example does the same: it waits
//! for a change of the address to settle and samples in the middle of the window.)
//!
//! It samples in reset too (the bus keeps cycling through a reset of the card), so the ID is
//! there when the reset ends. The ID is `{bus, device, function 0}`: the requester ID of the card's reads and writes and the
//! completer ID of its completions. Root complexes route completions, and IOMMUs translate DMA, by
//! the requester ID, so with a wrong ID the card's reads never complete and its writes fault.

use rust_hdl::prelude::*;

/// The configuration bus address of the bus/device number.
pub const CFG_ADD_BUSDEV: u8 = 0xF;

#[derive(LogicBlock, Default)]
pub struct PcieConfigSampler {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// The Hard IP's `tl_cfg_add` and `tl_cfg_ctl`.
    pub cfg_add: Signal<In, Bits<4>>,
    pub cfg_ctl: Signal<In, Bits<32>>,
    /// Bus, device, function 0.
    pub pcie_id: Signal<Out, Bits<16>>,

    add_1: DFF<Bits<4>>,
    add_2: DFF<Bits<4>>,
    add_3: DFF<Bits<4>>,
    busdev_1: DFF<Bits<13>>,
    busdev: DFF<Bits<13>>,
}

impl Logic for PcieConfigSampler {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, add_1, add_2, add_3, busdev_1, busdev);
        self.add_1.d.next = self.cfg_add.val();
        self.add_2.d.next = self.add_1.q.val();
        self.add_3.d.next = self.add_2.q.val();
        self.busdev_1.d.next = self.cfg_ctl.val().get_bits::<13>(0);
        if (self.add_1.q.val() == 0xF) & (self.add_2.q.val() == 0xF) & (self.add_3.q.val() == 0xF) {
            self.busdev.d.next = self.busdev_1.q.val();
        }
        self.pcie_id.next = bit_cast::<16, 13>(self.busdev.q.val()) << 3;
    }
}

//! Sets up the 10-Gbps Ethernet MACs (`altera_eth_10g_mac`) at start-up through their CSR
//! interfaces (Avalon-MM, 32-bit words, `csr_address` a word address), the same writes to every
//! MAC: both paths stopped, every setting the card depends on written (not left to a reset value),
//! both paths started again. The card's network side leaves reset only after this (`done`).
//!
//! The settings ([`MAC_SETUP`]; word addresses of the MAC's register map in Intel's 10-Gbps
//! Ethernet MAC user guide, byte offset / 4):
//! - receive: the FCS removed, pads kept (the card reads the IPv4 length; `rx_padcrc_control` 1),
//!   the CRC checked (`rx_crccheck_control` bit 1), frames up to the card's longest
//!   (`MAX_FRAME_BYTES` and the FCS: `rx_frame_maxlength`), every unicast and multicast address
//!   taken (`rx_frame_control` 3: the offload core filters by its own address);
//! - transmit: the FCS inserted (`tx_crcins_control` 3), short frames padded
//!   (`tx_padins_control` 1), the card's source address kept (`tx_addrins_control` 0), frames up
//!   to the card's longest (`tx_frame_maxlength`).
//!
//! A write to a MAC completes in the cycle its `waitrequest` is low; the next write goes out when
//! every MAC has taken the current one.

use nanet_contract::offload::MAX_FRAME_BYTES;
use rust_hdl::prelude::*;

/// The MAC's registers the card writes (word addresses).
pub const RX_TRANSFER_CONTROL: u16 = 0x000;
pub const RX_PADCRC_CONTROL: u16 = 0x040;
pub const RX_CRCCHECK_CONTROL: u16 = 0x080;
pub const RX_FRAME_CONTROL: u16 = 0x800;
pub const RX_FRAME_MAXLENGTH: u16 = 0x801;
pub const TX_TRANSFER_CONTROL: u16 = 0x1000;
pub const TX_PADINS_CONTROL: u16 = 0x1040;
pub const TX_CRCINS_CONTROL: u16 = 0x1080;
pub const TX_ADDRINS_CONTROL: u16 = 0x1200;
pub const TX_FRAME_MAXLENGTH: u16 = 0x1801;

/// The longest frame on the wire the card sends or takes, with its FCS.
pub const MAC_MAX_FRAME: u32 = MAX_FRAME_BYTES as u32 + 4;

/// The writes, in order: (word address, value).
pub const MAC_SETUP: [(u16, u32); 12] = [
    (RX_TRANSFER_CONTROL, 1),
    (TX_TRANSFER_CONTROL, 1),
    (RX_PADCRC_CONTROL, 1),
    (RX_CRCCHECK_CONTROL, 2),
    (RX_FRAME_MAXLENGTH, MAC_MAX_FRAME),
    (RX_FRAME_CONTROL, 3),
    (TX_PADINS_CONTROL, 1),
    (TX_CRCINS_CONTROL, 3),
    (TX_ADDRINS_CONTROL, 0),
    (TX_FRAME_MAXLENGTH, MAC_MAX_FRAME),
    (RX_TRANSFER_CONTROL, 0),
    (TX_TRANSFER_CONTROL, 0),
];

/// The MACs of a board (four; the top ties the CSR ports of absent ones so they take every write).
pub const MACS: usize = 4;

#[derive(LogicBlock)]
pub struct MacCsrInit {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// Begin (held high; once per reset).
    pub start: Signal<In, Bit>,
    pub done: Signal<Out, Bit>,
    /// The CSR interface of every MAC: address and data shared, a write strobe each.
    pub csr_address: Signal<Out, Bits<13>>,
    pub csr_writedata: Signal<Out, Bits<32>>,
    pub csr_write: Signal<Out, Bits<4>>,
    pub csr_waitrequest: Signal<In, Bits<4>>,

    rom: ROM<Bits<45>, 4>,
    last_step: Constant<Bits<4>>,
    busy: DFF<Bit>,
    finished: DFF<Bit>,
    step: DFF<Bits<4>>,
    /// The MACs that have not taken the current write.
    pending: DFF<Bits<4>>,
    taken: Signal<Local, Bits<4>>,
}

impl Default for MacCsrInit {
    fn default() -> Self {
        let rom = ROM::new(
            MAC_SETUP
                .iter()
                .enumerate()
                .map(|(i, &(a, v))| (i.to_bits(), ((a as u64) << 32 | v as u64).to_bits()))
                .collect(),
        );
        Self {
            clock: Default::default(),
            reset: Default::default(),
            start: Default::default(),
            done: Default::default(),
            csr_address: Default::default(),
            csr_writedata: Default::default(),
            csr_write: Default::default(),
            csr_waitrequest: Default::default(),
            rom,
            last_step: Constant::new((MAC_SETUP.len() - 1).to_bits()),
            busy: Default::default(),
            finished: Default::default(),
            step: Default::default(),
            pending: Default::default(),
            taken: Default::default(),
        }
    }
}

impl Logic for MacCsrInit {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, busy, finished, step, pending);
        self.rom.address.next = self.step.q.val();
        self.csr_address.next = self.rom.data.val().get_bits::<13>(32);
        self.csr_writedata.next = self.rom.data.val().get_bits::<32>(0);
        self.csr_write.next = self.pending.q.val();
        self.done.next = self.finished.q.val();
        // A MAC takes the write in a cycle its waitrequest is low.
        self.taken.next = self.pending.q.val() & !self.csr_waitrequest.val();

        if !self.busy.q.val() & !self.finished.q.val() & self.start.val() {
            self.busy.d.next = true;
            self.step.d.next = 0.into();
            self.pending.d.next = 0xF.into();
        } else if self.busy.q.val() {
            self.pending.d.next = self.pending.q.val() & !self.taken.val();
            if (self.pending.q.val() & !self.taken.val()) == 0 {
                if self.step.q.val() == self.last_step.val() {
                    self.busy.d.next = false;
                    self.finished.d.next = true;
                } else {
                    self.step.d.next = self.step.q.val() + 1;
                    self.pending.d.next = 0xF.into();
                }
            }
        }
        if self.reset.val() {
            self.busy.d.next = false;
            self.finished.d.next = false;
            self.pending.d.next = 0.into();
        }
    }
}

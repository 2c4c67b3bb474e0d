//! The card's register file on BAR0: decodes the BAR0 target's register accesses
//! (`pcie/target.rs`) onto the card's blocks, as `nanet_contract::bar0` lays them out:
//! - the card block (words `0x000..0x040`): the identification words and block table of
//!   `nanet_contract::card` (constants, generated from the contract) and the card-wide counters;
//! - the receive engine (words `0x400..0x500`) and the transmit engine (words `0x600..0x640`):
//!   their core-domain buses, read data up to three cycles after the address;
//! - port `p` (words `0x800 + 0x400 * p`, 128 each) of the card's `P` ports: across
//!   `card/reg_bridge.rs` into the network domain.
//!
//! Anything else is unmapped: writes are ignored, reads return 0, and both are counted.
//! One access at a time: each is taken into registers and decoded from them a cycle later (for
//! timing), and `busy` holds the target back meanwhile, while a read is answered and while a port
//! access crosses the bridge. A write to an engine leaves on the engine's registered bus two
//! cycles after it came, ahead of whatever access comes next, so writes take effect in the order
//! the host made them, whichever domain they go to, and a read after a write sees it.

use array_init::array_init;
use nanet_contract::card::{self, CardReg};
use nanet_contract::pcie::PcieVariant;
use nanet_contract::rx::MAX_PORTS;
use rust_hdl::prelude::*;

/// Words of the card block that read as constants (identification and block table, for the most
/// ports; a card with fewer reads 0 after its last block).
/// The table: the card block, the receive engine, and a transmit ring and a port block per port.
const CONSTANT_WORDS: usize = card::BLOCK_TABLE as usize + 2 + 2 * MAX_PORTS;

#[derive(Copy, Clone, Debug, PartialEq, LogicState)]
enum Bar0State {
    Idle,
    Decode,
    CardTake,
    RxRead,
    RxReadWait,
    RxReadTake,
    Bridge,
}

/// The register file of a card with `P` ports and a `W`-bit core datapath (which names the PCIe
/// variant the card block's `pcie` word reads).
#[derive(LogicBlock)]
pub struct Bar0Regs<const P: usize, const W: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,

    /// From the BAR0 target: dword address in BAR0, write/read strobes, read answer.
    pub addr: Signal<In, Bits<14>>,
    pub wdata: Signal<In, Bits<32>>,
    pub write: Signal<In, Bit>,
    pub read: Signal<In, Bit>,
    pub rdata: Signal<Out, Bits<32>>,
    pub rvalid: Signal<Out, Bit>,
    pub busy: Signal<Out, Bit>,

    /// Pulses counted in the card block.
    pub pcie_unsupported: Signal<In, Bit>,
    pub pcie_dropped: Signal<In, Bit>,
    pub msi_sent: Signal<In, Bit>,
    /// A TLP waits for flow-control credits this cycle.
    pub credit_wait: Signal<In, Bit>,
    /// The DMA read engine dropped a completion no read asked for / a read timed out.
    pub cpl_unexpected: Signal<In, Bit>,
    pub cpl_timed_out: Signal<In, Bit>,
    /// A DMA read request waits for a tag this cycle (`PcieRead::tags_full`).
    pub read_tags_full: Signal<In, Bit>,
    /// A receive beat was lost (the Hard IP's ready latency broken).
    pub rx_overflow: Signal<In, Bit>,

    /// The receive engine's bus (core domain).
    pub rx_addr: Signal<Out, Bits<8>>,
    pub rx_wdata: Signal<Out, Bits<32>>,
    pub rx_write: Signal<Out, Bit>,
    pub rx_rdata: Signal<In, Bits<32>>,

    /// The transmit engine's bus (core domain).
    /// Transmit ring registers: the ring in bits 7:6, its word in bits 5:0.
    pub tx_addr: Signal<Out, Bits<8>>,
    pub tx_wdata: Signal<Out, Bits<32>>,
    pub tx_write: Signal<Out, Bit>,
    pub tx_rdata: Signal<In, Bits<32>>,

    /// The ports' bus through the clock-crossing bridge.
    pub port_start: Signal<Out, Bit>,
    pub port_write: Signal<Out, Bit>,
    pub port_sel: Signal<Out, Bits<2>>,
    pub port_word: Signal<Out, Bits<7>>,
    pub port_wdata: Signal<Out, Bits<32>>,
    pub port_busy: Signal<In, Bit>,
    pub port_done: Signal<In, Bit>,
    pub port_rdata: Signal<In, Bits<32>>,

    constants: [Constant<Bits<32>>; CONSTANT_WORDS],
    state: DFF<Bar0State>,
    out: DFF<Bits<32>>,
    out_valid: DFF<Bit>,
    /// The card block's word at the access's address, a cycle after `Decode`, in two parts: the
    /// constants' and the counters' (for timing: each multiplexer on its own, off the answer's).
    card_const_q: DFF<Bits<32>>,
    card_count_q: DFF<Bits<32>>,
    /// The access through the bridge is a read.
    reading: DFF<Bit>,
    /// The read in progress is the transmit engine's.
    tx_read: DFF<Bit>,
    /// The access, taken in `Idle` and decoded from these registers in `Decode` (for timing: the
    /// target's address multiplexer stays off the decode). They are also the engines' buses
    /// (from flip-flops: the decode stays here), with the write strobes a cycle after `Decode`.
    acc_addr: DFF<Bits<14>>,
    acc_write: DFF<Bit>,
    acc_read: DFF<Bit>,
    bus_wdata: DFF<Bits<32>>,
    rx_write_q: DFF<Bit>,
    tx_write_q: DFF<Bit>,
    unsupported: DFF<Bits<32>>,
    dropped: DFF<Bits<32>>,
    unmapped: DFF<Bits<32>>,
    interrupts: DFF<Bits<32>>,
    credit_waits: DFF<Bits<32>>,
    unexpected_cpls: DFF<Bits<32>>,
    cpl_timeouts: DFF<Bits<32>>,
    rx_overflows: DFF<Bits<32>>,
    read_tag_waits: DFF<Bits<32>>,
    /// The read engine's pulses, registered (for timing: they come from its header logic).
    cpl_unexpected_q: DFF<Bit>,
    cpl_timed_out_q: DFF<Bit>,
    read_tags_full_q: DFF<Bit>,

    /// The first page after the last port's (the generated Verilog has no parameters).
    port_pages_end: Constant<Bits<4>>,
    /// The card's transmit rings (one per port).
    tx_rings: Constant<Bits<3>>,
    /// The ring a transmit-block address names.
    tx_ring: Signal<Local, Bits<3>>,
    page: Signal<Local, Bits<4>>,
    /// `page - 2`: the port, for port pages.
    port_page: Signal<Local, Bits<4>>,
    is_card: Signal<Local, Bit>,
    is_rx: Signal<Local, Bit>,
    is_tx: Signal<Local, Bit>,
    is_port: Signal<Local, Bit>,
    card_word: Signal<Local, Bits<6>>,
    card_const: Signal<Local, Bits<32>>,
    card_count: Signal<Local, Bits<32>>,
}

impl<const P: usize, const W: usize> Default for Bar0Regs<P, W> {
    fn default() -> Self {
        assert!((1..=MAX_PORTS).contains(&P), "1 to {MAX_PORTS} ports");
        let pcie = PcieVariant::with_beat_bits(W).expect("a core datapath of 128 or 256 bits");
        let mut words = card::constant_words(P, pcie);
        assert!(
            words.len() <= CONSTANT_WORDS,
            "the block table outgrew CONSTANT_WORDS"
        );
        words.resize(CONSTANT_WORDS, 0);
        // (The counters' words read 0 among the constants: the two parts are ORed.)
        assert!(CardReg::ALL
            .iter()
            .filter(|r| r.is_counter())
            .all(|r| words[r.index()] == 0));
        Self {
            clock: Default::default(),
            reset: Default::default(),
            addr: Default::default(),
            wdata: Default::default(),
            write: Default::default(),
            read: Default::default(),
            rdata: Default::default(),
            rvalid: Default::default(),
            busy: Default::default(),
            pcie_unsupported: Default::default(),
            pcie_dropped: Default::default(),
            msi_sent: Default::default(),
            credit_wait: Default::default(),
            cpl_unexpected: Default::default(),
            cpl_timed_out: Default::default(),
            read_tags_full: Default::default(),
            rx_overflow: Default::default(),
            rx_addr: Default::default(),
            rx_wdata: Default::default(),
            rx_write: Default::default(),
            rx_rdata: Default::default(),
            tx_addr: Default::default(),
            tx_wdata: Default::default(),
            tx_write: Default::default(),
            tx_rdata: Default::default(),
            port_start: Default::default(),
            port_write: Default::default(),
            port_sel: Default::default(),
            port_word: Default::default(),
            port_wdata: Default::default(),
            port_busy: Default::default(),
            port_done: Default::default(),
            port_rdata: Default::default(),
            constants: array_init(|i| Constant::new((words[i] as u64).into())),
            state: Default::default(),
            out: Default::default(),
            out_valid: Default::default(),
            card_const_q: Default::default(),
            card_count_q: Default::default(),
            reading: Default::default(),
            tx_read: Default::default(),
            acc_addr: Default::default(),
            acc_write: Default::default(),
            acc_read: Default::default(),
            bus_wdata: Default::default(),
            rx_write_q: Default::default(),
            tx_write_q: Default::default(),
            unsupported: Default::default(),
            dropped: Default::default(),
            unmapped: Default::default(),
            interrupts: Default::default(),
            credit_waits: Default::default(),
            unexpected_cpls: Default::default(),
            cpl_timeouts: Default::default(),
            rx_overflows: Default::default(),
            read_tag_waits: Default::default(),
            cpl_unexpected_q: Default::default(),
            cpl_timed_out_q: Default::default(),
            read_tags_full_q: Default::default(),
            port_pages_end: Constant::new((2 + P as u64).into()),
            tx_rings: Constant::new((P as u64).into()),
            tx_ring: Default::default(),
            page: Default::default(),
            port_page: Default::default(),
            is_card: Default::default(),
            is_rx: Default::default(),
            is_tx: Default::default(),
            is_port: Default::default(),
            card_word: Default::default(),
            card_const: Default::default(),
            card_count: Default::default(),
        }
    }
}

// The kernel's literal words must be the contract's.
const _: () = {
    assert!(CardReg::ReadTagWaits.word() == 7);
    assert!(CardReg::PcieUnsupported.word() == 8);
    assert!(CardReg::PcieDropped.word() == 9);
    assert!(CardReg::Unmapped.word() == 10);
    assert!(CardReg::Interrupts.word() == 11);
    assert!(CardReg::CreditWaits.word() == 12);
    assert!(CardReg::CplUnexpected.word() == 13);
    assert!(CardReg::CplTimeouts.word() == 14);
    assert!(CardReg::PcieRxOverflow.word() == 15);
    assert!(nanet_contract::bar0::RX_ENGINE == 0x1000);
    assert!(nanet_contract::bar0::PORT0 == 0x2000);
    assert!(nanet_contract::bar0::PORT_STRIDE == 0x1000);
    assert!(nanet_contract::bar0::CARD_WORDS == 64);
    assert!(nanet_contract::bar0::PORT_WORDS == 128);
    assert!(nanet_contract::bar0::RX_WORDS == 256);
    assert!(nanet_contract::bar0::TX_ENGINE == 0x1800);
    assert!(nanet_contract::bar0::TX_WORDS == 64);
    assert!(MAX_PORTS == 4);
};

impl<const P: usize, const W: usize> Logic for Bar0Regs<P, W> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            state,
            out,
            out_valid,
            card_const_q,
            card_count_q,
            reading,
            tx_read,
            acc_addr,
            acc_write,
            acc_read,
            bus_wdata,
            rx_write_q,
            tx_write_q,
            unsupported,
            dropped,
            unmapped,
            interrupts,
            credit_waits,
            unexpected_cpls,
            cpl_timeouts,
            rx_overflows,
            read_tag_waits,
            cpl_unexpected_q,
            cpl_timed_out_q,
            read_tags_full_q
        );

        // ---- decode -------------------------------------------------------------------------
        self.page.next = self.acc_addr.q.val().get_bits::<4>(10);
        self.is_card.next = (self.page.val() == 0) & (self.acc_addr.q.val().get_bits::<4>(6) == 0);
        self.is_rx.next = (self.page.val() == 1) & (self.acc_addr.q.val().get_bits::<2>(8) == 0);
        // Ring r's block at words 0x600 + 0x40 r (`bar0::tx_ring`), for the card's rings.
        self.tx_ring.next = bit_cast::<3, 2>(self.acc_addr.q.val().get_bits::<2>(6));
        self.is_tx.next = (self.page.val() == 1)
            & (self.acc_addr.q.val().get_bits::<2>(8) == 2)
            & (self.tx_ring.val() < self.tx_rings.val());
        self.is_port.next = (self.page.val() >= 2)
            & (self.page.val() < self.port_pages_end.val())
            & (self.acc_addr.q.val().get_bits::<3>(7) == 0);
        self.card_word.next = self.acc_addr.q.val().get_bits::<6>(0);
        self.card_const.next = 0.into();
        for i in 0..CONSTANT_WORDS {
            if self.card_word.val().index() == i {
                self.card_const.next = self.constants[i].val();
            }
        }
        self.card_count.next = 0.into();
        match self.card_word.val().index() {
            7 => self.card_count.next = self.read_tag_waits.q.val(),
            8 => self.card_count.next = self.unsupported.q.val(),
            9 => self.card_count.next = self.dropped.q.val(),
            10 => self.card_count.next = self.unmapped.q.val(),
            11 => self.card_count.next = self.interrupts.q.val(),
            12 => self.card_count.next = self.credit_waits.q.val(),
            13 => self.card_count.next = self.unexpected_cpls.q.val(),
            14 => self.card_count.next = self.cpl_timeouts.q.val(),
            15 => self.card_count.next = self.rx_overflows.q.val(),
            _ => {}
        }
        self.card_const_q.d.next = self.card_const.val();
        self.card_count_q.d.next = self.card_count.val();

        // ---- card-wide counters -------------------------------------------------------------
        if self.pcie_unsupported.val() {
            self.unsupported.d.next = self.unsupported.q.val() + 1;
        }
        if self.pcie_dropped.val() {
            self.dropped.d.next = self.dropped.q.val() + 1;
        }
        if self.msi_sent.val() {
            self.interrupts.d.next = self.interrupts.q.val() + 1;
        }
        if self.rx_overflow.val() {
            self.rx_overflows.d.next = self.rx_overflows.q.val() + 1;
        }
        if self.credit_wait.val() {
            self.credit_waits.d.next = self.credit_waits.q.val() + 1;
        }
        self.cpl_unexpected_q.d.next = self.cpl_unexpected.val();
        self.cpl_timed_out_q.d.next = self.cpl_timed_out.val();
        if self.cpl_unexpected_q.q.val() {
            self.unexpected_cpls.d.next = self.unexpected_cpls.q.val() + 1;
        }
        if self.cpl_timed_out_q.q.val() {
            self.cpl_timeouts.d.next = self.cpl_timeouts.q.val() + 1;
        }
        self.read_tags_full_q.d.next = self.read_tags_full.val();
        if self.read_tags_full_q.q.val() {
            self.read_tag_waits.d.next = self.read_tag_waits.q.val() + 1;
        }

        // ---- the access ---------------------------------------------------------------------
        // An engine sees the access's address a cycle after it came and a write's strobe two
        // (its read data up to three cycles after the address, taken in `RxReadTake`; a write reaches its register before the next access
        // does).
        self.rx_addr.next = self.acc_addr.q.val().get_bits::<8>(0);
        self.rx_wdata.next = self.bus_wdata.q.val();
        self.rx_write.next = self.rx_write_q.q.val();
        self.tx_addr.next = self.acc_addr.q.val().get_bits::<8>(0);
        self.tx_wdata.next = self.bus_wdata.q.val();
        self.tx_write.next = self.tx_write_q.q.val();
        self.rx_write_q.d.next = false;
        self.tx_write_q.d.next = false;
        if self.state.q.val() == Bar0State::Idle {
            self.acc_addr.d.next = self.addr.val();
            self.acc_write.d.next = self.write.val();
            self.acc_read.d.next = self.read.val();
            self.bus_wdata.d.next = self.wdata.val();
        }
        self.port_start.next = false;
        self.port_write.next = self.acc_write.q.val();
        self.port_page.next = self.page.val() - 2;
        self.port_sel.next = self.port_page.val().get_bits::<2>(0);
        self.port_word.next = self.acc_addr.q.val().get_bits::<7>(0);
        self.port_wdata.next = self.bus_wdata.q.val();
        self.rdata.next = self.out.q.val();
        self.rvalid.next = self.out_valid.q.val();
        self.out_valid.d.next = false;
        self.busy.next = (self.state.q.val() != Bar0State::Idle) | self.port_busy.val();

        match self.state.q.val() {
            Bar0State::Idle => {
                if self.write.val() | self.read.val() {
                    self.state.d.next = Bar0State::Decode;
                }
            }
            Bar0State::Decode => {
                self.state.d.next = Bar0State::Idle;
                if self.is_card.val() {
                    if self.acc_read.q.val() {
                        self.state.d.next = Bar0State::CardTake;
                    }
                } else if self.is_rx.val() | self.is_tx.val() {
                    self.rx_write_q.d.next = self.acc_write.q.val() & self.is_rx.val();
                    self.tx_write_q.d.next = self.acc_write.q.val() & self.is_tx.val();
                    self.tx_read.d.next = self.is_tx.val();
                    if self.acc_read.q.val() {
                        self.state.d.next = Bar0State::RxRead;
                    }
                } else if self.is_port.val() {
                    self.port_start.next = true;
                    self.reading.d.next = self.acc_read.q.val();
                    self.state.d.next = Bar0State::Bridge;
                } else {
                    self.unmapped.d.next = self.unmapped.q.val() + 1;
                    self.out.d.next = 0.into();
                    self.out_valid.d.next = self.acc_read.q.val();
                }
            }
            Bar0State::CardTake => {
                self.out.d.next = self.card_const_q.q.val() | self.card_count_q.q.val();
                self.out_valid.d.next = true;
                self.state.d.next = Bar0State::Idle;
            }
            Bar0State::RxRead => {
                // An engine's read data follows its address (on the bus since `Decode`) by up to
                // three cycles (the receive engine's registers decode the address in a register
                // first and show the data from one, for timing).
                self.state.d.next = Bar0State::RxReadWait;
            }
            Bar0State::RxReadWait => {
                self.state.d.next = Bar0State::RxReadTake;
            }
            Bar0State::RxReadTake => {
                self.out.d.next = self.rx_rdata.val();
                if self.tx_read.q.val() {
                    self.out.d.next = self.tx_rdata.val();
                }
                self.out_valid.d.next = true;
                self.state.d.next = Bar0State::Idle;
            }
            Bar0State::Bridge => {
                if self.port_done.val() {
                    self.out.d.next = self.port_rdata.val();
                    self.out_valid.d.next = self.reading.q.val();
                    self.state.d.next = Bar0State::Idle;
                }
            }
        }
        if self.reset.val() {
            self.state.d.next = Bar0State::Idle;
            self.out_valid.d.next = false;
            self.rx_write_q.d.next = false;
            self.tx_write_q.d.next = false;
            self.unsupported.d.next = 0.into();
            self.dropped.d.next = 0.into();
            self.unmapped.d.next = 0.into();
            self.interrupts.d.next = 0.into();
            self.credit_waits.d.next = 0.into();
            self.unexpected_cpls.d.next = 0.into();
            self.cpl_timeouts.d.next = 0.into();
            self.rx_overflows.d.next = 0.into();
            self.read_tag_waits.d.next = 0.into();
        }
    }
}

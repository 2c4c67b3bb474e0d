//! The CLOP engine's per-CLOP store: configuration, position, state and stage times of up to 64
//! CLOPs in RAMs indexed by the CLOP id, packed in the words `nanet_contract::packed::clop_ram`
//! names (positions as Verilog localparams). Fields in, fields out: nothing else knows the layout.
//!
//! One read port (`rd_clop`: the fields of that CLOP appear on `rd_*` a cycle later, straight from
//! the RAMs' output registers) and one write port (`wr_clop`; `wr_cfg` writes the base, the
//! configuration word and the timeout, `wr_state` the position and state words, `wr_stamps` the
//! stage times). A read of a CLOP written in the same cycle returns the old words.

use nanet_contract::packed::{clop_ram, BitField};
use rust_hdl::prelude::*;

use crate::common::position::bit_position;

// The widths the block declares, against the contract's.
const _: () = assert!(
    clop_ram::cfg::WIDTH == 45
        && clop_ram::cfg::SIZE.width == 24
        && clop_ram::cfg::COUNT.width == 9
        && clop_ram::cfg::SLOT.width == 7
        && clop_ram::cfg::PAGE.width == 2
        && clop_ram::cfg::HEADER.width == 1
        && clop_ram::cfg::SKIP.width == 1
        && clop_ram::cfg::ENABLED.width == 1
        && clop_ram::pos::WIDTH == 64
        && clop_ram::pos::CUR.width == 8
        && clop_ram::pos::OFFSET.width == 24
        && clop_ram::pos::BUF_OFF.width == 32
        && clop_ram::state::WIDTH == 83
        && clop_ram::state::SEQ.width == 16
        && clop_ram::state::FIRST_SEQ.width == 16
        && clop_ram::state::PACKETS.width == 16
        && clop_ram::state::OPEN.width == 1
        && clop_ram::state::STARVED.width == 1
        && clop_ram::state::DL_VALID.width == 1
        && clop_ram::state::DEADLINE.width == 32
        && clop_ram::stamps::WIDTH == 128
        && clop_ram::stamps::SOP.width == 32
        && clop_ram::stamps::HEADER.width == 32
        && clop_ram::stamps::FIRST_DMA.width == 32
        && clop_ram::stamps::LAST_DMA.width == 32
);

fn at(f: BitField) -> Constant<Bits<8>> {
    bit_position(f.lsb)
}

#[derive(LogicBlock)]
pub struct ClopStore {
    pub clock: Signal<In, Clock>,

    // ---- read port: the fields of CLOP `rd_clop`, a cycle later --------------------------------
    pub rd_clop: Signal<In, Bits<6>>,
    /// Virtual base of the region.
    pub rd_base: Signal<Out, Bits<64>>,
    pub rd_size: Signal<Out, Bits<24>>,
    pub rd_count: Signal<Out, Bits<9>>,
    pub rd_slot: Signal<Out, Bits<7>>,
    pub rd_page: Signal<Out, Bits<2>>,
    pub rd_header: Signal<Out, Bit>,
    pub rd_skip: Signal<Out, Bit>,
    pub rd_enabled: Signal<Out, Bit>,
    /// Flush timeout in cycles; 0: none.
    pub rd_timeout: Signal<Out, Bits<32>>,
    pub rd_cur: Signal<Out, Bits<8>>,
    pub rd_offset: Signal<Out, Bits<24>>,
    pub rd_buf_off: Signal<Out, Bits<32>>,
    pub rd_seq: Signal<Out, Bits<16>>,
    pub rd_first_seq: Signal<Out, Bits<16>>,
    pub rd_packets: Signal<Out, Bits<16>>,
    pub rd_open: Signal<Out, Bit>,
    pub rd_starved: Signal<Out, Bit>,
    pub rd_dl_valid: Signal<Out, Bit>,
    pub rd_deadline: Signal<Out, Bits<32>>,
    pub rd_t_sop: Signal<Out, Bits<32>>,
    pub rd_t_header: Signal<Out, Bits<32>>,
    pub rd_t_first_dma: Signal<Out, Bits<32>>,
    pub rd_t_last_dma: Signal<Out, Bits<32>>,

    // ---- write port ------------------------------------------------------------------------------
    pub wr_clop: Signal<In, Bits<6>>,
    pub wr_cfg: Signal<In, Bit>,
    pub wr_state: Signal<In, Bit>,
    pub wr_stamps: Signal<In, Bit>,
    pub wr_base: Signal<In, Bits<64>>,
    pub wr_size: Signal<In, Bits<24>>,
    pub wr_count: Signal<In, Bits<9>>,
    pub wr_slot: Signal<In, Bits<7>>,
    pub wr_page: Signal<In, Bits<2>>,
    pub wr_header: Signal<In, Bit>,
    pub wr_skip: Signal<In, Bit>,
    pub wr_enabled: Signal<In, Bit>,
    pub wr_timeout: Signal<In, Bits<32>>,
    pub wr_cur: Signal<In, Bits<8>>,
    pub wr_offset: Signal<In, Bits<24>>,
    pub wr_buf_off: Signal<In, Bits<32>>,
    pub wr_seq: Signal<In, Bits<16>>,
    pub wr_first_seq: Signal<In, Bits<16>>,
    pub wr_packets: Signal<In, Bits<16>>,
    pub wr_open: Signal<In, Bit>,
    pub wr_starved: Signal<In, Bit>,
    pub wr_dl_valid: Signal<In, Bit>,
    pub wr_deadline: Signal<In, Bits<32>>,
    pub wr_t_sop: Signal<In, Bits<32>>,
    pub wr_t_header: Signal<In, Bits<32>>,
    pub wr_t_first_dma: Signal<In, Bits<32>>,
    pub wr_t_last_dma: Signal<In, Bits<32>>,

    base_ram: RAM<Bits<64>, 6>,
    cfg_ram: RAM<Bits<45>, 6>,
    timeout_ram: RAM<Bits<32>, 6>,
    pos_ram: RAM<Bits<64>, 6>,
    state_ram: RAM<Bits<83>, 6>,
    stamps_ram: RAM<Bits<128>, 6>,

    at_size: Constant<Bits<8>>,
    at_count: Constant<Bits<8>>,
    at_slot: Constant<Bits<8>>,
    at_page: Constant<Bits<8>>,
    at_header: Constant<Bits<8>>,
    at_skip: Constant<Bits<8>>,
    at_enabled: Constant<Bits<8>>,
    at_cur: Constant<Bits<8>>,
    at_offset: Constant<Bits<8>>,
    at_buf_off: Constant<Bits<8>>,
    at_seq: Constant<Bits<8>>,
    at_first_seq: Constant<Bits<8>>,
    at_packets: Constant<Bits<8>>,
    at_open: Constant<Bits<8>>,
    at_starved: Constant<Bits<8>>,
    at_dl_valid: Constant<Bits<8>>,
    at_deadline: Constant<Bits<8>>,
    at_t_sop: Constant<Bits<8>>,
    at_t_header: Constant<Bits<8>>,
    at_t_first_dma: Constant<Bits<8>>,
    at_t_last_dma: Constant<Bits<8>>,
}

impl Default for ClopStore {
    fn default() -> Self {
        use clop_ram::{cfg, pos, stamps, state};
        Self {
            clock: Default::default(),
            rd_clop: Default::default(),
            rd_base: Default::default(),
            rd_size: Default::default(),
            rd_count: Default::default(),
            rd_slot: Default::default(),
            rd_page: Default::default(),
            rd_header: Default::default(),
            rd_skip: Default::default(),
            rd_enabled: Default::default(),
            rd_timeout: Default::default(),
            rd_cur: Default::default(),
            rd_offset: Default::default(),
            rd_buf_off: Default::default(),
            rd_seq: Default::default(),
            rd_first_seq: Default::default(),
            rd_packets: Default::default(),
            rd_open: Default::default(),
            rd_starved: Default::default(),
            rd_dl_valid: Default::default(),
            rd_deadline: Default::default(),
            rd_t_sop: Default::default(),
            rd_t_header: Default::default(),
            rd_t_first_dma: Default::default(),
            rd_t_last_dma: Default::default(),
            wr_clop: Default::default(),
            wr_cfg: Default::default(),
            wr_state: Default::default(),
            wr_stamps: Default::default(),
            wr_base: Default::default(),
            wr_size: Default::default(),
            wr_count: Default::default(),
            wr_slot: Default::default(),
            wr_page: Default::default(),
            wr_header: Default::default(),
            wr_skip: Default::default(),
            wr_enabled: Default::default(),
            wr_timeout: Default::default(),
            wr_cur: Default::default(),
            wr_offset: Default::default(),
            wr_buf_off: Default::default(),
            wr_seq: Default::default(),
            wr_first_seq: Default::default(),
            wr_packets: Default::default(),
            wr_open: Default::default(),
            wr_starved: Default::default(),
            wr_dl_valid: Default::default(),
            wr_deadline: Default::default(),
            wr_t_sop: Default::default(),
            wr_t_header: Default::default(),
            wr_t_first_dma: Default::default(),
            wr_t_last_dma: Default::default(),
            base_ram: Default::default(),
            cfg_ram: Default::default(),
            timeout_ram: Default::default(),
            pos_ram: Default::default(),
            state_ram: Default::default(),
            stamps_ram: Default::default(),
            at_size: at(cfg::SIZE),
            at_count: at(cfg::COUNT),
            at_slot: at(cfg::SLOT),
            at_page: at(cfg::PAGE),
            at_header: at(cfg::HEADER),
            at_skip: at(cfg::SKIP),
            at_enabled: at(cfg::ENABLED),
            at_cur: at(pos::CUR),
            at_offset: at(pos::OFFSET),
            at_buf_off: at(pos::BUF_OFF),
            at_seq: at(state::SEQ),
            at_first_seq: at(state::FIRST_SEQ),
            at_packets: at(state::PACKETS),
            at_open: at(state::OPEN),
            at_starved: at(state::STARVED),
            at_dl_valid: at(state::DL_VALID),
            at_deadline: at(state::DEADLINE),
            at_t_sop: at(stamps::SOP),
            at_t_header: at(stamps::HEADER),
            at_t_first_dma: at(stamps::FIRST_DMA),
            at_t_last_dma: at(stamps::LAST_DMA),
        }
    }
}

impl Logic for ClopStore {
    #[hdl_gen]
    fn update(&mut self) {
        self.base_ram.read_clock.next = self.clock.val();
        self.base_ram.write_clock.next = self.clock.val();
        self.cfg_ram.read_clock.next = self.clock.val();
        self.cfg_ram.write_clock.next = self.clock.val();
        self.timeout_ram.read_clock.next = self.clock.val();
        self.timeout_ram.write_clock.next = self.clock.val();
        self.pos_ram.read_clock.next = self.clock.val();
        self.pos_ram.write_clock.next = self.clock.val();
        self.state_ram.read_clock.next = self.clock.val();
        self.state_ram.write_clock.next = self.clock.val();
        self.stamps_ram.read_clock.next = self.clock.val();
        self.stamps_ram.write_clock.next = self.clock.val();

        self.base_ram.read_address.next = self.rd_clop.val();
        self.cfg_ram.read_address.next = self.rd_clop.val();
        self.timeout_ram.read_address.next = self.rd_clop.val();
        self.pos_ram.read_address.next = self.rd_clop.val();
        self.state_ram.read_address.next = self.rd_clop.val();
        self.stamps_ram.read_address.next = self.rd_clop.val();

        self.rd_base.next = self.base_ram.read_data.val();
        self.rd_timeout.next = self.timeout_ram.read_data.val();
        self.rd_size.next = self
            .cfg_ram
            .read_data
            .val()
            .get_bits::<24>(self.at_size.val().index());
        self.rd_count.next = self
            .cfg_ram
            .read_data
            .val()
            .get_bits::<9>(self.at_count.val().index());
        self.rd_slot.next = self
            .cfg_ram
            .read_data
            .val()
            .get_bits::<7>(self.at_slot.val().index());
        self.rd_page.next = self
            .cfg_ram
            .read_data
            .val()
            .get_bits::<2>(self.at_page.val().index());
        self.rd_header.next = self
            .cfg_ram
            .read_data
            .val()
            .get_bit(self.at_header.val().index());
        self.rd_skip.next = self
            .cfg_ram
            .read_data
            .val()
            .get_bit(self.at_skip.val().index());
        self.rd_enabled.next = self
            .cfg_ram
            .read_data
            .val()
            .get_bit(self.at_enabled.val().index());
        self.rd_cur.next = self
            .pos_ram
            .read_data
            .val()
            .get_bits::<8>(self.at_cur.val().index());
        self.rd_offset.next = self
            .pos_ram
            .read_data
            .val()
            .get_bits::<24>(self.at_offset.val().index());
        self.rd_buf_off.next = self
            .pos_ram
            .read_data
            .val()
            .get_bits::<32>(self.at_buf_off.val().index());
        self.rd_seq.next = self
            .state_ram
            .read_data
            .val()
            .get_bits::<16>(self.at_seq.val().index());
        self.rd_first_seq.next = self
            .state_ram
            .read_data
            .val()
            .get_bits::<16>(self.at_first_seq.val().index());
        self.rd_packets.next = self
            .state_ram
            .read_data
            .val()
            .get_bits::<16>(self.at_packets.val().index());
        self.rd_open.next = self
            .state_ram
            .read_data
            .val()
            .get_bit(self.at_open.val().index());
        self.rd_starved.next = self
            .state_ram
            .read_data
            .val()
            .get_bit(self.at_starved.val().index());
        self.rd_dl_valid.next = self
            .state_ram
            .read_data
            .val()
            .get_bit(self.at_dl_valid.val().index());
        self.rd_deadline.next = self
            .state_ram
            .read_data
            .val()
            .get_bits::<32>(self.at_deadline.val().index());
        self.rd_t_sop.next = self
            .stamps_ram
            .read_data
            .val()
            .get_bits::<32>(self.at_t_sop.val().index());
        self.rd_t_header.next = self
            .stamps_ram
            .read_data
            .val()
            .get_bits::<32>(self.at_t_header.val().index());
        self.rd_t_first_dma.next = self
            .stamps_ram
            .read_data
            .val()
            .get_bits::<32>(self.at_t_first_dma.val().index());
        self.rd_t_last_dma.next = self
            .stamps_ram
            .read_data
            .val()
            .get_bits::<32>(self.at_t_last_dma.val().index());

        self.base_ram.write_address.next = self.wr_clop.val();
        self.cfg_ram.write_address.next = self.wr_clop.val();
        self.timeout_ram.write_address.next = self.wr_clop.val();
        self.pos_ram.write_address.next = self.wr_clop.val();
        self.state_ram.write_address.next = self.wr_clop.val();
        self.stamps_ram.write_address.next = self.wr_clop.val();
        self.base_ram.write_enable.next = self.wr_cfg.val();
        self.cfg_ram.write_enable.next = self.wr_cfg.val();
        self.timeout_ram.write_enable.next = self.wr_cfg.val();
        self.pos_ram.write_enable.next = self.wr_state.val();
        self.state_ram.write_enable.next = self.wr_state.val();
        self.stamps_ram.write_enable.next = self.wr_stamps.val();

        self.base_ram.write_data.next = self.wr_base.val();
        self.timeout_ram.write_data.next = self.wr_timeout.val();
        self.cfg_ram.write_data.next = (bit_cast::<45, 24>(self.wr_size.val())
            << self.at_size.val())
            | (bit_cast::<45, 9>(self.wr_count.val()) << self.at_count.val())
            | (bit_cast::<45, 7>(self.wr_slot.val()) << self.at_slot.val())
            | (bit_cast::<45, 2>(self.wr_page.val()) << self.at_page.val())
            | (bit_cast::<45, 1>(self.wr_header.val().into()) << self.at_header.val())
            | (bit_cast::<45, 1>(self.wr_skip.val().into()) << self.at_skip.val())
            | (bit_cast::<45, 1>(self.wr_enabled.val().into()) << self.at_enabled.val());
        self.pos_ram.write_data.next = (bit_cast::<64, 8>(self.wr_cur.val()) << self.at_cur.val())
            | (bit_cast::<64, 24>(self.wr_offset.val()) << self.at_offset.val())
            | (bit_cast::<64, 32>(self.wr_buf_off.val()) << self.at_buf_off.val());
        self.state_ram.write_data.next = (bit_cast::<83, 16>(self.wr_seq.val())
            << self.at_seq.val())
            | (bit_cast::<83, 16>(self.wr_first_seq.val()) << self.at_first_seq.val())
            | (bit_cast::<83, 16>(self.wr_packets.val()) << self.at_packets.val())
            | (bit_cast::<83, 1>(self.wr_open.val().into()) << self.at_open.val())
            | (bit_cast::<83, 1>(self.wr_starved.val().into()) << self.at_starved.val())
            | (bit_cast::<83, 1>(self.wr_dl_valid.val().into()) << self.at_dl_valid.val())
            | (bit_cast::<83, 32>(self.wr_deadline.val()) << self.at_deadline.val());
        self.stamps_ram.write_data.next = (bit_cast::<128, 32>(self.wr_t_sop.val())
            << self.at_t_sop.val())
            | (bit_cast::<128, 32>(self.wr_t_header.val()) << self.at_t_header.val())
            | (bit_cast::<128, 32>(self.wr_t_first_dma.val()) << self.at_t_first_dma.val())
            | (bit_cast::<128, 32>(self.wr_t_last_dma.val()) << self.at_t_last_dma.val());
    }
}

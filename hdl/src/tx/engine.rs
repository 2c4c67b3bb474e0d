//! The transmit engine of one ring in the core domain (250 MHz): ring `ring` of
//! `nanet_contract::tx`, read by DMA (`pcie/read.rs`, shared with the other rings through
//! `tx/rings.rs`), into its port's transmit FIFO. At the core datapath's width `W`: 128 bits
//! (Gen2 x8) or 256 (Gen3 x8).
//!
//! Three parts share one in-order stream of read data:
//! - **Fetch**: descriptors between `fetch` and the doorbell's `tail` are read in batches of up
//!   to 8 (256 bytes, never past the ring's end or a 4 KiB boundary) into a 32-entry descriptor
//!   queue (a descriptor is two read beats at 128 bits, one at 256); a batch is issued only when
//!   the queue has room for all of it. Its size and address are computed into registers over
//!   four stages (for timing: the ring's mask; each limit
//!   clamped to 8; the minimum of each pair; theirs), so no batch goes out in the three cycles
//!   after one did or the four after a register was written. A doorbell is checked a cycle after
//!   its write and applied a cycle after that.
//! - **Issue**: the queue's head is checked (length 1 to 1472, the ring's port, buffer
//!   16-byte aligned, its read did not fail). A good one waits for room in its port's FIFO for
//!   the whole datagram, counting what earlier datagrams still in flight will write
//!   (`port_used`, registered, + `inflight_over`; the entries it needs are worked out as it
//!   enters the queue), then its payload reads are issued (up to 256 bytes, never across 4 KiB; each read's
//!   length is computed into a register the cycle before it goes, so a datagram's reads go out
//!   at most one per two cycles). The check and the room are registered (for timing): a head is
//!   taken the cycle after it was checked, never the cycle after a take. A take and a descriptor
//!   batch's read may share a cycle (neither waits on the other's decision, nor the take on the
//!   read engine's answer). A run of refused descriptors goes at one per two cycles; a small good
//!   datagram holds the issuer for three (take, read length, read). Every datagram, good or
//!   refused, goes to a 32-entry in-flight queue, so up to 32 datagrams' reads are
//!   outstanding at once and small datagrams keep the link busy (the reads queue below, 32
//!   entries for descriptor batches and payload reads until their last beat is taken, bounds
//!   the reads in flight to the read engine's 32 tags).
//! - **Write**: in ring order, a datagram's header entry and then its payload entries go to its
//!   port's FIFO, one per read beat. At 256 bits a payload read whose lines are odd in number
//!   ends in a half beat. A datagram's last read may: its half beat is written as the last
//!   entry. Before it, only the read ending at a 4 KiB boundary can (the buffer 16 bytes past a
//!   32-byte boundary): its line is held (`pend`) and joined with the next beat's lower half,
//!   and the entries after it are so joined until another half beat evens them (a held line
//!   that ends the datagram goes alone, a cycle later). Then `head` advances and, if the
//!   descriptor asks for it, a `TxDone` event record goes to the event queue; a refused
//!   descriptor or a failed read raises `TxError` and is counted. A read that fails in the
//!   middle of a payload ends the datagram with `error` set (the port sends it with a MAC error,
//!   so no receiver takes it). The FIFO writes leave through registers.
//! - **Disable** (`RingSize` bit 31 cleared): fetch stops, and until the engine holds nothing of
//!   the ring (`draining`, `TxReg::Status`) descriptors reaching the queue's head are discarded
//!   (one per cycle, counted) instead of taken; datagrams already taken are sent (their reads
//!   are out), without events, and `head` stays 0. A ring enabled again meanwhile waits: it
//!   fetches only once the old one has drained, so none of the old datagrams counts into the
//!   new ring's `head`, and the host frees the old memory only after `Status` says idle.
//!
//! Read data is routed by a queue of the reads issued (descriptor batch or payload, with the
//! cycle it was issued): reads come back in the order they were issued.
//!
//! Port FIFO entries are `W` bits (a read beat: little-endian memory lanes for payload) with an
//! 8-bit tag, both laid out in `nanet_contract::packed::tx_entry`. One entry per cycle: 32 Gb/s
//! at 128 bits, 64 at 256, for one port's 10.

use nanet_contract::events::EventKind;
use nanet_contract::packed::tx_entry;
use nanet_contract::tx::TxReg;
use rust_hdl::prelude::*;

use crate::common::adders::Add3;
use crate::common::datapath_width::DatapathWidth;
use crate::common::event_record::EventPack;
use crate::common::sync_fifo::SyncFifo;
use crate::tx::descriptor::TxDescUnpack;

// The kernel's literal words and event codes must be the contract's.
const _: () = assert!(
    TxReg::RingBaseLo.word() == 0
        && TxReg::RingBaseHi.word() == 1
        && TxReg::RingSize.word() == 2
        && TxReg::Tail.word() == 3
        && TxReg::Head.word() == 4
        && TxReg::Sent.word() == 16
        && TxReg::BadDescriptor.word() == 17
        && TxReg::ReadError.word() == 18
        && TxReg::BadTail.word() == 19
        && TxReg::Status.word() == 5
        && TxReg::Discarded.word() == 20
        && nanet_contract::tx::TX_STATUS_IDLE == 1
        && nanet_contract::tx::TX_STATUS_DRAINING == 2
        && EventKind::TxDone as u8 == 6
        && EventKind::TxError as u8 == 7
);

// The kernel's literal entry layout must be the contract's.
const _: () = assert!(
    tx_entry::tag::KIND.lsb == 0
        && tx_entry::tag::KIND.width == 2
        && tx_entry::tag::LAST_BYTES_M1.lsb == 2
        && tx_entry::tag::LAST_BYTES_M1.width == 5
        && tx_entry::tag::ERROR.lsb == 7
        && tx_entry::tag::HEADER == 0
        && tx_entry::tag::PAYLOAD == 2
        && tx_entry::tag::LAST == 3
        && tx_entry::DST_PORT.lsb == 0
        && tx_entry::SRC_PORT.lsb == 16
        && tx_entry::DST_IP.lsb == 32
        && tx_entry::LEN.lsb == 64
);

// The in-flight queue holds a datagram per read tag, the reads queue a read per tag.
const _: () = assert!(crate::pcie::read::READ_TAGS == 1 << 5);

/// Descriptors the queue holds from their batch's read to their take (`descs`, `space`'s
/// literal 32 and the clamp at 24): every datagram on its way round, so small datagrams' rate
/// is about this many per round trip.
pub const DESC_QUEUE: usize = 32;
const _: () = assert!(DESC_QUEUE == 1 << 5);

/// Entries a port's transmit FIFO holds (`port_used` counts up to this; the kernel's literal 256).
pub const PORT_FIFO_ENTRIES: u64 = 256;

#[derive(Copy, Clone, Debug, PartialEq, LogicState)]
enum WriteState {
    Idle,
    Header,
    Payload,
    Finish,
    Event,
}

#[derive(LogicBlock, Default)]
pub struct TxEngine<const W: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub now: Signal<In, Bits<32>>,

    /// Register bus (`nanet_contract::tx::TxReg`): word address, write strobe, read data two
    /// cycles after the address.
    pub reg_addr: Signal<In, Bits<6>>,
    pub reg_wdata: Signal<In, Bits<32>>,
    pub reg_write: Signal<In, Bit>,
    pub reg_rdata: Signal<Out, Bits<32>>,

    /// Reads (`pcie/read.rs`).
    pub rq_valid: Signal<Out, Bit>,
    pub rq_ready: Signal<In, Bit>,
    pub rq_addr: Signal<Out, Bits<64>>,
    pub rq_len: Signal<Out, Bits<9>>,
    pub rd_data: Signal<In, Bits<W>>,
    pub rd_last: Signal<In, Bit>,
    pub rd_error: Signal<In, Bit>,
    pub rd_valid: Signal<In, Bit>,
    pub rd_ready: Signal<Out, Bit>,

    /// Port FIFO writes: entry, tag, a strobe (never refused: room is reserved).
    pub out_data: Signal<Out, Bits<W>>,
    pub out_tag: Signal<Out, Bits<8>>,
    pub out_valid: Signal<Out, Bit>,
    /// Entries in the port's FIFO as its write side sees them (at most `PORT_FIFO_ENTRIES`).
    pub port_used: Signal<In, Bits<9>>,
    /// The ring's number, the port it sends from: descriptors for another port are refused.
    pub ring: Signal<In, Bits<2>>,

    /// Event records to the event queue.
    pub ev_valid: Signal<Out, Bit>,
    pub ev_lo: Signal<Out, Bits<128>>,
    pub ev_hi: Signal<Out, Bits<128>>,
    pub ev_ready: Signal<In, Bit>,

    width: DatapathWidth<W>,
    // registers
    base: DFF<Bits<64>>,
    size_log2: DFF<Bits<4>>,
    enable: DFF<Bit>,
    tail: DFF<Bits<16>>,
    head: DFF<Bits<16>>,
    sent: DFF<Bits<32>>,
    bad: DFF<Bits<32>>,
    /// A doorbell write, checked a cycle later (from registers only): the tail it asks for, and
    /// the ring's descriptor count (from `mask_q`), inverted: `x <= count` is bit 16 of
    /// `x + !count` (17 bits), a carry chain.
    tail_asked: DFF<Bit>,
    tail_new: DFF<Bits<16>>,
    ring_count_inv: DFF<Bits<17>>,
    /// The checked doorbell, applied a cycle later: there was one, it was good, its tail.
    tail_checked: DFF<Bit>,
    tail_ok: DFF<Bit>,
    tail_next: DFF<Bits<16>>,
    /// The doorbell being checked against the head, the tail, and the tail of the doorbell
    /// before it (which applies in this cycle, if it was good).
    from_head: Signal<Local, Bits<16>>,
    from_tail: Signal<Local, Bits<16>>,
    from_pending: Signal<Local, Bits<16>>,
    ring_count: Signal<Local, Bits<17>>,
    head_sum: Signal<Local, Bits<17>>,
    tail_sum: Signal<Local, Bits<17>>,
    pending_sum: Signal<Local, Bits<17>>,
    head_fits: Signal<Local, Bit>,
    tail_fits: Signal<Local, Bit>,
    pending_fits: Signal<Local, Bit>,
    /// Doorbell writes refused (`TxReg::BadTail`).
    bad_tail: DFF<Bits<32>>,
    read_errors: DFF<Bits<32>>,
    /// Descriptors discarded by a disable (`TxReg::Discarded`).
    discarded: DFF<Bits<32>>,
    /// A disabled ring's descriptors, reads or datagrams are still in the engine.
    draining: DFF<Bit>,
    /// The engine held nothing in the cycle before (`TX_STATUS_IDLE`, with `draining` clear).
    idle_q: DFF<Bit>,
    /// It holds nothing now: no descriptor queued or reserved for a batch in flight, no read
    /// outstanding, no datagram taken and not yet done.
    idle_now: Signal<Local, Bit>,
    /// The queue's head discarded (while draining).
    q_drop: Signal<Local, Bit>,
    /// The queue's head leaves it (taken or discarded).
    q_free: Signal<Local, Bit>,
    /// Register reads: the address registered, then the data from a register (two cycles after
    /// the address, for timing: the choice starts from flip-flops of this engine).
    read_addr: DFF<Bits<6>>,
    rdata_q: DFF<Bits<32>>,

    // ---- fetch -------------------------------------------------------------------------------
    /// The next descriptor to read.
    fetch: DFF<Bits<16>>,
    /// Descriptor queue entries taken or promised to batches in flight (0..=DESC_QUEUE).
    desc_reserved: DFF<Bits<6>>,
    /// The next batch, in four registered stages: the ring's index mask; each limit on the batch
    /// clamped to 8 (descriptors available, to the ring's end, free queue entries, to the 4 KiB
    /// boundary) and the address; the minimum of each pair; their minimum (count, length in
    /// bytes). `settling` counts the
    /// cycles until they reflect the ring registers again after anything but a queue entry's
    /// release changed them (a release only makes the registered batch smaller than it could be).
    mask_q: DFF<Bits<16>>,
    avail8: DFF<Bits<4>>,
    to_end8: DFF<Bits<4>>,
    space8: DFF<Bits<4>>,
    page8: DFF<Bits<4>>,
    min_avail_end_q: DFF<Bits<4>>,
    min_space_page_q: DFF<Bits<4>>,
    fetch_addr_q: DFF<Bits<64>>,
    batch_q: DFF<Bits<16>>,
    batch_len_q: DFF<Bits<9>>,
    settling: DFF<Bits<3>>,
    /// `settling` is 0, and the registered batch is not empty (for a shallow `rq_valid`).
    settled: DFF<Bit>,
    batch_any: DFF<Bit>,
    /// Reads issued and not yet fully taken: bit 0 a descriptor batch, bits 32:1 the cycle, bit
    /// 33 its last beat carries one line (at 256 bits: a payload read of odd lines).
    reads: SyncFifo<34, 5, 6>,
    /// Decoded descriptors: buffer 63:0, length 79:64, port 87:80, flags 95:88, dst_ip 127:96
    /// (host order), ports 159:128 (descriptor bytes 16..19), read failed 160, fetch time 192:161,
    /// the port FIFO entries the datagram needs (its header and payload entries) 199:193.
    descs: SyncFifo<200, 5, 6>,
    /// The first beat of the descriptor being assembled (at 128 bits).
    half: DFF<Bits<128>>,
    half_err: DFF<Bit>,
    second: DFF<Bit>,

    // ---- issue -------------------------------------------------------------------------------
    /// Datagrams in ring order: length 15:0, flags 23:16, dst_ip 55:24, ports 87:56, status 89:88
    /// (0 good, 1 refused, 2 descriptor read failed), fetch time 121:90, check time 153:122. The
    /// port is the ring's own (`ring`), so it is not stored.
    inflight: SyncFifo<154, 5, 6>,
    /// The event record, packed (`nanet_contract::events::field`).
    record: EventPack,
    /// The descriptor being queued, unpacked (`nanet_contract::tx::field`).
    desc: TxDescUnpack,
    /// FIFO entries the datagrams in flight have still to write, less `PORT_FIFO_ENTRIES + 1`
    /// (two's complement): a datagram fits in its port's FIFO when its entries, the port's used
    /// ones and this add up to a negative number. It follows a take, and an entry written, two
    /// cycles late (when `port_used_q` counts the entry; from `entries_in` / `entries_in_m1` and `wrote_q`,
    /// registers).
    inflight_over: DFF<Bits<12>>,
    /// The entries the datagram taken in the previous cycle adds (0 if none or refused), and
    /// that less one.
    entries_in: DFF<Bits<12>>,
    entries_in_m1: DFF<Bits<12>>,
    /// The queue's head as checked in the previous cycle: its status and whether its port's FIFO
    /// had room; `head_checked` says it was there and not taken (so it is still the head). The
    /// counts it was checked against have seen every earlier good datagram: a good take holds
    /// the issuer for at least three cycles (its read length, its read, then idle), and
    /// `inflight_over` sees a take two cycles after it.
    head_checked: DFF<Bit>,
    head_status: DFF<Bits<2>>,
    head_room: DFF<Bit>,
    /// A datagram's payload reads are being issued (`iss_left` is not 0).
    iss_busy: DFF<Bit>,
    iss_addr: DFF<Bits<64>>,
    iss_left: DFF<Bits<16>>,
    /// The next payload read's length (up to 256, not across 4 KiB), from `iss_addr`/`iss_left`
    /// of the cycle before, and whether it is the datagram's last; `chunk_fresh` says they have
    /// not changed since.
    chunk_q: DFF<Bits<16>>,
    chunk_last: DFF<Bit>,
    chunk_fresh: DFF<Bit>,

    // ---- write -------------------------------------------------------------------------------
    wstate: DFF<WriteState>,
    words_left: DFF<Bits<16>>,
    /// `words_left == 1`, and the last payload entry's byte count less one.
    last_word: DFF<Bit>,
    last_bytes: DFF<Bits<5>>,
    /// A line held for the next entry (at 256 bits, after a half beat; see the module doc).
    pend: DFF<Bits<128>>,
    pend_valid: DFF<Bit>,
    /// The port FIFO write, registered (the outputs).
    out_data_q: DFF<Bits<W>>,
    out_tag_q: DFF<Bits<8>>,
    out_valid_q: DFF<Bit>,
    /// A FIFO entry was written a cycle ago (`out_valid_q` a cycle later): `inflight_over` lets
    /// it go when `port_used_q` counts it.
    wrote_q: DFF<Bit>,
    /// The port's used entries, registered (for timing: the FIFO's count comes out of a
    /// subtraction). A cycle late, so the entries written leave `inflight_over` a cycle late
    /// too (`wrote_q`).
    port_used_q: DFF<Bits<9>>,
    pay_err: DFF<Bit>,
    t_first: DFF<Bits<32>>,
    ev_kind: DFF<Bits<4>>,
    // the batch since the last TxDone event
    batch_count: DFF<Bits<16>>,
    batch_bytes: DFF<Bits<32>>,
    batch_first: DFF<Bits<16>>,

    mask: Signal<Local, Bits<16>>,
    fetch_slot: Signal<Local, Bits<16>>,
    fetch_addr: Signal<Local, Bits<64>>,
    avail: Signal<Local, Bits<16>>,
    /// Free descriptor queue entries.
    space: Signal<Local, Bits<6>>,
    /// Descriptors to the ring's end, minus one.
    to_end_m1: Signal<Local, Bits<16>>,
    /// Slots to the page's end when the fetch slot is in the page's last eight.
    page_end8: Signal<Local, Bits<4>>,
    min_avail_end: Signal<Local, Bits<4>>,
    min_space_page: Signal<Local, Bits<4>>,
    batch: Signal<Local, Bits<4>>,
    fetch_go: Signal<Local, Bit>,
    page_off: Signal<Local, Bits<12>>,
    page_inv: Signal<Local, Bits<12>>,
    w_len_m1: Signal<Local, Bits<16>>,
    to_page: Signal<Local, Bits<16>>,
    /// The three limits on a payload read compared in parallel: the bytes left over 256, the
    /// page's end before them, before 256 bytes.
    left_big: Signal<Local, Bit>,
    page_lt_left: Signal<Local, Bit>,
    page_lt_256: Signal<Local, Bit>,
    page_end: Signal<Local, Bits<17>>,
    chunk: Signal<Local, Bits<16>>,
    batch_issued: Signal<Local, Bit>,
    chunk_issued: Signal<Local, Bit>,
    /// `desc_reserved` after a batch's reservation and after a take's release.
    res_batch: Signal<Local, Bits<6>>,
    res_take: Signal<Local, Bits<6>>,
    res_both: Signal<Local, Bits<6>>,
    /// The entries a new descriptor needs (its payload's and a header), as it enters the queue.
    d_need: Signal<Local, Bits<16>>,
    d_entries: Signal<Local, Bits<7>>,
    /// The descriptor's read failed (either of its beats at 128 bits).
    half_err_in: Signal<Local, Bit>,
    /// The read beat at 256 bits, and its two lines.
    rd_wide: Signal<Local, Bits<256>>,
    rd_lo: Signal<Local, Bits<128>>,
    rd_hi: Signal<Local, Bits<128>>,
    /// The beat is its read's last and carries one line.
    half_beat: Signal<Local, Bit>,
    /// The held line, then the beat's lower half (at 256 bits).
    joined: Signal<Local, Bits<256>>,
    header_entry: Signal<Local, Bits<128>>,
    /// The read being issued has an odd number of 16-byte lines.
    chunk_odd: Signal<Local, Bit>,
    // the descriptor queue's head
    q_len: Signal<Local, Bits<16>>,
    q_port: Signal<Local, Bits<8>>,
    q_need: Signal<Local, Bits<7>>,
    over_ext: Signal<Local, Bits<32>>,
    q_room: Signal<Local, Bit>,
    room_add: Add3,
    q_good: Signal<Local, Bit>,
    q_status: Signal<Local, Bits<2>>,
    /// The head may be taken (from registers: checked, room or refused, the in-flight queue not
    /// full), and is taken (no datagram's reads being issued).
    take_ready: Signal<Local, Bit>,
    q_take: Signal<Local, Bit>,
    // the in-flight queue's head
    w_len: Signal<Local, Bits<16>>,
    w_flags: Signal<Local, Bits<8>>,
    w_ports: Signal<Local, Bits<32>>,
    w_status: Signal<Local, Bits<2>>,
    w_words: Signal<Local, Bits<16>>,
    w_last_bytes: Signal<Local, Bits<5>>,
    head_next: Signal<Local, Bits<16>>,
    ev_count: Signal<Local, Bits<16>>,
    ev_bytes: Signal<Local, Bits<32>>,
    // read data routing
    for_desc: Signal<Local, Bit>,
    for_payload: Signal<Local, Bit>,
    take_beat: Signal<Local, Bit>,
    /// The port FIFO write of this cycle (registered into `out_*_q`).
    wr_valid: Signal<Local, Bit>,
    wr_tag: Signal<Local, Bits<8>>,
    wr_data: Signal<Local, Bits<W>>,
}

impl<const W: usize> Logic for TxEngine<W> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            base,
            size_log2,
            enable,
            tail,
            head,
            sent,
            bad,
            tail_asked,
            tail_new,
            ring_count_inv,
            tail_checked,
            tail_ok,
            tail_next,
            bad_tail,
            read_errors,
            discarded,
            draining,
            idle_q,
            read_addr,
            rdata_q,
            fetch,
            desc_reserved,
            mask_q,
            avail8,
            to_end8,
            space8,
            page8,
            min_avail_end_q,
            min_space_page_q,
            fetch_addr_q,
            batch_q,
            batch_len_q,
            settling,
            settled,
            batch_any,
            half,
            half_err,
            second,
            inflight_over,
            entries_in,
            entries_in_m1,
            head_checked,
            head_status,
            head_room,
            iss_busy,
            iss_addr,
            iss_left,
            chunk_q,
            chunk_last,
            chunk_fresh,
            wstate,
            words_left,
            last_word,
            last_bytes,
            pend,
            pend_valid,
            out_data_q,
            out_tag_q,
            out_valid_q,
            wrote_q,
            port_used_q,
            pay_err,
            t_first,
            ev_kind,
            batch_count,
            batch_bytes,
            batch_first
        );
        self.reads.clock.next = self.clock.val();
        self.rd_wide.next = bit_cast::<256, W>(self.rd_data.val());
        self.rd_lo.next = self.rd_wide.val().get_bits::<128>(0);
        self.rd_hi.next = self.rd_wide.val().get_bits::<128>(128);
        self.reads.reset.next = self.reset.val();
        self.descs.clock.next = self.clock.val();
        self.descs.reset.next = self.reset.val();
        self.inflight.clock.next = self.clock.val();
        self.inflight.reset.next = self.reset.val();

        // ---- registers ------------------------------------------------------------------------
        self.tail_asked.d.next = false;
        if self.reg_write.val() {
            match self.reg_addr.val().index() {
                // The ring is 4 KiB aligned: the low 12 bits of a base read as 0 whatever the host
                // wrote (no descriptor read may cross a page, and the batch sizes count on it).
                0 => {
                    self.base.d.next = (self.base.q.val() & 0xFFFF_FFFF_0000_0000u64)
                        | (bit_cast::<64, 32>(self.reg_wdata.val()) & 0xFFFF_F000u64)
                }
                1 => {
                    self.base.d.next = (self.base.q.val() & 0xFFFF_FFFFu64)
                        | (bit_cast::<64, 32>(self.reg_wdata.val()) << 32)
                }
                2 => {
                    self.size_log2.d.next = self.reg_wdata.val().get_bits::<4>(0);
                    self.enable.d.next = self.reg_wdata.val().get_bit(31);
                    if !self.reg_wdata.val().get_bit(31) {
                        self.draining.d.next = true;
                    }
                }
                3 => {
                    self.tail_asked.d.next = true;
                    self.tail_new.d.next = self.reg_wdata.val().get_bits::<16>(0);
                }
                _ => {}
            }
        }
        // The doorbell moves the tail only forward, and never more than the ring's descriptors
        // ahead of the head: a tail beyond would make the engine read slots the host has not
        // written (old descriptors sent again), one behind would take back descriptors it may
        // have read. Such a write is refused and counted; the tail keeps its value. With head <=
        // tail <= head + ring, a new tail is in [tail, head + ring] exactly when it is at most the
        // ring's count past both, modulo 2^16. Decided a cycle after the write, from registers;
        // a doorbell in every cycle is decided in every cycle: the verdict is registered and
        // applied a cycle later, and the next doorbell is checked against the tail the previous
        // one leaves (`from_pending`), so the second of two doorbells in a row sees the first. The
        // ring's count follows a `RingSize` write two cycles later: a doorbell right behind it
        // would be checked against the old size; the BAR0 target sends register writes
        // `REG_WRITE_SPACING` (3) cycles apart at least (`pcie/target.rs`).
        self.ring_count.next = bit_cast::<17, 16>(self.mask_q.q.val()) + 1;
        self.ring_count_inv.d.next = !self.ring_count.val();
        self.from_head.next = self.tail_new.q.val() - self.head.q.val();
        self.from_tail.next = self.tail_new.q.val() - self.tail.q.val();
        self.from_pending.next = self.tail_new.q.val() - self.tail_next.q.val();
        self.head_sum.next = bit_cast::<17, 16>(self.from_head.val()) + self.ring_count_inv.q.val();
        self.tail_sum.next = bit_cast::<17, 16>(self.from_tail.val()) + self.ring_count_inv.q.val();
        self.pending_sum.next =
            bit_cast::<17, 16>(self.from_pending.val()) + self.ring_count_inv.q.val();
        self.head_fits.next = self.head_sum.val().get_bit(16);
        self.tail_fits.next = self.tail_sum.val().get_bit(16);
        self.pending_fits.next = self.pending_sum.val().get_bit(16);
        self.tail_checked.d.next = self.tail_asked.q.val();
        self.tail_next.d.next = self.tail_new.q.val();
        self.tail_ok.d.next = self.head_fits.val() & self.tail_fits.val();
        if self.tail_checked.q.val() & self.tail_ok.q.val() {
            self.tail_ok.d.next = self.head_fits.val() & self.pending_fits.val();
        }
        if self.tail_checked.q.val() {
            if self.tail_ok.q.val() {
                self.tail.d.next = self.tail_next.q.val();
            } else {
                self.bad_tail.d.next = self.bad_tail.q.val() + 1;
            }
        }
        self.read_addr.d.next = self.reg_addr.val();
        self.rdata_q.d.next = 0.into();
        match self.read_addr.q.val().index() {
            0 => self.rdata_q.d.next = self.base.q.val().get_bits::<32>(0),
            1 => self.rdata_q.d.next = self.base.q.val().get_bits::<32>(32),
            2 => {
                self.rdata_q.d.next = bit_cast::<32, 4>(self.size_log2.q.val())
                    | (bit_cast::<32, 1>(self.enable.q.val().into()) << 31)
            }
            3 => self.rdata_q.d.next = bit_cast::<32, 16>(self.tail.q.val()),
            4 => self.rdata_q.d.next = bit_cast::<32, 16>(self.head.q.val()),
            5 => {
                self.rdata_q.d.next =
                    bit_cast::<32, 1>((self.idle_q.q.val() & !self.draining.q.val()).into())
                        | (bit_cast::<32, 1>(self.draining.q.val().into()) << 1)
            }
            16 => self.rdata_q.d.next = self.sent.q.val(),
            17 => self.rdata_q.d.next = self.bad.q.val(),
            18 => self.rdata_q.d.next = self.read_errors.q.val(),
            19 => self.rdata_q.d.next = self.bad_tail.q.val(),
            20 => self.rdata_q.d.next = self.discarded.q.val(),
            _ => {}
        }
        self.reg_rdata.next = self.rdata_q.q.val();

        // ---- fetch: how many descriptors the next batch reads, in four registered stages -----
        self.mask.next = 0.into();
        for i in 4..13 {
            if self.size_log2.q.val().index() == i {
                self.mask.next = ((1u64 << i) - 1).into();
            }
        }
        self.mask_q.d.next = self.mask.val();
        self.fetch_slot.next = self.fetch.q.val() & self.mask_q.q.val();
        self.fetch_addr.next = self.base.q.val() + (bit_cast::<64, 16>(self.fetch_slot.val()) << 5);
        self.fetch_addr_q.d.next = self.fetch_addr.val();
        self.avail.next = self.tail.q.val() - self.fetch.q.val();
        self.avail8.d.next = 8.into();
        if self.avail.val().get_bits::<13>(3) == 0 {
            // (`avail < 8` as its high bits clear: no compare after the subtraction.)
            self.avail8.d.next = self.avail.val().get_bits::<4>(0);
        }
        self.to_end_m1.next = !self.fetch.q.val() & self.mask_q.q.val();
        self.to_end8.d.next = 8.into();
        if self.to_end_m1.val() < 7 {
            self.to_end8.d.next = self.to_end_m1.val().get_bits::<4>(0) + 1;
        }
        self.space.next = 32.into(); // DESC_QUEUE
        self.space.next = self.space.val() - self.desc_reserved.q.val();
        self.space8.d.next = 8.into();
        if self.desc_reserved.q.val() > 24 {
            self.space8.d.next = self.space.val().get_bits::<4>(0);
        }
        // Descriptors to the next 4 KiB boundary: with the ring page aligned, 128 slots a page;
        // fewer than 8 only in a page's last eight slots, 8 - slot[2:0] of them (from the slot,
        // not the address: no carry chain).
        self.page_end8.next = 8.into();
        self.page_end8.next =
            self.page_end8.val() - bit_cast::<4, 3>(self.fetch_slot.val().get_bits::<3>(0));
        self.page8.d.next = 8.into();
        if self.fetch_slot.val().get_bits::<4>(3) == 0xF {
            self.page8.d.next = self.page_end8.val();
        }
        self.min_avail_end.next = self.avail8.q.val();
        if self.to_end8.q.val() < self.min_avail_end.val() {
            self.min_avail_end.next = self.to_end8.q.val();
        }
        self.min_space_page.next = self.space8.q.val();
        if self.page8.q.val() < self.min_space_page.val() {
            self.min_space_page.next = self.page8.q.val();
        }
        self.min_avail_end_q.d.next = self.min_avail_end.val();
        self.min_space_page_q.d.next = self.min_space_page.val();
        self.batch.next = self.min_avail_end_q.q.val();
        if self.min_space_page_q.q.val() < self.batch.val() {
            self.batch.next = self.min_space_page_q.q.val();
        }
        self.batch_q.d.next = bit_cast::<16, 4>(self.batch.val());
        self.batch_any.d.next = self.batch.val() != 0;
        self.batch_len_q.d.next = bit_cast::<9, 4>(self.batch.val()) << 5;
        if self.settling.q.val() != 0 {
            self.settling.d.next = self.settling.q.val() - 1;
        }
        self.settled.d.next = self.settling.q.val() <= 1;
        self.fetch_go.next = self.enable.q.val()
            & !self.draining.q.val()
            & self.settled.q.val()
            & self.batch_any.q.val();

        // ---- reads: payload chunks first, then descriptor batches --------------------------------
        // The three compares side by side, then a choice: the smallest of the bytes left, 256
        // and the bytes to the page's end.
        self.page_off.next = self.iss_addr.q.val().get_bits::<12>(0);
        self.page_inv.next = !self.page_off.val();
        self.to_page.next = bit_cast::<16, 12>(self.page_inv.val()) + 1;
        self.left_big.next = self.iss_left.q.val() > 256;
        // `to_page < left` as `offset + left > 4096`, `to_page < 256` as `offset > 3840`: each
        // from registers, beside `to_page`'s own chain. The `> 4096` as gates on the sum's bits
        // (a compare would be a second carry chain behind the adder's).
        self.page_end.next =
            bit_cast::<17, 12>(self.page_off.val()) + bit_cast::<17, 16>(self.iss_left.q.val());
        self.page_lt_left.next = (self.page_end.val().get_bits::<4>(13) != 0)
            | (self.page_end.val().get_bit(12) & (self.page_end.val().get_bits::<12>(0) != 0));
        self.page_lt_256.next = self.page_off.val() > 3840;
        self.chunk.next = self.iss_left.q.val();
        if self.left_big.val() {
            self.chunk.next = 256.into();
        }
        if self.page_lt_left.val() & self.page_lt_256.val() {
            self.chunk.next = self.to_page.val();
        }
        self.chunk_q.d.next = self.chunk.val();
        self.chunk_last.d.next = !self.left_big.val() & !self.page_lt_left.val();
        self.chunk_fresh.d.next = true;
        // A datagram's reads go first (while the issuer is busy with them no batch goes); a head
        // is taken beside a descriptor batch's read in the same cycle (the take never waits for
        // the read engine's answer, and the batch's issue never waits for the take's decision:
        // for timing). The head of the descriptor queue is ready to be taken (see below).
        self.take_ready.next = self.descs.out_valid.val()
            & self.head_checked.q.val()
            & self.inflight.in_ready.val()
            & ((self.head_status.q.val() != 0) | self.head_room.q.val());
        // The request's fields are chosen by a register alone.
        self.rq_addr.next = self.fetch_addr_q.q.val();
        self.rq_len.next = self.batch_len_q.q.val();
        self.reads.in_data.next = (bit_cast::<34, 32>(self.now.val()) << 1) | 1u64;
        // Lines `chunk / 16` rounded up are odd: bit 4, flipped by a partial line.
        self.chunk_odd.next = self.width.wide.val()
            & (self.chunk_q.q.val().get_bit(4) ^ (self.chunk_q.q.val().get_bits::<4>(0) != 0));
        if self.iss_busy.q.val() {
            self.rq_addr.next = self.iss_addr.q.val();
            self.rq_len.next = self.chunk_q.q.val().get_bits::<9>(0);
            self.reads.in_data.next = (bit_cast::<34, 32>(self.now.val()) << 1)
                | (bit_cast::<34, 1>(self.chunk_odd.val().into()) << 33);
        }
        self.rq_valid.next = false;
        if self.reads.in_ready.val() {
            if self.iss_busy.q.val() {
                self.rq_valid.next = self.chunk_fresh.q.val();
            } else {
                self.rq_valid.next = self.fetch_go.val();
            }
        }
        // Each kind of issue from its own registers (for timing: a chunk's bookkeeping does not
        // wait for the batch's conditions).
        self.chunk_issued.next = self.iss_busy.q.val()
            & self.chunk_fresh.q.val()
            & self.reads.in_ready.val()
            & self.rq_ready.val();
        self.batch_issued.next = !self.iss_busy.q.val()
            & self.fetch_go.val()
            & self.reads.in_ready.val()
            & self.rq_ready.val();
        self.reads.in_valid.next = self.chunk_issued.val() | self.batch_issued.val();
        if self.iss_busy.q.val() {
            if self.chunk_issued.val() {
                self.iss_addr.d.next =
                    self.iss_addr.q.val() + bit_cast::<64, 16>(self.chunk_q.q.val());
                self.iss_left.d.next = self.iss_left.q.val() - self.chunk_q.q.val();
                self.iss_busy.d.next = !self.chunk_last.q.val();
                self.chunk_fresh.d.next = false;
            }
        } else if self.batch_issued.val() {
            self.fetch.d.next = self.fetch.q.val() + self.batch_q.q.val();
        }

        // ---- read data: descriptor beats into the queue, payload beats to the writer ---------
        self.for_desc.next = self.reads.out_valid.val() & self.reads.out_data.val().get_bit(0);
        self.for_payload.next = self.reads.out_valid.val() & !self.reads.out_data.val().get_bit(0);
        self.half_beat.next = self.rd_last.val() & self.reads.out_data.val().get_bit(33);
        self.descs.in_valid.next = false;
        // The queue entry: buffer, length, port, flags, destination IP (network order as a
        // number), the two UDP ports, then the read error and the read's issue time below.
        self.desc.lo.next = self.half.q.val();
        self.desc.hi.next = self.rd_lo.val();
        self.half_err_in.next = self.half_err.q.val() | self.rd_error.val();
        if self.width.wide.val() {
            self.desc.lo.next = self.rd_lo.val();
            self.desc.hi.next = self.rd_hi.val();
            self.half_err_in.next = self.rd_error.val();
        }
        // `(len + 15) / 16 + 1` as `(len + 31) / 16` at 128 bits, `(len + 31) / 32 + 1` as
        // `(len + 63) / 32` at 256; at 128 bits the length is in the first beat (`half`), so this
        // is one carry chain from a register.
        self.d_need.next = self.desc.len.val() + 31;
        self.d_entries.next = self.d_need.val().get_bits::<7>(4);
        if self.width.wide.val() {
            self.d_need.next = self.desc.len.val() + 63;
            self.d_entries.next = self.d_need.val().get_bits::<7>(5);
        }
        self.descs.in_data.next = bit_cast::<200, 64>(self.desc.buffer.val())
            | (bit_cast::<200, 16>(self.desc.len.val()) << 64)
            | (bit_cast::<200, 8>(self.desc.port.val()) << 80)
            | (bit_cast::<200, 8>(self.desc.flags.val()) << 88)
            | (bit_cast::<200, 32>(self.desc.dst_ip.val()) << 96)
            | (bit_cast::<200, 16>(self.desc.src_port.val()) << 128)
            | (bit_cast::<200, 16>(self.desc.dst_port.val()) << 144)
            | (bit_cast::<200, 1>(self.half_err_in.val().into()) << 160)
            | (bit_cast::<200, 32>(self.reads.out_data.val().get_bits::<32>(1)) << 161)
            | (bit_cast::<200, 7>(self.d_entries.val()) << 193);
        self.take_beat.next = false;
        if self.rd_valid.val() & self.for_desc.val() {
            // Always taken: the batch's queue entries were reserved when it was issued.
            self.take_beat.next = true;
            if self.second.q.val() | self.width.wide.val() {
                self.descs.in_valid.next = true;
                self.second.d.next = false;
            } else {
                self.half.d.next = self.rd_lo.val();
                self.half_err.d.next = self.rd_error.val();
                self.second.d.next = true;
            }
        }

        // ---- issue: check the next descriptor, reserve its port's room, issue its reads -------
        self.q_len.next = self.descs.out_data.val().get_bits::<16>(64);
        self.q_port.next = self.descs.out_data.val().get_bits::<8>(80);
        self.q_need.next = self.descs.out_data.val().get_bits::<7>(193);
        // `used + in flight + need <= 256` as the sign of `used + need + inflight_over`.
        self.over_ext.next = bit_cast::<32, 12>(self.inflight_over.q.val());
        if self.inflight_over.q.val().get_bit(11) {
            self.over_ext.next = bit_cast::<32, 12>(self.inflight_over.q.val()) | 0xFFFF_F000u64;
        }
        self.room_add.a.next = bit_cast::<32, 9>(self.port_used_q.q.val());
        self.room_add.b.next = bit_cast::<32, 7>(self.q_need.val());
        self.room_add.c.next = self.over_ext.val();
        self.q_room.next = self.room_add.sum.val().get_bit(31);
        self.q_good.next = (self.q_len.val() != 0)
            & (self.q_len.val() <= 1472)
            & (self.q_port.val() == bit_cast::<8, 2>(self.ring.val()))
            & (self.descs.out_data.val().get_bits::<4>(0) == 0);
        self.q_status.next = 0.into();
        if self.descs.out_data.val().get_bit(160) {
            self.q_status.next = 2.into();
        } else if !self.q_good.val() {
            self.q_status.next = 1.into();
        }
        self.q_take.next = self.take_ready.val() & !self.iss_busy.q.val() & !self.draining.q.val();
        self.q_drop.next = self.descs.out_valid.val() & self.draining.q.val();
        self.q_free.next = self.q_take.val() | self.q_drop.val();
        self.head_checked.d.next = self.descs.out_valid.val() & !self.q_free.val();
        self.head_status.d.next = self.q_status.val();
        self.head_room.d.next = self.q_room.val();
        self.descs.out_ready.next = self.q_free.val();
        if self.q_drop.val() {
            self.discarded.d.next = self.discarded.q.val() + 1;
        }
        self.inflight.in_valid.next = self.q_take.val();
        self.inflight.in_data.next = bit_cast::<154, 16>(self.q_len.val())
            | (bit_cast::<154, 8>(self.descs.out_data.val().get_bits::<8>(88)) << 16)
            | (bit_cast::<154, 32>(self.descs.out_data.val().get_bits::<32>(96)) << 24)
            | (bit_cast::<154, 32>(self.descs.out_data.val().get_bits::<32>(128)) << 56)
            | (bit_cast::<154, 2>(self.head_status.q.val()) << 88)
            | (bit_cast::<154, 32>(self.descs.out_data.val().get_bits::<32>(161)) << 90)
            | (bit_cast::<154, 32>(self.now.val()) << 122);
        self.entries_in.d.next = 0.into();
        self.entries_in_m1.d.next = 0xFFF.into();
        if self.q_take.val() & (self.head_status.q.val() == 0) {
            self.iss_addr.d.next = self.descs.out_data.val().get_bits::<64>(0);
            self.iss_left.d.next = self.q_len.val();
            self.iss_busy.d.next = true;
            self.chunk_fresh.d.next = false;
            self.entries_in.d.next = bit_cast::<12, 7>(self.q_need.val());
            self.entries_in_m1.d.next = bit_cast::<12, 7>(self.q_need.val()) - 1;
        }
        // A batch changes `fetch` and `desc_reserved`, seen by the clamps a cycle later and by
        // `batch_q` three; a register write may change the ring's size, seen by `mask_q` first.
        // (A doorbell's tail arrives later still, but a batch from the older, smaller tail is
        // only smaller.)
        if self.batch_issued.val() {
            self.settling.d.next = 3.into();
            self.settled.d.next = false;
        }
        if self.reg_write.val() {
            self.settling.d.next = 4.into();
            self.settled.d.next = false;
        }
        // Queue entries: reserved by a batch, freed when the issuer takes one (both may happen in
        // a cycle). The sums are ready before the handshakes that choose between them.
        self.res_batch.next = self.desc_reserved.q.val() + self.batch_q.q.val().get_bits::<6>(0);
        self.res_take.next = self.desc_reserved.q.val() - 1;
        self.res_both.next = self.res_take.val() + self.batch_q.q.val().get_bits::<6>(0);
        if self.batch_issued.val() {
            self.desc_reserved.d.next = self.res_batch.val();
            if self.q_free.val() {
                self.desc_reserved.d.next = self.res_both.val();
            }
        } else if self.q_free.val() {
            self.desc_reserved.d.next = self.res_take.val();
        }
        // Draining ends when nothing is left: `desc_reserved` counts queued descriptors and
        // the batches whose reads are out; a datagram is in `inflight` from its take until its
        // last payload beat is written, so its reads too (every read outstanding is one or the
        // other). From registers: a batch issued in the cycle of the disable's write shows here
        // a cycle later, when `draining` is already set.
        self.idle_now.next = (self.desc_reserved.q.val() == 0)
            & (self.inflight.used.val() == 0)
            & !self.iss_busy.q.val()
            & (self.wstate.q.val() == WriteState::Idle);
        self.idle_q.d.next = self.idle_now.val();
        if self.draining.q.val() & self.idle_now.val() {
            self.draining.d.next = false;
        }

        // ---- write: the datagrams in ring order ---------------------------------------------------
        self.w_len.next = self.inflight.out_data.val().get_bits::<16>(0);
        self.w_flags.next = self.inflight.out_data.val().get_bits::<8>(16);
        self.w_ports.next = self.inflight.out_data.val().get_bits::<32>(56);
        self.w_status.next = self.inflight.out_data.val().get_bits::<2>(88);
        self.w_len_m1.next = self.w_len.val() - 1;
        self.w_words.next = (self.w_len.val() + 15) >> 4;
        self.w_last_bytes.next = bit_cast::<5, 4>(self.w_len_m1.val().get_bits::<4>(0));
        if self.width.wide.val() {
            self.w_words.next = (self.w_len.val() + 31) >> 5;
            self.w_last_bytes.next = self.w_len_m1.val().get_bits::<5>(0);
        }
        self.header_entry.next = (bit_cast::<128, 16>(self.w_len.val()) << 64)
            | (bit_cast::<128, 32>(self.inflight.out_data.val().get_bits::<32>(24)) << 32)
            | (bit_cast::<128, 16>(self.w_ports.val().get_bits::<16>(0)) << 16)
            | bit_cast::<128, 16>(self.w_ports.val().get_bits::<16>(16));
        self.joined.next = (bit_cast::<256, 128>(self.rd_lo.val()) << 128)
            | bit_cast::<256, 128>(self.pend.q.val());
        self.head_next.next = self.head.q.val() + 1;

        self.rd_ready.next = self.take_beat.val();
        self.wr_valid.next = false;
        self.wr_data.next = self.rd_data.val();
        self.wr_tag.next = 2.into();
        self.inflight.out_ready.next = false;
        self.ev_valid.next = false;
        // The event covers the batch so far and this descriptor.
        self.ev_count.next = self.batch_count.q.val() + 1;
        self.ev_bytes.next = self.batch_bytes.q.val() + bit_cast::<32, 16>(self.w_len.val());
        self.record.kind.next = self.ev_kind.q.val();
        self.record.clop.next = bit_cast::<8, 2>(self.ring.val());
        self.record.buffer.next = self.head.q.val();
        self.record.bytes.next = self.ev_bytes.val();
        self.record.packets.next = self.ev_count.val();
        self.record.first_seq.next = self.batch_first.q.val();
        self.record.last_seq.next = self.head.q.val();
        self.record.sop_at_mac.next = self.inflight.out_data.val().get_bits::<32>(90);
        self.record.header_parsed.next = self.inflight.out_data.val().get_bits::<32>(122);
        self.record.first_dma_beat.next = self.t_first.q.val();
        self.record.last_dma_beat.next = self.now.val();
        self.ev_lo.next = self.record.lo.val();
        self.ev_hi.next = self.record.hi.val();

        match self.wstate.q.val() {
            WriteState::Idle => {
                if self.inflight.out_valid.val() {
                    self.ev_kind.d.next = 7.into();
                    self.t_first.d.next = self.now.val();
                    match self.w_status.val().index() {
                        0 => self.wstate.d.next = WriteState::Header,
                        1 => {
                            self.bad.d.next = self.bad.q.val() + 1;
                            self.wstate.d.next = WriteState::Event;
                        }
                        _ => {
                            self.read_errors.d.next = self.read_errors.q.val() + 1;
                            self.wstate.d.next = WriteState::Event;
                        }
                    }
                }
            }
            WriteState::Header => {
                self.wr_valid.next = true;
                self.wr_tag.next = 0.into();
                self.wr_data.next = bit_cast::<W, 128>(self.header_entry.val());
                self.words_left.d.next = self.w_words.val();
                self.last_word.d.next = self.w_words.val() == 1;
                self.last_bytes.d.next = self.w_last_bytes.val();
                self.pay_err.d.next = false;
                self.pend_valid.d.next = false;
                self.wstate.d.next = WriteState::Payload;
            }
            WriteState::Payload => {
                if self.width.wide.val()
                    & self.pend_valid.q.val()
                    & self.last_word.q.val()
                    & !self.last_bytes.q.val().get_bit(4)
                {
                    // The datagram's last bytes are all in the held line: it goes alone.
                    self.wr_valid.next = true;
                    self.wr_data.next = bit_cast::<W, 128>(self.pend.q.val());
                    self.wr_tag.next = (bit_cast::<8, 5>(self.last_bytes.q.val()) << 2)
                        | (bit_cast::<8, 1>(self.pay_err.q.val().into()) << 7)
                        | 3u64;
                    self.pend_valid.d.next = false;
                    self.wstate.d.next = WriteState::Finish;
                } else if self.rd_valid.val() & self.for_payload.val() {
                    self.take_beat.next = true;
                    self.rd_ready.next = true;
                    if self.rd_error.val() {
                        self.pay_err.d.next = true;
                    }
                    if self.half_beat.val()
                        & !self.pend_valid.q.val()
                        & (!self.last_word.q.val() | self.last_bytes.q.val().get_bit(4))
                    {
                        // A half beat with more of the datagram to come (a later entry, or the
                        // last entry's second line): its line waits for the next beat.
                        self.pend.d.next = self.rd_lo.val();
                        self.pend_valid.d.next = true;
                    } else {
                        self.wr_valid.next = true;
                        if self.width.wide.val() & self.pend_valid.q.val() {
                            self.wr_data.next = self.joined.val().get_bits::<W>(0);
                            self.pend.d.next = self.rd_hi.val();
                            self.pend_valid.d.next = !self.half_beat.val();
                        }
                        self.words_left.d.next = self.words_left.q.val() - 1;
                        self.last_word.d.next = self.words_left.q.val() == 2;
                        if self.last_word.q.val() {
                            self.wr_tag.next = (bit_cast::<8, 5>(self.last_bytes.q.val()) << 2)
                                | (bit_cast::<8, 1>(
                                    (self.pay_err.q.val() | self.rd_error.val()).into(),
                                ) << 7)
                                | 3u64;
                            self.pend_valid.d.next = false;
                            self.wstate.d.next = WriteState::Finish;
                        }
                    }
                }
            }
            WriteState::Finish => {
                self.sent.d.next = self.sent.q.val() + 1;
                self.ev_kind.d.next = 6.into();
                if self.pay_err.q.val() {
                    self.read_errors.d.next = self.read_errors.q.val() + 1;
                    self.ev_kind.d.next = 7.into();
                }
                self.wstate.d.next = WriteState::Event;
            }
            WriteState::Event => {
                // Report (if asked, or on an error), then the next datagram.
                if ((self.ev_kind.q.val() == 7) | self.w_flags.val().get_bit(0))
                    & !self.draining.q.val()
                {
                    self.ev_valid.next = true;
                }
                if !self.ev_valid.val() | self.ev_ready.val() {
                    self.inflight.out_ready.next = true;
                    self.head.d.next = self.head_next.val();
                    self.batch_count.d.next = self.ev_count.val();
                    self.batch_bytes.d.next = self.ev_bytes.val();
                    if self.ev_valid.val() {
                        self.batch_count.d.next = 0.into();
                        self.batch_bytes.d.next = 0.into();
                        self.batch_first.d.next = self.head_next.val();
                    }
                    self.wstate.d.next = WriteState::Idle;
                }
            }
        }
        // A read's last beat taken: the next read's data follows.
        self.reads.out_ready.next = self.take_beat.val() & self.rd_last.val();
        self.out_valid_q.d.next = self.wr_valid.val();
        self.wrote_q.d.next = self.out_valid_q.q.val();
        self.port_used_q.d.next = self.port_used.val();
        self.out_tag_q.d.next = self.wr_tag.val();
        self.out_data_q.d.next = self.wr_data.val();
        self.out_valid.next = self.out_valid_q.q.val();
        self.out_tag.next = self.out_tag_q.q.val();
        self.out_data.next = self.out_data_q.q.val();
        // The entries of the datagram taken a cycle ago in, the entry written two cycles ago out
        // (when `port_used_q` has it).
        self.inflight_over.d.next = self.inflight_over.q.val() + self.entries_in.q.val();
        if self.wrote_q.q.val() {
            self.inflight_over.d.next = self.inflight_over.q.val() + self.entries_in_m1.q.val();
        }

        if !self.enable.q.val() | self.draining.q.val() {
            self.head.d.next = 0.into();
            self.fetch.d.next = 0.into();
            self.batch_count.d.next = 0.into();
            self.batch_bytes.d.next = 0.into();
            self.batch_first.d.next = 0.into();
        }
        if !self.enable.q.val() {
            self.tail.d.next = 0.into();
        }
        if self.reset.val() {
            self.wstate.d.next = WriteState::Idle;
            self.enable.d.next = false;
            self.iss_left.d.next = 0.into();
            self.iss_busy.d.next = false;
            self.chunk_fresh.d.next = false;
            self.desc_reserved.d.next = 0.into();
            self.settling.d.next = 4.into();
            self.settled.d.next = false;
            // 0 entries in flight, less `PORT_FIFO_ENTRIES + 1`.
            self.inflight_over.d.next = 0xEFF.into();
            self.entries_in.d.next = 0.into();
            self.entries_in_m1.d.next = 0xFFF.into();
            self.out_valid_q.d.next = false;
            self.wrote_q.d.next = false;
            self.pend_valid.d.next = false;
            self.tail_checked.d.next = false;
            self.head_checked.d.next = false;
            self.second.d.next = false;
            self.sent.d.next = 0.into();
            self.bad.d.next = 0.into();
            self.bad_tail.d.next = 0.into();
            self.tail_asked.d.next = false;
            self.read_errors.d.next = 0.into();
            self.discarded.d.next = 0.into();
            self.draining.d.next = false;
        }
    }
}

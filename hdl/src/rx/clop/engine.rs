//! CLOP engine (NaNet's TCL): places each received packet into the current buffer of its CLOP
//! (circular list of persistent buffers), closes buffers and reports them as events.
//!
//! Up to 64 CLOPs, one per stream key `{port, Multi-Stream entry}`. Configuration and state live in
//! the store ([`ClopStore`], RAMs indexed by the CLOP id); one packet (or command) is handled at a
//! time, and only this engine writes the store, so configuration changes happen between packets:
//! - **configure** (`cfg.cmd.op` 1) writes a CLOP's configuration, resets its state (buffer 0, sequence
//!   0) and marks all of its buffers free; **disable** (`cfg.cmd.op` 2) stops it. When `cfg.ready` has
//!   taken the command and `busy` is low again, no write to the CLOP's old buffers can follow.
//! - **release** (`rel_*`): the host gives a buffer back; releasing a buffer the host does not hold
//!   changes nothing and pulses `bad_release`.
//! - **packet** (`in_*`: a meta beat, then the payload beats in network order): the packet goes to
//!   the current buffer at the current offset, raw or after a 16-byte header
//!   (`nanet_contract::rx::PacketHeader`), through the DMA write engine (`dma`); cut-through with
//!   safe commit: the offset, the packet count and the sequence advance only when the write ends well.
//!   An empty packet (UDP length 8) has one payload word, a placeholder that carries only its
//!   `last` and `error`: in a raw CLOP it is the payload of a zero-length DMA command (nothing is
//!   written, the packet is counted), behind a header it goes with the header beat.
//! - A buffer closes (event, buffer now held by the host) when the next packet does not fit, when
//!   it is exactly full, or when its flush timeout expires after its first packet
//!   ([`ClopTimeoutScan`] walks the deadlines, one CLOP per cycle). The next buffer must be free:
//!   under the drop policy the packet is dropped (one "no free buffer" event per starvation
//!   episode); under the skip policy held buffers are skipped.
//! - A packet larger than its CLOP's buffers is dropped with an error event; a TLB miss drops the
//!   packet with a TLB-miss event.
//!
//! Timing: a packet's CLOP state is read from the RAMs in `Decide`, where the size checks are
//! computed into registers; `Check` acts on them a cycle later and sends the DMA command. Every
//! other decision reads the working-copy registers, never the RAMs' outputs. The DMA writer's
//! outcome comes from registers (through a gate when it ends in `Drain`), the cycle after the
//! last beat went into its output slice, so
//! the commit comes when the next packet's meta word is usually already on the input or held
//! (`meta_q`, which takes a meta word whenever it is free): the packet is taken at the commit, and
//! `Decide` follows (keeping the working copy if the packet is of the CLOP just committed into).
//!
//! Width: words in and DMA beats out are `W` bits (128 or 256). At 256 bits a header fills half a
//! beat, so in a header CLOP the payload goes shifted by 16 bytes (`header_join.rs`): the header
//! goes with the first payload word (never alone), and a packet whose last word's lower half
//! holds payload bytes (`p_tail`) takes one DMA beat more after it (`tail_due`), which carries the
//! DMA command's `last` and the word's `error`. The buffer layout is the same at both widths.
//!
//! Meta word (`inp.meta`, the word's low 128 bits): `nanet_contract::packed::rx_meta` (Multi-Stream entry, payload length,
//! source IP and port, SOP timestamp, cycles from SOP to header parsed), read by [`RxMetaUnpack`].

use rust_hdl::prelude::*;

use crate::common::datapath_width::DatapathWidth;
use crate::common::event_record::EventPack;
use crate::rx::clop::fit::BufferFit;
use crate::rx::clop::store::ClopStore;
use crate::rx::clop::timeout_scan::ClopTimeoutScan;
use crate::rx::dma_writer::DmaWriteRequester;
use crate::rx::words::{RxMetaUnpack, RxWordsSink};

/// A CLOP command's fields, from the register file (`Source`) towards a CLOP engine (`Sink`):
/// operation (1 configure, 2 disable), CLOP id and the configuration.
#[derive(LogicInterface, Default)]
#[join = "ClopFieldsSink"]
pub struct ClopFieldsSource {
    pub op: Signal<Out, Bits<2>>,
    pub clop: Signal<Out, Bits<6>>,
    /// Virtual base of the region (page aligned).
    pub base: Signal<Out, Bits<64>>,
    pub buf_size: Signal<Out, Bits<24>>,
    /// Buffers, 1..=256 (the register file refuses other values; 0 would be taken as 256).
    pub buf_count: Signal<Out, Bits<9>>,
    /// First TLB slot and page size code.
    pub slot: Signal<Out, Bits<7>>,
    pub page: Signal<Out, Bits<2>>,
    pub header: Signal<Out, Bit>,
    pub skip: Signal<Out, Bit>,
    /// Flush timeout in cycles after a buffer's first packet; 0: none.
    pub timeout: Signal<Out, Bits<32>>,
}

/// The receiving end of [`ClopFieldsSource`].
#[derive(LogicInterface, Default)]
#[join = "ClopFieldsSource"]
pub struct ClopFieldsSink {
    pub op: Signal<In, Bits<2>>,
    pub clop: Signal<In, Bits<6>>,
    pub base: Signal<In, Bits<64>>,
    pub buf_size: Signal<In, Bits<24>>,
    pub buf_count: Signal<In, Bits<9>>,
    pub slot: Signal<In, Bits<7>>,
    pub page: Signal<In, Bits<2>>,
    pub header: Signal<In, Bit>,
    pub skip: Signal<In, Bit>,
    pub timeout: Signal<In, Bits<32>>,
}

/// A CLOP command from the register file (`Source`) to the CLOP engine (`Sink`), held until
/// `ready`.
#[derive(LogicInterface, Default)]
#[join = "ClopCommandSink"]
pub struct ClopCommandSource {
    pub valid: Signal<Out, Bit>,
    pub ready: Signal<In, Bit>,
    pub cmd: ClopFieldsSource,
}

/// The CLOP engine's end of [`ClopCommandSource`].
#[derive(LogicInterface, Default)]
#[join = "ClopCommandSource"]
pub struct ClopCommandSink {
    pub valid: Signal<In, Bit>,
    pub ready: Signal<Out, Bit>,
    pub cmd: ClopFieldsSink,
}

/// The engine's states: one command, release, flush or packet at a time.
#[derive(Copy, Clone, Debug, PartialEq, LogicState)]
enum ClopState {
    /// Waiting for a command, a release, a flush from the timeout scan or a packet's meta word.
    Idle,
    /// Configure or disable: write the configuration, reset the CLOP's state (once the DMA
    /// writer's output slice is empty).
    Configure,
    /// A sweep, one row a cycle: after a configure every buffer of the CLOP starts free; after
    /// reset (`sweep_all`) every CLOP is disabled, with a clean state. (One state for both keeps
    /// the states at 16, a 4-bit register, for timing.)
    Sweep,
    /// Release: a buffer the host holds becomes free.
    Release,
    /// The CLOP's working copy is loaded from the RAMs and the packet's size checks computed.
    Decide,
    /// Act on the checks: drop, close the buffer the packet does not fit, acquire, or write.
    Check,
    /// Read the current buffer's ownership bit.
    AcquireRead,
    /// Open the current buffer if it is free; otherwise skip or drop by the CLOP's policy.
    Acquire,
    /// Issue the DMA write of the packet (and its header) and stream the payload.
    Write,
    /// The write ended: commit the packet, or leave the offset where it was.
    Commit,
    /// Hand an event record to the event queue (once the DMA writer's output slice is empty),
    /// then go on at `ret`.
    Event,
    /// Consume a packet that goes nowhere.
    DropPacket,
    /// Write the working copy back to the RAMs.
    WriteBack,
    /// A flush request: judge whether the buffer's own deadline has passed (into `flush_go`).
    FlushDecide,
    /// Close the buffer if `flush_go` says so.
    FlushClose,
    /// Close a buffer that the packet just committed filled exactly (reads the updated state).
    CloseFull,
}

/// `W`: the width of the words in and of the DMA beats out (the core datapath's, 128 or 256).
#[derive(LogicBlock, Default)]
pub struct ClopEngine<const W: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// Core cycle counter (the timestamps' time base).
    pub now: Signal<In, Bits<32>>,

    // ---- configuration commands ----------------------------------------------------------
    pub cfg: ClopCommandSink,
    pub busy: Signal<Out, Bit>,

    // ---- buffer releases --------------------------------------------------------------------
    pub rel_valid: Signal<In, Bit>,
    pub rel_ready: Signal<Out, Bit>,
    pub rel_clop: Signal<In, Bits<6>>,
    pub rel_buf: Signal<In, Bits<8>>,

    // ---- packets --------------------------------------------------------------------------------
    pub inp: RxWordsSink<W>,

    // ---- to the DMA write engine --------------------------------------------------------------
    pub dma: DmaWriteRequester<W>,

    // ---- to the event queue (record bytes 0..15 and 16..31, phase bit clear) ----------------
    pub ev_valid: Signal<Out, Bit>,
    pub ev_ready: Signal<In, Bit>,
    pub ev_lo: Signal<Out, Bits<128>>,
    pub ev_hi: Signal<Out, Bits<128>>,

    // ---- one-cycle pulses for the counters ----------------------------------------------------
    pub committed: Signal<Out, Bit>,
    pub committed_bytes: Signal<Out, Bits<16>>,
    pub drop_disabled: Signal<Out, Bit>,
    pub drop_too_big: Signal<Out, Bit>,
    pub drop_no_buffer: Signal<Out, Bit>,
    pub drop_tlb_miss: Signal<Out, Bit>,
    pub drop_bad: Signal<Out, Bit>,
    pub bad_release: Signal<Out, Bit>,
    /// A configure of a CLOP that is enabled was refused (disable it first: a configure resets
    /// its buffers, and the host may hold some).
    pub cfg_refused: Signal<Out, Bit>,

    /// Every CLOP's configuration, position, state and stage times.
    store: ClopStore,
    /// Finds the CLOPs whose flush deadline has passed.
    timeout_scan: ClopTimeoutScan,
    /// Ownership of buffer `{clop, index}`: set = held by the host.
    own_ram: RAM<Bit, 14>,

    /// The event record, packed (`nanet_contract::events::field`).
    record: EventPack,
    /// The packet's meta word, unpacked.
    meta_word: RxMetaUnpack,
    state: DFF<ClopState>,
    /// Where `Event` goes once the record is taken.
    ret: DFF<ClopState>,
    clop: DFF<Bits<6>>,
    cfg_op_r: DFF<Bits<2>>,
    sweep: DFF<Bits<9>>,
    /// `c_count - 2`, a cycle behind `c_count` (loaded when a configure is taken, a cycle at
    /// least before the ownership sweep's second cycle).
    count_m2: DFF<Bits<9>>,
    /// The ownership sweep is at the CLOP's last buffer (`sweep >= c_count - 1`, modulo 512),
    /// worked out a cycle ahead: from `c_count` as the sweep starts, then from the sweep before;
    /// and the reset sweep is at the last CLOP.
    sweep_end: DFF<Bit>,
    /// The sweep is the one after reset (every CLOP), not a configure's (one CLOP's buffers).
    sweep_all: DFF<Bit>,
    /// The DMA writer held beats of earlier packets a cycle ago (`dma.holds_writes`, a register
    /// for timing). `Configure` and `Event` wait for it to clear; both come at least two cycles
    /// after the last beat went in, and while the engine waits no payload goes in, so the
    /// writer's beats only leave: clear a cycle ago means none left now.
    writes_held: DFF<Bit>,
    rel_buf_r: DFF<Bits<8>>,
    // Packet.
    /// The taken packet's length (the fit checks' too), from its take.
    p_len: DFF<Bits<16>>,
    /// The bytes the packet takes behind a header (the header and the payload padded to 16),
    /// computed ahead for the fit checks (for timing), from its take.
    fit_need_hdr: DFF<Bits<17>>,
    /// The bytes the packet takes in its CLOP's layout (raw, or `fit_need_hdr`), from `Check` on.
    p_need: DFF<Bits<24>>,
    /// The state is `Decide`; and the working copy is loaded from the store in it (not when the
    /// packet is of the CLOP just committed into).
    deciding: DFF<Bit>,
    loading: DFF<Bit>,
    /// `now + 1`.
    now_ahead: DFF<Bits<32>>,
    p_src_ip: DFF<Bits<32>>,
    p_src_port: DFF<Bits<16>>,
    p_t_sop: DFF<Bits<32>>,
    p_t_hdr: DFF<Bits<32>>,
    p_t_first: DFF<Bits<32>>,
    /// The cycle the last DMA beat went into the writer's output slice (the writer's outcome
    /// comes a cycle later).
    p_t_last: DFF<Bits<32>>,
    /// In `Write`, the packet header is still to go to the DMA writer (set on the way in, so the
    /// payload's multiplexer is chosen by a register).
    hdr_due: DFF<Bit>,
    /// With `hdr_due`, at 128 bits: the header beat goes alone (the packet has payload bytes;
    /// at 256 bits the header goes with the first payload word, and this stays clear). Clear with
    /// `hdr_due`, the packet is empty and its one payload word (the port's placeholder, see
    /// `port/rx_packer.rs`) goes with the header beat, lending it its `last` and `error`: the
    /// DMA command is the header's 16 bytes, one beat.
    hdr_alone: DFF<Bit>,
    /// The packet taken has no payload bytes (from its meta word, at the take).
    p_empty: DFF<Bit>,
    /// The packet's last payload word's lower half holds payload bytes (`header_join::tail_due`),
    /// from its meta word at the take: behind a header at 256 bits, one DMA beat more.
    p_tail: DFF<Bit>,
    /// In `Write`, the packet goes behind a header (read where the width shifts the payload,
    /// `width.wide`); the extra beat after the last word is owed, and is due, with the last
    /// word's `error`.
    shifting: DFF<Bit>,
    tail_owed: Signal<Local, Bit>,
    tail_due: DFF<Bit>,
    tail_error: DFF<Bit>,
    /// The width's constants for the DMA beats behind a header (see `header_join.rs`); the
    /// lower half of the payload word taken last (read at 256 bits only); the word on the input
    /// (at 256 bits), its upper half brought down, and the beat behind a header.
    width: DatapathWidth<W>,
    carry: DFF<Bits<128>>,
    in_wide: Signal<Local, Bits<256>>,
    in_upper: Signal<Local, Bits<256>>,
    joined: Signal<Local, Bits<256>>,
    cmd_sent: DFF<Bit>,
    tries: DFF<Bits<9>>,
    /// `tries + 1 < count`, a cycle behind `tries` (which `Acquire` reads only after a cycle in
    /// `AcquireRead`).
    more_tries: DFF<Bit>,
    ok_r: DFF<Bit>,
    miss_r: DFF<Bit>,
    /// The state is `Write`, and `Commit` (copies of the state register's decode, set where the
    /// state is, for timing: the commit and the next packet's take follow from them in a level).
    writing: DFF<Bit>,
    committing: DFF<Bit>,
    /// The next packet's meta word, taken off the input as soon as it is there (`meta_full`):
    /// the input's `ready` for a meta word is then a register, and for a payload beat never
    /// waits on the take of the next packet (for timing).
    meta_q: DFF<Bits<128>>,
    meta_port: DFF<Bits<2>>,
    meta_full: DFF<Bit>,
    /// A meta word is there to take: held, or on the input (taken from there when the register
    /// is empty, so a packet's take does not wait a cycle for the register).
    meta_here: Signal<Local, Bit>,
    meta_port_now: Signal<Local, Bits<2>>,
    is_flush: DFF<Bit>,
    /// The commit's common case (in `Write`, at the DMA writer's good outcome, the buffer not
    /// filled); the next packet can be taken.
    quick_commit: Signal<Local, Bit>,
    may_take: Signal<Local, Bit>,
    /// The row the next buffer is computed from: the working copy's (or the store's in `Decide`).
    k_size: Signal<Local, Bits<24>>,
    k_cur: Signal<Local, Bits<8>>,
    k_count: Signal<Local, Bits<9>>,
    k_buf_off: Signal<Local, Bits<32>>,
    /// The packet's fit in its CLOP's buffers, in `Decide` (the inputs selected by registers,
    /// for timing).
    fit: BufferFit,
    /// The committed CLOP's state after the commit (the fields the commit changes).
    cm_packets: Signal<Local, Bits<16>>,
    cm_seq: Signal<Local, Bits<16>>,
    cm_dl_valid: Signal<Local, Bit>,
    cm_deadline: Signal<Local, Bits<32>>,
    /// The commit starts the buffer's deadline (its first packet, a timeout set), and the
    /// deadline it sets: a cycle ahead.
    dl_starts: DFF<Bit>,
    dl_next: DFF<Bits<32>>,
    /// For `Check`, computed in `Decide`: the packet is larger than the CLOP's buffers; it does
    /// not fit behind the current buffer's offset.
    too_big: DFF<Bit>,
    no_fit: DFF<Bit>,
    /// Computed in `Decide`, for `FlushDecide`: the loaded deadline is due by the next cycle
    /// (`deadline - now - 1 <= 0`; `now` counts every cycle), so `FlushDecide` sees what
    /// `deadline - now <= 0` would say there.
    dl_due: DFF<Bit>,
    /// `FlushDecide`'s verdict, for `FlushClose`.
    flush_go: DFF<Bit>,
    /// The offset after the packet, and whether it fills the buffer exactly (from that offset, a
    /// cycle later): computed every cycle from the working copy, for timing. The copy stays put
    /// from the cycle the DMA command goes out (`Check`, or the first cycle of `Write` after
    /// `Acquire`) until the commit, and the DMA writer's `done` comes two cycles after its
    /// command at the earliest (a one-beat command's), when both are just up to date.
    after_offset: DFF<Bits<24>>,
    fills: DFF<Bit>,
    // Working copy of the CLOP's configuration and state (fields as in `ClopStore`).
    c_base: DFF<Bits<64>>,
    c_size: DFF<Bits<24>>,
    c_count: DFF<Bits<9>>,
    c_slot: DFF<Bits<7>>,
    c_page: DFF<Bits<2>>,
    c_header: DFF<Bit>,
    c_skip: DFF<Bit>,
    c_enabled: DFF<Bit>,
    /// Which CLOPs are enabled (one bit each), and whether the one a command names was, read when
    /// the command was taken.
    active: DFF<Bits<64>>,
    cfg_was_active: DFF<Bit>,
    /// The command's CLOP, one-hot.
    clop_mask: Signal<Local, Bits<64>>,
    c_timeout: DFF<Bits<32>>,
    s_cur: DFF<Bits<8>>,
    s_offset: DFF<Bits<24>>,
    /// The offset as this cycle's commit or zeroing leaves it, before `Decide` loads a CLOP's:
    /// the offset the store is written with. (The load stays out of the write data's logic, for
    /// timing.) The offset means something only while a buffer is open: it is
    /// zeroed by state alone (`AcquireRead`, `Configure`, the reset `Sweep`), never by a close, so its
    /// next value's selects are registers or the commit (for timing).
    kept_offset: Signal<Local, Bits<24>>,
    s_buf_off: DFF<Bits<32>>,
    s_packets: DFF<Bits<16>>,
    s_first_seq: DFF<Bits<16>>,
    s_seq: DFF<Bits<16>>,
    s_open: DFF<Bit>,
    s_starved: DFF<Bit>,
    s_dl_valid: DFF<Bit>,
    s_deadline: DFF<Bits<32>>,
    /// Stage times of the last packet committed into the current buffer.
    s_t_sop: DFF<Bits<32>>,
    s_t_header: DFF<Bits<32>>,
    s_t_first_dma: DFF<Bits<32>>,
    s_t_last_dma: DFF<Bits<32>>,
    ev_kind: DFF<Bits<4>>,
    ev_bytes: DFF<Bits<32>>,
    ev_packets: DFF<Bits<16>>,
    ev_buf: DFF<Bits<8>>,
    ev_first: DFF<Bits<16>>,
    ev_last: DFF<Bits<16>>,
    ev_t_sop: DFF<Bits<32>>,
    ev_t_header: DFF<Bits<32>>,
    ev_t_first_dma: DFF<Bits<32>>,
    ev_t_last_dma: DFF<Bits<32>>,

    len_up: Signal<Local, Bits<17>>,
    need_hdr: Signal<Local, Bits<17>>,
    next_cur: Signal<Local, Bits<8>>,
    next_buf_off: Signal<Local, Bits<32>>,
    /// The buffer after the current one and its offset in the region, and whether the current
    /// one is the last (so the next is buffer 0): a cycle behind the working copy (for timing;
    /// computed every cycle from the copy as that cycle sees it, which is what `Decide` loads, and
    /// what `AcquireRead` holds after a skip).
    next_cur_q: DFF<Bits<8>>,
    next_buf_off_q: DFF<Bits<32>>,
    cur_is_last: DFF<Bit>,
    /// `next_cur9 - count`: not negative when the current buffer is the last.
    past_count: Signal<Local, Bits<10>>,
    new_offset: Signal<Local, Bits<24>>,
    hdr_beat: Signal<Local, Bits<128>>,
    pay_valid: Signal<Local, Bit>,
    pkt_clop: Signal<Local, Bits<6>>,
    w_size: Signal<Local, Bits<24>>,
    w_header: Signal<Local, Bit>,
    w_offset: Signal<Local, Bits<24>>,
    w_buf_off: Signal<Local, Bits<32>>,
    /// The DMA command's offset and length, into registers a cycle before they are shown (for
    /// timing: the DMA writer derives its beat counts from them). From the working copy as it is
    /// loaded in `Decide` (for the command of `Check`), and in `Acquire` for a new buffer's
    /// offset 0 (for the command of `Write` after it); in between they do not move.
    cmd_offset_q: DFF<Bits<32>>,
    cmd_len_q: DFF<Bits<16>>,
    cmd_at: Signal<Local, Bits<24>>,
    take_meta: Signal<Local, Bit>,
    packet_event: Signal<Local, Bit>,
    commit_now: Signal<Local, Bit>,
    t_commit_last: Signal<Local, Bits<32>>,
    load_ram: Signal<Local, Bit>,
    clear_state: Signal<Local, Bit>,
    t_last: Signal<Local, Bits<32>>,
    next_cur9: Signal<Local, Bits<9>>,
    close_now: Signal<Local, Bit>,
    dl_left: Signal<Local, Bits<32>>,
    w_deadline: Signal<Local, Bits<32>>,
    own_addr: Signal<Local, Bits<14>>,
    cfg_count: Signal<Local, Bits<9>>,
}

impl<const W: usize> Logic for ClopEngine<W> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            state,
            ret,
            clop,
            cfg_op_r,
            sweep,
            count_m2,
            sweep_end,
            sweep_all,
            writes_held,
            rel_buf_r,
            p_len,
            fit_need_hdr,
            p_need,
            deciding,
            loading,
            now_ahead,
            p_src_ip,
            p_src_port,
            p_t_sop,
            p_t_hdr,
            p_t_first,
            p_t_last,
            hdr_due,
            hdr_alone,
            p_tail,
            shifting,
            tail_due,
            tail_error,
            carry,
            p_empty,
            cmd_offset_q,
            cmd_len_q,
            cmd_sent,
            tries,
            more_tries,
            ok_r,
            miss_r,
            writing,
            committing,
            next_cur_q,
            next_buf_off_q,
            cur_is_last,
            meta_q,
            meta_port,
            meta_full,
            is_flush,
            dl_starts,
            dl_next,
            too_big,
            no_fit,
            dl_due,
            flush_go,
            after_offset,
            fills,
            c_base,
            c_size,
            c_count,
            c_slot,
            c_page,
            c_header,
            c_skip,
            c_enabled,
            active,
            cfg_was_active,
            c_timeout,
            s_cur,
            s_offset,
            s_buf_off,
            s_packets,
            s_first_seq,
            s_seq,
            s_open,
            s_starved,
            s_dl_valid,
            s_deadline,
            s_t_sop,
            s_t_header,
            s_t_first_dma,
            s_t_last_dma,
            ev_kind,
            ev_bytes,
            ev_packets,
            ev_buf,
            ev_first,
            ev_last,
            ev_t_sop,
            ev_t_header,
            ev_t_first_dma,
            ev_t_last_dma
        );
        self.store.clock.next = self.clock.val();
        self.timeout_scan.clock.next = self.clock.val();
        self.timeout_scan.reset.next = self.reset.val();
        self.timeout_scan.now.next = self.now.val();
        self.own_ram.read_clock.next = self.clock.val();
        self.own_ram.write_clock.next = self.clock.val();

        // ---- defaults -------------------------------------------------------------------------
        self.store.wr_cfg.next = false;
        self.store.wr_state.next = false;
        self.store.wr_stamps.next = false;
        self.own_ram.write_enable.next = false;
        self.store.wr_clop.next = self.clop.q.val();
        self.store.rd_clop.next = self.clop.q.val();
        self.timeout_scan.flush_done.next = false;

        // The next packet's meta word: held, or on the input.
        self.meta_port_now.next = self.meta_port.q.val();
        if !self.meta_full.q.val() {
            self.meta_port_now.next = self.inp.port.val();
        }
        self.meta_here.next = self.meta_full.q.val() | (self.inp.valid.val() & self.inp.meta.val());
        // The commit: the common case (the DMA writer's outcome good, the buffer not filled by
        // the packet) in `Write` at once, the rest in `Commit`. In the common case the next
        // packet is taken at once (if no command, release or flush waits).
        self.quick_commit.next = self.writing.q.val()
            & self.dma.done.val()
            & self.dma.done_ok.val()
            & !self.fills.q.val();
        self.commit_now.next =
            self.quick_commit.val() | (self.committing.q.val() & self.ok_r.q.val());
        // The next packet can be taken: its meta word is here and no command, release or flush
        // goes first.
        self.may_take.next = !self.cfg.valid.val()
            & !self.rel_valid.val()
            & !self.timeout_scan.flush_valid.val()
            & self.meta_here.val();

        // In Decide the working copy is loaded from the store (`loading`), unless the packet is
        // of the CLOP just committed into (its copy is current, and the store returned the words
        // from before the write-back). The `w_*` signals are the fields as this cycle sees them
        // in `Decide` (the loads themselves are below, after the commit). Everything else reads
        // the registers (for timing: the store's outputs stay off those paths).
        self.load_ram.next = self.loading.q.val();
        self.deciding.d.next = false;
        self.loading.d.next = false;
        self.w_size.next = self.c_size.q.val();
        self.w_header.next = self.c_header.q.val();
        self.w_offset.next = self.s_offset.q.val();
        self.w_buf_off.next = self.s_buf_off.q.val();
        self.w_deadline.next = self.s_deadline.q.val();
        if self.load_ram.val() {
            self.w_size.next = self.store.rd_size.val();
            self.w_header.next = self.store.rd_header.val();
            self.w_offset.next = self.store.rd_offset.val();
            self.w_buf_off.next = self.store.rd_buf_off.val();
            self.w_deadline.next = self.store.rd_deadline.val();
        }
        self.c_size.d.next = self.w_size.val();
        self.c_header.d.next = self.w_header.val();
        self.kept_offset.next = self.w_offset.val();
        self.s_deadline.d.next = self.w_deadline.val();
        // The row the next buffer is computed from: the store's outputs in `Decide`, else the
        // working copy (selected by a register only, for timing).
        self.k_size.next = self.c_size.q.val();
        self.k_cur.next = self.s_cur.q.val();
        self.k_count.next = self.c_count.q.val();
        self.k_buf_off.next = self.s_buf_off.q.val();
        if self.loading.q.val() {
            self.k_size.next = self.store.rd_size.val();
            self.k_cur.next = self.store.rd_cur.val();
            self.k_count.next = self.store.rd_count.val();
            self.k_buf_off.next = self.store.rd_buf_off.val();
        }

        self.own_ram.write_data.next = true;
        // The current buffer's ownership bit.
        self.own_addr.next =
            (bit_cast::<14, 6>(self.clop.q.val()) << 8) | bit_cast::<14, 8>(self.s_cur.q.val());
        self.own_ram.read_address.next = self.own_addr.val();

        // Bytes the packet takes with a header: the header's 16 and the payload padded to 16
        // (the 16 added before the rounding: one carry chain), from the meta word as it is taken.
        self.len_up.next = bit_cast::<17, 16>(self.meta_word.len.val()) + 31;
        self.need_hdr.next = self.len_up.val() & 0x1_FFF0;
        // The checks `Check` acts on, computed in `Decide` from the copy as it is loaded.
        self.fit.header.next = self.c_header.q.val();
        self.fit.offset.next = self.s_offset.q.val();
        self.fit.size.next = self.c_size.q.val();
        if self.loading.q.val() {
            self.fit.header.next = self.store.rd_header.val();
            self.fit.offset.next = self.store.rd_offset.val();
            self.fit.size.next = self.store.rd_size.val();
        }
        self.fit.len.next = self.p_len.q.val();
        self.fit.need_hdr.next = self.fit_need_hdr.q.val();
        if self.deciding.q.val() {
            self.too_big.d.next = self.fit.too_big.val();
            self.no_fit.d.next = self.fit.no_fit.val();
        }
        if self.deciding.q.val() {
            self.p_need.d.next = self.fit.need.val();
        }

        self.count_m2.d.next = self.c_count.q.val() - 2;
        self.sweep_end.d.next = self.sweep.q.val() >= self.count_m2.q.val();
        self.writes_held.d.next = self.dma.holds_writes.val();
        self.more_tries.d.next = (self.tries.q.val() + 1) < self.c_count.q.val();
        // `now + 1`, a register: `now` counts every cycle.
        self.now_ahead.d.next = self.now.val() + 2;
        // `deadline + !(now + 1)` is `deadline - now - 2`: negative when the deadline is at most
        // a cycle away.
        self.dl_left.next = self.w_deadline.val() + !self.now_ahead.q.val();
        self.dl_due.d.next = self.dl_left.val().get_bit(31);
        // The buffer after the current one, and its offset in the region.
        // (Used in `Check`, `FlushClose` and `CloseFull`, at least a cycle after `Decide`, and in
        // `Acquire`, a cycle after a skip changed the current buffer.)
        self.next_cur9.next = bit_cast::<9, 8>(self.k_cur.val()) + 1;
        self.next_cur_q.d.next = self.next_cur9.val().get_bits::<8>(0);
        self.past_count.next =
            bit_cast::<10, 9>(self.next_cur9.val()) - bit_cast::<10, 9>(self.k_count.val());
        self.cur_is_last.d.next = !self.past_count.val().get_bit(9);
        self.next_buf_off_q.d.next = self.k_buf_off.val() + bit_cast::<32, 24>(self.k_size.val());
        self.next_cur.next = self.next_cur_q.q.val();
        self.next_buf_off.next = self.next_buf_off_q.q.val();
        if self.cur_is_last.q.val() {
            self.next_cur.next = 0.into();
            self.next_buf_off.next = 0.into();
        }
        self.new_offset.next = self.s_offset.q.val() + self.p_need.q.val();
        self.after_offset.d.next = self.new_offset.val();
        self.fills.d.next = self.after_offset.q.val() == self.c_size.q.val();
        self.close_now.next = false;

        // ---- the per-packet header (little-endian fields, network-order beat) -----------------
        self.hdr_beat.next = (bit_cast::<128, 8>(self.p_len.q.val().get_bits::<8>(0)) << 120)
            | (bit_cast::<128, 8>(self.p_len.q.val().get_bits::<8>(8)) << 112)
            | (bit_cast::<128, 8>(self.p_src_port.q.val().get_bits::<8>(0)) << 104)
            | (bit_cast::<128, 8>(self.p_src_port.q.val().get_bits::<8>(8)) << 96)
            | (bit_cast::<128, 32>(self.p_src_ip.q.val()) << 64)
            | (bit_cast::<128, 8>(self.p_t_sop.q.val().get_bits::<8>(0)) << 56)
            | (bit_cast::<128, 8>(self.p_t_sop.q.val().get_bits::<8>(8)) << 48)
            | (bit_cast::<128, 8>(self.p_t_sop.q.val().get_bits::<8>(16)) << 40)
            | (bit_cast::<128, 8>(self.p_t_sop.q.val().get_bits::<8>(24)) << 32)
            | (bit_cast::<128, 8>(self.s_seq.q.val().get_bits::<8>(0)) << 24)
            | (bit_cast::<128, 8>(self.s_seq.q.val().get_bits::<8>(8)) << 16);

        // ---- outputs to the DMA engine ----------------------------------------------------------
        self.dma.cmd_valid.next = self.writing.q.val() & !self.cmd_sent.q.val();
        self.dma.cmd_base.next = self.c_base.q.val();
        self.cmd_at.next = self.w_offset.val();
        if self.state.q.val() == ClopState::Acquire {
            self.cmd_at.next = 0.into();
        }
        self.cmd_offset_q.d.next = self.w_buf_off.val() + bit_cast::<32, 24>(self.cmd_at.val());
        self.cmd_len_q.d.next = self.p_len.q.val();
        if self.w_header.val() {
            self.cmd_len_q.d.next = self.p_len.q.val() + 16;
        }
        self.dma.cmd_offset.next = self.cmd_offset_q.q.val();
        self.dma.cmd_len.next = self.cmd_len_q.q.val();
        self.dma.cmd_slot.next = self.c_slot.q.val();
        self.dma.cmd_page.next = self.c_page.q.val();
        self.pay_valid.next = self.inp.valid.val() & !self.inp.meta.val();
        if self.writing.q.val()
            & self.inp.valid.val()
            & !self.inp.meta.val()
            & self.dma.data_ready.val()
            & !self.hdr_alone.q.val()
            & !self.tail_due.q.val()
        {
            self.carry.d.next = self.inp.data.val().get_bits::<128>(0);
        }
        self.tail_owed.next = self.width.wide.val() & self.shifting.q.val() & self.p_tail.q.val();
        // The beat behind a header at 256 bits: `{header or carry, the word's upper half}`, or
        // `{carry, 0}` for the extra beat.
        self.in_wide.next = bit_cast::<256, W>(self.inp.data.val());
        self.in_upper.next = self.in_wide.val() >> self.width.half_shift.val();
        self.joined.next = (bit_cast::<256, 128>(self.carry.q.val()) << 128)
            | bit_cast::<256, 128>(self.in_upper.val().get_bits::<128>(0));
        if self.hdr_due.q.val() {
            self.joined.next = (bit_cast::<256, 128>(self.hdr_beat.val()) << 128)
                | bit_cast::<256, 128>(self.in_upper.val().get_bits::<128>(0));
        }
        if self.tail_due.q.val() {
            self.joined.next = bit_cast::<256, 128>(self.carry.q.val()) << 128;
        }
        self.dma.data.next = self.inp.data.val();
        if self.width.wide.val() {
            if self.shifting.q.val() {
                self.dma.data.next = self.joined.val().get_bits::<W>(0);
            }
        } else if self.hdr_due.q.val() {
            self.dma.data.next = bit_cast::<W, 128>(self.hdr_beat.val());
        }
        // A last word with a beat owed after it is not the DMA command's last.
        self.dma.data_last.next = self.inp.last.val() & !self.tail_owed.val();
        self.dma.data_error.next = self.inp.error.val() & !self.tail_owed.val();
        self.dma.data_valid.next = self.writing.q.val() & self.pay_valid.val();
        self.inp.ready.next = false;
        if self.hdr_alone.q.val() {
            self.dma.data_last.next = false;
            self.dma.data_error.next = false;
            self.dma.data_valid.next = true;
        } else if self.width.wide.val() & self.tail_due.q.val() {
            self.dma.data_last.next = true;
            self.dma.data_error.next = self.tail_error.q.val();
            self.dma.data_valid.next = true;
        } else if self.writing.q.val() {
            self.inp.ready.next = self.dma.data_ready.val();
        }
        if (self.state.q.val() == ClopState::DropPacket)
            | ((self.state.q.val() == ClopState::Idle) & !self.meta_full.q.val())
        {
            // Dropping a packet: its payload is consumed; and in `Idle` with no meta word taken,
            // a payload beat without its meta word (which cannot happen).
            self.inp.ready.next = true;
        }

        // ---- event record -----------------------------------------------------------------------
        // A record goes out once the payload it may announce has left the DMA writer's output
        // slice and the receive engine's (so it cannot overtake that payload at the write mux,
        // where records win; the engine's slice also holds other records, a wait that ends).
        self.ev_valid.next = (self.state.q.val() == ClopState::Event) & !self.writes_held.q.val();
        self.record.kind.next = self.ev_kind.q.val();
        self.record.clop.next = bit_cast::<8, 6>(self.clop.q.val());
        self.record.buffer.next = bit_cast::<16, 8>(self.ev_buf.q.val());
        self.record.bytes.next = self.ev_bytes.q.val();
        self.record.packets.next = self.ev_packets.q.val();
        self.record.first_seq.next = self.ev_first.q.val();
        self.record.last_seq.next = self.ev_last.q.val();
        self.record.sop_at_mac.next = self.ev_t_sop.q.val();
        self.record.header_parsed.next = self.ev_t_header.q.val();
        self.record.first_dma_beat.next = self.ev_t_first_dma.q.val();
        self.record.last_dma_beat.next = self.ev_t_last_dma.q.val();
        self.ev_lo.next = self.record.lo.val();
        self.ev_hi.next = self.record.hi.val();

        self.cfg.ready.next = false;
        self.rel_ready.next = false;
        self.busy.next =
            (self.state.q.val() == ClopState::Configure) | (self.state.q.val() == ClopState::Sweep);
        self.committed.next = false;
        self.committed_bytes.next = self.p_len.q.val();
        self.drop_disabled.next = false;
        self.drop_too_big.next = false;
        self.drop_no_buffer.next = false;
        self.drop_tlb_miss.next = false;
        self.drop_bad.next = false;
        self.bad_release.next = false;
        self.cfg_refused.next = false;
        self.clop_mask.next =
            bit_cast::<64, 1>(true.into()) << bit_cast::<64, 6>(self.clop.q.val());
        self.meta_word.word.next = self.meta_q.q.val();
        if !self.meta_full.q.val() {
            self.meta_word.word.next = self.inp.data.val().get_bits::<128>(0);
        }
        self.pkt_clop.next = (bit_cast::<6, 2>(self.meta_port_now.val()) << 4)
            | bit_cast::<6, 4>(self.meta_word.stream.val());
        self.t_last.next = self.now.val() - 1;
        self.take_meta.next = false;
        self.packet_event.next = false;
        self.writing.d.next = self.writing.q.val() & !self.dma.done.val();
        self.committing.d.next = self.writing.q.val()
            & self.dma.done.val()
            & !(self.dma.done_ok.val() & !self.fills.q.val());
        self.t_commit_last.next = self.t_last.val();
        self.clear_state.next = false;
        self.cfg_count.next = self.cfg.cmd.buf_count.val();
        if (self.cfg.cmd.buf_count.val() > 256) | (self.cfg.cmd.buf_count.val() == 0) {
            self.cfg_count.next = 256.into();
        }

        match self.state.q.val() {
            ClopState::Idle => {
                if self.cfg.valid.val() {
                    self.cfg.ready.next = true;
                    self.clop.d.next = self.cfg.cmd.clop.val();
                    self.cfg_op_r.d.next = self.cfg.cmd.op.val();
                    self.cfg_was_active.d.next =
                        self.active.q.val().get_bit(self.cfg.cmd.clop.val().index());
                    self.c_base.d.next = self.cfg.cmd.base.val();
                    self.c_enabled.d.next = self.cfg.cmd.op.val() == 1;
                    self.c_skip.d.next = self.cfg.cmd.skip.val();
                    self.c_header.d.next = self.cfg.cmd.header.val();
                    self.c_page.d.next = self.cfg.cmd.page.val();
                    self.c_slot.d.next = self.cfg.cmd.slot.val();
                    self.c_count.d.next = self.cfg_count.val();
                    self.c_size.d.next = self.cfg.cmd.buf_size.val();
                    self.c_timeout.d.next = self.cfg.cmd.timeout.val();
                    self.state.d.next = ClopState::Configure;
                } else if self.rel_valid.val() {
                    self.rel_ready.next = true;
                    self.own_ram.read_address.next = (bit_cast::<14, 6>(self.rel_clop.val()) << 8)
                        | bit_cast::<14, 8>(self.rel_buf.val());
                    self.clop.d.next = self.rel_clop.val();
                    self.rel_buf_r.d.next = self.rel_buf.val();
                    self.state.d.next = ClopState::Release;
                } else if self.timeout_scan.flush_valid.val() {
                    self.clop.d.next = self.timeout_scan.flush_clop.val();
                    self.store.rd_clop.next = self.timeout_scan.flush_clop.val();
                    self.is_flush.d.next = true;
                    self.deciding.d.next = true;
                    self.loading.d.next = true;
                    self.state.d.next = ClopState::Decide;
                } else if self.meta_here.val() {
                    self.take_meta.next = true;
                    self.state.d.next = ClopState::Decide;
                }
            }
            ClopState::Configure => {
                // Configure or disable: write the configuration, reset the state; once the last
                // beats of earlier packets have left the DMA writer, so that no write to the old
                // buffers follows the acknowledgement (`busy` low; a write port that never takes
                // them keeps the command busy).
                if (self.cfg_op_r.q.val() == 1) & self.cfg_was_active.q.val() {
                    // Reconfiguring an enabled CLOP would free the buffers the host holds.
                    self.cfg_refused.next = true;
                    self.state.d.next = ClopState::Idle;
                } else if !self.writes_held.q.val() {
                    self.store.wr_cfg.next = true;
                    self.store.wr_state.next = true;
                    self.clear_state.next = true;
                    self.sweep.d.next = 0.into();
                    self.sweep_end.d.next = self.c_count.q.val() == 1;
                    self.state.d.next = ClopState::Idle;
                    self.active.d.next = self.active.q.val() & !self.clop_mask.val();
                    if self.cfg_op_r.q.val() == 1 {
                        self.state.d.next = ClopState::Sweep;
                        self.active.d.next = self.active.q.val() | self.clop_mask.val();
                    }
                }
            }
            ClopState::Sweep => {
                self.sweep.d.next = self.sweep.q.val() + 1;
                if self.sweep_all.q.val() {
                    // After reset every CLOP is disabled, with a clean state.
                    self.c_base.d.next = 0.into();
                    self.c_size.d.next = 0.into();
                    self.c_count.d.next = 0.into();
                    self.c_slot.d.next = 0.into();
                    self.c_page.d.next = 0.into();
                    self.c_header.d.next = false;
                    self.c_skip.d.next = false;
                    self.c_enabled.d.next = false;
                    self.c_timeout.d.next = 0.into();
                    self.clear_state.next = true;
                    self.store.wr_cfg.next = true;
                    self.store.wr_state.next = true;
                    self.store.wr_clop.next = self.sweep.q.val().get_bits::<6>(0);
                    // (At the last CLOP: `sweep_end` says so, worked out a cycle ahead.)
                    self.sweep_end.d.next = self.sweep.q.val() == 62;
                } else {
                    // Every buffer of a configured CLOP starts free.
                    self.own_ram.write_enable.next = true;
                    self.own_ram.write_data.next = false;
                    self.own_addr.next = (bit_cast::<14, 6>(self.clop.q.val()) << 8)
                        | bit_cast::<14, 8>(self.sweep.q.val().get_bits::<8>(0));
                }
                if self.sweep_end.q.val() {
                    self.sweep_all.d.next = false;
                    self.state.d.next = ClopState::Idle;
                }
            }
            ClopState::Release => {
                // Release: only a buffer the host holds becomes free.
                self.own_addr.next = (bit_cast::<14, 6>(self.clop.q.val()) << 8)
                    | bit_cast::<14, 8>(self.rel_buf_r.q.val());
                if self.own_ram.read_data.val() {
                    self.own_ram.write_enable.next = true;
                    self.own_ram.write_data.next = false;
                } else {
                    self.bad_release.next = true;
                }
                self.state.d.next = ClopState::Idle;
            }
            ClopState::Decide => {
                // The working copy is loaded (see above) and the packet's size checks computed
                // from it into registers; `Check` acts on them.
                self.state.d.next = ClopState::Check;
                if self.is_flush.q.val() {
                    self.state.d.next = ClopState::FlushDecide;
                }
            }
            ClopState::Check => {
                self.tries.d.next = 0.into();
                self.cmd_sent.d.next = false;
                if !self.c_enabled.q.val() {
                    self.drop_disabled.next = true;
                    self.state.d.next = ClopState::DropPacket;
                } else if self.too_big.q.val() {
                    // Can never fit: dropped and reported as an error event (bytes: its size).
                    self.drop_too_big.next = true;
                    self.ev_kind.d.next = 5.into();
                    self.packet_event.next = true;
                    self.ret.d.next = ClopState::DropPacket;
                    self.state.d.next = ClopState::Event;
                } else if self.s_open.q.val() & self.no_fit.q.val() {
                    // The packet does not fit: close the buffer, then acquire the next one.
                    self.ev_kind.d.next = 1.into();
                    self.close_now.next = true;
                    self.ret.d.next = ClopState::AcquireRead;
                    self.state.d.next = ClopState::Event;
                } else if self.s_open.q.val() {
                    // Fits the open buffer: the DMA command goes out now.
                    self.dma.cmd_valid.next = true;
                    if self.dma.cmd_ready.val() {
                        self.cmd_sent.d.next = true;
                    }
                    self.hdr_due.d.next = self.c_header.q.val();
                    self.hdr_alone.d.next =
                        self.c_header.q.val() & !self.p_empty.q.val() & !self.width.wide.val();
                    self.shifting.d.next = self.c_header.q.val();
                    // (The first DMA beat's time, unless a beat goes: an empty raw packet's.)
                    self.p_t_first.d.next = self.now.val();
                    self.state.d.next = ClopState::Write;
                    self.writing.d.next = true;
                } else {
                    self.state.d.next = ClopState::AcquireRead;
                }
            }
            ClopState::AcquireRead => {
                // Acquire: read the current buffer's ownership.
                self.own_ram.read_address.next = self.own_addr.val();
                self.state.d.next = ClopState::Acquire;
            }
            ClopState::Acquire => {
                if !self.own_ram.read_data.val() {
                    self.s_open.d.next = true;
                    self.s_packets.d.next = 0.into();
                    self.s_first_seq.d.next = self.s_seq.q.val();
                    self.s_starved.d.next = false;
                    self.hdr_due.d.next = self.c_header.q.val();
                    self.hdr_alone.d.next =
                        self.c_header.q.val() & !self.p_empty.q.val() & !self.width.wide.val();
                    self.shifting.d.next = self.c_header.q.val();
                    self.p_t_first.d.next = self.now.val();
                    self.state.d.next = ClopState::Write;
                    self.writing.d.next = true;
                } else if self.c_skip.q.val() & self.more_tries.q.val() {
                    // Skip the held buffer.
                    self.tries.d.next = self.tries.q.val() + 1;
                    self.s_cur.d.next = self.next_cur.val();
                    self.s_buf_off.d.next = self.next_buf_off.val();
                    self.state.d.next = ClopState::AcquireRead;
                } else {
                    self.drop_no_buffer.next = true;
                    self.state.d.next = ClopState::DropPacket;
                    if !self.s_starved.q.val() {
                        // The first drop of a starvation episode is reported.
                        self.s_starved.d.next = true;
                        self.ev_kind.d.next = 3.into();
                        self.packet_event.next = true;
                        self.ret.d.next = ClopState::DropPacket;
                        self.state.d.next = ClopState::Event;
                    }
                }
            }
            ClopState::Write => {
                if self.dma.cmd_ready.val() {
                    self.cmd_sent.d.next = true;
                }
                // (The header is the first payload beat: taken before the outcome comes; an empty
                // packet's goes when its placeholder word is there; read from the input, not
                // `pay_valid`: a local read here would tie this block to `dma.data_valid` in
                // Verilator's eyes, a false loop through the DMA writer's `data_ready`.)
                if (self.dma.data_ready.val()
                    & (self.hdr_alone.q.val() | (self.inp.valid.val() & !self.inp.meta.val())))
                    | self.dma.done.val()
                {
                    self.hdr_due.d.next = false;
                    self.hdr_alone.d.next = false;
                }
                // The extra beat is due once the last word is taken, and done once it is.
                // (Not through the local `tail_owed`: as with `pay_valid` above, a local read in
                // this condition would close a false loop through `data_ready` in Verilator's
                // eyes.)
                if self.width.wide.val()
                    & self.shifting.q.val()
                    & self.p_tail.q.val()
                    & self.dma.data_ready.val()
                    & self.inp.valid.val()
                    & !self.inp.meta.val()
                    & self.inp.last.val()
                    & !self.tail_due.q.val()
                {
                    self.tail_due.d.next = true;
                    self.tail_error.d.next = self.inp.error.val();
                }
                if (self.tail_due.q.val() & self.dma.data_ready.val()) | self.dma.done.val() {
                    self.tail_due.d.next = false;
                }
                if self.dma.first_write.val() {
                    self.p_t_first.d.next = self.now.val();
                }
                // The outcome comes from registers, the cycle after the last beat.
                self.p_t_last.d.next = self.t_last.val();
                if self.dma.done.val() & !(self.dma.done_ok.val() & !self.fills.q.val()) {
                    self.ok_r.d.next = self.dma.done_ok.val();
                    self.miss_r.d.next = self.dma.done_tlb_miss.val();
                    self.state.d.next = ClopState::Commit;
                } else if self.quick_commit.val() {
                    // The common case commits at once (`commit_now`, below) and takes the next
                    // packet if it can.
                    self.state.d.next = ClopState::Idle;
                    if self.may_take.val() {
                        self.state.d.next = ClopState::Decide;
                    }
                }
            }
            ClopState::Commit => {
                self.state.d.next = ClopState::WriteBack;
                if self.ok_r.q.val() {
                    // Safe commit (of a packet that fills its buffer, `commit_now`): see below.
                    self.t_commit_last.next = self.p_t_last.q.val();
                    // (A good outcome comes here only for a packet that fills its buffer.)
                    self.state.d.next = ClopState::Idle;
                    if self.fills.q.val() {
                        self.state.d.next = ClopState::CloseFull;
                    } else if self.may_take.val() {
                        self.state.d.next = ClopState::Decide;
                    }
                } else if self.miss_r.q.val() {
                    self.drop_tlb_miss.next = true;
                    self.ev_kind.d.next = 4.into();
                    self.packet_event.next = true;
                    self.ret.d.next = ClopState::WriteBack;
                    self.state.d.next = ClopState::Event;
                } else {
                    self.drop_bad.next = true;
                }
            }
            ClopState::Event => {
                if self.ev_ready.val() & !self.writes_held.q.val() {
                    self.state.d.next = self.ret.q.val();
                }
            }
            ClopState::DropPacket => {
                if self.inp.valid.val() & self.inp.last.val() {
                    self.state.d.next = ClopState::WriteBack;
                }
            }
            ClopState::WriteBack => {
                // Write the working state back.
                self.store.wr_state.next = true;
                self.store.wr_stamps.next = true;
                if self.is_flush.q.val() {
                    self.timeout_scan.flush_done.next = true;
                }
                self.state.d.next = ClopState::Idle;
            }
            ClopState::FlushDecide => {
                // Flush only if the buffer's own deadline (not the scanner's copy) has passed:
                // judged into a register, acted on in `FlushClose` (for timing).
                self.flush_go.d.next = self.c_enabled.q.val()
                    & self.s_open.q.val()
                    & (self.s_packets.q.val() != 0)
                    & self.s_dl_valid.q.val()
                    & self.dl_due.q.val();
                self.state.d.next = ClopState::FlushClose;
            }
            ClopState::FlushClose => {
                self.state.d.next = ClopState::WriteBack;
                if self.flush_go.q.val() {
                    self.ev_kind.d.next = 2.into();
                    self.close_now.next = true;
                    self.ret.d.next = ClopState::WriteBack;
                    self.state.d.next = ClopState::Event;
                }
            }
            ClopState::CloseFull => {
                self.close_now.next = true;
                self.state.d.next = ClopState::Event;
            }
        }

        // ---- safe commit: only now does the packet count -----------------------------------------
        // The fields the commit changes, as they are after it (`cm_*`, with the offset and the
        // stamps from their registers): the working copy's, and the store row's.
        // A buffer's first packet starts its flush deadline, `now + timeout` at the commit: both
        // a cycle ahead, from the copy (which stays put from the DMA command to the commit, at
        // least two cycles) and `now_ahead` (for timing).
        self.dl_starts.d.next = (self.s_packets.q.val() == 0) & (self.c_timeout.q.val() != 0);
        self.dl_next.d.next = self.now_ahead.q.val() + self.c_timeout.q.val();
        self.cm_packets.next = self.s_packets.q.val() + 1;
        self.cm_seq.next = self.s_seq.q.val() + 1;
        self.cm_dl_valid.next = self.s_dl_valid.q.val() | self.dl_starts.q.val();
        self.cm_deadline.next = self.s_deadline.q.val();
        if self.dl_starts.q.val() {
            self.cm_deadline.next = self.dl_next.q.val();
        }
        if self.commit_now.val() {
            self.committed.next = true;
            self.kept_offset.next = self.after_offset.q.val();
            self.s_packets.d.next = self.cm_packets.val();
            self.s_seq.d.next = self.cm_seq.val();
            self.s_t_sop.d.next = self.p_t_sop.q.val();
            self.s_t_header.d.next = self.p_t_hdr.q.val();
            self.s_t_first_dma.d.next = self.p_t_first.q.val();
            self.s_t_last_dma.d.next = self.t_commit_last.val();
            self.s_dl_valid.d.next = self.cm_dl_valid.val();
            self.s_deadline.d.next = self.cm_deadline.val();
            if self.fills.q.val() {
                // Exactly full: close it now (`CloseFull` reads the updated state).
                self.ev_kind.d.next = 1.into();
                self.ret.d.next = ClopState::WriteBack;
            } else {
                // Write the state back now and go on with the next packet at once (the states
                // that follow are set in the states' own arms above, for timing).
                self.store.wr_state.next = true;
                self.store.wr_stamps.next = true;
                self.take_meta.next = self.may_take.val();
            }
        }

        // ---- an event about one packet (no free buffer, TLB miss, error) ------------------------
        if self.packet_event.val() {
            self.ev_buf.d.next = self.s_cur.q.val();
            self.ev_bytes.d.next = bit_cast::<32, 16>(self.p_len.q.val());
            self.ev_packets.d.next = 1.into();
            self.ev_first.d.next = self.s_seq.q.val();
            self.ev_last.d.next = self.s_seq.q.val();
            self.ev_t_sop.d.next = self.p_t_sop.q.val();
            self.ev_t_header.d.next = self.p_t_hdr.q.val();
            self.ev_t_first_dma.d.next = 0.into();
            self.ev_t_last_dma.d.next = 0.into();
        }

        // ---- closing a buffer: report it, hand it to the host, move to the next one -----------
        if self.close_now.val() {
            self.ev_buf.d.next = self.s_cur.q.val();
            self.ev_bytes.d.next = bit_cast::<32, 24>(self.s_offset.q.val());
            self.ev_packets.d.next = self.s_packets.q.val();
            self.ev_first.d.next = self.s_first_seq.q.val();
            self.ev_last.d.next = self.s_seq.q.val() - 1;
            self.ev_t_sop.d.next = self.s_t_sop.q.val();
            self.ev_t_header.d.next = self.s_t_header.q.val();
            self.ev_t_first_dma.d.next = self.s_t_first_dma.q.val();
            self.ev_t_last_dma.d.next = self.s_t_last_dma.q.val();
            self.own_ram.write_enable.next = true;
            self.own_ram.write_data.next = true;
            self.s_cur.d.next = self.next_cur.val();
            self.s_buf_off.d.next = self.next_buf_off.val();
            self.s_open.d.next = false;
            self.s_packets.d.next = 0.into();
            self.s_dl_valid.d.next = false;
        }
        self.own_ram.write_address.next = self.own_addr.val();

        // ---- the next packet's meta word (from idle, or right after a plain commit) ------------
        if self.take_meta.val() {
            self.meta_full.d.next = false;
            self.clop.d.next = self.pkt_clop.val();
            self.store.rd_clop.next = self.pkt_clop.val();
            self.p_len.d.next = self.meta_word.len.val();
            self.p_empty.d.next = self.meta_word.len.val() == 0;
            self.p_tail.d.next = self.meta_word.len.val().any()
                & (self.meta_word.len.val().get_bit(4)
                    ^ (self.meta_word.len.val().get_bits::<4>(0) == 0));
            self.fit_need_hdr.d.next = self.need_hdr.val();
            self.p_src_ip.d.next = self.meta_word.src_ip.val();
            self.p_src_port.d.next = self.meta_word.src_port.val();
            self.p_t_sop.d.next = self.meta_word.sop_time.val();
            self.p_t_hdr.d.next =
                self.meta_word.sop_time.val() + bit_cast::<32, 16>(self.meta_word.hdr_delta.val());
            self.is_flush.d.next = false;
            self.deciding.d.next = true;
            self.loading.d.next =
                !(self.commit_now.val() & (self.pkt_clop.val() == self.clop.q.val()));
        }

        // ---- the working copy loaded from the store (in `Decide`, after the commit above)
        if self.load_ram.val() {
            self.c_base.d.next = self.store.rd_base.val();
            self.c_count.d.next = self.store.rd_count.val();
            self.c_slot.d.next = self.store.rd_slot.val();
            self.c_page.d.next = self.store.rd_page.val();
            self.c_skip.d.next = self.store.rd_skip.val();
            self.c_enabled.d.next = self.store.rd_enabled.val();
            self.c_timeout.d.next = self.store.rd_timeout.val();
            self.s_cur.d.next = self.store.rd_cur.val();
            self.s_buf_off.d.next = self.store.rd_buf_off.val();
            self.s_seq.d.next = self.store.rd_seq.val();
            self.s_first_seq.d.next = self.store.rd_first_seq.val();
            self.s_packets.d.next = self.store.rd_packets.val();
            self.s_open.d.next = self.store.rd_open.val();
            self.s_starved.d.next = self.store.rd_starved.val();
            self.s_dl_valid.d.next = self.store.rd_dl_valid.val();
            self.s_t_sop.d.next = self.store.rd_t_sop.val();
            self.s_t_header.d.next = self.store.rd_t_header.val();
            self.s_t_first_dma.d.next = self.store.rd_t_first_dma.val();
            self.s_t_last_dma.d.next = self.store.rd_t_last_dma.val();
            self.c_size.d.next = self.store.rd_size.val();
            self.c_header.d.next = self.store.rd_header.val();
            self.s_deadline.d.next = self.store.rd_deadline.val();
        }

        // Configure and the reset sweep start from a clean working copy (which is what they write).
        if self.clear_state.val() {
            self.s_cur.d.next = 0.into();
            self.s_buf_off.d.next = 0.into();
            self.s_packets.d.next = 0.into();
            self.s_first_seq.d.next = 0.into();
            self.s_seq.d.next = 0.into();
            self.s_open.d.next = false;
            self.s_starved.d.next = false;
            self.s_dl_valid.d.next = false;
            self.s_deadline.d.next = 0.into();
        }
        // Write data of the RAM writes: the working copy as it will be after this cycle (the reset
        // sweep and configure override it).
        self.store.wr_base.next = self.c_base.d.val();
        self.store.wr_size.next = self.c_size.d.val();
        self.store.wr_count.next = self.c_count.d.val();
        self.store.wr_slot.next = self.c_slot.d.val();
        self.store.wr_page.next = self.c_page.d.val();
        self.store.wr_header.next = self.c_header.d.val();
        self.store.wr_skip.next = self.c_skip.d.val();
        self.store.wr_enabled.next = self.c_enabled.d.val();
        self.store.wr_timeout.next = self.c_timeout.d.val();
        // The state row's write data come from registers, not from the next values' selects (for
        // timing). A cycle that writes the state is one of three: a commit (the commit's image,
        // `cm_*` and the packet's stamps), configure or the reset sweep (a clean state,
        // `clear_state`), or a write-back, where the registers hold the state: a close, an acquire,
        // a skip or a starvation changed them cycles before. The offset is `kept_offset`.
        self.store.wr_cur.next = self.s_cur.q.val();
        self.store.wr_buf_off.next = self.s_buf_off.q.val();
        self.store.wr_seq.next = self.s_seq.q.val();
        self.store.wr_first_seq.next = self.s_first_seq.q.val();
        self.store.wr_packets.next = self.s_packets.q.val();
        self.store.wr_open.next = self.s_open.q.val();
        self.store.wr_starved.next = self.s_starved.q.val();
        self.store.wr_dl_valid.next = self.s_dl_valid.q.val();
        self.store.wr_deadline.next = self.s_deadline.q.val();
        self.store.wr_t_sop.next = self.s_t_sop.q.val();
        self.store.wr_t_header.next = self.s_t_header.q.val();
        self.store.wr_t_first_dma.next = self.s_t_first_dma.q.val();
        self.store.wr_t_last_dma.next = self.s_t_last_dma.q.val();
        if self.clear_state.val() {
            self.store.wr_cur.next = 0.into();
            self.store.wr_buf_off.next = 0.into();
            self.store.wr_seq.next = 0.into();
            self.store.wr_first_seq.next = 0.into();
            self.store.wr_packets.next = 0.into();
            self.store.wr_open.next = false;
            self.store.wr_starved.next = false;
            self.store.wr_dl_valid.next = false;
            self.store.wr_deadline.next = 0.into();
        }
        if self.commit_now.val() {
            self.store.wr_seq.next = self.cm_seq.val();
            self.store.wr_packets.next = self.cm_packets.val();
            self.store.wr_dl_valid.next = self.cm_dl_valid.val();
            self.store.wr_deadline.next = self.cm_deadline.val();
            self.store.wr_t_sop.next = self.p_t_sop.q.val();
            self.store.wr_t_header.next = self.p_t_hdr.q.val();
            self.store.wr_t_first_dma.next = self.p_t_first.q.val();
            self.store.wr_t_last_dma.next = self.t_commit_last.val();
        }
        // A buffer about to be acquired starts empty, and configure and the reset sweep write a
        // clean state (the store's offset of a CLOP without an open buffer is never read).
        if (self.state.q.val() == ClopState::AcquireRead)
            | (self.state.q.val() == ClopState::Configure)
            | ((self.state.q.val() == ClopState::Sweep) & self.sweep_all.q.val())
        {
            self.kept_offset.next = 0.into();
        }
        self.store.wr_offset.next = self.kept_offset.val();
        self.s_offset.d.next = self.kept_offset.val();
        if self.load_ram.val() {
            self.s_offset.d.next = self.store.rd_offset.val();
        }
        // The scanner's copy of the deadline goes with the state.
        self.timeout_scan.wr.next = self.store.wr_state.val();
        self.timeout_scan.wr_clop.next = self.store.wr_clop.val();
        self.timeout_scan.wr_valid.next = self.store.wr_dl_valid.val();
        self.timeout_scan.wr_deadline.next = self.store.wr_deadline.val();

        // A meta word on the input is taken whenever the register is free: into the register,
        // unless the packet is taken from the input in this cycle. Above, `ready` is that of a
        // payload beat.
        if self.inp.meta.val() {
            self.inp.ready.next = !self.meta_full.q.val();
            if self.inp.valid.val() & !self.meta_full.q.val() {
                self.meta_q.d.next = self.inp.data.val().get_bits::<128>(0);
                self.meta_port.d.next = self.inp.port.val();
                self.meta_full.d.next = !self.take_meta.val();
            }
        }

        if self.reset.val() {
            self.meta_full.d.next = false;
            self.hdr_due.d.next = false;
            self.hdr_alone.d.next = false;
            self.tail_due.d.next = false;
            self.writing.d.next = false;
            self.committing.d.next = false;
            self.active.d.next = 0.into();
            self.state.d.next = ClopState::Sweep;
            self.sweep_all.d.next = true;
            self.sweep.d.next = 0.into();
            self.sweep_end.d.next = false;
            self.deciding.d.next = false;
            self.loading.d.next = false;
        }
    }
}

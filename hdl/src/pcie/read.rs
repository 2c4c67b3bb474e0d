//! DMA reads as PCIe memory-read TLPs, with completion reassembly: the TX path's way to fetch
//! descriptors and payloads from host memory. At the core datapath's width `W`: 128 bits (Gen2
//! x8) or 256 (Gen3 x8).
//!
//! A read request is an address (16-byte aligned) and a length (1 to 256 bytes). Each becomes one
//! MRd TLP (3-dword header below 4 GiB, 4 above) with one of 32 tags, used in turn, so at most 32
//! reads are outstanding. Requests pass a register slice (for timing: the issue logic's `ready`
//! never reaches the requester in the same cycle), and the TLP is formed into a register as a
//! request leaves the slice and goes out from there (the length never reaches `tx` through the
//! header logic): an MRd leaves two cycles after its request is taken, and a request can be
//! taken every cycle while the engine keeps up. Completions (whole TLPs from the receive demultiplexer) may come in any
//! order across tags and split at any read completion boundary; a completion's place in its read
//! is `length - byte count`, so its data lines go straight into a 512-line RAM (16 lines of 16
//! bytes per tag). Reads are handed on in the order they were issued: once every byte of the
//! oldest has arrived, its lines leave as `rd` beats (little-endian memory lanes from the read's
//! address, `last` on its last beat; `W / 128` lines a beat), and its tag is free again.
//!
//! At 256 bits the RAM is two banks of 16-byte lines, even lines in one and odd in the other, so a
//! beat writes its two lines, whichever line it starts on, and reads a whole beat (at 128 bits one
//! bank holds every line). At 256 bits a completion's first line sits in its header beat's upper
//! half (a 3-dword header, then the 16-byte aligned data from dword 4: the Hard IP's 256-bit
//! alignment), so a one-line completion is a single beat; each beat after the header carries two
//! lines. At 128 bits the header beat carries no data and each beat after it one line.
//!
//! Completions are taken a beat at a time into a register stage (for timing): the completion's
//! tag selects its read's length, and the header's checks (kind, status, offset and length) are
//! computed into registers, while the header beat is on the input; the header is judged from
//! those and the tag's outstanding bit and the data written a cycle later. Its bytes count toward
//! its read (or its failure marks the read) a cycle after that, and the oldest read's state is
//! looked up into registers a cycle before the hand-on uses it, so a read is handed on from the
//! second cycle after the one before it finished (all for timing: no 32-way choice feeds
//! another in one cycle). Whether the completion's tag is outstanding is looked up on the input
//! too, and judged with the tag's issue or hand-on in that cycle.
//!
//! Failures: a completion with a status other than Successful Completion, or one this engine
//! cannot place (data not starting on a 16-byte line), marks its read failed: its beats still
//! come, with `error` set. A completion for no outstanding read is dropped (`unexpected` pulse),
//! and so is the rest of one whose read is handed on while it comes (a duplicate or extra
//! completion, or one for a read that failed or timed out), reported at its end.
//! If the oldest read waits longer than the completion timeout (`TIMEOUT_CYCLES`), it fails
//! (`timed_out` pulse) and the engine goes on. The wait counts from the read's MRd leaving, not
//! from its request (for a read issued behind others, from its becoming the oldest: later, never
//! earlier). A completion may still come after its read timed out, so once a timed-out read is
//! handed on no read is issued for another completion timeout (`quiet`): a late completion finds
//! its tag not outstanding and is dropped as unexpected instead of landing in the tag's next
//! read. (Only a completion two timeouts late would be taken; a timeout means a broken link or
//! completer, and the pause costs nothing while reads are answered.)
//!
//! Tags: every one PCIe allows without Extended Tags (the MRd tag's bits 4:0; bits 7:5 zero), so
//! the Hard IP's default "Number of tags supported" (32) and no Device Control bit the host must
//! set. Sixteen carry one port at line rate from 16-byte datagrams behind 400 ns of memory
//! latency; four ports need more (a read a datagram, each 510-610 ns round trip). 32 reads of at most
//! 256 bytes need up to 160 completion headers (a 256-byte read split at a 64-byte read completion
//! boundary, not 64-byte aligned, comes as five completions) and 8 KiB of the Hard IP's receive
//! buffer for completions, which the endpoint advertises as infinite: within what the Quartus
//! project's IP settings reserve (`boards/src/quartus.rs`).

use rust_hdl::prelude::*;

use crate::common::datapath_width::DatapathWidth;
use crate::common::skid_buffer::SkidBuffer;
use crate::common::sync_fifo::SyncFifo;
use crate::pcie::tlp_stream::{TlpSink, TlpSource};

/// Tags (reads in flight): the MRd tag's bits 4:0 (the literal widths below).
pub const READ_TAGS: usize = 32;
const _: () = assert!(READ_TAGS == 1 << 5); // also the input's five-level tag lookup
/// Largest read.
pub const MAX_READ_BYTES: usize = 256;
/// Cycles (250 MHz) the oldest read may wait for its data: 200 us (the card's; a module test may
/// build the engine with a shorter one, [`PcieRead::with_timeout`]).
pub const TIMEOUT_CYCLES: u64 = 50_000;

#[derive(Copy, Clone, Debug, PartialEq, LogicState)]
enum CplState {
    Header,
    Data,
    Drain,
}

#[derive(LogicBlock)]
pub struct PcieRead<const W: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// Our bus/device/function number (the requester ID).
    pub requester_id: Signal<In, Bits<16>>,

    pub req_valid: Signal<In, Bit>,
    pub req_ready: Signal<Out, Bit>,
    pub req_addr: Signal<In, Bits<64>>,
    /// Bytes, 1 to 256.
    pub req_len: Signal<In, Bits<9>>,

    /// The memory-read TLPs.
    pub tx: TlpSource<W>,
    /// Completion TLPs.
    pub cpl: TlpSink<W>,

    /// The reads' data, in issue order.
    pub rd_data: Signal<Out, Bits<W>>,
    pub rd_last: Signal<Out, Bit>,
    pub rd_error: Signal<Out, Bit>,
    pub rd_valid: Signal<Out, Bit>,
    pub rd_ready: Signal<In, Bit>,

    pub unexpected: Signal<Out, Bit>,
    pub timed_out: Signal<Out, Bit>,
    /// No read outstanding (requests may still wait in the input slice).
    pub idle: Signal<Out, Bit>,
    /// A request waits for a tag: every tag's read is in flight (the card counts these cycles,
    /// `nanet_contract::card::CardReg::ReadTagWaits`).
    pub tags_full: Signal<Out, Bit>,

    width: DatapathWidth<W>,
    /// The reassembly RAM: at 128 bits line `l` of tag `t` in `lines` at `{t, l}`; at 256 in
    /// `lines` (even `l`) or `odd_lines` (odd `l`) at `{t, l / 2}` (`odd_lines` is unused at 128
    /// bits, and synthesis drops it).
    lines: RAM<Bits<128>, 9>,
    odd_lines: RAM<Bits<128>, 8>,
    /// The beats on their way out, and beside them (driven alike) their `{error, last}`.
    out_fifo: SyncFifo<W, 3, 4>,
    out_flags: SyncFifo<2, 3, 4>,
    /// The MRd TLP formed from the last request taken, waiting for `tx.ready`.
    mrd_data: DFF<Bits<128>>,
    mrd_full: DFF<Bit>,
    /// Requests (`addr` above `len`) on their way to the issue logic.
    req_slice: SkidBuffer<73>,
    tag_len: [DFF<Bits<10>>; READ_TAGS],
    tag_got: [DFF<Bits<10>>; READ_TAGS],
    tag_err: [DFF<Bit>; READ_TAGS],
    /// Every byte of the tag's read has arrived (or it failed), as of the cycle before.
    tag_done: [DFF<Bit>; READ_TAGS],
    /// The tag's last RAM line (`(length - 1) / 16`), set at issue.
    tag_last_line: [DFF<Bits<4>>; READ_TAGS],
    /// The tag's read is issued and not yet handed on (the tags from `head_tag` on, `outstanding`
    /// of them), a bit per tag so a completion's tag is checked without arithmetic.
    tag_out: [DFF<Bit>; READ_TAGS],
    tag_ids: [Constant<Bits<5>>; READ_TAGS],
    timeout_limit: Constant<Bits<16>>,
    next_tag: DFF<Bits<5>>,
    head_tag: DFF<Bits<5>>,
    outstanding: DFF<Bits<6>>,
    /// The oldest read timed out (a pause follows its hand-on).
    head_timed_out: DFF<Bit>,
    waited: DFF<Bits<16>>,
    /// After a timed-out read is handed on, no read is issued for a completion timeout
    /// (`quiet_left` cycles): its completion, if it still comes, finds its tag free.
    quiet: DFF<Bit>,
    quiet_left: DFF<Bits<16>>,
    // completion receiver: the beat a cycle after the input, and what was computed from it there
    b_valid: DFF<Bit>,
    b_sop: DFF<Bit>,
    b_eop: DFF<Bit>,
    b_data: DFF<Bits<W>>,
    /// A header's place in its read (`length - byte count`).
    b_offset: DFF<Bits<10>>,
    /// The byte count is more than the read's length.
    b_bc_over: DFF<Bit>,
    /// The data runs past the read's end (`4 * length in dwords > byte count + 3`).
    b_end_over: DFF<Bit>,
    /// The header's tag was issued in the cycle it arrived: its length was looked up before.
    b_fresh: DFF<Bit>,
    /// The header's tag was outstanding as it arrived, and not handed on in that cycle.
    b_out: DFF<Bit>,
    /// The header is a completion (Cpl or CplD: format 000 or 010, type 01010).
    b_kind_ok: DFF<Bit>,
    /// The tag's bits 7:5 are zero.
    b_tag_ours: DFF<Bit>,
    /// Status other than Successful Completion, data not starting on a dword pair this engine
    /// places (lower address bit 2), or the header beat the last while data lines remain (at
    /// 128 bits any header beat; at 256 one of more than four dwords).
    b_plain_bad: DFF<Bit>,
    cpl_state: DFF<CplState>,
    cur_tag: DFF<Bits<5>>,
    /// The completion's tag was handed on while it came (a duplicate or extra completion, or one
    /// for a read that failed or timed out): its lines and bytes go nowhere, and it is reported
    /// at its end.
    cur_dead: DFF<Bit>,
    cur_line: DFF<Bits<4>>,
    cur_bytes: DFF<Bits<10>>,
    /// Data lines of the completion still to write.
    cur_left: DFF<Bits<8>>,
    /// `cur_left > 1` and `cur_left > 2`, kept beside it (for timing: an early end fails its read
    /// from a register, and a 256-bit beat's second line is written by one).
    cur_left_gt1: DFF<Bit>,
    cur_left_gt2: DFF<Bit>,
    /// A completion's bytes (or a failure), applied to its tag's counters a cycle after it was
    /// judged (for timing: the judgement does not reach all the tags' counters in its cycle).
    apply_add: DFF<Bit>,
    apply_add_tag: DFF<Bits<5>>,
    apply_add_bytes: DFF<Bits<10>>,
    apply_fail: DFF<Bit>,
    apply_fail_tag: DFF<Bits<5>>,
    /// The oldest read's timeout, applied beside a completion's failure (both may be judged in
    /// one cycle: each fails its own read).
    apply_tmo: DFF<Bit>,
    apply_tmo_tag: DFF<Bits<5>>,
    // output
    /// The oldest read's state, looked up by `head_tag` a cycle before (for timing: no
    /// 32-way choice before the fetch decision). Not valid in the cycle after a retire
    /// (`head_moved`), when `head_tag` has just changed.
    head_done_q: DFF<Bit>,
    head_err_q: DFF<Bit>,
    head_last_line_q: DFF<Bits<4>>,
    head_moved: DFF<Bit>,
    out_line: DFF<Bits<4>>,
    inflight: DFF<Bit>,
    pending_last: DFF<Bit>,
    pending_err: DFF<Bit>,

    issue: Signal<Local, Bit>,
    /// The request on offer at the slice's output.
    r_valid: Signal<Local, Bit>,
    r_ready: Signal<Local, Bit>,
    r_addr: Signal<Local, Bits<64>>,
    r_len: Signal<Local, Bits<9>>,
    retire: Signal<Local, Bit>,
    len_plus: Signal<Local, Bits<9>>,
    req_len_m1: Signal<Local, Bits<9>>,
    req_last_line: Signal<Local, Bits<4>>,
    len_quads: Signal<Local, Bits<9>>,
    len_dw: Signal<Local, Bits<7>>,
    h_len_dw3: Signal<Local, Bits<10>>,
    /// The completion's lines (`ceil(dwords / 4)`), and that less one (`(dwords - 1) / 4`).
    h_lines: Signal<Local, Bits<10>>,
    h_len_m1: Signal<Local, Bits<10>>,
    h_lines_m1: Signal<Local, Bits<10>>,
    first_be: Signal<Local, Bits<4>>,
    last_be: Signal<Local, Bits<4>>,
    dw0: Signal<Local, Bits<32>>,
    dw1: Signal<Local, Bits<32>>,
    wide: Signal<Local, Bit>,
    // the completion header in the beat on offer
    h_tag: Signal<Local, Bits<5>>,
    h_len_dw: Signal<Local, Bits<10>>,
    h_known: Signal<Local, Bit>,
    h_bad: Signal<Local, Bit>,
    /// The header is taken: its completion's lines go to its tag.
    h_take: Signal<Local, Bit>,
    a_tag: Signal<Local, Bits<5>>,
    /// The tags' lengths and outstanding bits chosen by the input's tag two ways at a time: by
    /// its bit 0 (16 left), bit 1 (8), bit 2 (4), bit 3 (2); bit 4 picks `a_len` and `a_out`.
    a_len16: [Signal<Local, Bits<10>>; READ_TAGS / 2],
    a_out16: [Signal<Local, Bit>; READ_TAGS / 2],
    a_len8: [Signal<Local, Bits<10>>; READ_TAGS / 4],
    a_out8: [Signal<Local, Bit>; READ_TAGS / 4],
    a_len4: [Signal<Local, Bits<10>>; READ_TAGS / 8],
    a_out4: [Signal<Local, Bit>; READ_TAGS / 8],
    a_len2: [Signal<Local, Bits<10>>; READ_TAGS / 16],
    a_out2: [Signal<Local, Bit>; READ_TAGS / 16],
    a_out: Signal<Local, Bit>,
    a_bc: Signal<Local, Bits<12>>,
    a_len: Signal<Local, Bits<10>>,
    /// `length - byte count`, wide enough that its sign says the byte count is more.
    a_offset: Signal<Local, Bits<13>>,
    /// The completion's bytes minus 4 (`(length - 1) * 4`, signed), and that minus the byte
    /// count: negative unless the payload runs past the byte count's last dword.
    a_bytes_m4: Signal<Local, Bits<14>>,
    a_end_left: Signal<Local, Bits<14>>,
    head_err: Signal<Local, Bit>,
    head_done: Signal<Local, Bit>,
    head_last_line: Signal<Local, Bits<4>>,
    fetch: Signal<Local, Bit>,
    room: Signal<Local, Bits<4>>,
    add_tag: Signal<Local, Bits<5>>,
    add_bytes: Signal<Local, Bits<10>>,
    add: Signal<Local, Bit>,
    fail_tag: Signal<Local, Bits<5>>,
    fail: Signal<Local, Bit>,
    /// The registered beat widened to 256 bits.
    b_wide: Signal<Local, Bits<256>>,
    /// The beat's upper half (at 256 bits), as the low 128 bits.
    b_upper: Signal<Local, Bits<256>>,
    // the RAM writes of a cycle: line `w_line` (with `w_data`), and at 256 bits the line after it
    // (with `w_next_data`), both of tag `w_tag`
    w_tag: Signal<Local, Bits<5>>,
    w_line: Signal<Local, Bits<4>>,
    w_data: Signal<Local, Bits<128>>,
    w_next_data: Signal<Local, Bits<128>>,
    w_en: Signal<Local, Bit>,
    w_next_en: Signal<Local, Bit>,
    /// The even bank's line pair: `w_line`'s, rounded up to an even line.
    w_even_pair: Signal<Local, Bits<3>>,
    /// The fetch reads the oldest read's last line (at 256 bits: its last pair).
    out_at_last: Signal<Local, Bit>,
    out_lines: Signal<Local, Bits<256>>,
    /// The place of `out_line`'s pair in each bank (256 bits).
    out_pair: Signal<Local, Bits<8>>,
}

impl<const W: usize> PcieRead<W> {
    /// The engine with a completion timeout of `cycles` (at most 65535) instead of
    /// [`TIMEOUT_CYCLES`].
    pub fn with_timeout(cycles: u64) -> Self {
        assert!(cycles < 1 << 16, "the wait counter has 16 bits");
        // (The pause after a timeout lasts as long: longer than a completion's way from its
        // judgement to its tag's counters.)
        assert!(
            cycles >= 16,
            "a timeout shorter than the completion pipeline"
        );
        Self {
            timeout_limit: Constant::new(cycles.into()),
            ..Self::default()
        }
    }
}

impl<const W: usize> Default for PcieRead<W> {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            reset: Default::default(),
            requester_id: Default::default(),
            req_valid: Default::default(),
            req_ready: Default::default(),
            req_addr: Default::default(),
            req_len: Default::default(),
            tx: Default::default(),
            cpl: Default::default(),
            rd_data: Default::default(),
            rd_last: Default::default(),
            rd_error: Default::default(),
            rd_valid: Default::default(),
            rd_ready: Default::default(),
            unexpected: Default::default(),
            timed_out: Default::default(),
            idle: Default::default(),
            tags_full: Default::default(),
            width: Default::default(),
            lines: Default::default(),
            odd_lines: Default::default(),
            out_fifo: Default::default(),
            out_flags: Default::default(),
            mrd_data: Default::default(),
            mrd_full: Default::default(),
            req_slice: Default::default(),
            tag_len: array_init::array_init(|_| Default::default()),
            tag_got: array_init::array_init(|_| Default::default()),
            tag_err: array_init::array_init(|_| Default::default()),
            tag_done: array_init::array_init(|_| Default::default()),
            tag_last_line: array_init::array_init(|_| Default::default()),
            tag_out: array_init::array_init(|_| Default::default()),
            tag_ids: array_init::array_init(|i| Constant::new((i as u64).into())),
            timeout_limit: Constant::new(TIMEOUT_CYCLES.into()),
            next_tag: Default::default(),
            head_tag: Default::default(),
            outstanding: Default::default(),
            head_timed_out: Default::default(),
            waited: Default::default(),
            quiet: Default::default(),
            quiet_left: Default::default(),
            b_valid: Default::default(),
            b_sop: Default::default(),
            b_eop: Default::default(),
            b_data: Default::default(),
            b_offset: Default::default(),
            b_bc_over: Default::default(),
            b_end_over: Default::default(),
            b_fresh: Default::default(),
            b_out: Default::default(),
            b_kind_ok: Default::default(),
            b_tag_ours: Default::default(),
            b_plain_bad: Default::default(),
            cpl_state: Default::default(),
            cur_tag: Default::default(),
            cur_dead: Default::default(),
            cur_line: Default::default(),
            cur_bytes: Default::default(),
            apply_add: Default::default(),
            apply_add_tag: Default::default(),
            apply_add_bytes: Default::default(),
            apply_fail: Default::default(),
            apply_fail_tag: Default::default(),
            apply_tmo: Default::default(),
            apply_tmo_tag: Default::default(),
            head_done_q: Default::default(),
            head_err_q: Default::default(),
            head_last_line_q: Default::default(),
            head_moved: Default::default(),
            out_line: Default::default(),
            inflight: Default::default(),
            pending_last: Default::default(),
            pending_err: Default::default(),
            issue: Default::default(),
            r_valid: Default::default(),
            r_ready: Default::default(),
            r_addr: Default::default(),
            r_len: Default::default(),
            retire: Default::default(),
            len_plus: Default::default(),
            req_len_m1: Default::default(),
            req_last_line: Default::default(),
            len_quads: Default::default(),
            len_dw: Default::default(),
            h_len_dw3: Default::default(),
            h_lines: Default::default(),
            h_len_m1: Default::default(),
            h_lines_m1: Default::default(),
            first_be: Default::default(),
            last_be: Default::default(),
            dw0: Default::default(),
            dw1: Default::default(),
            wide: Default::default(),
            h_tag: Default::default(),
            h_len_dw: Default::default(),
            h_known: Default::default(),
            h_take: Default::default(),
            h_bad: Default::default(),
            a_tag: Default::default(),
            a_len16: array_init::array_init(|_| Default::default()),
            a_out16: array_init::array_init(|_| Default::default()),
            a_len8: array_init::array_init(|_| Default::default()),
            a_out8: array_init::array_init(|_| Default::default()),
            a_len4: array_init::array_init(|_| Default::default()),
            a_out4: array_init::array_init(|_| Default::default()),
            a_len2: array_init::array_init(|_| Default::default()),
            a_out2: array_init::array_init(|_| Default::default()),
            a_out: Default::default(),
            a_bc: Default::default(),
            a_len: Default::default(),
            a_offset: Default::default(),
            a_bytes_m4: Default::default(),
            a_end_left: Default::default(),
            head_err: Default::default(),
            head_done: Default::default(),
            head_last_line: Default::default(),
            cur_left: Default::default(),
            cur_left_gt1: Default::default(),
            cur_left_gt2: Default::default(),
            fetch: Default::default(),
            room: Default::default(),
            add_tag: Default::default(),
            add_bytes: Default::default(),
            add: Default::default(),
            fail_tag: Default::default(),
            fail: Default::default(),
            b_wide: Default::default(),
            b_upper: Default::default(),
            w_tag: Default::default(),
            w_line: Default::default(),
            w_data: Default::default(),
            w_next_data: Default::default(),
            w_en: Default::default(),
            w_next_en: Default::default(),
            w_even_pair: Default::default(),
            out_at_last: Default::default(),
            out_lines: Default::default(),
            out_pair: Default::default(),
        }
    }
}

impl<const W: usize> Logic for PcieRead<W> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            mrd_data,
            mrd_full,
            next_tag,
            head_tag,
            outstanding,
            head_timed_out,
            waited,
            quiet,
            quiet_left,
            b_valid,
            b_sop,
            b_eop,
            b_data,
            b_offset,
            b_bc_over,
            b_end_over,
            b_fresh,
            b_out,
            b_kind_ok,
            b_tag_ours,
            b_plain_bad,
            cpl_state,
            cur_tag,
            cur_dead,
            cur_line,
            cur_bytes,
            cur_left,
            cur_left_gt1,
            cur_left_gt2,
            apply_add,
            apply_add_tag,
            apply_add_bytes,
            apply_fail,
            apply_fail_tag,
            apply_tmo,
            apply_tmo_tag,
            head_done_q,
            head_err_q,
            head_last_line_q,
            head_moved,
            out_line,
            inflight,
            pending_last,
            pending_err
        );
        for i in 0..READ_TAGS {
            self.tag_len[i].clock.next = self.clock.val();
            self.tag_got[i].clock.next = self.clock.val();
            self.tag_err[i].clock.next = self.clock.val();
            self.tag_len[i].d.next = self.tag_len[i].q.val();
            self.tag_got[i].d.next = self.tag_got[i].q.val();
            self.tag_err[i].d.next = self.tag_err[i].q.val();
            self.tag_done[i].clock.next = self.clock.val();
            self.tag_last_line[i].clock.next = self.clock.val();
            self.tag_done[i].d.next = self.tag_got[i].q.val() >= self.tag_len[i].q.val();
            self.tag_last_line[i].d.next = self.tag_last_line[i].q.val();
            self.tag_out[i].clock.next = self.clock.val();
            self.tag_out[i].d.next = self.tag_out[i].q.val();
        }
        self.lines.read_clock.next = self.clock.val();
        self.lines.write_clock.next = self.clock.val();
        self.odd_lines.read_clock.next = self.clock.val();
        self.odd_lines.write_clock.next = self.clock.val();
        self.out_fifo.clock.next = self.clock.val();
        self.out_fifo.reset.next = self.reset.val();
        self.out_flags.clock.next = self.clock.val();
        self.out_flags.reset.next = self.reset.val();

        // ---- issuing: one MRd TLP per request -------------------------------------------------
        // Requests come through a register slice (for timing: the issue logic's ready does not
        // reach the requester in the same cycle).
        self.req_slice.clock.next = self.clock.val();
        self.req_slice.reset.next = self.reset.val();
        self.req_slice.in_cancel.next = false;
        self.req_slice.in_valid.next = self.req_valid.val();
        self.req_slice.in_data.next =
            (bit_cast::<73, 64>(self.req_addr.val()) << 9) | bit_cast::<73, 9>(self.req_len.val());
        self.req_ready.next = self.req_slice.in_ready.val();
        self.r_valid.next = self.req_slice.out_valid.val();
        self.r_addr.next = self.req_slice.out_data.val().get_bits::<64>(9);
        self.r_len.next = self.req_slice.out_data.val().get_bits::<9>(0);
        self.len_plus.next = self.r_len.val() + 3;
        self.req_len_m1.next = self.r_len.val() - 1;
        self.req_last_line.next = self.req_len_m1.val().get_bits::<4>(4);
        self.len_quads.next = self.len_plus.val() >> 2;
        self.len_dw.next = self.len_quads.val().get_bits::<7>(0);
        self.first_be.next = 0xF.into();
        self.last_be.next = 0xF.into();
        match self.r_len.val().get_bits::<2>(0).index() {
            1 => self.last_be.next = 0x1.into(),
            2 => self.last_be.next = 0x3.into(),
            3 => self.last_be.next = 0x7.into(),
            _ => {}
        }
        if self.len_dw.val() == 1 {
            self.first_be.next = self.last_be.val();
            self.last_be.next = 0.into();
        }
        self.wide.next = self.r_addr.val().get_bits::<32>(32) != 0;
        self.dw0.next = bit_cast::<32, 7>(self.len_dw.val());
        if self.wide.val() {
            self.dw0.next = bit_cast::<32, 7>(self.len_dw.val()) | 0x2000_0000u64;
        }
        self.dw1.next = (bit_cast::<32, 16>(self.requester_id.val()) << 16)
            | (bit_cast::<32, 5>(self.next_tag.q.val()) << 8)
            | (bit_cast::<32, 4>(self.last_be.val()) << 4)
            | bit_cast::<32, 4>(self.first_be.val());
        self.tx.data.next = bit_cast::<W, 128>(self.mrd_data.q.val());
        self.tx.sop.next = true;
        self.tx.eop.next = true;
        // The header's two qwords; at 256 bits the upper two are empty.
        self.tx.empty.next = 0.into();
        if self.width.wide.val() {
            self.tx.empty.next = 2.into();
        }
        self.tx.valid.next = self.mrd_full.q.val();
        self.r_ready.next = (!self.mrd_full.q.val() | self.tx.ready.val())
            & !self.outstanding.q.val().get_bit(5)
            & !self.quiet.q.val();
        self.issue.next = self.r_valid.val() & self.r_ready.val();
        self.tags_full.next = self.r_valid.val() & self.outstanding.q.val().get_bit(5);
        self.req_slice.out_ready.next = self.r_ready.val();
        if self.tx.ready.val() {
            self.mrd_full.d.next = false;
        }
        if self.issue.val() {
            self.next_tag.d.next = self.next_tag.q.val() + 1;
            self.mrd_full.d.next = true;
            self.mrd_data.d.next = (bit_cast::<128, 32>(self.r_addr.val().get_bits::<32>(0)) << 64)
                | (bit_cast::<128, 32>(self.dw1.val()) << 32)
                | bit_cast::<128, 32>(self.dw0.val());
            if self.wide.val() {
                self.mrd_data.d.next = (bit_cast::<128, 32>(self.r_addr.val().get_bits::<32>(0))
                    << 96)
                    | (bit_cast::<128, 32>(self.r_addr.val().get_bits::<32>(32)) << 64)
                    | (bit_cast::<128, 32>(self.dw1.val()) << 32)
                    | bit_cast::<128, 32>(self.dw0.val());
            }
        }

        // ---- completions -----------------------------------------------------------------------
        self.cpl.ready.next = true;
        // On the input: the header's read length by its tag, and the checks that need it.
        self.b_valid.d.next = self.cpl.valid.val();
        self.b_sop.d.next = self.cpl.sop.val();
        self.b_eop.d.next = self.cpl.eop.val();
        self.b_data.d.next = self.cpl.data.val();
        self.a_tag.next = self.cpl.data.val().get_bits::<5>(72);
        self.a_bc.next = self.cpl.data.val().get_bits::<12>(32);
        // The tag's length and outstanding bit, as a tree of two-way choices (for timing: three
        // LUT levels for 32 tags; a compare with each tag takes five), then one subtraction
        // whose sign is the byte-count check (no compare after the carry chain).
        for i in 0..16 {
            self.a_len16[i].next = self.tag_len[2 * i].q.val();
            self.a_out16[i].next = self.tag_out[2 * i].q.val();
            if self.a_tag.val().get_bit(0) {
                self.a_len16[i].next = self.tag_len[2 * i + 1].q.val();
                self.a_out16[i].next = self.tag_out[2 * i + 1].q.val();
            }
        }
        for i in 0..8 {
            self.a_len8[i].next = self.a_len16[2 * i].val();
            self.a_out8[i].next = self.a_out16[2 * i].val();
            if self.a_tag.val().get_bit(1) {
                self.a_len8[i].next = self.a_len16[2 * i + 1].val();
                self.a_out8[i].next = self.a_out16[2 * i + 1].val();
            }
        }
        for i in 0..4 {
            self.a_len4[i].next = self.a_len8[2 * i].val();
            self.a_out4[i].next = self.a_out8[2 * i].val();
            if self.a_tag.val().get_bit(2) {
                self.a_len4[i].next = self.a_len8[2 * i + 1].val();
                self.a_out4[i].next = self.a_out8[2 * i + 1].val();
            }
        }
        for i in 0..2 {
            self.a_len2[i].next = self.a_len4[2 * i].val();
            self.a_out2[i].next = self.a_out4[2 * i].val();
            if self.a_tag.val().get_bit(3) {
                self.a_len2[i].next = self.a_len4[2 * i + 1].val();
                self.a_out2[i].next = self.a_out4[2 * i + 1].val();
            }
        }
        self.a_len.next = self.a_len2[0].val();
        self.a_out.next = self.a_out2[0].val();
        if self.a_tag.val().get_bit(4) {
            self.a_len.next = self.a_len2[1].val();
            self.a_out.next = self.a_out2[1].val();
        }
        self.a_offset.next =
            bit_cast::<13, 10>(self.a_len.val()) - bit_cast::<13, 12>(self.a_bc.val());
        self.b_offset.d.next = self.a_offset.val().get_bits::<10>(0);
        self.b_bc_over.d.next = self.a_offset.val().get_bit(12);
        // `bytes > byte count + 3` as `bytes - 4 - byte count >= 0` (two carry chains, no
        // compare after them, for timing).
        self.a_bytes_m4.next = (bit_cast::<14, 10>(self.cpl.data.val().get_bits::<10>(0)) - 1) << 2;
        self.a_end_left.next = self.a_bytes_m4.val() - bit_cast::<14, 12>(self.a_bc.val());
        self.b_end_over.d.next = !self.a_end_left.val().get_bit(13);
        self.b_fresh.d.next = self.issue.val() & (self.a_tag.val() == self.next_tag.q.val());
        self.b_kind_ok.d.next = (self.cpl.data.val().get_bits::<5>(24) == 0x0A)
            & !self.cpl.data.val().get_bit(31)
            & !self.cpl.data.val().get_bit(29);
        self.b_tag_ours.d.next = self.cpl.data.val().get_bits::<3>(77) == 0;
        self.b_plain_bad.d.next = (self.cpl.data.val().get_bits::<3>(45) != 0)
            | self.cpl.data.val().get_bit(66)
            | (self.cpl.eop.val()
                & (!self.width.wide.val() | (self.cpl.data.val().get_bits::<10>(0) > 4)));
        // A cycle later: the header judged, against the tags outstanding as they are now.
        self.h_len_dw.next = self.b_data.q.val().get_bits::<10>(0);
        self.h_tag.next = self.b_data.q.val().get_bits::<5>(72);
        self.h_known.next = self.b_out.q.val() & self.b_tag_ours.q.val() & !self.b_fresh.q.val();
        self.h_bad.next = self.b_plain_bad.q.val()
            | (self.b_offset.q.val().get_bits::<4>(0) != 0)
            | self.b_bc_over.q.val()
            | self.b_end_over.q.val();
        self.h_len_dw3.next = self.h_len_dw.val() + 3;
        self.h_lines.next = self.h_len_dw3.val() >> 2;
        self.h_len_m1.next = self.h_len_dw.val() - 1;
        self.h_lines_m1.next = self.h_len_m1.val() >> 2;
        self.unexpected.next = false;
        self.add.next = false;
        self.add_tag.next = self.cur_tag.q.val();
        self.add_bytes.next = self.cur_bytes.q.val();
        self.fail.next = false;
        self.fail_tag.next = self.h_tag.val();
        self.b_wide.next = bit_cast::<256, W>(self.b_data.q.val());
        self.b_upper.next = self.b_wide.val() >> self.width.half_shift.val();
        self.w_tag.next = self.cur_tag.q.val();
        self.w_line.next = self.cur_line.q.val();
        self.w_data.next = self.b_data.q.val().get_bits::<128>(0);
        self.w_next_data.next = self.b_upper.val().get_bits::<128>(0);
        self.w_en.next = false;
        self.w_next_en.next = false;
        self.h_take.next = false;
        match self.cpl_state.q.val() {
            CplState::Header => {
                if self.b_valid.q.val() & self.b_sop.q.val() {
                    if !self.b_eop.q.val() {
                        self.cpl_state.d.next = CplState::Drain;
                    }
                    if !self.b_kind_ok.q.val() | !self.h_known.val() {
                        self.unexpected.next = true;
                    } else if self.h_bad.val() {
                        // Failed, or data this engine cannot place: the read fails.
                        self.fail.next = true;
                    } else {
                        self.h_take.next = true;
                        self.cur_tag.d.next = self.h_tag.val();
                        self.cur_line.d.next = self.b_offset.q.val().get_bits::<4>(4);
                        self.cur_bytes.d.next = self.h_len_dw.val() << 2;
                        self.cur_left.d.next = self.h_lines.val().get_bits::<8>(0);
                        // (More than one line: more than four dwords; more than two: eight.)
                        self.cur_left_gt1.d.next = self.h_len_dw.val() > 4;
                        self.cur_left_gt2.d.next = self.h_len_dw.val() > 8;
                        self.cpl_state.d.next = CplState::Data;
                        if self.width.wide.val() {
                            // The header beat's upper half is the completion's first line.
                            self.w_en.next = true;
                            self.w_tag.next = self.h_tag.val();
                            self.w_line.next = self.b_offset.q.val().get_bits::<4>(4);
                            self.w_data.next = self.b_upper.val().get_bits::<128>(0);
                            self.cur_line.d.next = self.b_offset.q.val().get_bits::<4>(4) + 1;
                            self.cur_left.d.next = self.h_lines_m1.val().get_bits::<8>(0);
                            self.cur_left_gt1.d.next = self.h_len_dw.val() > 8;
                            self.cur_left_gt2.d.next = self.h_len_dw.val() > 12;
                            if self.b_eop.q.val() {
                                // A one-line completion, whole in its header beat (a longer one
                                // ending here is `b_plain_bad`).
                                self.add.next = true;
                                self.add_tag.next = self.h_tag.val();
                                self.add_bytes.next = self.h_len_dw.val() << 2;
                                self.cpl_state.d.next = CplState::Header;
                            }
                        }
                    }
                } else if self.b_valid.q.val() {
                    // A beat outside any TLP.
                    self.unexpected.next = true;
                }
            }
            CplState::Data => {
                if self.b_valid.q.val() {
                    // No more lines than the completion's length says (a longer one stops at
                    // its own lines).
                    self.w_en.next = (self.cur_left.q.val() != 0) & !self.cur_dead.q.val();
                    if self.width.wide.val() {
                        self.w_next_en.next = self.cur_left_gt1.q.val() & !self.cur_dead.q.val();
                        self.cur_line.d.next = self.cur_line.q.val() + 2;
                        self.cur_left.d.next = 0.into();
                        if self.cur_left_gt1.q.val() {
                            self.cur_left.d.next = self.cur_left.q.val() - 2;
                        }
                        self.cur_left_gt1.d.next = self.cur_left.q.val() > 3;
                        self.cur_left_gt2.d.next = self.cur_left.q.val() > 4;
                    } else {
                        if self.cur_left.q.val() != 0 {
                            self.cur_left.d.next = self.cur_left.q.val() - 1;
                            self.cur_left_gt1.d.next = self.cur_left.q.val() > 2;
                            self.cur_left_gt2.d.next = self.cur_left.q.val() > 3;
                        }
                        self.cur_line.d.next = self.cur_line.q.val() + 1;
                    }
                    if self.b_eop.q.val() {
                        // The completion's bytes count once they are all in the RAM; one that
                        // ends short of its length (lines left beyond this beat's) fails its
                        // read; one whose tag was handed on meanwhile is stray.
                        if self.cur_dead.q.val() {
                            self.unexpected.next = true;
                        } else if (self.cur_left_gt1.q.val() & !self.width.wide.val())
                            | self.cur_left_gt2.q.val()
                        {
                            self.fail.next = true;
                            self.fail_tag.next = self.cur_tag.q.val();
                        } else {
                            self.add.next = true;
                        }
                        self.cpl_state.d.next = CplState::Header;
                    }
                }
            }
            CplState::Drain => {
                if self.b_valid.q.val() & self.b_eop.q.val() {
                    self.cpl_state.d.next = CplState::Header;
                }
            }
        }

        // The cycle's lines into the RAM. At 128 bits line `w_line` into `lines`; at 256 it goes
        // into its own bank and the one after it into the other, the even bank's place that of
        // `w_line` rounded up to even.
        self.w_even_pair.next = self.w_line.val().get_bits::<3>(1)
            + bit_cast::<3, 1>(self.w_line.val().get_bit(0).into());
        self.lines.write_address.next =
            (bit_cast::<9, 5>(self.w_tag.val()) << 4) | bit_cast::<9, 4>(self.w_line.val());
        self.odd_lines.write_address.next = (bit_cast::<8, 5>(self.w_tag.val()) << 3)
            | bit_cast::<8, 3>(self.w_line.val().get_bits::<3>(1));
        self.lines.write_data.next = self.w_data.val();
        self.odd_lines.write_data.next = self.w_next_data.val();
        self.lines.write_enable.next = self.w_en.val();
        self.odd_lines.write_enable.next = false;
        if self.width.wide.val() {
            self.lines.write_address.next = (bit_cast::<9, 5>(self.w_tag.val()) << 3)
                | bit_cast::<9, 3>(self.w_even_pair.val());
            self.odd_lines.write_enable.next = self.w_next_en.val();
            if self.w_line.val().get_bit(0) {
                self.lines.write_data.next = self.w_next_data.val();
                self.odd_lines.write_data.next = self.w_data.val();
                self.lines.write_enable.next = self.w_next_en.val();
                self.odd_lines.write_enable.next = self.w_en.val();
            }
        }

        // ---- the oldest read, and its data out in order --------------------------------------
        self.head_err.next = false;
        self.head_done.next = false;
        self.head_last_line.next = 0.into();
        for i in 0..READ_TAGS {
            if self.head_tag.q.val() == self.tag_ids[i].val() {
                self.head_err.next = self.tag_err[i].q.val();
                self.head_done.next = self.tag_done[i].q.val();
                self.head_last_line.next = self.tag_last_line[i].q.val();
            }
        }
        self.head_done_q.d.next = self.head_done.val() & (self.outstanding.q.val() != 0);
        self.head_err_q.d.next = self.head_err.val();
        self.head_last_line_q.d.next = self.head_last_line.val();
        // Room in the output FIFO for this fetch besides the one in flight from the RAM.
        self.room.next = self.out_fifo.used.val() + bit_cast::<4, 1>(self.inflight.q.val().into());
        self.fetch.next =
            self.head_done_q.q.val() & !self.head_moved.q.val() & (self.room.val() < 7);
        // The line `out_line` (at 256 bits both banks: the pair `out_line / 2`).
        self.lines.read_address.next = (bit_cast::<9, 5>(self.head_tag.q.val()) << 4)
            | bit_cast::<9, 4>(self.out_line.q.val());
        self.out_pair.next = (bit_cast::<8, 5>(self.head_tag.q.val()) << 3)
            | bit_cast::<8, 3>(self.out_line.q.val().get_bits::<3>(1));
        self.odd_lines.read_address.next = self.out_pair.val();
        if self.width.wide.val() {
            self.lines.read_address.next = bit_cast::<9, 8>(self.out_pair.val());
        }
        self.out_at_last.next = self.out_line.q.val() == self.head_last_line_q.q.val();
        if self.width.wide.val() {
            self.out_at_last.next = self.out_line.q.val().get_bits::<3>(1)
                == self.head_last_line_q.q.val().get_bits::<3>(1);
        }
        self.inflight.d.next = self.fetch.val();
        self.retire.next = false;
        if self.fetch.val() {
            self.pending_err.d.next = self.head_err_q.q.val();
            self.pending_last.d.next = false;
            self.out_line.d.next = self.out_line.q.val() + 1;
            if self.width.wide.val() {
                self.out_line.d.next = self.out_line.q.val() + 2;
            }
            if self.out_at_last.val() {
                self.pending_last.d.next = true;
                self.out_line.d.next = 0.into();
                self.retire.next = true;
                self.head_timed_out.d.next = false;
                self.head_tag.d.next = self.head_tag.q.val() + 1;
            }
        }
        self.head_moved.d.next = self.retire.val();
        // A completion whose tag is handed on after its header was judged on the tag's
        // outstanding bit (in that cycle, or while its data come) is dead from the next cycle:
        // otherwise its later lines and bytes would go to the tag's next read, issued from the
        // cycle after the hand-on. (Its beats up to the hand-on's cycle do not reach the next
        // read: a count applies a cycle later, before the next read sets the tag outstanding, and
        // the next read's own completions write every line it hands on. A duplicate's lines
        // written while its read's lines are being fetched may reach the read handed on; a
        // duplicate has the same data.)
        self.cur_dead.d.next = self.cur_dead.q.val()
            | (self.retire.val() & (self.cur_tag.q.val() == self.head_tag.q.val()));
        if self.h_take.val() {
            self.cur_dead.d.next = self.retire.val() & (self.h_tag.val() == self.head_tag.q.val());
        }
        // The input's tag outstanding as it will be when its header is judged: not if handed on
        // in this cycle (one issued in this cycle is `b_fresh`).
        self.b_out.d.next =
            self.a_out.val() & !(self.retire.val() & (self.a_tag.val() == self.head_tag.q.val()));
        // The beat: `{odd line, even line}` (at 128 bits the line alone, the low half).
        self.out_lines.next = (bit_cast::<256, 128>(self.odd_lines.read_data.val()) << 128)
            | bit_cast::<256, 128>(self.lines.read_data.val());
        self.out_fifo.in_valid.next = self.inflight.q.val();
        self.out_fifo.in_data.next = self.out_lines.val().get_bits::<W>(0);
        self.out_flags.in_valid.next = self.inflight.q.val();
        self.out_flags.in_data.next = (bit_cast::<2, 1>(self.pending_err.q.val().into()) << 1)
            | bit_cast::<2, 1>(self.pending_last.q.val().into());
        self.rd_data.next = self.out_fifo.out_data.val();
        self.rd_last.next = self.out_flags.out_data.val().get_bit(0);
        self.rd_error.next = self.out_flags.out_data.val().get_bit(1);
        self.rd_valid.next = self.out_fifo.out_valid.val();
        self.out_fifo.out_ready.next = self.rd_ready.val();
        self.out_flags.out_ready.next = self.rd_ready.val();

        // ---- completion timeout of the oldest read ------------------------------------------
        self.timed_out.next = false;
        self.apply_tmo.d.next = false;
        self.apply_tmo_tag.d.next = self.head_tag.q.val();
        self.waited.d.next = 0.into();
        // The clock starts once the read's MRd has left: while it waits in the MRd register
        // (the TLP stream held not ready) it is the only read outstanding.
        if (self.outstanding.q.val() != 0)
            & !self.head_done_q.q.val()
            & !(self.mrd_full.q.val() & (self.outstanding.q.val() == 1))
        {
            self.waited.d.next = self.waited.q.val() + 1;
            if self.waited.q.val() == self.timeout_limit.val() {
                self.timed_out.next = true;
                self.head_timed_out.d.next = true;
                self.apply_tmo.d.next = true;
            }
        }

        // ---- per-tag bookkeeping ---------------------------------------------------------------
        for i in 0..READ_TAGS {
            if self.retire.val() & (self.head_tag.q.val() == self.tag_ids[i].val()) {
                self.tag_out[i].d.next = false;
            }
            if self.issue.val() & (self.next_tag.q.val() == self.tag_ids[i].val()) {
                self.tag_out[i].d.next = true;
                self.tag_len[i].d.next = bit_cast::<10, 9>(self.r_len.val());
                self.tag_got[i].d.next = 0.into();
                self.tag_err[i].d.next = false;
                self.tag_done[i].d.next = false;
                self.tag_last_line[i].d.next = self.req_last_line.val();
            }
            // (Only while the tag's read is outstanding: a completion ending by its tag's hand-on
            // applies in the cycle after it, before the tag's next read can be outstanding, and
            // one still coming then is `cur_dead`; after a timed-out read's hand-on no tag is
            // issued for a completion timeout.)
            if self.apply_add.q.val()
                & self.tag_out[i].q.val()
                & (self.apply_add_tag.q.val() == self.tag_ids[i].val())
            {
                self.tag_got[i].d.next = self.tag_got[i].q.val() + self.apply_add_bytes.q.val();
            }
            if (self.apply_fail.q.val()
                & self.tag_out[i].q.val()
                & (self.apply_fail_tag.q.val() == self.tag_ids[i].val()))
                | (self.apply_tmo.q.val()
                    & self.tag_out[i].q.val()
                    & (self.apply_tmo_tag.q.val() == self.tag_ids[i].val()))
            {
                self.tag_err[i].d.next = true;
                self.tag_got[i].d.next = self.tag_len[i].q.val();
            }
        }
        self.apply_add.d.next = self.add.val();
        self.apply_add_tag.d.next = self.add_tag.val();
        self.apply_add_bytes.d.next = self.add_bytes.val();
        self.apply_fail.d.next = self.fail.val();
        self.apply_fail_tag.d.next = self.fail_tag.val();
        self.outstanding.d.next = self.outstanding.q.val()
            + bit_cast::<6, 1>(self.issue.val().into())
            - bit_cast::<6, 1>(self.retire.val().into());
        // The pause after a timed-out read's hand-on.
        self.quiet_left.d.next = self.quiet_left.q.val() - 1;
        self.quiet.d.next = self.quiet.q.val() & (self.quiet_left.q.val() != 1);
        if self.retire.val() & self.head_timed_out.q.val() {
            self.quiet.d.next = true;
            self.quiet_left.d.next = self.timeout_limit.val();
        }
        self.idle.next = self.outstanding.q.val() == 0;

        if self.reset.val() {
            self.next_tag.d.next = 0.into();
            self.mrd_full.d.next = false;
            self.head_tag.d.next = 0.into();
            self.outstanding.d.next = 0.into();
            self.head_timed_out.d.next = false;
            self.cpl_state.d.next = CplState::Header;
            self.b_valid.d.next = false;
            self.out_line.d.next = 0.into();
            self.inflight.d.next = false;
            self.apply_add.d.next = false;
            self.apply_fail.d.next = false;
            self.apply_tmo.d.next = false;
            self.head_done_q.d.next = false;
            self.quiet.d.next = false;
            for i in 0..READ_TAGS {
                self.tag_out[i].d.next = false;
            }
        }
    }
}

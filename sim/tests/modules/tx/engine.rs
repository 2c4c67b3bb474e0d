//! Transmit engine, on a ring of 32 descriptors (wrapping; 200 descriptors) and one of 256 (over
//! two 4 KiB pages, as the host library's; 700 descriptors of up to 1472 bytes, and 700 of up to
//! 64): descriptors of random lengths, every tenth asking for an event, some refused: length 0
//! or over 1472, a port other than the ring's (the engine is ring 2: ports 3, 0 and 255 are
//! refused), unaligned buffer; some whose payload read fails, and some
//! descriptor batches whose read fails (each descriptor of the batch refused as unread); posted in
//! random batches through the doorbell (on the two-page ring, now and then a batch ending in a
//! page's last eight slots, the host then waiting until the engine has sent it all, so that the
//! next fetch must stop at the page), read through a model of the read engine (in-order data after a
//! random delay, random gaps, random stalls of the request port), into the port's FIFO of 256
//! entries that drains at a random rate and sometimes stops (the engine must never write one past
//! full, counting every datagram it has in flight). The ring base is written with low bits set
//! that the engine must drop (the ring is page aligned). Scoreboard: the port receives exactly
//! its datagrams, in ring order, as a header entry and byte-exact payload entries with the right
//! tags; a failed read ends its datagram with `error`; refused descriptors and those of a failed
//! batch send nothing, each with a `TxError` event, and are counted; `head` follows; events carry the right kind, index and batch counts; no read crosses
//! 4 KiB or exceeds 256 bytes, no descriptor read runs past the ring's end. Hostile doorbells
//! among the real ones (a tail more than the ring ahead, or behind the tail) are refused,
//! counted, and change nothing the scoreboard sees. On the rust-hdl model and its Verilog in
//! lockstep, at 128 and 256 bits (at 256 a descriptor is one read beat, an entry 32 bytes, and a
//! payload read ending at a page in a half beat shifts the entries after it: the scoreboard
//! checks the bytes, and the two-page ring's run must meet such datagrams).

use std::collections::VecDeque;

use nanet_contract::events::{EventKind, EventRecord};
use nanet_contract::packed::tx_entry;
use nanet_contract::tx::{
    TxDescriptor, TxReg, TX_DESC_BYTES, TX_DESC_EVENT, TX_RING_ENABLE, TX_STATUS_DRAINING,
    TX_STATUS_IDLE,
};
use nanet_hdl::pcie::target::REG_WRITE_SPACING;
use nanet_hdl::tx::engine::TxEngine;
use nanet_sim::design_ports;
use nanet_sim::engine::clocks::CORE_CLOCK_PS;
use nanet_sim::engine::{ClockId, DesignSim, EngineKind};
use nanet_sim::width_designs;
use nanet_sim::world::tlp::BeatData;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

#[derive(Clone, Default)]
pub struct TIn<T> {
    reset: bool,
    now: u32,
    reg_addr: u8,
    reg_wdata: u32,
    reg_write: bool,
    rq_ready: bool,
    rd_data: T,
    rd_last: bool,
    rd_error: bool,
    rd_valid: bool,
    port_used: u16,
    ring: u8,
    ev_ready: bool,
}

#[derive(Clone, Default, Debug)]
pub struct TOut<T> {
    reg_rdata: u32,
    rq_valid: bool,
    rq_addr: u64,
    rq_len: u16,
    rd_ready: bool,
    out_data: T,
    out_tag: u8,
    out_valid: bool,
    ev_valid: bool,
    ev_lo: u128,
    ev_hi: u128,
}

macro_rules! tx_design {
    ($design:ident, $bits:literal, $data:ty, $top:literal) => {
design_ports! {
    pub $design for TxEngine<$bits>, top $top, inputs TIn<$data>, outputs TOut<$data>,
    clocks { clock }
    inputs {
        reset => reset, now => now, reg_addr => reg_addr, reg_wdata => reg_wdata,
        reg_write => reg_write, rq_ready => rq_ready, rd_data => rd_data, rd_last => rd_last,
        rd_error => rd_error, rd_valid => rd_valid, port_used => port_used, ring => ring,
        ev_ready => ev_ready,
    }
    outputs {
        reg_rdata => reg_rdata, rq_valid => rq_valid, rq_addr => rq_addr, rq_len => rq_len,
        rd_ready => rd_ready, out_data => out_data, out_tag => out_tag,
        out_valid => out_valid, ev_valid => ev_valid, ev_lo => ev_lo, ev_hi => ev_hi,
    }
}
    };
}
tx_design!(Tx128, 128, u128, "nanet_tx_engine");
tx_design!(Tx256, 256, [u64; 4], "nanet_tx_engine_256");

width_designs! {
    trait Width: In = TIn<Self::Beat>, Out = TOut<Self::Beat>;
    Tx128 => u128, Tx256 => [u64; 4]
}

const RING: u64 = 0x2_0000_0000;
const BUFFERS: u64 = 0x2_0010_0000;

/// Host memory as the test's read-engine model sees it.
pub(super) struct Memory(pub(super) std::collections::HashMap<u64, u8>);

impl Memory {
    pub(super) fn write(&mut self, addr: u64, bytes: &[u8]) {
        for (i, b) in bytes.iter().enumerate() {
            self.0.insert(addr + i as u64, *b);
        }
    }
    fn read(&self, addr: u64, len: usize) -> Vec<u8> {
        (0..len as u64)
            .map(|i| *self.0.get(&(addr + i)).unwrap_or(&0))
            .collect()
    }
    /// A read's answer as the read engine hands it on: `(data, last, error)` beats of its
    /// 16-byte lines from its address, `T`'s lines a beat (the last beat at 256 bits may carry
    /// one line: its upper half is zero here, stale data from the read engine, never used).
    pub(super) fn beats<T: BeatData>(
        &self,
        addr: u64,
        len: u64,
        error: bool,
    ) -> Vec<(T, bool, bool)> {
        let bytes = self.read(addr, len.div_ceil(16) as usize * 16);
        let chunks: Vec<&[u8]> = bytes.chunks(T::VARIANT.beat_bytes()).collect();
        let n_beats = chunks.len();
        chunks
            .into_iter()
            .enumerate()
            .map(|(b, chunk)| (T::from_le_bytes(chunk), b + 1 == n_beats, error))
            .collect()
    }
}

/// What a port must receive for a descriptor.
#[derive(Debug, PartialEq)]
pub(super) struct Datagram {
    pub(super) dst_ip: [u8; 4],
    pub(super) src_port: u16,
    pub(super) dst_port: u16,
    pub(super) payload: Vec<u8>,
    pub(super) error: bool,
}

#[test]
fn the_ring_becomes_exact_datagrams_per_port_with_events() {
    // 32 descriptors: the ring wraps six times.
    ring_of::<Tx128>(5, 200, 1472);
    ring_of::<Tx256>(5, 200, 1472);
}

#[test]
fn a_ring_over_two_pages_is_read_in_batches_that_stop_at_the_page() {
    // 256 descriptors over two 4 KiB pages (the host library's ring), passing the page's end in
    // the middle of the ring three times.
    ring_of::<Tx128>(8, 700, 1472);
    ring_of::<Tx256>(8, 700, 1472);
}

#[test]
fn short_datagrams_are_read_in_batches_that_stop_at_the_page() {
    // Datagrams of 1 to 64 bytes: the ports' FIFOs drain as fast as they fill, the engine
    // mostly waits for the host, and batches start at any slot.
    ring_of::<Tx128>(8, 700, 64);
    ring_of::<Tx256>(8, 700, 64);
}

/// The engine on both engines in lockstep, out of reset, as ring `ring` (of port `ring`).
fn reset_engine<D: Width>(ring: u8) -> (DesignSim<D>, ClockId) {
    let mut d = DesignSim::<D>::new(EngineKind::Both).unwrap_or_else(|e| panic!("{e}"));
    let clk = d.add_clock("core", 0, CORE_CLOCK_PS);
    d.inputs.ring = ring;
    d.inputs.reset = true;
    d.tick(clk);
    d.tick(clk);
    d.inputs.reset = false;
    (d, clk)
}

/// The register writes that set up a ring of `2^log2` descriptors at `base`, enable it and post
/// `tail` descriptors.
pub(super) fn ring_setup(base: u64, log2: u32, tail: u32) -> [(TxReg, u32); 4] {
    [
        (TxReg::RingBaseLo, base as u32),
        (TxReg::RingBaseHi, (base >> 32) as u32),
        (TxReg::RingSize, TX_RING_ENABLE | log2),
        (TxReg::Tail, tail),
    ]
}

/// The next register write queued in `regs`, as close after the last as the BAR0 target sends
/// them (`REG_WRITE_SPACING`); else `idle` is read. Returns the write made.
fn write_next<T>(
    i: &mut TIn<T>,
    regs: &mut VecDeque<(TxReg, u32)>,
    cycle: u64,
    idle: TxReg,
) -> Option<(TxReg, u32)> {
    i.reg_write = false;
    i.reg_addr = idle.word() as u8;
    let (r, v) = regs
        .front()
        .copied()
        .filter(|_| cycle.is_multiple_of(REG_WRITE_SPACING))?;
    regs.pop_front();
    i.reg_write = true;
    i.reg_addr = r.word() as u8;
    i.reg_wdata = v;
    Some((r, v))
}

/// The scenario above on a ring of `2^log2` descriptors at a 4 KiB aligned address, `n` of them,
/// of 1 to `max_len` bytes.
fn ring_of<D: Width>(log2: u32, n: usize, max_len: u16) {
    let mut rng = StdRng::seed_from_u64(41);
    const PORT: u8 = 2;
    let (mut d, clk) = reset_engine::<D>(PORT);

    let mut mem = Memory(Default::default());
    // Each descriptor's datagram and port, unless refused; sent unless its batch's read fails.
    let mut planned: Vec<Option<(usize, Datagram)>> = vec![];
    let mut fails: Vec<(u64, u64)> = vec![]; // payload ranges whose read fails
    let mut descs = vec![];
    let mut bad_tails = 0u32;
    // Refused descriptors among the first `k` (they send nothing).
    let mut refused = vec![0usize];
    // Good datagrams whose entries a half beat shifts (at 256 bits), with their lines' parity.
    let mut shifted = vec![];
    for k in 0..n {
        // 8 KiB apart: a payload may cross a page, never into the next one's.
        let buffer = BUFFERS + k as u64 * 8192 + rng.gen_range(0..200) * 16;
        let mut desc = TxDescriptor {
            buffer,
            len: rng.gen_range(1..=max_len),
            port: PORT,
            flags: if k % 10 == 9 { TX_DESC_EVENT } else { 0 },
            dst_ip: [10, 0, 0, rng.gen()],
            src_port: rng.gen(),
            dst_port: rng.gen(),
        };
        let payload: Vec<u8> = (0..desc.len).map(|_| rng.gen()).collect();
        mem.write(buffer, &payload);
        let verdict = rng.gen_range(0..40);
        match verdict {
            0 => desc.len = 0,
            1 => desc.len = 1473,
            2 => desc.port = [3, 0, 255][k % 3],
            3 => desc.buffer += 8,
            _ => {}
        }
        refused.push(refused[k] + usize::from(verdict < 4));
        // At 256 bits a good datagram 16 bytes past a 32-byte boundary that crosses a page has
        // one payload read of odd lines before its last: its entries after it are joined from
        // two beats, and with odd lines in all, its last line goes alone.
        let crosses = desc.buffer / 4096 != (desc.buffer + desc.len as u64 - 1) / 4096;
        if verdict > 4 && desc.buffer % 32 == 16 && crosses {
            shifted.push((k, desc.len.div_ceil(16) as usize % 2));
        }
        if verdict == 4 {
            fails.push((buffer, buffer + desc.len as u64));
        }
        planned.push((verdict >= 4).then(|| {
            let dg = Datagram {
                dst_ip: desc.dst_ip,
                src_port: desc.src_port,
                dst_port: desc.dst_port,
                payload,
                error: verdict == 4,
            };
            (desc.port as usize, dg)
        }));
        // Refused (0..4) or failing its payload read (4): a TxError event.
        descs.push((desc, verdict <= 4));
    }

    let mut regs: VecDeque<(TxReg, u32)> = VecDeque::from([
        // Low bits the host should not have set: the card drops them (the ring is page aligned),
        // or the descriptors would be read from the wrong place.
        (TxReg::RingBaseLo, RING as u32 | 0xA60),
        (TxReg::RingBaseHi, (RING >> 32) as u32),
        (TxReg::RingSize, TX_RING_ENABLE | log2),
    ]);
    let mut posted = 0usize;
    // Whether the host waits for the engine to send all it posted.
    let mut hold = false;
    // Reads the model is answering: (beats, error), and its output queue of beats.
    let mut reads = Reads::default();
    let mut got: [Vec<Datagram>; 4] = Default::default();
    let mut partial: [Option<(Datagram, usize)>; 4] = Default::default();
    let mut events = vec![];
    let mut fifo_used = [0u32; 4];
    let mut max_used = 0;
    let mut most_in_flight = 0;
    // Descriptors read so far, and those whose batch's read failed (the model fails a batch's
    // read now and then).
    let (mut fetched, mut unread) = (0usize, std::collections::BTreeSet::<usize>::new());
    for cycle in 0..2_000_000u64 {
        // The host posts descriptors in batches while the ring has room.
        // (After a batch that ends near a page's end the host waits until every datagram of it
        // has left the engine, so that the next batch's first fetch has the queue's room.)
        let unread_good = unread.iter().filter(|k| planned[**k].is_some()).count();
        let gone = got.iter().map(Vec::len).sum::<usize>() + refused[posted] + unread_good;
        let waiting = hold && gone < posted;
        if regs.is_empty() && posted < n && !waiting && rng.gen_bool(0.02) {
            let done = events_head(&events);
            // Mostly a few, sometimes most of the ring at once (batches then end at its end).
            let most = if rng.gen_bool(0.3) { 1 << log2 } else { 12 };
            let mut batch = rng.gen_range(1..most).min(n - posted);
            // On a ring over pages, now and then a batch that ends a few slots before a page's
            // end, so that the next fetch starts there and must stop at the page (8 - slot
            // descriptors; the queue's room keeps most other fetches shorter than 8).
            let per_page = 4096 / TX_DESC_BYTES;
            hold = (1 << log2) > per_page && rng.gen_bool(0.3);
            if hold {
                let to_page = per_page - posted % per_page;
                batch = to_page
                    .saturating_sub(rng.gen_range(1..8))
                    .clamp(1, n - posted);
            }
            if posted + batch - done.min(posted) <= 1 << log2 {
                for (k, desc) in descs.iter().enumerate().skip(posted).take(batch) {
                    let slot = (k % (1 << log2)) as u64;
                    mem.write(RING + slot * TX_DESC_BYTES as u64, &desc.0.encode());
                }
                // Now and then (and at the first chance) a hostile doorbell in the cycle before or
                // after the good one: more than the ring ahead of the head (which is at most the
                // tail), or behind the tail as it is then (right after the good one: behind the
                // tail it just set, still ahead of the one before). Refused and counted; the tail
                // keeps its value, so the ring's datagrams go out exactly as without it.
                let hostile_after = rng.gen_bool(0.5);
                let hostile = ((rng.gen_bool(0.3) || bad_tails == 0) && posted > 0).then(|| {
                    let tail = if hostile_after {
                        posted + batch
                    } else {
                        posted
                    };
                    if rng.gen() {
                        tail + (1 << log2) + rng.gen_range(1..100)
                    } else {
                        tail - 1
                    }
                });
                if let (Some(h), false) = (hostile, hostile_after) {
                    regs.push_back((TxReg::Tail, h as u32 & 0xFFFF));
                }
                posted += batch;
                regs.push_back((TxReg::Tail, posted as u32 & 0xFFFF));
                if let (Some(h), true) = (hostile, hostile_after) {
                    regs.push_back((TxReg::Tail, h as u32 & 0xFFFF));
                }
                bad_tails += hostile.is_some() as u32;
            }
        }
        let i = &mut d.inputs;
        i.now = cycle as u32;
        i.reg_write = false;
        if let Some((r, v)) = regs.front() {
            i.reg_write = true;
            i.reg_addr = r.word() as u8;
            i.reg_wdata = *v;
        } else {
            i.reg_addr = TxReg::Head.word() as u8;
        }
        i.rq_ready = rng.gen_bool(0.7);
        // The port's FIFO drains at a random rate, and stops now and then.
        let used = &mut fifo_used[PORT as usize];
        if *used > 0 && cycle % 1000 < 800 && rng.gen_bool(0.5) {
            *used -= 1;
        }
        i.port_used = *used as u16;
        i.ev_ready = rng.gen_bool(0.5);
        (i.rd_data, i.rd_last, i.rd_error, i.rd_valid) = reads.offer(cycle, Some(&mut rng));
        let o = d.settle().clone();
        if d.inputs.reg_write {
            regs.pop_front();
        }
        if o.rq_valid && d.inputs.rq_ready {
            let (addr, len) = (o.rq_addr, o.rq_len as u64);
            assert!((1..=256).contains(&len), "read of {len} bytes");
            assert_eq!(addr % 16, 0, "read at {addr:#x} not 16-byte aligned");
            assert_eq!(addr / 4096, (addr + len - 1) / 4096, "read crosses 4 KiB");
            let ring_end = RING + (TX_DESC_BYTES << log2) as u64;
            let mut error = fails.iter().any(|(a, b)| addr < *b && addr + len > *a);
            if (RING..ring_end).contains(&addr) {
                assert!(
                    addr + len <= ring_end,
                    "descriptor read past the ring's end"
                );
                let slot = (fetched % (1 << log2)) as u64;
                assert_eq!(
                    addr,
                    RING + slot * TX_DESC_BYTES as u64,
                    "descriptors in order"
                );
                let count = len as usize / TX_DESC_BYTES;
                error = rng.gen_bool(0.04);
                if error {
                    unread.extend(fetched..fetched + count);
                }
                fetched += count;
            }
            let due = cycle + rng.gen_range(5..120);
            reads
                .0
                .push_back((due, addr, mem.beats::<D::Beat>(addr, len, error)));
            most_in_flight = most_in_flight.max(reads.0.len());
        }
        reads.took(d.inputs.rd_valid && o.rd_ready);
        if o.out_valid {
            let used = port_write(PORT, &mut fifo_used, &mut partial, &mut got, &o, cycle);
            max_used = max_used.max(used);
        }
        if o.ev_valid && d.inputs.ev_ready {
            events.push(event_of(&o));
        }
        d.tick(clk);
        if posted == n && reads.0.is_empty() && events_head(&events) == n && regs.is_empty() {
            break;
        }
    }
    // (Short datagrams drain as fast as they come: their FIFOs need not fill.)
    assert!(
        max_len < 1024 || max_used > 200,
        "the FIFOs filled up ({max_used} entries at most)"
    );
    assert!(
        most_in_flight >= 4,
        "reads overlapped ({most_in_flight} at most)"
    );
    assert!(!unread.is_empty(), "no descriptor batch's read failed");
    if max_len == 1472 && n >= 700 && D::Beat::VARIANT.beat_bytes() == 32 {
        // Among those sent (not in a failed descriptor batch).
        let mut sent = [0usize; 2];
        for (k, parity) in &shifted {
            if !unread.contains(k) {
                sent[*parity] += 1;
            }
        }
        assert!(
            sent[0] > 0 && sent[1] > 0,
            "datagrams shifted by a half beat sent, even and odd lines: {sent:?}"
        );
    }
    // The counters: refused descriptors read well, and read errors (a failed batch's descriptors
    // and failed payload reads).
    let bad = (0..n)
        .filter(|k| planned[*k].is_none() && !unread.contains(k))
        .count() as u32;
    let payload_errors = (0..n).filter(|k| matches!(&planned[*k], Some((_, dg)) if dg.error));
    let read_errors =
        (unread.len() + payload_errors.filter(|k| !unread.contains(k)).count()) as u32;
    // What each port got, against what it had to get: every datagram but those of a failed batch
    // (failed payload reads end with error, payload unchecked).
    let mut expect: [Vec<Datagram>; 4] = Default::default();
    for (k, plan) in planned.into_iter().enumerate() {
        if let (Some((p, mut dg)), false) = (plan, unread.contains(&k)) {
            if dg.error {
                dg.payload.clear();
            }
            expect[p].push(dg);
        }
    }
    for (p, want) in expect.iter().enumerate() {
        assert_eq!(got[p].len(), want.len(), "port {p}: datagram count");
        for (k, (g, w)) in got[p].iter().zip(want).enumerate() {
            assert_eq!(g, w, "port {p} datagram {k}");
        }
    }
    // Events: every error, and every tenth descriptor's TxDone, with the batch since the last.
    let mut since = 0u16;
    let mut first = 0u16;
    for (k, (desc, failed)) in descs.iter().enumerate() {
        since += 1;
        let failed = *failed || unread.contains(&k);
        if failed || desc.flags & TX_DESC_EVENT != 0 {
            let e = events.remove(0);
            let kind = if failed {
                EventKind::TxError
            } else {
                EventKind::TxDone
            };
            assert_eq!(
                (e.kind, e.buffer),
                (kind, k as u16),
                "event of descriptor {k}"
            );
            assert_eq!(
                (e.packets, e.first_seq, e.last_seq),
                (since, first, k as u16)
            );
            since = 0;
            first = k as u16 + 1;
        }
    }
    assert!(events.is_empty(), "extra events: {events:?}");
    // Counters and head through the registers.
    // (Read data two cycles after the address.)
    let mut read = |r: TxReg| {
        d.inputs.reg_addr = r.word() as u8;
        d.tick(clk);
        d.tick(clk);
        d.settle().reg_rdata
    };
    assert_eq!(read(TxReg::Head), n as u32);
    assert_eq!(read(TxReg::BadDescriptor), bad);
    assert_eq!(read(TxReg::ReadError), read_errors);
    assert!(bad_tails > 0, "no hostile doorbell was tried");
    assert_eq!(read(TxReg::BadTail), bad_tails, "hostile doorbells refused");
    assert_eq!(read(TxReg::Sent), (n - unread.len()) as u32 - bad);
}

/// Descriptors done so far, by the events (every descriptor is covered by a later event: the
/// last one asks for one, since n is a multiple of 10).
fn events_head(events: &[EventRecord]) -> usize {
    events.last().map_or(0, |e| e.buffer as usize + 1)
}

/// The read engine's model: reads answered in order, each `(due cycle, address, beats)`.
#[derive(Default)]
pub(super) struct Reads<T>(pub(super) VecDeque<(u64, u64, Vec<ReadBeat<T>>)>);

/// A read's beat: `(data, last, error)`.
pub(super) type ReadBeat<T> = (T, bool, bool);

impl<T: BeatData + Copy + Default> Reads<T> {
    /// The read data pins `(data, last, error, valid)` this cycle: the next beat once its read is
    /// due, held back at random (a gap) where `gaps` gives a generator.
    pub(super) fn offer(&self, cycle: u64, gaps: Option<&mut StdRng>) -> (T, bool, bool, bool) {
        match self.0.front() {
            Some((due, _, beats)) if *due <= cycle && gaps.is_none_or(|rng| rng.gen_bool(0.8)) => {
                let (data, last, error) = beats[0];
                (data, last, error, true)
            }
            _ => (T::default(), false, false, false),
        }
    }
    /// The beat offered is gone if it was `taken` (valid and ready).
    pub(super) fn took(&mut self, taken: bool) {
        if taken {
            let front = &mut self.0.front_mut().unwrap().2;
            front.remove(0);
            if front.is_empty() {
                self.0.pop_front();
            }
        }
    }
}

/// The port FIFO write on offer (`o.out_valid`): into port `port`'s FIFO (which must not
/// overflow) and datagram; returns the FIFO's entries.
fn port_write<T: BeatData>(
    port: u8,
    fifo_used: &mut [u32; 4],
    partial: &mut [Option<(Datagram, usize)>; 4],
    got: &mut [Vec<Datagram>; 4],
    o: &TOut<T>,
    cycle: u64,
) -> u32 {
    let p = port as usize;
    fifo_used[p] += 1;
    assert!(
        fifo_used[p] <= 256,
        "cycle {cycle}: port {p}'s FIFO overflows"
    );
    port_entry(
        port,
        &mut partial[p],
        &mut got[p],
        (o.out_tag, &o.out_data),
        cycle,
    );
    fifo_used[p]
}

/// A port FIFO entry (`out_tag`, `out_data`) into the datagram being assembled for port `p`; a
/// datagram's last entry moves it to `got` (with `error`, its payload cleared: not checked).
pub(super) fn port_entry<T: BeatData>(
    p: u8,
    partial: &mut Option<(Datagram, usize)>,
    got: &mut Vec<Datagram>,
    (out_tag, out_data): (u8, &T),
    cycle: u64,
) {
    use tx_entry::tag;
    let kind = tag::KIND.get(out_tag as u128) as u8;
    let bytes = out_data.to_le_bytes();
    match (kind, &mut *partial) {
        (tag::HEADER, None) => {
            let w = u128::from_le_bytes(bytes[..16].try_into().unwrap());
            assert!(
                bytes[16..].iter().all(|b| *b == 0),
                "port {p}: a header entry's upper half is not zero"
            );
            *partial = Some((
                Datagram {
                    dst_ip: (tx_entry::DST_IP.get(w) as u32).to_be_bytes(),
                    src_port: tx_entry::SRC_PORT.get(w) as u16,
                    dst_port: tx_entry::DST_PORT.get(w) as u16,
                    payload: vec![],
                    error: false,
                },
                tx_entry::LEN.get(w) as usize,
            ));
        }
        (tag::PAYLOAD | tag::LAST, Some((dg, len))) => {
            let take = if kind == tag::LAST {
                tag::LAST_BYTES_M1.get(out_tag as u128) as usize + 1
            } else {
                bytes.len()
            };
            assert!(
                take <= bytes.len(),
                "port {p}: a last entry of {take} bytes"
            );
            dg.payload.extend_from_slice(&bytes[..take]);
            if kind == tag::LAST {
                assert_eq!(dg.payload.len(), *len, "port {p}: payload length");
                let (mut dg, _) = partial.take().unwrap();
                dg.error = tag::ERROR.get(out_tag as u128) != 0;
                if dg.error {
                    dg.payload.clear();
                }
                got.push(dg);
            }
        }
        other => panic!("cycle {cycle}: port {p}: entry of kind {kind} in state {other:?}"),
    }
}

/// The event record on offer.
fn event_of<T>(o: &TOut<T>) -> EventRecord {
    let mut raw = [0u8; 32];
    raw[..16].copy_from_slice(&o.ev_lo.to_le_bytes());
    raw[16..].copy_from_slice(&o.ev_hi.to_le_bytes());
    let w: [u64; 4] =
        std::array::from_fn(|i| u64::from_le_bytes(raw[8 * i..8 * i + 8].try_into().unwrap()));
    EventRecord::decode_words(&w).expect("a valid record")
}

#[test]
fn a_ring_disabled_during_traffic_drains_and_the_next_ring_starts_after_it() {
    disable_during_traffic::<Tx128>(false);
    disable_during_traffic::<Tx256>(false);
}

#[test]
fn a_ring_enabled_again_while_the_old_one_drains_waits_for_it() {
    disable_during_traffic::<Tx128>(true);
    disable_during_traffic::<Tx256>(true);
}

/// Ring A (32 descriptors of 200 to 1472 bytes, each asking for an event) is posted whole and
/// disabled while the engine sends it (once two datagrams are out); ring B (elsewhere in
/// memory, 20 descriptors) is then set up and posted: once `Status` says idle, or at once
/// (`reenable_at_once`: the engine must wait for A to drain by itself). Checked: no read of ring
/// A's descriptors after the disable; every read of A (ring or payload) answered before `Status`
/// says idle, and none after (its memory goes back to the host then); ring B fetched only once
/// no read of A is outstanding; A's datagrams sent are exactly its first ones, whole, the rest
/// counted in `Discarded`; no event for A after the disable (an A event would carry index 0 and
/// spoil B's sequence); all of B's datagrams go out, after A's, `head` counting B's only and B's
/// events indexed from 0.
fn disable_during_traffic<D: Width>(reenable_at_once: bool) {
    const RING_B: u64 = 0x3_0000_0000;
    const BUFFERS_B: u64 = 0x3_0010_0000;
    let mut rng = StdRng::seed_from_u64(7 + reenable_at_once as u64);
    const PORT: u8 = 1;
    let (mut d, clk) = reset_engine::<D>(PORT);

    let mut mem = Memory(Default::default());
    // A ring's descriptors at `ring`, payloads 8 KiB apart from `buffers`, datagrams to
    // 10.0.`net`.k.
    let mut ring = |mem: &mut Memory, ring: u64, buffers: u64, n: usize, net: u8| {
        (0..n)
            .map(|k| {
                let desc = TxDescriptor {
                    buffer: buffers + k as u64 * 8192,
                    len: rng.gen_range(200..=1472),
                    port: PORT,
                    flags: TX_DESC_EVENT,
                    dst_ip: [10, 0, net, k as u8],
                    src_port: rng.gen(),
                    dst_port: rng.gen(),
                };
                let payload: Vec<u8> = (0..desc.len).map(|_| rng.gen()).collect();
                mem.write(desc.buffer, &payload);
                mem.write(ring + (k * TX_DESC_BYTES) as u64, &desc.encode());
                let dg = Datagram {
                    dst_ip: desc.dst_ip,
                    src_port: desc.src_port,
                    dst_port: desc.dst_port,
                    payload,
                    error: false,
                };
                (desc.port as usize, dg)
            })
            .collect::<Vec<_>>()
    };
    let plan_a = ring(&mut mem, RING, BUFFERS, 32, 1);
    let plan_b = ring(&mut mem, RING_B, BUFFERS_B, 20, 2);
    let in_a = |addr: u64| (RING..RING_B).contains(&addr);

    let mut regs = VecDeque::from(ring_setup(RING, 5, 32));
    let ring_b = ring_setup(RING_B, 5, 20);
    let mut reads = Reads::default();
    let mut got: [Vec<Datagram>; 4] = Default::default();
    let mut partial: [Option<(Datagram, usize)>; 4] = Default::default();
    let mut events = vec![];
    let mut fifo_used = [0u32; 4];
    let (mut disabled_at, mut idle_at) = (None, None);
    let (mut disabling, mut b_posted, mut b_fetched) = (false, false, false);
    // The register addresses of the last two cycles (a read's data comes two cycles later).
    let mut addr_hist = [0u8; 2];
    let from_b =
        |got: &[Vec<Datagram>; 4]| got.iter().flatten().filter(|g| g.dst_ip[2] == 2).count();
    for cycle in 0..400_000u64 {
        if !disabling && got.iter().map(Vec::len).sum::<usize>() >= 2 {
            assert!(regs.is_empty());
            regs.push_back((TxReg::RingSize, 0));
            disabling = true;
            if reenable_at_once {
                regs.extend(ring_b);
                b_posted = true;
            }
        }
        if idle_at.is_some() && !b_posted {
            regs.extend(ring_b);
            b_posted = true;
        }
        let i = &mut d.inputs;
        i.now = cycle as u32;
        // Between writes, `Status` is read. Writes as close as the BAR0 target sends them (a
        // doorbell one cycle closer to `RingSize` would be checked against the size before it).
        if write_next(i, &mut regs, cycle, TxReg::Status) == Some((TxReg::RingSize, 0)) {
            disabled_at = Some(cycle);
        }
        i.rq_ready = rng.gen_bool(0.7);
        let used = &mut fifo_used[PORT as usize];
        if *used > 0 && rng.gen_bool(0.3) {
            *used -= 1;
        }
        i.port_used = *used as u16;
        i.ev_ready = rng.gen_bool(0.5);
        (i.rd_data, i.rd_last, i.rd_error, i.rd_valid) = reads.offer(cycle, Some(&mut rng));
        let o = d.settle().clone();
        let status_now = addr_hist[0] == TxReg::Status.word() as u8;
        addr_hist = [addr_hist[1], d.inputs.reg_addr];
        if status_now && disabled_at.is_some_and(|t| cycle > t + 2) && idle_at.is_none() {
            if o.reg_rdata & TX_STATUS_IDLE != 0 {
                assert_eq!(o.reg_rdata & TX_STATUS_DRAINING, 0, "idle while draining");
                idle_at = Some(cycle);
                // Ring A's memory goes back to the host: every read of it must be answered.
                assert!(
                    reads.0.iter().all(|(_, addr, _)| !in_a(*addr)),
                    "cycle {cycle}: idle with a read of ring A outstanding"
                );
            } else {
                assert_ne!(
                    o.reg_rdata & TX_STATUS_DRAINING,
                    0,
                    "neither idle nor draining"
                );
            }
        }
        if o.rq_valid && d.inputs.rq_ready {
            let (addr, len) = (o.rq_addr, o.rq_len as u64);
            if let Some(t) = disabled_at {
                // (A batch may go in the cycle of the write: the engine sees it a cycle later.)
                assert!(
                    cycle <= t || !(RING..RING + 4096).contains(&addr),
                    "cycle {cycle}: ring A's descriptors read after the disable"
                );
            }
            assert!(
                idle_at.is_none() || !in_a(addr),
                "cycle {cycle}: ring A read after the engine said idle ({addr:#x})"
            );
            if (RING_B..RING_B + 4096).contains(&addr) && !b_fetched {
                b_fetched = true;
                assert!(
                    reads.0.iter().all(|(_, addr, _)| !in_a(*addr)),
                    "cycle {cycle}: ring B fetched while ring A's reads are outstanding"
                );
            }
            let due = cycle + rng.gen_range(20..60);
            reads
                .0
                .push_back((due, addr, mem.beats::<D::Beat>(addr, len, false)));
        }
        reads.took(d.inputs.rd_valid && o.rd_ready);
        if o.out_valid {
            port_write(PORT, &mut fifo_used, &mut partial, &mut got, &o, cycle);
        }
        if o.ev_valid && d.inputs.ev_ready {
            events.push((cycle, event_of(&o)));
        }
        d.tick(clk);
        let after = |t: &u64| disabled_at.is_some_and(|d| *t > d);
        if from_b(&got) == 20 && events.iter().filter(|(t, _)| after(t)).count() >= 20 {
            break;
        }
    }
    let (disabled_at, idle_at) = (disabled_at.expect("disabled"), idle_at.expect("went idle"));
    assert!(
        idle_at > disabled_at + 4,
        "idle at once: nothing was in flight at the disable"
    );
    assert_eq!(from_b(&got), 20, "ring B's datagrams");
    let a_sent = got.iter().flatten().count() - 20;
    // Ring A's first `a_sent` datagrams, then all of ring B's, per port in that order.
    let mut expect: [Vec<&Datagram>; 4] = Default::default();
    for (p, dg) in plan_a[..a_sent].iter().chain(&plan_b) {
        expect[*p].push(dg);
    }
    for p in 0..4 {
        assert_eq!(got[p].iter().collect::<Vec<_>>(), expect[p], "port {p}");
    }
    // After the disable, ring B's events only, indexed from 0.
    let later: Vec<u16> = events
        .iter()
        .filter(|(t, _)| *t > disabled_at)
        .map(|(_, e)| e.buffer)
        .collect();
    assert_eq!(
        later,
        (0..20).collect::<Vec<u16>>(),
        "events after the disable"
    );
    let mut read = |r: TxReg| {
        d.inputs.reg_addr = r.word() as u8;
        d.tick(clk);
        d.tick(clk);
        d.settle().reg_rdata
    };
    assert_eq!(
        read(TxReg::Head),
        20,
        "head counts ring B's descriptors only"
    );
    assert_eq!(read(TxReg::Sent), a_sent as u32 + 20);
    let discarded = read(TxReg::Discarded);
    assert!(
        discarded > 0 && a_sent as u32 + discarded <= 32,
        "{discarded} of ring A discarded, {a_sent} sent"
    );
    assert_eq!(read(TxReg::Status), TX_STATUS_IDLE, "idle at the end");
}

/// The room check at its edge: port 0's FIFO never drains while datagrams of 257 entries in all
/// come, one more than the FIFO holds (a header entry each and one per 16 bytes at 128 bits:
/// 1472, 1472 and 1120 bytes, 93 + 93 + 71; one per 32 bytes at 256: five of 1472 and one of
/// 672, 5 x 47 + 22). The last waits, though the others are being written while it is checked
/// (what the engine has in flight and what the FIFO counts must move together: counting an entry
/// out of flight before the FIFO's count has it would let the last in, and overflow). Once one
/// entry drains it fits exactly and goes, filling the FIFO to its last entry. Then everything
/// drains and all arrive byte-exact.
#[test]
fn a_datagram_one_entry_too_big_for_its_fifo_waits_and_goes_when_it_fits_exactly() {
    one_entry_too_big::<Tx128>(&[1472, 1472, 1120]);
    one_entry_too_big::<Tx256>(&[1472, 1472, 1472, 1472, 1472, 672]);
}

fn one_entry_too_big<D: Width>(lens: &[u16]) {
    let entries = |len: u16| len.div_ceil(D::Beat::VARIANT.beat_bytes() as u16) as u32 + 1;
    assert_eq!(lens.iter().map(|l| entries(*l)).sum::<u32>(), 257);
    // The entries of all but the last.
    let before = 257 - entries(*lens.last().unwrap());
    let n = lens.len();
    let datagrams: Vec<_> = lens
        .iter()
        .enumerate()
        .map(|(k, len)| (BUFFERS + k as u64 * 8192, *len, false))
        .collect();
    let mut run = Port0Run::<D>::new(12, 3, &datagrams);
    // Drained: nothing until the first two are in and the third has waited, one entry then,
    // everything once the FIFO is full again.
    let (mut waited_since, mut full_again, mut drained_one) = (None, false, false);
    for cycle in 0..100_000u64 {
        let done = run.got.len();
        if done == n - 1 && run.partial.is_none() && waited_since.is_none() {
            assert_eq!(run.fifo_used, before);
            waited_since = Some(cycle);
        }
        if waited_since.is_some_and(|t| cycle == t + 2000) {
            assert_eq!(
                (done, run.fifo_used),
                (n - 1, before),
                "the last datagram went in without room"
            );
            run.fifo_used -= 1;
            drained_one = true;
        }
        if full_again && run.fifo_used > 0 && run.rng.gen_bool(0.5) {
            run.fifo_used -= 1;
        }
        if let Some(used) = run.cycle(cycle) {
            assert!(
                drained_one || done < n - 1,
                "cycle {cycle}: the last datagram's entries went out before it fitted"
            );
            full_again |= used == 256;
        }
        if run.got.len() == n && run.fifo_used == 0 {
            break;
        }
    }
    assert!(full_again, "the last datagram never filled the FIFO");
    assert_eq!(run.got, run.want);
}

/// The engine on a ring of datagrams all for port 0, the read engine's model answering its reads
/// after 5 to 60 cycles with random gaps (reads that touch a failing range answered with
/// `error`), `rq_ready` high 70% of the cycles; the port's FIFO drained by the caller.
struct Port0Run<D: Width> {
    d: DesignSim<D>,
    clk: ClockId,
    rng: StdRng,
    mem: Memory,
    regs: VecDeque<(TxReg, u32)>,
    reads: Reads<D::Beat>,
    /// Address ranges whose reads fail.
    fails: Vec<(u64, u64)>,
    /// Port 0's FIFO: entries in it, the datagram being assembled, those complete.
    fifo_used: u32,
    partial: Option<(Datagram, usize)>,
    got: Vec<Datagram>,
    /// What port 0 must receive.
    want: Vec<Datagram>,
}

impl<D: Width> Port0Run<D> {
    /// The engine after reset with ring slots `0..` holding a datagram each, `(buffer, length,
    /// its read after the first 4 KiB boundary fails)`, to 10.0.`net`.k, source port 1000 + k,
    /// random payloads (seed `seed`), and the doorbell rung for them all.
    fn new(seed: u64, net: u8, datagrams: &[(u64, u16, bool)]) -> Self {
        let mut rng = StdRng::seed_from_u64(seed);
        let (d, clk) = reset_engine::<D>(0);
        let mut mem = Memory(Default::default());
        let mut want = vec![];
        let mut fails = vec![];
        for (k, &(buffer, len, fail)) in datagrams.iter().enumerate() {
            let desc = TxDescriptor {
                buffer,
                len,
                port: 0,
                flags: 0,
                dst_ip: [10, 0, net, k as u8],
                src_port: 1000 + k as u16,
                dst_port: 2000,
            };
            let mut payload: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
            mem.write(desc.buffer, &payload);
            mem.write(RING + (k * TX_DESC_BYTES) as u64, &desc.encode());
            if fail {
                let page_end = (buffer / 4096 + 1) * 4096;
                fails.push((page_end, page_end + 4096));
                payload.clear();
            }
            want.push(Datagram {
                dst_ip: desc.dst_ip,
                src_port: desc.src_port,
                dst_port: desc.dst_port,
                payload,
                error: fail,
            });
        }
        Self {
            d,
            clk,
            rng,
            mem,
            regs: VecDeque::from(ring_setup(RING, 5, datagrams.len() as u32)),
            reads: Reads::default(),
            fails,
            fifo_used: 0,
            partial: None,
            got: vec![],
            want,
        }
    }

    /// One cycle; the FIFO's entries after a write into it in this cycle, if there was one.
    fn cycle(&mut self, cycle: u64) -> Option<u32> {
        let i = &mut self.d.inputs;
        i.now = cycle as u32;
        write_next(i, &mut self.regs, cycle, TxReg::Head);
        i.rq_ready = self.rng.gen_bool(0.7);
        i.port_used = self.fifo_used as u16;
        i.ev_ready = true;
        (i.rd_data, i.rd_last, i.rd_error, i.rd_valid) =
            self.reads.offer(cycle, Some(&mut self.rng));
        let o = self.d.settle().clone();
        if o.rq_valid && self.d.inputs.rq_ready {
            let (addr, len) = (o.rq_addr, o.rq_len as u64);
            let error = self.fails.iter().any(|(a, b)| addr < *b && addr + len > *a);
            let due = cycle + self.rng.gen_range(5..60);
            let beats = self.mem.beats::<D::Beat>(addr, len, error);
            self.reads.0.push_back((due, addr, beats));
        }
        self.reads.took(self.d.inputs.rd_valid && o.rd_ready);
        let mut used = None;
        if o.out_valid {
            self.fifo_used += 1;
            assert!(
                self.fifo_used <= 256,
                "cycle {cycle}: port 0's FIFO overflows"
            );
            port_entry(
                0,
                &mut self.partial,
                &mut self.got,
                (o.out_tag, &o.out_data),
                cycle,
            );
            used = Some(self.fifo_used);
        }
        self.d.tick(self.clk);
        used
    }
}

/// Payloads at a page's end, at both widths: buffers 16 to 48 bytes before a 4 KiB boundary, so
/// at 256 bits the read up to the boundary has an odd number of lines and ends in a half beat:
/// held and joined with the next read's first line (the last entry's second line, or an entry in
/// the middle), or, when nothing follows in that datagram, written as its last entry; the held
/// line that ends a datagram goes alone. One datagram's read after the boundary fails while the
/// read before it does not: it ends with `error`. Every datagram arrives byte-exact, in order.
#[test]
fn payloads_at_a_page_boundary_arrive_whole_and_a_late_read_failure_ends_its_datagram() {
    page_boundary_cases::<Tx128>();
    page_boundary_cases::<Tx256>();
}

fn page_boundary_cases<D: Width>() {
    // (bytes before the page's end, length, the read after the boundary fails)
    let cases: [(u64, u16, bool); 12] = [
        (48, 40, false),
        (48, 60, false),
        (48, 80, false),
        (16, 16, false),
        (16, 17, false),
        (16, 20, false),
        (16, 33, false),
        (48, 49, false),
        (48, 1472, false),
        (16, 1471, false),
        (304, 1000, false),
        (48, 300, true),
    ];
    let datagrams: Vec<_> = cases
        .iter()
        .enumerate()
        .map(|(k, &(before_end, len, fail))| {
            (BUFFERS + k as u64 * 8192 + 4096 - before_end, len, fail)
        })
        .collect();
    let mut run = Port0Run::<D>::new(3, 4, &datagrams);
    for cycle in 0..100_000u64 {
        if run.fifo_used > 0 && run.rng.gen_bool(0.5) {
            run.fifo_used -= 1;
        }
        run.cycle(cycle);
        if run.got.len() == cases.len() {
            break;
        }
    }
    assert_eq!(run.got, run.want);
}

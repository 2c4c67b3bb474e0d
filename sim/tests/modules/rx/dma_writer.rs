//! DMA write engine: payloads of random length at random offsets of a CLOP region mapped through
//! the TLB onto scattered bus pages (4 KiB, 64 KiB and 2 MiB), both max payload sizes, random
//! stalls on the payload and on host memory, and bad commands mixed in (payload ending with
//! `error`, fewer or more beats than the length, a page missing from the TLB), zero-length commands
//! (an empty datagram's: one placeholder beat, good or ending in error, or followed by more), and hostile
//! configurations (a base that is not page aligned, TLB entries of a smaller page than the
//! CLOP's). The scoreboard
//! checks every request's protocol, that every byte of host memory is what the good commands
//! wrote, that no write leaves the mapped pages, and the outcome of every command. At 128 and 256
//! bits, on the rust-hdl model and its Verilog in lockstep.

use std::collections::VecDeque;

use nanet_hdl::rx::dma_writer::DmaWriter;
use nanet_sim::engine::clocks::CORE_CLOCK_PS;
use nanet_sim::engine::{ClockId, DesignSim, EngineKind};
use nanet_sim::world::dma_port::{datagram_words, WriteBeat, WriteRequestSink};
use nanet_sim::world::host_mem::{MemoryPort, MemoryPreset};
use nanet_sim::world::tlp::{BeatData, MAX_BEAT_DWORDS};
use nanet_sim::{design_ports, width_designs};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

#[derive(Clone, Default)]
pub struct DwIn<T> {
    reset: bool,
    mps_256: bool,
    cmd_valid: bool,
    cmd_base: u64,
    cmd_offset: u32,
    cmd_len: u16,
    cmd_slot: u8,
    cmd_page: u8,
    data: T,
    data_last: bool,
    data_error: bool,
    data_valid: bool,
    tlb_wr: bool,
    tlb_wr_slot: u8,
    tlb_wr_valid: bool,
    tlb_wr_size: u8,
    tlb_wr_vpn: u64,
    tlb_wr_ppn: u64,
    wr_ready: bool,
}

#[derive(Clone, Default, Debug)]
pub struct DwOut<T> {
    cmd_ready: bool,
    data_ready: bool,
    wr_valid: bool,
    /// The write-request beat on offer (with `wr_valid`).
    wr: WriteBeat<T>,
    /// That beat is void (its translation missed): the next stage drops it.
    wr_void: bool,
    first_write: bool,
    done: bool,
    done_ok: bool,
    done_tlb_miss: bool,
    done_error: bool,
    holds_writes: bool,
}

macro_rules! writer_design {
    ($design:ident, $bits:literal, $data:ty, $top:literal) => {
        design_ports! {
            pub $design for DmaWriter<$bits>, top $top, inputs DwIn<$data>, outputs DwOut<$data>,
            clocks { clock }
            inputs {
                reset => reset, mps_256 => mps_256, cmd_valid => req.cmd_valid,
                cmd_base => req.cmd_base, cmd_offset => req.cmd_offset, cmd_len => req.cmd_len,
                cmd_slot => req.cmd_slot, cmd_page => req.cmd_page, data => req.data,
                data_last => req.data_last, data_error => req.data_error,
                data_valid => req.data_valid, tlb_wr => tlb_wr, tlb_wr_slot => tlb_wr_slot,
                tlb_wr_valid => tlb_wr_valid, tlb_wr_size => tlb_wr_size,
                tlb_wr_vpn => tlb_wr_vpn, tlb_wr_ppn => tlb_wr_ppn, wr_ready => wr.ready,
            }
            outputs {
                cmd_ready => req.cmd_ready, data_ready => req.data_ready, wr_valid => wr.valid,
                wr.sop => wr.sop, wr.eop => wr.eop, wr.addr => wr.addr, wr.len => wr.len,
                wr.data => wr.data, wr_void => wr_void, first_write => req.first_write,
                done => req.done, done_ok => req.done_ok, done_tlb_miss => req.done_tlb_miss,
                done_error => req.done_error, holds_writes => req.holds_writes,
            }
        }
    };
}
writer_design!(Writer128, 128, u128, "nanet_dma_writer");
writer_design!(Writer256, 256, [u64; 4], "nanet_dma_writer_256");

width_designs! {
    trait Width: In = DwIn<Self::Beat>, Out = DwOut<Self::Beat>;
    Writer128 => u128, Writer256 => [u64; 4]
}

/// A beat of random data.
fn random_beat<T: BeatData>(rng: &mut StdRng) -> T {
    let dwords: [u32; MAX_BEAT_DWORDS] = rng.gen();
    T::from_dwords(&dwords)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    Ok,
    Error,
    TlbMiss,
}

/// A CLOP region: page-aligned virtual base, TLB slots from `first_slot`, one bus page per slot
/// (`None`: the slot is left invalid). Commands carry `base | junk`: bits below the page size the
/// writer must ignore.
struct Region {
    base: u64,
    junk: u64,
    page: u8,
    first_slot: u8,
    pages: Vec<Option<u64>>,
}

impl Region {
    fn shift(&self) -> u32 {
        [12, 16, 21][self.page as usize]
    }
    fn page_size(&self) -> u64 {
        1 << self.shift()
    }
    fn len(&self) -> u64 {
        self.pages.len() as u64 * self.page_size()
    }
    fn mapped(&self, off: u64) -> bool {
        self.pages[(off >> self.shift()) as usize].is_some()
    }
}

/// A command, its payload beats (network order) and the outcome it must have.
struct Command<T> {
    offset: u32,
    len: u16,
    beats: Vec<(T, bool, bool)>,
    outcome: Outcome,
}

/// The payload's beats: for an empty payload (a zero-length command) the placeholder beat.
fn beats_of<T: BeatData + Default>(payload: &[u8]) -> Vec<(T, bool, bool)> {
    let words = datagram_words::<T>(payload);
    let n = words.len();
    words
        .into_iter()
        .enumerate()
        .map(|(i, w)| (w, i + 1 == n, false))
        .collect()
}

struct Bench<D: Width> {
    d: DesignSim<D>,
    clk: ClockId,
    port: MemoryPort,
    sink: WriteRequestSink,
    cycles: u64,
    /// Void beats taken (and dropped, as the write mux does).
    voided: u64,
}

impl<D: Width> Bench<D> {
    fn new(preset: MemoryPreset, mem_stall: f64, seed: u64) -> Self {
        let mut d = DesignSim::<D>::new(EngineKind::Both).unwrap_or_else(|e| panic!("{e}"));
        let clk = d.add_clock("core", 0, CORE_CLOCK_PS);
        d.inputs.reset = true;
        d.tick(clk);
        d.inputs.reset = false;
        for _ in 0..130 {
            d.tick(clk); // the TLB's reset sweep
        }
        Self {
            d,
            clk,
            port: MemoryPort::new(preset, mem_stall, seed).for_variant(D::Beat::VARIANT),
            sink: WriteRequestSink::default(),
            cycles: 0,
            voided: 0,
        }
    }

    fn map(&mut self, r: &Region) {
        for (i, p) in r.pages.iter().enumerate() {
            if let Some(bus) = p {
                self.port
                    .memory
                    .register(*bus, r.page_size(), &format!("page {i}"))
                    .unwrap();
            }
            let vaddr = r.base + i as u64 * r.page_size();
            self.write_tlb(r.first_slot + i as u8, *p, r.page, vaddr);
        }
    }

    /// Writes TLB slot `slot`: `vaddr`'s page of size code `size` at bus address `bus`, or
    /// invalid.
    fn write_tlb(&mut self, slot: u8, bus: Option<u64>, size: u8, vaddr: u64) {
        let i = &mut self.d.inputs;
        i.tlb_wr = true;
        i.tlb_wr_slot = slot;
        i.tlb_wr_valid = bus.is_some();
        i.tlb_wr_size = size;
        i.tlb_wr_vpn = vaddr >> 12;
        i.tlb_wr_ppn = bus.unwrap_or(0) >> 12;
        self.d.tick(self.clk);
        self.d.inputs.tlb_wr = false;
    }

    /// Runs the commands with random stalls on the command and payload side, and on until the
    /// last write beat has left the writer; returns the outcomes in order.
    fn run(
        &mut self,
        r: &Region,
        cmds: &[Command<D::Beat>],
        stall: f64,
        rng: &mut StdRng,
    ) -> Vec<Outcome> {
        let mut queue: VecDeque<&Command<D::Beat>> = cmds.iter().collect();
        let mut beats: VecDeque<(D::Beat, bool, bool)> =
            cmds.iter().flat_map(|c| c.beats.clone()).collect();
        let mut outcomes = vec![];
        let mut started = 0;
        let limit = self.cycles + 200 * cmds.len() as u64 + 100_000;
        let mut drained = false;
        while outcomes.len() < cmds.len() || !drained {
            let i = &mut self.d.inputs;
            i.cmd_valid = !queue.is_empty() && !rng.gen_bool(stall);
            if let Some(c) = queue.front() {
                i.cmd_base = r.base | r.junk;
                i.cmd_offset = c.offset;
                i.cmd_len = c.len;
                i.cmd_slot = r.first_slot;
                i.cmd_page = r.page;
            }
            i.data_valid = !beats.is_empty() && !rng.gen_bool(stall);
            if let Some((data, last, error)) = beats.front() {
                i.data = *data;
                i.data_last = *last;
                i.data_error = *error;
            }
            i.wr_ready = self.port.ready();
            let o = self.d.settle().clone();
            assert!(
                o.holds_writes || !o.wr_valid,
                "a beat on offer the writer says it lacks"
            );
            drained = !o.holds_writes;
            if self.d.inputs.cmd_valid && o.cmd_ready {
                queue.pop_front();
            }
            if self.d.inputs.data_valid && o.data_ready {
                beats.pop_front();
            }
            if o.wr_valid && o.wr.sop {
                let mps = if self.d.inputs.mps_256 { 256 } else { 128 };
                assert!(o.wr.len <= mps, "request of {} bytes, MPS {mps}", o.wr.len);
            }
            if o.wr_valid && self.d.inputs.wr_ready {
                let beat = o.wr;
                if o.wr_void {
                    // The first beat of a page whose translation missed: dropped downstream.
                    assert!(
                        beat.sop,
                        "a void beat that does not start a request: {beat:?}"
                    );
                    self.voided += 1;
                } else {
                    self.sink.beat(&beat, &mut self.port);
                }
            }
            started += o.first_write as usize;
            if o.done {
                let flags = [o.done_ok, o.done_error, o.done_tlb_miss];
                assert_eq!(
                    flags.iter().filter(|f| **f).count(),
                    1,
                    "one outcome: {o:?}"
                );
                outcomes.push(if o.done_ok {
                    Outcome::Ok
                } else if o.done_error {
                    Outcome::Error
                } else {
                    Outcome::TlbMiss
                });
            }
            self.port.tick();
            self.d.tick(self.clk);
            self.cycles += 1;
            assert!(self.cycles < limit, "DMA writer wedged");
            self.sink.assert_clean();
            self.port.assert_clean();
        }
        assert!(beats.is_empty(), "every payload beat consumed");
        assert!(started <= cmds.len());
        for _ in 0..self.port.preset.latency_cycles + 1 {
            self.port.tick();
        }
        outcomes
    }
}

/// Random commands in `r`, with the bytes each good one leaves in the region (`None`: not known,
/// a bad command's bytes).
fn commands<T: BeatData + Default>(
    r: &Region,
    n: usize,
    rng: &mut StdRng,
    shadow: &mut [Option<u8>],
) -> Vec<Command<T>> {
    let mut cmds = vec![];
    for _ in 0..n {
        let len = if rng.gen_bool(0.08) {
            // An empty datagram's zero-length command.
            0
        } else if rng.gen_bool(0.3) {
            rng.gen_range(1..=64u16)
        } else {
            rng.gen_range(1..=1472u16)
        };
        let offset = rng.gen_range(0..=shadow.len() as u64 - len.max(1) as u64) as u32;
        let payload: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
        let mut beats = beats_of(&payload);
        let range = offset as usize..offset as usize + len as usize;
        let mut outcome = Outcome::Ok;
        {
            match rng.gen_range(0..10) {
                0 => {
                    beats.last_mut().unwrap().2 = true;
                    outcome = Outcome::Error;
                }
                1 if beats.len() > 1 => {
                    beats.truncate(rng.gen_range(1..beats.len()));
                    beats.last_mut().unwrap().1 = true;
                    outcome = Outcome::Error;
                }
                2 => {
                    beats.last_mut().unwrap().1 = false;
                    for _ in 0..rng.gen_range(1..4) {
                        beats.push((random_beat(rng), false, false));
                    }
                    beats.last_mut().unwrap().1 = true;
                    outcome = Outcome::Error;
                }
                _ => {}
            }
        }
        // (A zero-length command is translated too: a miss at its offset is reported.)
        if range.clone().any(|o| !r.mapped(o as u64)) || (len == 0 && !r.mapped(offset as u64)) {
            outcome = Outcome::TlbMiss;
        }
        for o in range {
            shadow[o] = if outcome == Outcome::Ok {
                Some(payload[o - offset as usize])
            } else {
                None
            };
        }
        cmds.push(Command {
            offset,
            len,
            beats,
            outcome,
        });
    }
    cmds
}

fn check_memory<D: Width>(b: &Bench<D>, r: &Region, shadow: &[Option<u8>]) {
    for (i, p) in r.pages.iter().enumerate() {
        let Some(bus) = p else { continue };
        let lo = i as u64 * r.page_size();
        let hi = (lo + r.page_size()).min(shadow.len() as u64);
        if lo >= hi {
            continue;
        }
        let got = b.port.memory.read(*bus, (hi - lo) as usize);
        for (k, g) in got.iter().enumerate() {
            let off = lo as usize + k;
            if let Some(v) = shadow[off] {
                assert_eq!(
                    *g,
                    v,
                    "byte at region offset {off:#x} (bus {:#x})",
                    bus + k as u64
                );
            }
        }
    }
}

/// `n` random commands into a region of `pages` pages of size code `page`, `holes` of them
/// missing from the TLB; the commands' base carries random bits below the page size when
/// `junk_in_base`.
#[derive(Clone, Copy)]
struct Scenario<'a> {
    page: u8,
    pages: usize,
    holes: &'a [usize],
    mps_256: bool,
    stall: f64,
    seed: u64,
    n: usize,
    junk_in_base: bool,
}

/// The scenario at both widths.
fn scenario(sc: Scenario) {
    scenario_at::<Writer128>(sc);
    scenario_at::<Writer256>(sc);
}

fn scenario_at<D: Width>(sc: Scenario) {
    let Scenario {
        page,
        pages,
        holes,
        mps_256,
        stall,
        seed,
        n,
        junk_in_base,
    } = sc;
    let mut rng = StdRng::seed_from_u64(seed);
    let shift = [12, 16, 21][page as usize];
    let r = Region {
        junk: if junk_in_base {
            rng.gen_range(1..1u64 << shift)
        } else {
            0
        },
        base: 0x7f3a_0000_0000 + ((rng.gen::<u64>() & 0xFF) << 21),
        page,
        first_slot: 9,
        pages: (0..pages)
            .map(|i| {
                let bus = 0x1_0000_0000 + (rng.gen::<u64>() & 0xFFFF_FFFF);
                (!holes.contains(&i)).then_some(bus >> shift << shift)
            })
            .collect(),
    };
    let preset = if stall > 0.0 {
        MemoryPreset::gen2_x8()
    } else {
        MemoryPreset::ideal()
    };
    let mut b = Bench::<D>::new(preset, stall, seed);
    b.d.inputs.mps_256 = mps_256;
    b.map(&r);
    // Commands go to the first 256 KiB of the region at most.
    let mut shadow = vec![Some(0u8); r.len().min(256 << 10) as usize];
    let cmds = commands::<D::Beat>(&r, n, &mut rng, &mut shadow);
    let expected: Vec<Outcome> = cmds.iter().map(|c| c.outcome).collect();
    assert!(expected.contains(&Outcome::Ok) && expected.contains(&Outcome::Error));
    assert_eq!(expected.contains(&Outcome::TlbMiss), !holes.is_empty());
    let got = b.run(&r, &cmds, stall, &mut rng);
    assert_eq!(got, expected);
    // Misses with a first beat offered as the translation came (void), and only misses.
    assert_eq!(b.voided > 0, !holes.is_empty(), "{} void beats", b.voided);
    check_memory(&b, &r, &shadow);
}

const BASE: Scenario = Scenario {
    page: 0,
    pages: 24,
    holes: &[],
    mps_256: false,
    stall: 0.0,
    seed: 0,
    n: 120,
    junk_in_base: false,
};

#[test]
fn scattered_4k_pages_mps_128_no_stalls() {
    scenario(Scenario {
        holes: &[7, 15],
        seed: 1,
        ..BASE
    });
}

#[test]
fn scattered_4k_pages_mps_256_random_stalls() {
    scenario(Scenario {
        holes: &[3],
        mps_256: true,
        stall: 0.3,
        seed: 6,
        ..BASE
    });
}

#[test]
fn gpu_64k_pages_random_stalls() {
    scenario(Scenario {
        page: 1,
        pages: 4,
        holes: &[2],
        mps_256: true,
        stall: 0.25,
        seed: 3,
        n: 100,
        ..BASE
    });
}

#[test]
fn huge_2m_page() {
    scenario(Scenario {
        page: 2,
        pages: 1,
        stall: 0.1,
        seed: 4,
        n: 60,
        ..BASE
    });
}

/// A base with bits below the page size (hostile or buggy configuration) writes exactly where
/// the page-aligned base would: never past a translated page.
#[test]
fn bits_of_the_base_below_the_page_size_are_ignored() {
    for (page, pages, seed) in [(0, 24, 7), (1, 4, 8)] {
        scenario(Scenario {
            page,
            pages,
            holes: &[1],
            stall: 0.2,
            seed,
            junk_in_base: true,
            ..BASE
        });
    }
}

/// A CLOP of 64 KiB pages whose slots hold 4 KiB entries of the right addresses (hostile or
/// buggy register writes): the writer walks 64 KiB per translation, so a hit would write past
/// the 4 KiB that are mapped. Every command misses and nothing is written.
#[test]
fn entries_of_a_smaller_page_than_the_clops_miss() {
    smaller_entries::<Writer128>();
    smaller_entries::<Writer256>();
}

fn smaller_entries<D: Width>() {
    let mut rng = StdRng::seed_from_u64(9);
    let r = Region {
        base: 0x7f00_0000_0000,
        junk: 0,
        page: 1,
        first_slot: 3,
        pages: vec![None; 4],
    };
    let mut b = Bench::<D>::new(MemoryPreset::ideal(), 0.0, 9);
    for i in 0..4u64 {
        let bus = 0x2_0000_0000 + i * 0x10_0000;
        b.port.memory.register(bus, 4096, "4 KiB entry").unwrap();
        let vaddr = r.base + i * r.page_size();
        b.write_tlb(r.first_slot + i as u8, Some(bus), 0, vaddr);
    }
    let mut unused = vec![Some(0u8); r.len() as usize];
    // Commands that start in the first 4 KiB of a page (where a 4 KiB entry would hit).
    let mut cmds = commands::<D::Beat>(&r, 40, &mut rng, &mut unused);
    for c in &mut cmds {
        c.offset &= !0xF000;
        c.outcome = Outcome::TlbMiss;
    }
    let got = b.run(&r, &cmds, 0.1, &mut rng);
    assert_eq!(got, vec![Outcome::TlbMiss; 40]);
    assert!(
        b.voided > 0,
        "no first beat went out with a missed translation"
    );
    for i in 0..4u64 {
        let bus = 0x2_0000_0000 + i * 0x10_0000;
        assert!(
            b.port.memory.read(bus, 4096).iter().all(|v| *v == 0),
            "page {i}: written through an entry of the wrong size"
        );
    }
}

/// With no stalls a payload moves at one beat per cycle: cycles per command are the beats it
/// needs plus a fixed overhead.
#[test]
fn back_to_back_commands_stream_at_one_beat_per_cycle() {
    back_to_back::<Writer128>();
    back_to_back::<Writer256>();
}

fn back_to_back<D: Width>() {
    let lanes = D::Beat::VARIANT.beat_bytes() as u32;
    let beats = 1472 / lanes;
    let mut rng = StdRng::seed_from_u64(5);
    let r = Region {
        base: 0x7000_0000_0000,
        junk: 0,
        page: 2,
        first_slot: 0,
        pages: vec![Some(0x4000_0000)],
    };
    let mut b = Bench::<D>::new(MemoryPreset::ideal(), 0.0, 5);
    b.d.inputs.mps_256 = true;
    b.map(&r);
    let mut shadow = vec![Some(0u8); 1 << 21];
    let mut cmds = vec![];
    let mut off = 0u32;
    for _ in 0..50 {
        let payload: Vec<u8> = (0..1472).map(|_| rng.gen()).collect();
        for (k, v) in payload.iter().enumerate() {
            shadow[off as usize + k] = Some(*v);
        }
        cmds.push(Command {
            offset: off,
            len: 1472,
            beats: beats_of(&payload),
            outcome: Outcome::Ok,
        });
        off += 1472 + lanes; // at the first lane: 1472 / lanes beats each
    }
    let start = b.cycles;
    let got = b.run(&r, &cmds, 0.0, &mut rng);
    assert!(got.iter().all(|o| *o == Outcome::Ok));
    // The run ends when the last beat has left the output slice: a cycle after the last
    // outcome, which comes (registered) a cycle after the last beat went into the slice; a
    // command whose first beat ends a 4 KiB block waits a cycle after its translation.
    let first_beat_ends_4k = cmds
        .iter()
        .filter(|c| ((c.offset & !(lanes - 1)) + lanes).is_multiple_of(4096))
        .count() as u64;
    let per_cmd = (b.cycles - start - 2 - first_beat_ends_4k) as f64 / 50.0;
    assert!(
        per_cmd <= beats as f64 + 1.0,
        "{per_cmd} cycles per {beats}-beat command: more than 1 cycle of overhead"
    );
    check_memory(&b, &r, &shadow);
}

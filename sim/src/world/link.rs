//! 10GbE link model at the MAC client interface (Avalon-ST, 64 bits at 156.25 MHz).
//!
//! A frame of `n` bytes (no FCS) occupies `n + 24` bytes of wire time: 4 FCS, 8 preamble/SFD and a
//! 12-byte minimum inter-frame gap. At 8 bytes per cycle that is 10 Gb/s exactly. The model keeps a
//! byte credit per direction so that back-to-back traffic averages exactly line rate, as a real MAC
//! with deficit idle counting does: the RX side presents a new frame only when the wire could have
//! delivered it, and the TX side withholds `ready` after each frame for its gap.

use std::collections::VecDeque;

use crate::engine::pins::{AvalonStIn, AvalonStOut};
use nanet_contract::stream::{empty_for_keep, packet_to_beats, unpack_beat};

/// Wire overhead per frame beyond its MAC-client bytes: FCS + preamble/SFD + minimum IFG.
pub const WIRE_OVERHEAD_BYTES: u64 = 24;
/// Bytes per cycle at 10 Gb/s and 156.25 MHz.
pub const BYTES_PER_CYCLE: u64 = 8;

/// Wire-time accounting at 10 Gb/s: a frame may start once the wire time of the previous ones has
/// passed; an idle wire banks no more than one cycle of credit.
#[derive(Default)]
pub struct Pacer {
    debt: i64,
}

impl Pacer {
    pub fn can_start(&self) -> bool {
        self.debt <= 0
    }
    /// A frame of `len` bytes (no FCS) starts now.
    pub fn start(&mut self, len: usize) {
        self.debt += (len as u64 + WIRE_OVERHEAD_BYTES) as i64;
    }
    /// `bytes` more of wire time are used now.
    pub fn charge(&mut self, bytes: u64) {
        self.debt += bytes as i64;
    }
    /// One clock cycle of wire time passes.
    pub fn tick(&mut self) {
        self.debt = (self.debt - BYTES_PER_CYCLE as i64).max(-(BYTES_PER_CYCLE as i64));
    }
}

/// Splits a frame into MAC client beats.
fn frame_beats(f: &[u8], mac_error: bool) -> Vec<Beat> {
    let beats = packet_to_beats(f);
    let n = beats.len();
    beats
        .into_iter()
        .enumerate()
        .map(|(i, (data, keep, last))| Beat {
            data,
            keep,
            sop: i == 0,
            eop: last,
            error: mac_error && i + 1 == n,
        })
        .collect()
}

/// The MAC RX client inputs of each cycle for `frames` sent back to back at line rate into a port
/// that never stalls (`None`: idle cycle). The same schedule can drive any engine.
pub fn line_rate_schedule(frames: &[Vec<u8>]) -> Vec<Option<Beat>> {
    let mut out = vec![];
    let mut pacer = Pacer::default();
    for f in frames {
        while !pacer.can_start() {
            out.push(None);
            pacer.tick();
        }
        pacer.start(f.len());
        for b in frame_beats(f, false) {
            out.push(Some(b));
            pacer.tick();
        }
    }
    out
}

/// A frame seen on the link, with the cycle its first beat moved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkFrame {
    pub bytes: Vec<u8>,
    pub error: bool,
    pub sop_cycle: u64,
    /// The testbench time (ps) of the edge at which the first beat moved.
    pub sop_ps: u64,
}

/// One beat on the MAC client interface.
#[derive(Copy, Clone, Debug)]
pub struct Beat {
    pub data: u64,
    pub keep: u8,
    pub sop: bool,
    pub eop: bool,
    pub error: bool,
}

impl Beat {
    /// The MAC RX client pins for this beat, or for an idle cycle.
    pub fn pins(beat: Option<&Beat>) -> AvalonStIn {
        match beat {
            Some(b) => AvalonStIn {
                data: b.data,
                valid: true,
                startofpacket: b.sop,
                endofpacket: b.eop,
                empty: empty_for_keep(b.keep) % 8,
                error: b.error,
            },
            None => AvalonStIn::default(),
        }
    }
}

/// Wire-to-card direction: drives the core's MAC RX client port.
#[derive(Default)]
pub struct LinkRx {
    /// Frames to send: bytes, MAC error flag, idle wire bytes after the frame.
    pending: VecDeque<(Vec<u8>, bool, u64)>,
    beats: VecDeque<Beat>,
    pacer: Pacer,
    pub frames_sent: u64,
    pub stall_cycles: u64,
    pub sop_cycles: VecDeque<u64>,
    /// The testbench time (ps) of the edge at which each frame's first beat moved.
    pub sop_ps: VecDeque<u64>,
}

impl LinkRx {
    pub fn push(&mut self, frame: Vec<u8>, mac_error: bool) {
        self.pending.push_back((frame, mac_error, 0));
    }

    /// As [`LinkRx::push`], with `gap` bytes of idle wire time after the frame (beyond the
    /// minimum inter-frame gap), for traffic below line rate.
    pub fn push_with_gap(&mut self, frame: Vec<u8>, mac_error: bool, gap: u64) {
        self.pending.push_back((frame, mac_error, gap));
    }

    pub fn is_idle(&self) -> bool {
        self.pending.is_empty() && self.beats.is_empty()
    }

    /// Drops the SOP times kept so far (a long run that does not look at them).
    pub fn forget_sops(&mut self) {
        self.sop_cycles.clear();
        self.sop_ps.clear();
    }

    /// Frames queued but not fully sent.
    pub fn backlog(&self) -> usize {
        self.pending.len() + usize::from(!self.beats.is_empty())
    }

    /// Sets the port's inputs for this cycle.
    pub fn drive(&mut self, pins: &mut AvalonStIn) {
        if self.beats.is_empty() && self.pacer.can_start() {
            if let Some((f, err, gap)) = self.pending.pop_front() {
                self.pacer.start(f.len());
                self.pacer.charge(gap);
                self.beats.extend(frame_beats(&f, err));
            }
        }
        *pins = Beat::pins(self.beats.front());
    }

    /// After settling, before the edge: moves the beat if the core took it (`ready` as the core
    /// drives it). `cycle` is the current cycle number and `ps` the time of the coming edge (for
    /// SOP timestamps).
    pub fn sample(&mut self, ready: bool, cycle: u64, ps: u64) {
        self.pacer.tick();
        if let Some(b) = self.beats.front() {
            if ready {
                if b.sop {
                    self.sop_cycles.push_back(cycle);
                    self.sop_ps.push_back(ps);
                }
                if b.eop {
                    self.frames_sent += 1;
                }
                self.beats.pop_front();
            } else {
                self.stall_cycles += 1;
            }
        }
    }
}

/// Card-to-wire direction: drains the core's MAC TX client port at line rate.
#[derive(Default)]
pub struct LinkTx {
    partial: Vec<u8>,
    partial_sop: u64,
    partial_sop_ps: u64,
    pacer: Pacer,
    ready: bool,
    pub frames: VecDeque<LinkFrame>,
    pub framing_errors: u64,
    /// Cycles inside a frame in which the MAC was ready and the card offered no beat: a real MAC
    /// ends the frame there (an underflow), so every one is a fault of the card.
    pub underflow_cycles: u64,
    /// One message per frame with an underflow (testbenches fail on them).
    pub faults: Vec<String>,
    gap_in_frame: bool,
    /// The MAC takes no new frame (a link down, or a PAUSE from the far end that never ends):
    /// `ready` stays low between frames; a frame already started is taken to its end.
    pub stalled: bool,
}

impl LinkTx {
    /// Sets the MAC TX client `ready` for this cycle.
    pub fn drive(&mut self, ready: &mut bool) {
        // A MAC takes a frame's beats back to back; the gap is enforced before the next start.
        self.ready = !self.partial.is_empty() || (!self.stalled && self.pacer.can_start());
        *ready = self.ready;
    }

    /// After settling, before the edge (`cycle` and `ps` as for [`LinkRx::sample`]).
    pub fn sample(&mut self, port: &AvalonStOut, cycle: u64, ps: u64) {
        // Charge this cycle's bytes before the cycle's wire time passes, so that the idle-credit
        // limit never eats credit in the middle of a frame.
        self.sample_beat(port, cycle, ps);
        self.pacer.tick();
    }

    fn sample_beat(&mut self, port: &AvalonStOut, cycle: u64, ps: u64) {
        if self.ready && !port.valid && !self.partial.is_empty() {
            self.underflow_cycles += 1;
            if !self.gap_in_frame {
                self.gap_in_frame = true;
                self.faults.push(format!(
                    "transmit underflow: no beat in cycle {cycle} inside the frame started in \
                     cycle {} (a MAC ends the frame there)",
                    self.partial_sop
                ));
            }
        }
        if !(self.ready && port.valid) {
            return;
        }
        let sop = port.startofpacket;
        if sop != self.partial.is_empty() {
            self.framing_errors += 1;
        }
        if sop {
            self.partial.clear();
            self.gap_in_frame = false;
            self.partial_sop = cycle;
            self.partial_sop_ps = ps;
        }
        let eop = port.endofpacket;
        let empty = if eop { port.empty } else { 0 };
        let keep = (0xFF00u16 >> (8 - empty)) as u8;
        let beat = unpack_beat(port.data, keep);
        self.pacer
            .charge(beat.len() as u64 + if eop { WIRE_OVERHEAD_BYTES } else { 0 });
        self.partial.extend(beat);
        if eop {
            let bytes = std::mem::take(&mut self.partial);
            self.frames.push_back(LinkFrame {
                bytes,
                error: port.error,
                sop_cycle: self.partial_sop,
                sop_ps: self.partial_sop_ps,
            });
        }
    }
}

//! Bus-functional models of the packet stream: a source and a sink with random stalls. They drive
//! and read plain pin values ([`StreamIn`], `ready`), so they work on any engine.
//!
//! Per cycle: `drive()` both ends, settle the circuit, `sample()` both ends (the handshake is seen
//! before the edge), then tick the clock.

use std::collections::VecDeque;

use crate::engine::pins::{StreamIn, StreamOut};
use nanet_contract::stream::{packet_to_beats, unpack_beat};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Beat {
    pub data: u64,
    pub keep: u8,
    pub last: bool,
    pub error: bool,
}

/// Feeds packets into a block's stream input; `valid` is withheld at random with probability
/// `stall` (a presented beat is held until accepted, as the protocol requires).
pub struct StreamSourceBfm {
    queue: VecDeque<Beat>,
    presented: Option<Beat>,
    stall: f64,
    rng: StdRng,
    pub beats_sent: u64,
}

impl StreamSourceBfm {
    pub fn new(stall: f64, seed: u64) -> Self {
        Self {
            queue: VecDeque::new(),
            presented: None,
            stall,
            rng: StdRng::seed_from_u64(seed),
            beats_sent: 0,
        }
    }

    /// Whether the source ever withholds a beat it has.
    pub fn stalls(&self) -> bool {
        self.stall > 0.0
    }

    /// Queues a packet; `error` is set on its last beat.
    pub fn push_packet(&mut self, bytes: &[u8], error: bool) {
        for (data, keep, last) in packet_to_beats(bytes) {
            self.queue.push_back(Beat {
                data,
                keep,
                last,
                error: error && last,
            });
        }
    }

    pub fn is_idle(&self) -> bool {
        self.queue.is_empty() && self.presented.is_none()
    }

    pub fn drive(&mut self, pins: &mut StreamIn) {
        if self.presented.is_none() && !self.queue.is_empty() && !self.rng.gen_bool(self.stall) {
            self.presented = self.queue.pop_front();
        }
        let b = self.presented.unwrap_or(Beat {
            data: 0,
            keep: 0,
            last: false,
            error: false,
        });
        *pins = StreamIn {
            data: b.data,
            keep: b.keep,
            last: b.last,
            error: b.error,
            valid: self.presented.is_some(),
        };
    }

    /// Returns true when a beat was accepted in this cycle (`ready` as the design drives it).
    pub fn sample(&mut self, ready: bool) -> bool {
        if self.presented.is_some() && ready {
            self.presented = None;
            self.beats_sent += 1;
            return true;
        }
        false
    }
}

/// A packet collected from a block's stream output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Packet {
    pub bytes: Vec<u8>,
    pub error: bool,
}

/// Drains a block's stream output with `ready` withheld at random with probability `stall`.
pub struct StreamSinkBfm {
    stall: f64,
    rng: StdRng,
    partial: Vec<u8>,
    ready: bool,
    pub packets: VecDeque<Packet>,
    pub beats: u64,
}

impl StreamSinkBfm {
    pub fn new(stall: f64, seed: u64) -> Self {
        Self {
            stall,
            rng: StdRng::seed_from_u64(seed),
            partial: vec![],
            ready: true,
            packets: VecDeque::new(),
            beats: 0,
        }
    }

    pub fn drive(&mut self, ready: &mut bool) {
        self.ready = !self.rng.gen_bool(self.stall);
        *ready = self.ready;
    }

    /// Returns the beat accepted in this cycle, if any (before it is added to the packet).
    pub fn sample(&mut self, port: &StreamOut) -> Option<Beat> {
        if !(self.ready && port.valid) {
            return None;
        }
        let beat = Beat {
            data: port.data,
            keep: port.keep,
            last: port.last,
            error: port.error,
        };
        self.beats += 1;
        self.partial.extend(unpack_beat(beat.data, beat.keep));
        if beat.last {
            self.packets.push_back(Packet {
                bytes: std::mem::take(&mut self.partial),
                error: beat.error,
            });
        }
        Some(beat)
    }

    /// True while a packet is partly received.
    pub fn in_packet(&self) -> bool {
        !self.partial.is_empty()
    }
}

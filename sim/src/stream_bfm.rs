//! Bus-functional models of the packet stream: a source and a sink with random stalls, for any
//! block port of type `StreamSink` (block input) or `StreamSource` (block output).
//!
//! Per cycle: `drive()` both ends, settle the circuit, `sample()` both ends (the handshake is seen
//! before the edge), then tick the clock.

use std::collections::VecDeque;

use nanet_contract::stream::{packet_to_beats, unpack_beat};
use nanet_hdl::stream::{StreamSink, StreamSource};
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

    pub fn drive(&mut self, port: &mut StreamSink) {
        if self.presented.is_none() && !self.queue.is_empty() && !self.rng.gen_bool(self.stall) {
            self.presented = self.queue.pop_front();
        }
        let b = self.presented.unwrap_or(Beat {
            data: 0,
            keep: 0,
            last: false,
            error: false,
        });
        port.valid.next = self.presented.is_some();
        port.data.next = b.data.into();
        port.keep.next = (b.keep as u64).into();
        port.last.next = b.last;
        port.error.next = b.error;
    }

    /// Returns true when a beat was accepted in this cycle.
    pub fn sample(&mut self, port: &StreamSink) -> bool {
        if self.presented.is_some() && port.ready.val() {
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

    pub fn drive(&mut self, port: &mut StreamSource) {
        self.ready = !self.rng.gen_bool(self.stall);
        port.ready.next = self.ready;
    }

    /// Returns the beat accepted in this cycle, if any (before it is added to the packet).
    pub fn sample(&mut self, port: &StreamSource) -> Option<Beat> {
        if !(self.ready && port.valid.val()) {
            return None;
        }
        let beat = Beat {
            data: port.data.val().to_u64(),
            keep: port.keep.val().to_u8(),
            last: port.last.val(),
            error: port.error.val(),
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

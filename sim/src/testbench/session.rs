//! A simulated card port wired to a real peer stack (smoltcp) over the 10G link model, with every
//! frame in both directions captured (for pcap files and for checking with etherparse).

use crate::engine::EngineKind;
use crate::testbench::core::CoreBench;
use crate::traffic::packets::{pad, Endpoint};
use crate::traffic::pcap::CapturedFrame;
use crate::world::peer::SmoltcpPeer;

/// Direction of a captured frame.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Dir {
    CardToPeer,
    PeerToCard,
}

/// Cycles between two polls of the peer stack (about 100 ns).
const POLL_EVERY: u64 = 16;

pub struct PeerSession {
    pub card: CoreBench,
    pub peer: SmoltcpPeer,
    pub capture: Vec<(Dir, CapturedFrame)>,
}

impl PeerSession {
    /// A card port configured as `us` on a /`prefix_len` subnet (gateway `gateway`), and a smoltcp
    /// peer `peer` on the same link with a UDP socket bound to `peer_port`; the card runs on the
    /// engine named by `NANET_ENGINE`.
    pub fn new(
        us: Endpoint,
        peer: Endpoint,
        prefix_len: u8,
        gateway: [u8; 4],
        peer_port: u16,
    ) -> Self {
        let kind = EngineKind::from_env().unwrap_or_else(|e| panic!("{e}"));
        Self::try_with_engine(kind, us, peer, prefix_len, gateway, peer_port)
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// The same on a given engine; the engine's error if it cannot be had.
    pub fn try_with_engine(
        kind: EngineKind,
        us: Endpoint,
        peer: Endpoint,
        prefix_len: u8,
        gateway: [u8; 4],
        peer_port: u16,
    ) -> Result<Self, crate::engine::EngineError> {
        let mut card = CoreBench::try_with_engine(kind, 0.0, 1)?;
        let mask = u32::MAX
            .checked_shl(32 - prefix_len as u32)
            .unwrap_or(0)
            .to_be_bytes();
        card.configure(&us, mask, gateway);
        Ok(Self {
            card,
            peer: SmoltcpPeer::new(peer, prefix_len, peer_port),
            capture: vec![],
        })
    }

    pub fn now_ns(&self) -> u64 {
        self.card.cycle_count() * crate::engine::clocks::NET_CLOCK_PS / 1000
    }

    /// Runs `cycles` cycles, moving frames between the card and the peer.
    pub fn run(&mut self, cycles: u64) {
        for _ in 0..cycles {
            self.card.cycle();
            while let Some(f) = self.card.link_tx.frames.pop_front() {
                let time_ns = f.sop_cycle * crate::engine::clocks::NET_CLOCK_PS / 1000;
                self.capture.push((
                    Dir::CardToPeer,
                    CapturedFrame {
                        time_ns,
                        bytes: f.bytes.clone(),
                    },
                ));
                self.peer.link.to_peer.push_back(f.bytes);
            }
            if self.card.cycle_count().is_multiple_of(POLL_EVERY) {
                let now = self.now_ns();
                self.peer.poll(now);
                while let Some(f) = self.peer.link.from_peer.pop_front() {
                    // The peer's MAC pads short frames, as every Ethernet MAC does on transmit.
                    let f = pad(f);
                    self.capture.push((
                        Dir::PeerToCard,
                        CapturedFrame {
                            time_ns: now,
                            bytes: f.clone(),
                        },
                    ));
                    self.card.link_rx.push(f, false);
                }
            }
        }
    }

    /// Runs until `done` holds or `limit` cycles pass; returns whether it held.
    pub fn run_until(&mut self, limit: u64, mut done: impl FnMut(&mut Self) -> bool) -> bool {
        let mut spent = 0;
        while spent < limit {
            if done(self) {
                return true;
            }
            self.run(POLL_EVERY);
            spent += POLL_EVERY;
        }
        done(self)
    }

    pub fn frames(&self, dir: Dir) -> impl Iterator<Item = &CapturedFrame> {
        self.capture
            .iter()
            .filter(move |(d, _)| *d == dir)
            .map(|(_, f)| f)
    }
}

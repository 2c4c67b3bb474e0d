//! pcap files in and out of the simulation (Ethernet link type, nanosecond timestamps), readable by
//! Wireshark and tshark. Frames are stored without FCS, as on the MAC client interface.

use std::fs::File;
use std::io::{BufReader, BufWriter};
use std::path::Path;
use std::time::Duration;

use pcap_file::pcap::{PcapHeader, PcapPacket, PcapReader, PcapWriter};
use pcap_file::{DataLink, TsResolution};

#[derive(Debug, thiserror::Error)]
pub enum PcapError {
    #[error("cannot open {path}: {source}")]
    Open {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: {source}")]
    Format {
        path: String,
        source: pcap_file::PcapError,
    },
    #[error("{path}: link type {link:?} is not Ethernet; only Ethernet captures can be replayed")]
    LinkType { path: String, link: DataLink },
}

/// A captured frame and its time stamp.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CapturedFrame {
    pub time_ns: u64,
    pub bytes: Vec<u8>,
}

/// Reads every frame of an Ethernet pcap file.
pub fn read_pcap(path: &Path) -> Result<Vec<CapturedFrame>, PcapError> {
    let p = path.display().to_string();
    let file = File::open(path).map_err(|source| PcapError::Open {
        path: p.clone(),
        source,
    })?;
    let mut reader = PcapReader::new(BufReader::new(file)).map_err(|source| PcapError::Format {
        path: p.clone(),
        source,
    })?;
    let link = reader.header().datalink;
    if link != DataLink::ETHERNET {
        return Err(PcapError::LinkType { path: p, link });
    }
    let mut out = vec![];
    while let Some(pkt) = reader.next_packet() {
        let pkt = pkt.map_err(|source| PcapError::Format {
            path: p.clone(),
            source,
        })?;
        out.push(CapturedFrame {
            time_ns: pkt.timestamp.as_nanos() as u64,
            bytes: pkt.data.into_owned(),
        });
    }
    Ok(out)
}

/// Pads every frame shorter than Ethernet's 60-byte minimum (without FCS) with zeros, as the
/// sending host's MAC does on the wire: a capture taken on the sender (Wireshark, tcpdump) holds
/// ARP requests and small datagrams as the stack handed them to the MAC, shorter than any frame a
/// receiver sees. Returns how many were padded. Replay them unpadded only to test runts.
pub fn pad_runts(frames: &mut [CapturedFrame]) -> usize {
    let mut padded = 0;
    for f in frames {
        if f.bytes.len() < nanet_contract::offload::MIN_FRAME_BYTES {
            f.bytes = crate::traffic::packets::pad(std::mem::take(&mut f.bytes));
            padded += 1;
        }
    }
    padded
}

/// Writes frames to an Ethernet pcap file with nanosecond time stamps.
/// Writes `frames` as a capture, time stamps `spacing_ns` apart from 0.
pub fn write_frames(path: &Path, frames: Vec<Vec<u8>>, spacing_ns: u64) -> Result<(), PcapError> {
    let caps: Vec<CapturedFrame> = frames
        .into_iter()
        .enumerate()
        .map(|(i, bytes)| CapturedFrame {
            time_ns: spacing_ns * i as u64,
            bytes,
        })
        .collect();
    write_pcap(path, &caps)
}

pub fn write_pcap(path: &Path, frames: &[CapturedFrame]) -> Result<(), PcapError> {
    let p = path.display().to_string();
    let file = File::create(path).map_err(|source| PcapError::Open {
        path: p.clone(),
        source,
    })?;
    let header = PcapHeader {
        datalink: DataLink::ETHERNET,
        ts_resolution: TsResolution::NanoSecond,
        ..Default::default()
    };
    let mut w = PcapWriter::with_header(BufWriter::new(file), header).map_err(|source| {
        PcapError::Format {
            path: p.clone(),
            source,
        }
    })?;
    for f in frames {
        let pkt = PcapPacket::new(
            Duration::from_nanos(f.time_ns),
            f.bytes.len() as u32,
            &f.bytes,
        );
        w.write_packet(&pkt).map_err(|source| PcapError::Format {
            path: p.clone(),
            source,
        })?;
    }
    Ok(())
}

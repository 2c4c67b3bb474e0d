//! The card's built-in packet generator (one per port): UDP datagrams straight into the port's
//! UDP transmitter, as the NaNet-10 paper's loopback measurement uses. Each payload carries its
//! sequence number and the card's cycle counter when it was sent
//! (`nanet_contract::rx::GEN_PAYLOAD_FIELDS`), so a receiver measures the time of flight.

use nanet_contract::offload::Reg;
use nanet_contract::rx::{port as port_regs, PortReg};

use crate::device::Device;
use crate::error::{Error, Result};

/// Network clock of the generator's gap (156.25 MHz): 6.4 ns, 8 wire bytes per cycle.
const NET_CYCLE_BYTES: f64 = 8.0;
/// Bytes on the wire around a UDP payload: Ethernet, IPv4, UDP headers, FCS, preamble and
/// inter-frame gap.
const WIRE_OVERHEAD: usize = 14 + 20 + 8 + 4 + 8 + 12;

/// What a port's generator sends.
#[derive(Clone, Debug, PartialEq)]
pub struct GenConfig {
    pub dst_ip: [u8; 4],
    pub dst_port: u16,
    pub src_port: u16,
    /// Payload bytes (16 to 1472).
    pub payload_bytes: u32,
    /// Datagrams to send; `None`: until stopped.
    pub count: Option<u32>,
    /// Idle network cycles (6.4 ns) after each datagram.
    pub gap_cycles: u32,
}

impl GenConfig {
    /// `count` datagrams of `payload_bytes` to `dst_ip:dst_port`, back to back.
    pub fn new(dst_ip: [u8; 4], dst_port: u16, payload_bytes: u32) -> Self {
        Self {
            dst_ip,
            dst_port,
            src_port: 4000,
            payload_bytes,
            count: None,
            gap_cycles: 0,
        }
    }

    pub fn count(mut self, n: u32) -> Self {
        self.count = Some(n);
        self
    }

    /// The gap that makes the datagrams' wire rate about `gbps` (at most 10, line rate).
    pub fn rate_gbps(mut self, gbps: f64) -> Self {
        let wire = (self.payload_bytes as usize).max(18) + WIRE_OVERHEAD;
        let at_line = wire as f64 / NET_CYCLE_BYTES;
        let wanted = at_line * 10.0 / gbps.clamp(1e-3, 10.0);
        self.gap_cycles = (wanted - at_line).round().max(0.0) as u32;
        self
    }

    fn validate(&self) -> Result<()> {
        let (min, max) = (port_regs::GEN_MIN_PAYLOAD, port_regs::GEN_MAX_PAYLOAD);
        if !(min..=max).contains(&self.payload_bytes) {
            return Err(Error::InvalidGenerator(format!(
                "payload of {} bytes: the generator sends {min} to {max}",
                self.payload_bytes
            )));
        }
        if self.count == Some(0) {
            return Err(Error::InvalidGenerator(
                "a count of 0 datagrams (use None to send until stopped)".into(),
            ));
        }
        Ok(())
    }
}

/// What a port's generator is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GenStatus {
    pub running: bool,
    /// Datagrams sent since the last start.
    pub sent: u32,
}

impl Device {
    /// Starts port `port`'s generator (restarting it if it runs: sequence numbers from 0).
    pub fn start_generator(&self, port: u8, c: &GenConfig) -> Result<()> {
        c.validate()?;
        // A second start on the same port between these writes would start with a mix of both.
        let _command = self.command();
        if self.generator_status(port)?.running {
            self.stop_port_generator(port)?;
        }
        let w = |r: PortReg, v: u32| self.write_port(port, r.word(), v);
        w(PortReg::GenDstIp, u32::from_be_bytes(c.dst_ip))?;
        w(
            PortReg::GenPorts,
            (c.src_port as u32) << 16 | c.dst_port as u32,
        )?;
        w(PortReg::GenLen, c.payload_bytes)?;
        w(PortReg::GenCount, c.count.unwrap_or(0))?;
        w(PortReg::GenGap, c.gap_cycles)?;
        self.write_port_flushed(port, PortReg::GenControl.word(), port_regs::GEN_START)
    }

    /// Stops port `port`'s generator after the datagram in progress, and waits until it has.
    pub fn stop_generator(&self, port: u8) -> Result<()> {
        let _command = self.command();
        self.stop_port_generator(port)
    }

    /// [`Device::stop_generator`] under the command lock the caller holds.
    fn stop_port_generator(&self, port: u8) -> Result<()> {
        self.write_port(port, PortReg::GenControl.word(), port_regs::GEN_STOP)?;
        // The generator ends the datagram it is sending, which may wait for ARP as long as the
        // port's retries allow (its registers say how long), then stops.
        let interval = self.read_port(port, Reg::ArpRetryInterval.word())? as u64;
        let retries = self.read_port(port, Reg::ArpRetries.word())? as u64;
        let arp_us = (retries + 1) * interval / (nanet_contract::card::NET_HZ / 1_000_000);
        self.wait_card_until(
            &format!("stopping the generator of port {port}"),
            arp_us + 1_000,
            || Ok(!self.generator_status(port)?.running),
        )
    }

    pub fn generator_status(&self, port: u8) -> Result<GenStatus> {
        let control = self.read_port(port, PortReg::GenControl.word())?;
        Ok(GenStatus {
            running: control & port_regs::GEN_RUNNING != 0,
            sent: self.read_port(port, PortReg::GenSent.word())?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_become_gaps_and_bad_sizes_are_refused() {
        let c = GenConfig::new([10, 0, 0, 11], 5000, 1472);
        assert_eq!(c.clone().rate_gbps(10.0).gap_cycles, 0);
        // Half the line rate: the gap equals the frame's own wire time.
        let half = c.clone().rate_gbps(5.0);
        assert_eq!(
            half.gap_cycles,
            ((1472 + WIRE_OVERHEAD) as f64 / 8.0).round() as u32
        );
        assert!(GenConfig::new([0; 4], 1, 15).validate().is_err());
        assert!(GenConfig::new([0; 4], 1, 1473).validate().is_err());
        assert!(c.clone().count(0).validate().is_err());
        assert!(c.count(3).validate().is_ok());
    }
}

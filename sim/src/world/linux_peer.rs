//! The Linux kernel as a peer: a simulated port's link attached to a TAP device in a network
//! namespace created for it, so `ping`, `arping` and ordinary UDP sockets in that namespace talk to
//! the simulated card through the kernel's own ARP, IPv4 and UDP code. A second independent stack
//! beside smoltcp ([`super::peer`]).
//!
//! The namespace keeps the card off the machine's own interfaces: nothing outside it sees the
//! card, and the card sees only what is sent inside it. Creating it needs CAP_NET_ADMIN and
//! CAP_SYS_ADMIN (root); [`available`] says why not when they are missing. The namespace and its
//! device are deleted when the [`LinuxPeer`] is dropped.
//!
//! Frames cross as they are on the MAC client interface: without FCS. The kernel hands the TAP
//! frames as its stack built them, ARP requests of 42 bytes among them; like the sending MAC on a
//! real wire, [`LinuxPeer::recv`] pads them to Ethernet's 60-byte minimum.

use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::Path;
use std::process::Command;

use crate::traffic::packets::{pad, Endpoint};

/// Largest frame read from the TAP device (a 9000-byte jumbo frame fits).
const MAX_FRAME: usize = 9216;
/// Capability bits of `/proc/self/status` (`linux/capability.h`).
const CAP_NET_ADMIN: u32 = 12;
const CAP_SYS_ADMIN: u32 = 21;

#[derive(Debug, thiserror::Error)]
pub enum LinuxPeerError {
    #[error(
        "the Linux peer cannot be set up here: {0} (it creates a network namespace and a TAP \
         device: run as root, or with CAP_NET_ADMIN and CAP_SYS_ADMIN)"
    )]
    Unavailable(String),
    #[error(
        "network namespace {0:?} already exists (another simulated card uses it, or one was left \
         behind: `ip netns del {0}`)"
    )]
    NamespaceExists(String),
    #[error("{0:?} is not a usable name: {1}")]
    BadName(String, &'static str),
    #[error("setting up the Linux peer: {0}")]
    Setup(String),
}

/// Whether this process may create the Linux peer; the reason if not.
pub fn available() -> Result<(), LinuxPeerError> {
    let status = std::fs::read_to_string("/proc/self/status")
        .map_err(|e| LinuxPeerError::Unavailable(format!("/proc/self/status: {e}")))?;
    let caps = status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
        .unwrap_or(0);
    for (bit, name) in [
        (CAP_NET_ADMIN, "CAP_NET_ADMIN"),
        (CAP_SYS_ADMIN, "CAP_SYS_ADMIN"),
    ] {
        if caps & (1 << bit) == 0 {
            return Err(LinuxPeerError::Unavailable(format!(
                "this process lacks {name}"
            )));
        }
    }
    if !Path::new("/dev/net/tun").exists() {
        return Err(LinuxPeerError::Unavailable(
            "/dev/net/tun is missing (no TUN/TAP driver)".into(),
        ));
    }
    match Command::new("ip").arg("-V").output() {
        Ok(o) if o.status.success() => Ok(()),
        _ => Err(LinuxPeerError::Unavailable(
            "`ip` (iproute2) is not installed: apt-get install iproute2".into(),
        )),
    }
}

/// Where the Linux side sits.
#[derive(Clone, Debug)]
pub struct LinuxPeerConfig {
    /// The network namespace to create (it must not exist yet).
    pub namespace: String,
    /// The TAP device's name inside the namespace (at most 15 characters).
    pub device: String,
    /// The Linux side's MAC and IPv4 address.
    pub me: Endpoint,
    /// Its subnet's prefix length (the card's port must be on that subnet).
    pub prefix_len: u8,
}

/// The Linux side of one simulated link: frames the kernel sends come out of [`recv`](Self::recv),
/// frames the card sends go in with [`send`](Self::send).
pub struct LinuxPeer {
    config: LinuxPeerConfig,
    tap: Option<OwnedFd>,
    /// Frames read from the kernel, those shorter than 60 bytes among them, and frames written.
    pub frames_from_linux: u64,
    pub padded_frames: u64,
    pub frames_to_linux: u64,
}

impl LinuxPeer {
    /// Creates the namespace, the TAP device in it with the peer's addresses, and brings it up.
    pub fn create(config: &LinuxPeerConfig) -> Result<Self, LinuxPeerError> {
        let ns = &config.namespace;
        check_name(ns, 64)?;
        check_name(&config.device, 15)?;
        available()?;
        if netns_path(ns).exists() {
            return Err(LinuxPeerError::NamespaceExists(ns.clone()));
        }
        ip(&["netns", "add", ns])?;
        // From here on, dropping `peer` deletes the namespace again, also on the errors below.
        let mut peer = Self {
            config: config.clone(),
            tap: None,
            frames_from_linux: 0,
            padded_frames: 0,
            frames_to_linux: 0,
        };
        // No IPv6 in the namespace: the card does not speak it, and the kernel's router and
        // neighbour solicitations would only show up among the card's drop counters. Where the
        // kernel has no IPv6 at all there is nothing to switch off.
        in_namespace(ns, || {
            let _ = std::fs::write("/proc/sys/net/ipv6/conf/default/disable_ipv6", "1");
            let _ = std::fs::write("/proc/sys/net/ipv6/conf/all/disable_ipv6", "1");
        })
        .map_err(|e| LinuxPeerError::Setup(format!("entering namespace {ns}: {e}")))?;
        let tap = in_namespace(ns, || open_tap(&config.device))
            .and_then(|r| r)
            .map_err(|e| {
                LinuxPeerError::Setup(format!("TAP device {} in {ns}: {e}", config.device))
            })?;
        peer.tap = Some(tap);
        let dev = config.device.as_str();
        let mac = mac_text(&config.me.mac);
        let addr = format!(
            "{}/{}",
            std::net::Ipv4Addr::from(config.me.ip),
            config.prefix_len
        );
        ip(&["-n", ns, "link", "set", "dev", dev, "address", &mac])?;
        ip(&["-n", ns, "addr", "add", &addr, "dev", dev])?;
        ip(&["-n", ns, "link", "set", "dev", dev, "up"])?;
        ip(&["-n", ns, "link", "set", "dev", "lo", "up"])?;
        Ok(peer)
    }

    pub fn config(&self) -> &LinuxPeerConfig {
        &self.config
    }

    /// The next frame the kernel sent, padded to 60 bytes as a MAC pads it; None when there is
    /// none now (never blocks).
    pub fn recv(&mut self) -> io::Result<Option<Vec<u8>>> {
        let fd = self.fd();
        let mut buf = vec![0u8; MAX_FRAME];
        // SAFETY: reading into our own buffer of MAX_FRAME bytes from our own fd.
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
        if n < 0 {
            let e = io::Error::last_os_error();
            return match e.kind() {
                io::ErrorKind::WouldBlock => Ok(None),
                _ => Err(e),
            };
        }
        buf.truncate(n as usize);
        self.frames_from_linux += 1;
        if buf.len() < nanet_contract::offload::MIN_FRAME_BYTES {
            self.padded_frames += 1;
            buf = pad(buf);
        }
        Ok(Some(buf))
    }

    /// Hands the kernel a frame the card sent.
    pub fn send(&mut self, frame: &[u8]) -> io::Result<()> {
        // SAFETY: writing our own buffer to our own fd.
        let n = unsafe { libc::write(self.fd(), frame.as_ptr().cast(), frame.len()) };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        self.frames_to_linux += 1;
        Ok(())
    }

    /// Runs `f` in a thread inside the namespace: a socket it opens belongs to the namespace and
    /// stays there when used from any other thread afterwards.
    pub fn run_inside<T: Send>(&self, f: impl FnOnce() -> T + Send) -> io::Result<T> {
        in_namespace(&self.config.namespace, f)
    }

    fn fd(&self) -> i32 {
        self.tap
            .as_ref()
            .expect("the TAP device is open")
            .as_raw_fd()
    }
}

impl Drop for LinuxPeer {
    fn drop(&mut self) {
        // Closing the TAP deletes its device; deleting the namespace then removes the rest.
        self.tap = None;
        if let Err(e) = ip(&["netns", "del", &self.config.namespace]) {
            eprintln!("nanet: {e}");
        }
    }
}

/// Runs `f` in a new thread that joined network namespace `ns` (only that thread moves).
pub fn in_namespace<T: Send>(ns: &str, f: impl FnOnce() -> T + Send) -> io::Result<T> {
    let ns_file = File::open(netns_path(ns))?;
    std::thread::scope(|s| {
        s.spawn(|| {
            // SAFETY: setns on a namespace fd we hold open; it affects this thread only.
            if unsafe { libc::setns(ns_file.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(f())
        })
        .join()
        .unwrap_or_else(|p| std::panic::resume_unwind(p))
    })
}

fn netns_path(ns: &str) -> std::path::PathBuf {
    Path::new("/run/netns").join(ns)
}

/// Names go to `ip` and into paths: letters, digits, `-`, `_`, `.` only.
fn check_name(name: &str, max: usize) -> Result<(), LinuxPeerError> {
    let ok_chars = name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
    if name.is_empty() || name.len() > max {
        return Err(LinuxPeerError::BadName(name.into(), "too long or empty"));
    }
    if !ok_chars || name.starts_with('.') {
        return Err(LinuxPeerError::BadName(
            name.into(),
            "letters, digits, '-', '_' and '.' only, not starting with '.'",
        ));
    }
    Ok(())
}

fn mac_text(mac: &[u8; 6]) -> String {
    mac.iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// Runs `ip ARGS`; its own message when it fails.
fn ip(args: &[&str]) -> Result<(), LinuxPeerError> {
    let out = Command::new("ip")
        .args(args)
        .output()
        .map_err(|e| LinuxPeerError::Unavailable(format!("cannot run `ip`: {e}")))?;
    if out.status.success() {
        return Ok(());
    }
    let why = String::from_utf8_lossy(&out.stderr).trim().to_string();
    let cmd = format!("ip {}", args.join(" "));
    if why.contains("Operation not permitted") || why.contains("Permission denied") {
        return Err(LinuxPeerError::Unavailable(format!("`{cmd}`: {why}")));
    }
    Err(LinuxPeerError::Setup(format!("`{cmd}`: {why}")))
}

/// Opens a TAP device named `name` (Ethernet frames, no packet information header), non-blocking,
/// in the calling thread's network namespace.
fn open_tap(name: &str) -> io::Result<OwnedFd> {
    #[repr(C)]
    struct IfReq {
        name: [u8; libc::IFNAMSIZ],
        flags: libc::c_short,
        _union_rest: [u8; 22],
    }
    // SAFETY: plain open of a device node; the fd is owned right below.
    let fd = unsafe {
        libc::open(
            c"/dev/net/tun".as_ptr(),
            libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh fd nobody else owns.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let mut req = IfReq {
        name: [0; libc::IFNAMSIZ],
        flags: (libc::IFF_TAP | libc::IFF_NO_PI) as libc::c_short,
        _union_rest: [0; 22],
    };
    req.name[..name.len()].copy_from_slice(name.as_bytes());
    // SAFETY: TUNSETIFF reads and writes a struct ifreq, which IfReq lays out (40 bytes).
    if unsafe { libc::ioctl(fd.as_raw_fd(), libc::TUNSETIFF as _, &mut req) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(fd)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_would_reach_ip_or_a_path_unchecked_are_refused() {
        for bad in ["", "../etc", ".hidden", "a b", "x;rm", &"n".repeat(65)] {
            assert!(
                matches!(check_name(bad, 64), Err(LinuxPeerError::BadName(..))),
                "{bad:?}"
            );
        }
        assert!(check_name("nanet-test_1.0", 64).is_ok());
        assert!(check_name("sixteen-chars-xx", 15).is_err());
    }

    #[test]
    fn macs_are_written_as_ip_takes_them() {
        assert_eq!(mac_text(&[2, 0, 0, 0, 0, 0x99]), "02:00:00:00:00:99");
    }
}

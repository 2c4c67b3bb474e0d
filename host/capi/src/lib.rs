//! The C API of the host library: `host/include/nanet.h` declares these functions. Every failure
//! stores its message for `nanet_last_error`.
//!
//! Handles are numbers, never addresses: `nanet_device *` and `nanet_clop *` are opaque tokens
//! looked up in a table on every call, and a number is never given out twice. So a handle used
//! after `nanet_close` / `nanet_deregister` (or closed twice, or made up) is an error that says
//! so, never a use of freed memory; NULL is an error too.

#![allow(clippy::missing_safety_doc)]

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::ffi::{c_char, c_int, CStr, CString};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use nanet::{Clop, ClopConfig, Device, Event, FullPolicy, Layout, PortConfig};

/// What a `nanet_device *` names (never dereferenced: see [`Handles`]).
pub struct NanetDevice(());
/// What a `nanet_clop *` names.
pub struct NanetClop(());

/// The open devices and registered CLOPs, by handle number. Numbers start at 1 and count up
/// (shifted, so the tokens look like aligned pointers); none is reused.
struct Handles {
    next: usize,
    devices: BTreeMap<usize, Device>,
    clops: BTreeMap<usize, Arc<Clop>>,
}

static HANDLES: Mutex<Handles> = Mutex::new(Handles {
    next: 1,
    devices: BTreeMap::new(),
    clops: BTreeMap::new(),
});

fn handles() -> std::sync::MutexGuard<'static, Handles> {
    HANDLES.lock().unwrap_or_else(|e| e.into_inner())
}

impl Handles {
    fn token(&mut self) -> usize {
        let t = self.next << 4;
        self.next += 1;
        t
    }
}

/// The device behind `dev` (a clone: calls never hold the table while they wait on the card).
fn device(dev: *const NanetDevice) -> Result<Device, String> {
    if dev.is_null() {
        return Err("device is NULL".into());
    }
    handles()
        .devices
        .get(&(dev as usize))
        .cloned()
        .ok_or_else(|| "device handle is not open (closed already, or never opened)".into())
}

/// The CLOP behind `clop`.
fn clop(clop: *const NanetClop) -> Result<Arc<Clop>, String> {
    if clop.is_null() {
        return Err("CLOP is NULL".into());
    }
    handles()
        .clops
        .get(&(clop as usize))
        .cloned()
        .ok_or_else(|| "CLOP handle is not registered (deregistered already, or never)".into())
}

#[repr(C)]
pub struct NanetPortConfig {
    pub mac: [u8; 6],
    pub ip: [u8; 4],
    pub netmask: [u8; 4],
    pub gateway: [u8; 4],
}

#[repr(C)]
pub struct NanetClopConfig {
    pub port: u8,
    pub udp_port: u16,
    pub buffers: u32,
    pub buffer_bytes: u32,
    pub layout: u8,
    pub flush_timeout_us: u32,
    pub skip_held: u8,
}

#[repr(C)]
#[derive(Default)]
pub struct NanetEvent {
    pub kind: u8,
    pub clop: u8,
    pub buffer: u16,
    pub bytes: u32,
    pub packets: u16,
    pub first_seq: u16,
    pub last_seq: u16,
    pub sop_at_mac: u32,
    pub header_parsed: u32,
    pub first_dma_beat: u32,
    pub last_dma_beat: u32,
}

impl From<&Event> for NanetEvent {
    fn from(e: &Event) -> Self {
        Self {
            kind: e.kind as u8,
            clop: e.clop,
            buffer: e.buffer,
            bytes: e.bytes,
            packets: e.packets,
            first_seq: e.first_seq,
            last_seq: e.last_seq,
            sop_at_mac: e.times.sop_at_mac,
            header_parsed: e.times.header_parsed,
            first_dma_beat: e.times.first_dma_beat,
            last_dma_beat: e.times.last_dma_beat,
        }
    }
}

impl NanetEvent {
    fn to_event(&self) -> Option<Event> {
        Some(Event {
            phase: true,
            kind: nanet::EventKind::from_code(self.kind)?,
            clop: self.clop,
            buffer: self.buffer,
            bytes: self.bytes,
            packets: self.packets,
            first_seq: self.first_seq,
            last_seq: self.last_seq,
            times: nanet::StageTimes {
                sop_at_mac: self.sop_at_mac,
                header_parsed: self.header_parsed,
                first_dma_beat: self.first_dma_beat,
                last_dma_beat: self.last_dma_beat,
            },
        })
    }
}

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

fn fail(message: impl std::fmt::Display) {
    let m = CString::new(message.to_string().replace('\0', " ")).unwrap_or_default();
    LAST_ERROR.with(|e| *e.borrow_mut() = m);
}

/// Runs `f`; on failure records the message and returns `on_error`.
fn guard<T>(on_error: T, f: impl FnOnce() -> Result<T, String>) -> T {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(Ok(v)) => v,
        Ok(Err(m)) => {
            fail(m);
            on_error
        }
        Err(_) => {
            fail("internal error (panic) in nanet");
            on_error
        }
    }
}

unsafe fn non_null<'a, T>(p: *const T, what: &str) -> Result<&'a T, String> {
    p.as_ref().ok_or_else(|| format!("{what} is NULL"))
}

#[no_mangle]
pub extern "C" fn nanet_last_error() -> *const c_char {
    LAST_ERROR.with(|e| e.borrow().as_ptr())
}

#[no_mangle]
pub unsafe extern "C" fn nanet_open(name: *const c_char) -> *mut NanetDevice {
    guard(std::ptr::null_mut(), || {
        if name.is_null() {
            return Err("device name is NULL".into());
        }
        let name = CStr::from_ptr(name).to_str().map_err(|e| e.to_string())?;
        let d = Device::open(name).map_err(|e| e.to_string())?;
        let mut h = handles();
        let t = h.token();
        h.devices.insert(t, d);
        Ok(t as *mut NanetDevice)
    })
}

/// Closes the device (NULL does nothing). Its CLOPs stay usable until deregistered; closing a
/// handle that is not open is recorded as an error (`nanet_last_error`) and changes nothing.
#[no_mangle]
pub unsafe extern "C" fn nanet_close(dev: *mut NanetDevice) {
    if dev.is_null() {
        return;
    }
    let closed = handles().devices.remove(&(dev as usize));
    match closed {
        Some(d) => drop(d),
        None => fail("nanet_close: device handle is not open (closed already, or never opened)"),
    }
}

#[no_mangle]
pub unsafe extern "C" fn nanet_port_configure(
    dev: *mut NanetDevice,
    port: u8,
    config: *const NanetPortConfig,
) -> c_int {
    guard(-1, || {
        let d = device(dev)?;
        let c = non_null(config, "config")?;
        let pc = PortConfig {
            mac: c.mac,
            ip: c.ip,
            netmask: c.netmask,
            gateway: c.gateway,
        };
        d.configure_port(port, &pc).map_err(|e| e.to_string())?;
        Ok(0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn nanet_register(
    dev: *mut NanetDevice,
    config: *const NanetClopConfig,
) -> *mut NanetClop {
    guard(std::ptr::null_mut(), || {
        let d = device(dev)?;
        let c = non_null(config, "config")?;
        let layout = match c.layout {
            0 => Layout::Raw,
            1 => Layout::Header,
            l => {
                return Err(format!(
                    "layout {l}: NANET_LAYOUT_RAW or NANET_LAYOUT_HEADER"
                ))
            }
        };
        let cfg = ClopConfig::new(c.port, c.udp_port)
            .buffers(c.buffers, c.buffer_bytes)
            .layout(layout)
            .flush_timeout(
                (c.flush_timeout_us > 0).then(|| Duration::from_micros(c.flush_timeout_us as u64)),
            )
            .when_full(if c.skip_held != 0 {
                FullPolicy::SkipHeld
            } else {
                FullPolicy::Drop
            });
        let c = d.register(&cfg).map_err(|e| e.to_string())?;
        let mut h = handles();
        let t = h.token();
        h.clops.insert(t, Arc::new(c));
        Ok(t as *mut NanetClop)
    })
}

#[no_mangle]
pub unsafe extern "C" fn nanet_deregister(clop: *mut NanetClop) -> c_int {
    guard(-1, || {
        if clop.is_null() {
            return Err("CLOP is NULL".into());
        }
        let taken = handles().clops.remove(&(clop as usize));
        let c = taken.ok_or("CLOP handle is not registered (deregistered already, or never)")?;
        match Arc::try_unwrap(c) {
            Ok(c) => c.deregister().map_err(|e| e.to_string())?,
            Err(c) => {
                handles().clops.insert(clop as usize, c);
                return Err("the CLOP is in use by another thread's call".into());
            }
        }
        Ok(0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn nanet_clop_id(clop: *const NanetClop) -> c_int {
    guard(-1, || Ok(self::clop(clop)?.id() as c_int))
}

fn deliver(r: nanet::Result<Option<Event>>, out: *mut NanetEvent) -> Result<c_int, String> {
    match r.map_err(|e| e.to_string())? {
        None => Ok(0),
        Some(e) => {
            if !out.is_null() {
                // SAFETY: the caller passes a valid event to fill.
                unsafe { *out = NanetEvent::from(&e) };
            }
            Ok(1)
        }
    }
}

#[no_mangle]
pub unsafe extern "C" fn nanet_wait(
    dev: *mut NanetDevice,
    timeout_ms: u32,
    event: *mut NanetEvent,
) -> c_int {
    guard(-1, || {
        let d = device(dev)?;
        deliver(d.wait(Duration::from_millis(timeout_ms as u64)), event)
    })
}

#[no_mangle]
pub unsafe extern "C" fn nanet_clop_wait(
    clop: *mut NanetClop,
    timeout_ms: u32,
    event: *mut NanetEvent,
) -> c_int {
    guard(-1, || {
        let c = self::clop(clop)?;
        deliver(c.wait(Duration::from_millis(timeout_ms as u64)), event)
    })
}

#[no_mangle]
pub unsafe extern "C" fn nanet_buffer(
    clop: *mut NanetClop,
    event: *const NanetEvent,
    len: *mut usize,
) -> *const u8 {
    guard(std::ptr::null(), || {
        let c = self::clop(clop)?;
        let e = non_null(event, "event")?
            .to_event()
            .ok_or("the event's kind is unknown")?;
        let (p, n) = c.take_raw(&e).map_err(|e| e.to_string())?;
        if !len.is_null() {
            *len = n;
        }
        Ok(p)
    })
}

#[no_mangle]
pub unsafe extern "C" fn nanet_release(clop: *mut NanetClop, buffer: u16) -> c_int {
    guard(-1, || {
        let c = self::clop(clop)?;
        c.release(buffer).map_err(|e| e.to_string())?;
        Ok(0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn nanet_flush_writes(dev: *mut NanetDevice) -> c_int {
    guard(-1, || {
        device(dev)?.flush_writes().map_err(|e| e.to_string())?;
        Ok(0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn nanet_counter(
    dev: *mut NanetDevice,
    port: c_int,
    name: *const c_char,
    value: *mut u32,
) -> c_int {
    guard(-1, || {
        let d = device(dev)?;
        if name.is_null() || value.is_null() {
            return Err("name or value is NULL".into());
        }
        let name = CStr::from_ptr(name).to_str().map_err(|e| e.to_string())?;
        let list = if port == -2 {
            d.tx_counters()
        } else if port < 0 {
            d.rx_counters()
        } else {
            d.port_counters(port as u8)
        }
        .map_err(|e| e.to_string())?;
        let v = list
            .iter()
            .find(|(n, _)| *n == name)
            .ok_or_else(|| format!("no counter {name:?} (see docs/regmap.md)"))?;
        *value = v.1;
        Ok(0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn nanet_send(
    dev: *mut NanetDevice,
    port: u8,
    dst_ip: *const u8,
    dst_port: u16,
    src_port: u16,
    payload: *const u8,
    len: usize,
) -> c_int {
    guard(-1, || {
        let d = device(dev)?;
        let ip = std::slice::from_raw_parts(non_null(dst_ip, "dst_ip")?, 4);
        let data = if len == 0 {
            &[][..]
        } else {
            std::slice::from_raw_parts(non_null(payload, "payload")?, len)
        };
        let to = nanet::SendTo {
            dst_ip: [ip[0], ip[1], ip[2], ip[3]],
            dst_port,
            src_port,
        };
        d.send(port, to, data).map_err(|e| e.to_string())?;
        Ok(0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn nanet_event_fd(dev: *mut NanetDevice) -> c_int {
    guard(-1, || Ok(device(dev)?.event_fd()))
}

#[no_mangle]
pub unsafe extern "C" fn nanet_sim_send_udp(
    dev: *mut NanetDevice,
    port: u8,
    udp_port: u16,
    payload: *const u8,
    len: usize,
) -> c_int {
    guard(-1, || {
        let d = device(dev)?;
        let sim = d.sim().ok_or("not the simulated card")?;
        let data = if len == 0 {
            &[][..]
        } else {
            std::slice::from_raw_parts(non_null(payload, "payload")?, len)
        };
        let c = d.port_config(port).map_err(|e| e.to_string())?;
        let to = nanet::backend::sim::Endpoint::new(c.mac, c.ip);
        sim.send_udp(port, &to, udp_port, data)
            .map_err(|e| e.to_string())?;
        Ok(0)
    })
}

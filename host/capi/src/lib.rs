//! The C API of the host library: `host/include/nanet.h` declares these functions. Every failure
//! returns a negative `nanet_status` (or NULL) and stores its status and message for
//! `nanet_last_status` / `nanet_last_error`.
//!
//! Handles are numbers, never addresses: `nanet_device *`, `nanet_clop *` and `nanet_gpu *` are
//! opaque tokens
//! looked up in a table on every call, and a number is never given out twice. So a handle used
//! after `nanet_close` / `nanet_deregister` (or closed twice, or made up) is an error that says
//! so, never a use of freed memory; NULL is an error too.

#![allow(clippy::missing_safety_doc)]

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::ffi::{c_char, c_int, CStr, CString};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use nanet::gpu::{GpuBuffer, GpuDriver, GpuMemory};
use nanet::{Clop, ClopConfig, Device, Event, FullPolicy, Layout, PortConfig};
use nanet_contract::tx::TX_MAX_PAYLOAD;

/// What a `nanet_device *` names (never dereferenced: see `Handles`).
pub struct NanetDevice(());
/// What a `nanet_clop *` names.
pub struct NanetClop(());
/// What a `nanet_gpu *` names.
pub struct NanetGpu(());

/// An open GPU: its memory provider and the allocations the program
/// holds by device address (each freed by `nanet_gpu_free`, or kept by a CLOP in it until the
/// CLOP is deregistered).
#[derive(Clone)]
struct Gpu {
    memory: Arc<GpuMemory>,
    buffers: Arc<Mutex<BTreeMap<u64, GpuBuffer>>>,
}

/// The open devices, registered CLOPs and open GPUs, by handle number. Numbers start at 1 and
/// count up (shifted, so the tokens look like aligned pointers); none is reused.
struct Handles {
    next: usize,
    devices: BTreeMap<usize, Device>,
    clops: BTreeMap<usize, Arc<Clop>>,
    gpus: BTreeMap<usize, Gpu>,
}

static HANDLES: Mutex<Handles> = Mutex::new(Handles {
    next: 1,
    devices: BTreeMap::new(),
    clops: BTreeMap::new(),
    gpus: BTreeMap::new(),
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

/// The entry behind a handle `what` names, from `table` (a clone: calls never hold the table
/// while they wait on the card).
fn lookup<T: Clone>(
    handle: usize,
    table: fn(&Handles) -> &BTreeMap<usize, T>,
    what: &str,
    not_open: &str,
) -> Result<T, Failure> {
    if handle == 0 {
        return Err(argument(format!("{what} is NULL")));
    }
    table(&handles())
        .get(&handle)
        .cloned()
        .ok_or_else(|| Failure(NanetStatus::Handle, format!("{what} handle is {not_open}")))
}

const NOT_OPEN: &str = "not open (closed already, or never opened)";

fn device(dev: *const NanetDevice) -> Result<Device, Failure> {
    lookup(dev as usize, |h| &h.devices, "device", NOT_OPEN)
}

fn clop(clop: *const NanetClop) -> Result<Arc<Clop>, Failure> {
    lookup(clop as usize, |h| &h.clops, "CLOP", NOT_REGISTERED)
}

fn gpu(gpu: *const NanetGpu) -> Result<Gpu, Failure> {
    lookup(gpu as usize, |h| &h.gpus, "GPU", NOT_OPEN)
}

const NOT_REGISTERED: &str = "not registered (deregistered already, or never)";

fn not_registered() -> Failure {
    Failure(
        NanetStatus::Handle,
        format!("CLOP handle is {NOT_REGISTERED}"),
    )
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
pub struct NanetDatagram {
    pub port: u8,
    pub dst_ip: [u8; 4],
    pub dst_port: u16,
    pub src_port: u16,
    pub payload: *const u8,
    pub len: usize,
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

/// `nanet_status` of `nanet.h`: what kind of failure, so a C program can branch on it; the message
/// beside it says what exactly.
#[repr(i32)]
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum NanetStatus {
    Ok = 0,
    /// A NULL pointer or an argument out of range.
    Argument = -1,
    /// A device handle not open, or a CLOP handle not registered.
    Handle = -2,
    /// An invalid configuration (CLOP, port, generator, send, simulator option).
    Config = -3,
    /// Something is taken or in use: UDP port, stream entry, TLB entries, a CLOP another call is
    /// using, buffers still lent.
    InUse = -4,
    /// The buffer or event is not the application's to take or give back.
    NotHeld = -5,
    /// The card refused, did not finish, stopped, or wrote a record that makes no sense.
    Card = -6,
    /// The system: VFIO, memory, I/O.
    System = -7,
    /// Not in this build or on this device (no simulated card, not the simulated card).
    Unsupported = -8,
    /// A bug in nanet (a panic was caught).
    Internal = -9,
}

impl NanetStatus {
    pub const ALL: [NanetStatus; 10] = [
        NanetStatus::Ok,
        NanetStatus::Argument,
        NanetStatus::Handle,
        NanetStatus::Config,
        NanetStatus::InUse,
        NanetStatus::NotHeld,
        NanetStatus::Card,
        NanetStatus::System,
        NanetStatus::Unsupported,
        NanetStatus::Internal,
    ];

    /// The enumerator's name in `nanet.h`.
    pub const fn name(self) -> &'static CStr {
        match self {
            NanetStatus::Ok => c"NANET_OK",
            NanetStatus::Argument => c"NANET_E_ARGUMENT",
            NanetStatus::Handle => c"NANET_E_HANDLE",
            NanetStatus::Config => c"NANET_E_CONFIG",
            NanetStatus::InUse => c"NANET_E_IN_USE",
            NanetStatus::NotHeld => c"NANET_E_NOT_HELD",
            NanetStatus::Card => c"NANET_E_CARD",
            NanetStatus::System => c"NANET_E_SYSTEM",
            NanetStatus::Unsupported => c"NANET_E_UNSUPPORTED",
            NanetStatus::Internal => c"NANET_E_INTERNAL",
        }
    }
}

/// A failure: its status and message.
pub struct Failure(NanetStatus, String);

fn argument(m: impl Into<String>) -> Failure {
    Failure(NanetStatus::Argument, m.into())
}

impl From<nanet::Error> for Failure {
    fn from(e: nanet::Error) -> Self {
        use nanet::Error as E;
        let status = match &e {
            E::UnknownDevice(_) | E::NoSuchPort { .. } => NanetStatus::Argument,
            E::SimOption { .. }
            | E::InvalidClop(_)
            | E::InvalidGenerator(_)
            | E::InvalidSend(_) => NanetStatus::Config,
            E::UdpPortTaken { .. } | E::NoStreamEntry(_) | E::TlbFull { .. } => NanetStatus::InUse,
            E::NotHeld { .. } | E::NotHostMemory(_) | E::WrongClop { .. } => NanetStatus::NotHeld,
            E::Card(_)
            | E::CardStopped(_)
            | E::CommandTimeout { .. }
            | E::CommandRefused { .. }
            | E::CardStuck { .. }
            | E::ClockStopped { .. }
            | E::BadEvent { .. } => NanetStatus::Card,
            E::NoSim => NanetStatus::Unsupported,
            E::SimStart(_) | E::Vfio(_) | E::Memory(_) | E::Gpu(_) | E::Io(_) => {
                NanetStatus::System
            }
        };
        Failure(status, e.to_string())
    }
}

thread_local! {
    static LAST_ERROR: RefCell<(NanetStatus, CString)> =
        RefCell::new((NanetStatus::Ok, CString::default()));
}

fn fail(f: Failure) -> NanetStatus {
    let m = CString::new(f.1.replace('\0', " ")).unwrap_or_default();
    LAST_ERROR.with(|e| *e.borrow_mut() = (f.0, m));
    f.0
}

/// Runs `f`; on failure records the status and message and returns `on_error(status)`.
fn guard<T>(on_error: impl FnOnce(NanetStatus) -> T, f: impl FnOnce() -> Result<T, Failure>) -> T {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(Ok(v)) => v,
        Ok(Err(failure)) => on_error(fail(failure)),
        Err(_) => on_error(fail(Failure(
            NanetStatus::Internal,
            "internal error (panic) in nanet".into(),
        ))),
    }
}

/// The failure value of calls that return an int: the negative status.
fn status(s: NanetStatus) -> c_int {
    s as c_int
}

fn null<T>(_: NanetStatus) -> *mut T {
    std::ptr::null_mut()
}

unsafe fn non_null<'a, T>(p: *const T, what: &str) -> Result<&'a T, Failure> {
    p.as_ref()
        .ok_or_else(|| argument(format!("{what} is NULL")))
}

/// The largest UDP payload over IPv4 (what the simulated far end may send).
const UDP_MAX_PAYLOAD: usize = 65_507;

/// A datagram's payload of `len` bytes at `p` (named `what()` in errors): a length above `max`
/// is refused before a slice is formed over it (a wrong length must not read past the caller's
/// buffer), NULL only with length 0.
unsafe fn payload<'a>(
    p: *const u8,
    len: usize,
    max: usize,
    what: impl Fn() -> String,
) -> Result<&'a [u8], Failure> {
    if len == 0 {
        return Ok(&[]);
    }
    if len > max {
        return Err(Failure(
            NanetStatus::Config,
            format!(
                "{}: a payload of {len} bytes: a datagram carries 1 to {max}",
                what()
            ),
        ));
    }
    let p = p
        .as_ref()
        .ok_or_else(|| argument(format!("{} is NULL", what())))?;
    Ok(std::slice::from_raw_parts(p, len))
}

#[no_mangle]
pub extern "C" fn nanet_last_error() -> *const c_char {
    LAST_ERROR.with(|e| e.borrow().1.as_ptr())
}

#[no_mangle]
pub extern "C" fn nanet_last_status() -> c_int {
    LAST_ERROR.with(|e| e.borrow().0 as c_int)
}

/// The name of a status ("NANET_E_CARD"); "unknown status" for a value that is none.
#[no_mangle]
pub extern "C" fn nanet_status_name(status: c_int) -> *const c_char {
    NanetStatus::ALL
        .iter()
        .find(|s| **s as c_int == status)
        .map_or(c"unknown status", |s| s.name())
        .as_ptr()
}

/// The library's version and the contract it speaks: "nanet 0.1.0 (contract 2.0)".
#[no_mangle]
pub extern "C" fn nanet_version() -> *const c_char {
    static VERSION: std::sync::OnceLock<CString> = std::sync::OnceLock::new();
    VERSION
        .get_or_init(|| {
            use nanet_contract::card::{CONTRACT_MAJOR, CONTRACT_MINOR};
            CString::new(format!(
                "nanet {} (contract {CONTRACT_MAJOR}.{CONTRACT_MINOR})",
                env!("CARGO_PKG_VERSION")
            ))
            .unwrap()
        })
        .as_ptr()
}

/// Reads the card block's register `reg` into `out` (named `what` in the error for NULL).
unsafe fn card_word(
    dev: *mut NanetDevice,
    reg: nanet_contract::card::CardReg,
    out: *mut u32,
    what: &str,
) -> c_int {
    guard(status, || {
        let d = device(dev)?;
        if out.is_null() {
            return Err(argument(format!("{what} is NULL")));
        }
        *out = d.read_register(4 * reg.word() as u64)?;
        Ok(0)
    })
}

/// The card's contract version register (major in bits 31:16, minor in 15:0).
#[no_mangle]
pub unsafe extern "C" fn nanet_card_version(dev: *mut NanetDevice, version: *mut u32) -> c_int {
    card_word(
        dev,
        nanet_contract::card::CardReg::Version,
        version,
        "version",
    )
}

/// The PCIe variant the card was generated for: link generation in bits 7:0, lanes in 15:8,
/// Avalon-ST beat in bytes in 23:16 (0 from a card of contract 3.0).
#[no_mangle]
pub unsafe extern "C" fn nanet_card_pcie(dev: *mut NanetDevice, pcie: *mut u32) -> c_int {
    card_word(dev, nanet_contract::card::CardReg::Pcie, pcie, "pcie")
}

#[no_mangle]
pub unsafe extern "C" fn nanet_open(name: *const c_char) -> *mut NanetDevice {
    guard(null, || {
        if name.is_null() {
            return Err(argument("device name is NULL"));
        }
        let name = CStr::from_ptr(name)
            .to_str()
            .map_err(|e| argument(format!("device name: {e}")))?;
        let d = Device::open(name)?;
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
        None => {
            fail(Failure(
                NanetStatus::Handle,
                format!("nanet_close: device handle is {NOT_OPEN}"),
            ));
        }
    }
}

#[no_mangle]
pub unsafe extern "C" fn nanet_port_configure(
    dev: *mut NanetDevice,
    port: u8,
    config: *const NanetPortConfig,
) -> c_int {
    guard(status, || {
        let d = device(dev)?;
        let c = non_null(config, "config")?;
        let pc = PortConfig {
            mac: c.mac,
            ip: c.ip,
            netmask: c.netmask,
            gateway: c.gateway,
        };
        d.configure_port(port, &pc)?;
        Ok(0)
    })
}

/// The library's configuration of a `nanet_clop_config`.
fn clop_config(c: &NanetClopConfig) -> Result<ClopConfig, Failure> {
    let layout = match c.layout {
        0 => Layout::Raw,
        1 => Layout::Header,
        l => {
            return Err(Failure(
                NanetStatus::Config,
                format!("layout {l}: NANET_LAYOUT_RAW or NANET_LAYOUT_HEADER"),
            ))
        }
    };
    Ok(ClopConfig::new(c.port, c.udp_port)
        .buffers(c.buffers, c.buffer_bytes)
        .layout(layout)
        .flush_timeout(
            (c.flush_timeout_us > 0).then(|| Duration::from_micros(c.flush_timeout_us as u64)),
        )
        .when_full(if c.skip_held != 0 {
            FullPolicy::SkipHeld
        } else {
            FullPolicy::Drop
        }))
}

/// A handle for a CLOP just registered.
fn clop_handle(c: Clop) -> *mut NanetClop {
    let mut h = handles();
    let t = h.token();
    h.clops.insert(t, Arc::new(c));
    t as *mut NanetClop
}

#[no_mangle]
pub unsafe extern "C" fn nanet_register(
    dev: *mut NanetDevice,
    config: *const NanetClopConfig,
) -> *mut NanetClop {
    guard(null, || {
        let d = device(dev)?;
        let cfg = clop_config(non_null(config, "config")?)?;
        Ok(clop_handle(d.register(&cfg)?))
    })
}

/// Opens CUDA device `ordinal` through GDRCopy (the NVIDIA driver and GDRCopy are loaded now).
#[no_mangle]
pub extern "C" fn nanet_gpu_open(ordinal: c_int) -> *mut NanetGpu {
    guard(null, || {
        let driver: Arc<dyn GpuDriver> = Arc::new(nanet::gpu::CudaGdrcopy::open(ordinal)?);
        Ok(gpu_handle(driver))
    })
}

/// Opens the GPU stand-in in host memory (for the simulated card and tests).
#[no_mangle]
pub extern "C" fn nanet_gpu_open_stand_in() -> *mut NanetGpu {
    guard(null, || {
        Ok(gpu_handle(Arc::new(nanet::gpu::HostGpu::new())))
    })
}

fn gpu_handle(driver: Arc<dyn GpuDriver>) -> *mut NanetGpu {
    let g = Gpu {
        memory: GpuMemory::new(driver),
        buffers: Arc::default(),
    };
    let mut h = handles();
    let t = h.token();
    h.gpus.insert(t, g);
    t as *mut NanetGpu
}

/// Closes the handle (NULL does nothing); its allocations are freed once no CLOP uses them.
#[no_mangle]
pub unsafe extern "C" fn nanet_gpu_close(gpu: *mut NanetGpu) {
    if gpu.is_null() {
        return;
    }
    if handles().gpus.remove(&(gpu as usize)).is_none() {
        fail(Failure(
            NanetStatus::Handle,
            format!("nanet_gpu_close: GPU handle is {NOT_OPEN}"),
        ));
    }
}

#[no_mangle]
pub unsafe extern "C" fn nanet_gpu_alloc(
    gpu: *mut NanetGpu,
    len: u64,
    device_address: *mut u64,
) -> c_int {
    guard(status, || {
        let g = self::gpu(gpu)?;
        if device_address.is_null() {
            return Err(argument("device_address is NULL"));
        }
        let b = g.memory.alloc(len)?;
        *device_address = b.device_address();
        g.buffers.lock().unwrap().insert(b.device_address(), b);
        Ok(0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn nanet_gpu_free(gpu: *mut NanetGpu, device_address: u64) -> c_int {
    guard(status, || {
        let g = self::gpu(gpu)?;
        let freed = g.buffers.lock().unwrap().remove(&device_address);
        freed.map(|_| 0).ok_or_else(|| {
            argument(format!(
                "{device_address:#x} is not an allocation of this GPU handle (freed already?)"
            ))
        })
    })
}

#[no_mangle]
pub unsafe extern "C" fn nanet_gpu_copy_to_host(
    gpu: *mut NanetGpu,
    device_address: u64,
    out: *mut u8,
    len: usize,
) -> c_int {
    guard(status, || {
        let g = self::gpu(gpu)?;
        if out.is_null() && len > 0 {
            return Err(argument("out is NULL"));
        }
        // From the allocation of this handle that holds the address (a CLOP's buffers are in
        // one: see nanet_register_gpu).
        let buffers = g.buffers.lock().unwrap();
        let (start, buffer) = buffers
            .range(..=device_address)
            .next_back()
            .filter(|(a, b)| (device_address - **a).checked_add(len as u64) <= Some(b.len()))
            .ok_or_else(|| {
                argument(format!(
                    "{device_address:#x}+{len:#x} is not inside an allocation of this GPU handle"
                ))
            })?;
        if len > 0 {
            buffer.copy_to_host(
                device_address - start,
                std::slice::from_raw_parts_mut(out, len),
            )?;
        }
        Ok(0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn nanet_register_gpu(
    dev: *mut NanetDevice,
    config: *const NanetClopConfig,
    gpu: *mut NanetGpu,
    device_address: u64,
) -> *mut NanetClop {
    guard(null, || {
        let d = device(dev)?;
        let cfg = clop_config(non_null(config, "config")?)?;
        let g = self::gpu(gpu)?;
        Ok(clop_handle(d.register_provided(
            &cfg,
            g.memory,
            device_address,
        )?))
    })
}

#[no_mangle]
pub unsafe extern "C" fn nanet_clop_device_address(
    clop: *mut NanetClop,
    buffer: u16,
    device_address: *mut u64,
) -> c_int {
    guard(status, || {
        let c = self::clop(clop)?;
        if device_address.is_null() {
            return Err(argument("device_address is NULL"));
        }
        *device_address = c.device_address(buffer).ok_or_else(|| {
            argument(format!(
                "buffer {buffer}: not a buffer of a CLOP in GPU memory (it has buffers 0..{}; a \
                 CLOP in host memory is read with nanet_buffer)",
                c.config().buffers
            ))
        })?;
        Ok(0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn nanet_deregister(clop: *mut NanetClop) -> c_int {
    guard(status, || {
        if clop.is_null() {
            return Err(argument("CLOP is NULL"));
        }
        let taken = handles().clops.remove(&(clop as usize));
        let c = taken.ok_or_else(not_registered)?;
        let lent = c.lent_raw();
        if lent > 0 {
            handles().clops.insert(clop as usize, c);
            return Err(Failure(
                NanetStatus::InUse,
                format!(
                    "{lent} buffers of the CLOP are lent (nanet_buffer) and not released: release \
                     them first (deregistering frees their memory)"
                ),
            ));
        }
        match Arc::try_unwrap(c) {
            Ok(c) => c.deregister()?,
            Err(c) => {
                handles().clops.insert(clop as usize, c);
                return Err(Failure(
                    NanetStatus::InUse,
                    "the CLOP is in use by another thread's call".into(),
                ));
            }
        }
        Ok(0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn nanet_clop_id(clop: *const NanetClop) -> c_int {
    guard(status, || Ok(self::clop(clop)?.id() as c_int))
}

fn deliver(r: nanet::Result<Option<Event>>, out: *mut NanetEvent) -> Result<c_int, Failure> {
    match r? {
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
    guard(status, || {
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
    guard(status, || {
        let c = self::clop(clop)?;
        deliver(c.wait(Duration::from_millis(timeout_ms as u64)), event)
    })
}

#[no_mangle]
pub unsafe extern "C" fn nanet_poll(dev: *mut NanetDevice, event: *mut NanetEvent) -> c_int {
    guard(status, || deliver(device(dev)?.poll(), event))
}

#[no_mangle]
pub unsafe extern "C" fn nanet_clop_poll(clop: *mut NanetClop, event: *mut NanetEvent) -> c_int {
    guard(status, || deliver(self::clop(clop)?.poll(), event))
}

#[no_mangle]
pub unsafe extern "C" fn nanet_arm_interrupt(dev: *mut NanetDevice) -> c_int {
    guard(status, || {
        device(dev)?.arm_interrupt()?;
        Ok(0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn nanet_clear_interrupt(dev: *mut NanetDevice) -> c_int {
    guard(status, || {
        Ok(device(dev)?.clear_interrupt()?.min(i32::MAX as u64) as c_int)
    })
}

#[no_mangle]
pub unsafe extern "C" fn nanet_buffer(
    clop: *mut NanetClop,
    event: *const NanetEvent,
    len: *mut usize,
) -> *const u8 {
    guard(
        |_| std::ptr::null(),
        || {
            let c = self::clop(clop)?;
            let e = non_null(event, "event")?
                .to_event()
                .ok_or_else(|| argument("the event's kind is unknown"))?;
            let (p, n) = c.take_raw(&e)?;
            if !len.is_null() {
                *len = n;
            }
            Ok(p)
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn nanet_release(clop: *mut NanetClop, buffer: u16) -> c_int {
    guard(status, || {
        let c = self::clop(clop)?;
        c.release(buffer)?;
        Ok(0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn nanet_flush_writes(dev: *mut NanetDevice) -> c_int {
    guard(status, || {
        device(dev)?.flush_writes()?;
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
    guard(status, || {
        let d = device(dev)?;
        if name.is_null() || value.is_null() {
            return Err(argument("name or value is NULL"));
        }
        let name = CStr::from_ptr(name)
            .to_str()
            .map_err(|e| argument(format!("counter name: {e}")))?;
        let list = match port {
            -2 => d.tx_counters(),
            -1 => d.rx_counters(),
            // The port's own and its transmit ring's (their names differ).
            p if (0..d.ports() as c_int).contains(&p) => {
                let mut list = d.port_counters(p as u8)?;
                list.extend(d.tx_ring_counters(p as u8)?);
                Ok(list)
            }
            p => {
                return Err(argument(format!(
                    "port {p}: -2 (the transmit rings, summed), -1 (receive engine) or a port \
                     0..{}",
                    d.ports() - 1
                )))
            }
        }?;
        let v = list
            .iter()
            .find(|(n, _)| *n == name)
            .ok_or_else(|| argument(format!("no counter {name:?} (see docs/regmap.md)")))?;
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
    guard(status, || {
        let d = device(dev)?;
        let ip = std::slice::from_raw_parts(non_null(dst_ip, "dst_ip")?, 4);
        let data = self::payload(payload, len, TX_MAX_PAYLOAD, || "payload".into())?;
        let to = nanet::SendTo {
            dst_ip: [ip[0], ip[1], ip[2], ip[3]],
            dst_port,
            src_port,
        };
        d.send(port, to, data)?;
        Ok(0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn nanet_send_batch(
    dev: *mut NanetDevice,
    batch: *const NanetDatagram,
    count: usize,
) -> c_int {
    guard(status, || {
        let d = device(dev)?;
        if count == 0 {
            return Ok(0);
        }
        // (A count no array can have is refused before a slice is formed over it.)
        if count > isize::MAX as usize / std::mem::size_of::<NanetDatagram>() {
            return Err(argument(format!("a batch of {count} datagrams")));
        }
        let batch = std::slice::from_raw_parts(non_null(batch, "batch")?, count);
        let datagrams = batch
            .iter()
            .enumerate()
            .map(|(i, g)| {
                let payload = payload(g.payload, g.len, TX_MAX_PAYLOAD, || {
                    format!("batch[{i}].payload")
                })?;
                Ok(nanet::Datagram {
                    port: g.port,
                    to: nanet::SendTo {
                        dst_ip: g.dst_ip,
                        dst_port: g.dst_port,
                        src_port: g.src_port,
                    },
                    payload,
                })
            })
            .collect::<Result<Vec<_>, Failure>>()?;
        d.send_batch(&datagrams)?;
        Ok(0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn nanet_event_fd(dev: *mut NanetDevice) -> c_int {
    guard(status, || Ok(device(dev)?.event_fd()))
}

#[no_mangle]
pub unsafe extern "C" fn nanet_sim_send_udp(
    dev: *mut NanetDevice,
    port: u8,
    udp_port: u16,
    payload: *const u8,
    len: usize,
) -> c_int {
    guard(status, || {
        let d = device(dev)?;
        let sim = d
            .sim()
            .ok_or_else(|| Failure(NanetStatus::Unsupported, "not the simulated card".into()))?;
        let data = self::payload(payload, len, UDP_MAX_PAYLOAD, || "payload".into())?;
        let c = d.port_config(port)?;
        let to = nanet::backend::sim::Endpoint::new(c.mac, c.ip);
        sim.send_udp(port, &to, udp_port, data)?;
        Ok(0)
    })
}

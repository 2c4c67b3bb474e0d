//! The C API misused as a C program might: NULL pointers, handles used after `nanet_close` and
//! `nanet_deregister`, closed or deregistered twice, made up. Every such call fails with a message
//! that says what was wrong (`nanet_last_error`) and changes nothing; the device still works after.

use std::ffi::{CStr, CString};
use std::ptr::{null, null_mut};

use nanet_c::*;

fn last_error() -> String {
    // SAFETY: nanet_last_error returns this thread's NUL-terminated message.
    unsafe { CStr::from_ptr(nanet_last_error()) }
        .to_string_lossy()
        .into_owned()
}

/// The call failed (`failed`), and the message names `want`.
fn refused(failed: bool, want: &str) {
    assert!(
        failed,
        "the call succeeded; expected a failure about {want:?}"
    );
    let e = last_error();
    assert!(e.contains(want), "{e:?} does not say {want:?}");
}

/// The int-returning call failed with `status`, which `nanet_last_status` repeats, and the message
/// names `want`.
fn refused_with(r: i32, status: NanetStatus, want: &str) {
    assert_eq!(r, status as i32, "{}", last_error());
    assert_eq!(nanet_last_status(), status as i32);
    refused(r < 0, want);
}

/// The simulated card, opened.
unsafe fn open_sim() -> *mut NanetDevice {
    let name = CString::new("sim").unwrap();
    let dev = nanet_open(name.as_ptr());
    assert!(!dev.is_null(), "{}", last_error());
    dev
}

fn port_config() -> NanetPortConfig {
    NanetPortConfig {
        mac: [2, 0, 0, 0, 1, 0],
        ip: [10, 0, 0, 10],
        netmask: [255, 255, 255, 0],
        gateway: [10, 0, 0, 1],
    }
}

fn clop_config() -> NanetClopConfig {
    NanetClopConfig {
        port: 0,
        udp_port: 5000,
        buffers: 4,
        buffer_bytes: 4096,
        layout: 1,
        flush_timeout_us: 0,
        skip_held: 0,
    }
}

#[test]
fn null_pointers_stale_and_made_up_handles_are_refused_and_change_nothing() {
    unsafe {
        refused(nanet_open(null()).is_null(), "device name is NULL");
        let bad = CString::new("sim:colour=blue").unwrap();
        refused(nanet_open(bad.as_ptr()).is_null(), "unknown option");

        let dev = open_sim();
        let config = port_config();
        refused_with(
            nanet_port_configure(dev, 0, null()),
            NanetStatus::Argument,
            "config is NULL",
        );
        refused(
            nanet_port_configure(null_mut(), 0, &config) < 0,
            "device is NULL",
        );
        assert_eq!(nanet_port_configure(dev, 0, &config), 0, "{}", last_error());
        refused(
            nanet_register(null_mut(), &clop_config()).is_null(),
            "device is NULL",
        );
        refused(nanet_register(dev, null()).is_null(), "config is NULL");
        let mut v = 0u32;
        let name = CString::new("rx_packets").unwrap();
        refused(nanet_counter(dev, 0, null(), &mut v) < 0, "NULL");
        refused(nanet_counter(dev, 0, name.as_ptr(), null_mut()) < 0, "NULL");
        let payload = [1u8; 8];
        refused(
            nanet_send(dev, 0, null(), 9, 9, payload.as_ptr(), 8) < 0,
            "dst_ip is NULL",
        );
        refused(
            nanet_send(dev, 0, [10, 0, 0, 99].as_ptr(), 9, 9, null(), 8) < 0,
            "payload is NULL",
        );
        let datagram = |payload: *const u8, len: usize| NanetDatagram {
            port: 0,
            dst_ip: [10, 0, 0, 99],
            dst_port: 9,
            src_port: 9,
            payload,
            len,
        };
        refused(nanet_send_batch(dev, null(), 2) < 0, "batch is NULL");
        let no_payload = [datagram(payload.as_ptr(), 8), datagram(null(), 8)];
        refused(
            nanet_send_batch(dev, no_payload.as_ptr(), 2) < 0,
            "batch[1].payload is NULL",
        );
        let too_long = [0u8; 1473];
        let one_too_long = [
            datagram(payload.as_ptr(), 8),
            datagram(too_long.as_ptr(), 1473),
        ];
        refused_with(
            nanet_send_batch(dev, one_too_long.as_ptr(), 2),
            NanetStatus::Config,
            "batch[1].payload: a payload of 1473 bytes",
        );
        // A length no datagram has is refused before anything reads the 8 bytes behind it.
        for len in [1473, usize::MAX] {
            refused_with(
                nanet_send(dev, 0, [10, 0, 0, 99].as_ptr(), 9, 9, payload.as_ptr(), len),
                NanetStatus::Config,
                &format!("payload: a payload of {len} bytes"),
            );
        }
        refused_with(
            nanet_sim_send_udp(dev, 0, 5000, payload.as_ptr(), usize::MAX),
            NanetStatus::Config,
            "a datagram carries 1 to 65507",
        );
        let made_up = 0x1230 as *mut NanetDevice;
        refused_with(nanet_flush_writes(made_up), NanetStatus::Handle, "not open");
        refused(
            nanet_clop_id(0x40 as *const NanetClop) < 0,
            "not registered",
        );

        // A CLOP deregistered once: every later use of its handle is refused.
        let clop = nanet_register(dev, &clop_config());
        assert!(!clop.is_null(), "{}", last_error());
        assert!(nanet_clop_id(clop) >= 0);
        assert_eq!(nanet_deregister(clop), 0, "{}", last_error());
        refused_with(
            nanet_deregister(clop),
            NanetStatus::Handle,
            "deregistered already",
        );
        refused(nanet_clop_id(clop) < 0, "deregistered already");
        refused(nanet_release(clop, 0) < 0, "deregistered already");
        let mut ev = NanetEvent::default();
        refused(
            nanet_clop_wait(clop, 0, &mut ev) < 0,
            "deregistered already",
        );
        refused(nanet_deregister(null_mut()) < 0, "CLOP is NULL");

        // The device still works: the same UDP port registers again (the first is gone).
        let again = nanet_register(dev, &clop_config());
        assert!(!again.is_null(), "{}", last_error());
        refused(
            nanet_register(dev, &clop_config()).is_null(),
            "already taken",
        );
        assert_eq!(nanet_last_status(), NanetStatus::InUse as i32);
        assert_eq!(nanet_deregister(again), 0, "{}", last_error());

        // Closed once: every later use of the handle is refused, a second close too.
        nanet_close(dev);
        refused(nanet_flush_writes(dev) < 0, "closed already");
        refused(nanet_wait(dev, 0, &mut ev) < 0, "closed already");
        refused(nanet_event_fd(dev) < 0, "closed already");
        refused(
            nanet_register(dev, &clop_config()).is_null(),
            "closed already",
        );
        nanet_close(dev);
        assert!(last_error().contains("closed already"), "{}", last_error());
        nanet_close(null_mut()); // does nothing

        // A new device never gets the old handle back.
        let name = CString::new("sim").unwrap();
        let dev2 = nanet_open(name.as_ptr());
        assert!(!dev2.is_null(), "{}", last_error());
        assert_ne!(dev2, dev, "a handle is never given out twice");
        refused(nanet_flush_writes(dev) < 0, "closed already");
        assert_eq!(nanet_flush_writes(dev2), 0, "{}", last_error());
        nanet_close(dev2);
    }
}

/// Statuses have names; the library and the card say their versions.
#[test]
fn statuses_and_versions_are_named() {
    let name = |s: i32| {
        unsafe { CStr::from_ptr(nanet_status_name(s)) }
            .to_str()
            .unwrap()
            .to_string()
    };
    for s in NanetStatus::ALL {
        assert_eq!(name(s as i32), s.name().to_str().unwrap());
    }
    assert_eq!(name(-100), "unknown status");
    let version = unsafe { CStr::from_ptr(nanet_version()) }
        .to_str()
        .unwrap()
        .to_string();
    use nanet_contract::card::{CONTRACT_MAJOR, CONTRACT_MINOR};
    assert!(
        version.ends_with(&format!("(contract {CONTRACT_MAJOR}.{CONTRACT_MINOR})")),
        "{version}"
    );
    unsafe {
        let name = CString::new("sim:ports=2").unwrap();
        let dev = nanet_open(name.as_ptr());
        assert!(!dev.is_null(), "{}", last_error());
        let mut v = 0;
        assert_eq!(nanet_card_version(dev, &mut v), 0, "{}", last_error());
        assert_eq!(v, (CONTRACT_MAJOR as u32) << 16 | CONTRACT_MINOR as u32);
        refused_with(
            nanet_card_version(dev, null_mut()),
            NanetStatus::Argument,
            "NULL",
        );
        assert_eq!(nanet_card_pcie(dev, &mut v), 0, "{}", last_error());
        assert_eq!(v, nanet_contract::pcie::PcieVariant::Gen2x8.word());
        refused_with(
            nanet_card_pcie(dev, null_mut()),
            NanetStatus::Argument,
            "pcie is NULL",
        );
        // Ports are range-checked (the card has two), never truncated.
        let counter = CString::new("rx_packets").unwrap();
        for port in [2, 258, -3] {
            refused_with(
                nanet_counter(dev, port, counter.as_ptr(), &mut v),
                NanetStatus::Argument,
                &format!("port {port}"),
            );
        }
        assert_eq!(nanet_counter(dev, 1, counter.as_ptr(), &mut v), 0);
        // A port's counters include its transmit ring's; -2 sums the rings'.
        for (port, name) in [(1, "tx_sent"), (-2, "tx_sent")] {
            let name = CString::new(name).unwrap();
            let read = nanet_counter(dev, port, name.as_ptr(), &mut v);
            assert_eq!((read, v), (0, 0), "port {port}: {}", last_error());
        }
        nanet_close(dev);
    }
}

/// A buffer lent by `nanet_buffer` keeps its CLOP registered (its memory stays) until it is
/// released; the event loop of `nanet.h` (arm, the fd, clear, poll) delivers the event.
#[test]
fn a_lent_buffer_keeps_its_clop_and_the_event_loop_delivers() {
    unsafe {
        let dev = open_sim();
        let config = port_config();
        assert_eq!(nanet_port_configure(dev, 0, &config), 0, "{}", last_error());
        let mut c = clop_config();
        c.flush_timeout_us = 5;
        let clop = nanet_register(dev, &c);
        assert!(!clop.is_null(), "{}", last_error());
        let mut ev = NanetEvent::default();
        assert_eq!(nanet_poll(dev, &mut ev), 0, "nothing yet");
        assert_eq!(nanet_arm_interrupt(dev), 0, "{}", last_error());
        let payload = [7u8; 100];
        assert_eq!(
            nanet_sim_send_udp(dev, 0, 5000, payload.as_ptr(), 100),
            0,
            "{}",
            last_error()
        );
        // The interrupt comes (the simulated card is slow: up to a minute of wall time).
        let mut p = libc_pollfd(nanet_event_fd(dev));
        assert_eq!(poll_fd(&mut p, 60_000), 1, "an interrupt");
        assert!(nanet_clear_interrupt(dev) >= 1, "{}", last_error());
        assert_eq!(nanet_clear_interrupt(dev), 0, "cleared");
        let mut got = 0;
        for _ in 0..1000 {
            got = nanet_clop_poll(clop, &mut ev);
            if got != 0 {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert_eq!(got, 1, "{}", last_error());
        let mut len = 0usize;
        let data = nanet_buffer(clop, &ev, &mut len);
        assert!(!data.is_null(), "{}", last_error());
        refused_with(nanet_deregister(clop), NanetStatus::InUse, "lent");
        // Still registered: the bytes are still there, and readable (after the packet header).
        assert!(len >= 116, "{len} bytes");
        let payload = std::slice::from_raw_parts(data.add(16), 100);
        assert!(payload.iter().all(|b| *b == 7));
        assert_eq!(nanet_release(clop, ev.buffer), 0, "{}", last_error());
        assert_eq!(nanet_deregister(clop), 0, "{}", last_error());
        nanet_close(dev);
    }
}

fn libc_pollfd(fd: i32) -> libc::pollfd {
    libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    }
}

fn poll_fd(p: &mut libc::pollfd, ms: i32) -> i32 {
    // SAFETY: one valid pollfd.
    unsafe { libc::poll(p, 1, ms) }
}

/// A CLOP in GPU memory from C, on the GPU stand-in: registered at a 2 MiB-aligned device
/// address, its buffer events name device addresses whose bytes are the datagrams; misused GPU
/// handles and addresses are refused with their status.
#[test]
fn a_gpu_clop_is_registered_and_read_from_c() {
    unsafe {
        let dev = open_sim();
        assert_eq!(
            nanet_port_configure(dev, 0, &port_config()),
            0,
            "{}",
            last_error()
        );
        let gpu = nanet_gpu_open_stand_in();
        assert!(!gpu.is_null(), "{}", last_error());
        let mut va = 0u64;
        refused_with(
            nanet_gpu_alloc(gpu, 1 << 20, null_mut()),
            NanetStatus::Argument,
            "device_address is NULL",
        );
        assert_eq!(
            nanet_gpu_alloc(gpu, 1 << 20, &mut va),
            0,
            "{}",
            last_error()
        );
        assert_eq!(va % (2 << 20), 0, "2 MiB aligned");
        let mut c = clop_config();
        c.layout = 0;
        c.flush_timeout_us = 5;
        refused(
            nanet_register_gpu(dev, &c, gpu, va + 4096).is_null(),
            "not aligned",
        );
        refused(
            nanet_register_gpu(dev, &c, null_mut(), va).is_null(),
            "GPU is NULL",
        );
        let clop = nanet_register_gpu(dev, &c, gpu, va);
        assert!(!clop.is_null(), "{}", last_error());
        let payload: Vec<u8> = (0..200u8).collect();
        assert_eq!(
            nanet_sim_send_udp(dev, 0, 5000, payload.as_ptr(), payload.len()),
            0,
            "{}",
            last_error()
        );
        let mut ev = NanetEvent::default();
        assert_eq!(
            nanet_clop_wait(clop, 60_000, &mut ev),
            1,
            "{}",
            last_error()
        );
        // Not host memory: no pointer, but a device address.
        let mut len = 0usize;
        assert!(nanet_buffer(clop, &ev, &mut len).is_null());
        assert_eq!(nanet_last_status(), NanetStatus::NotHeld as i32);
        let mut at = 0u64;
        assert_eq!(
            nanet_clop_device_address(clop, ev.buffer, &mut at),
            0,
            "{}",
            last_error()
        );
        assert_eq!(at, va + ev.buffer as u64 * 4096);
        let mut got = vec![0u8; ev.bytes as usize];
        assert_eq!(
            nanet_gpu_copy_to_host(gpu, at, got.as_mut_ptr(), got.len()),
            0,
            "{}",
            last_error()
        );
        assert_eq!(got, payload);
        refused_with(
            nanet_gpu_copy_to_host(gpu, va + (2 << 20), got.as_mut_ptr(), 1),
            NanetStatus::Argument,
            "not inside an allocation",
        );
        // Straddling the allocation's end.
        refused_with(
            nanet_gpu_copy_to_host(gpu, va + (2 << 20) - 1, got.as_mut_ptr(), 2),
            NanetStatus::Argument,
            "not inside an allocation",
        );
        refused_with(
            nanet_clop_device_address(clop, 4, &mut at),
            NanetStatus::Argument,
            "buffer 4",
        );
        assert_eq!(nanet_release(clop, ev.buffer), 0, "{}", last_error());
        // Freed and closed while registered: the CLOP keeps its memory until deregistered.
        assert_eq!(nanet_gpu_free(gpu, va), 0, "{}", last_error());
        refused_with(
            nanet_gpu_free(gpu, va),
            NanetStatus::Argument,
            "freed already",
        );
        nanet_gpu_close(gpu);
        refused_with(
            nanet_gpu_alloc(gpu, 4096, &mut va),
            NanetStatus::Handle,
            "GPU handle is not open",
        );
        assert_eq!(nanet_deregister(clop), 0, "{}", last_error());
        nanet_close(dev);
    }
}

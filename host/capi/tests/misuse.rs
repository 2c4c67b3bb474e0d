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

        let name = CString::new("sim").unwrap();
        let dev = nanet_open(name.as_ptr());
        assert!(!dev.is_null(), "{}", last_error());
        let config = NanetPortConfig {
            mac: [2, 0, 0, 0, 1, 0],
            ip: [10, 0, 0, 10],
            netmask: [255, 255, 255, 0],
            gateway: [10, 0, 0, 1],
        };
        refused(nanet_port_configure(dev, 0, null()) < 0, "config is NULL");
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
        let made_up = 0x1230 as *mut NanetDevice;
        refused(nanet_flush_writes(made_up) < 0, "not open");
        refused(
            nanet_clop_id(0x40 as *const NanetClop) < 0,
            "not registered",
        );

        // A CLOP deregistered once: every later use of its handle is refused.
        let clop = nanet_register(dev, &clop_config());
        assert!(!clop.is_null(), "{}", last_error());
        assert!(nanet_clop_id(clop) >= 0);
        assert_eq!(nanet_deregister(clop), 0, "{}", last_error());
        refused(nanet_deregister(clop) < 0, "deregistered already");
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

//! The library's locks against slow work, on the synthetic card (no simulator): a registration
//! pinning memory holds no lock other threads need to poll or register (`flush_writes` waiting
//! for the card: the synthetic card's own tests).

use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use nanet::backend::synthetic::SyntheticCard;
use nanet::memory::CardDma;
use nanet::{ClopConfig, Device, MemoryProvider, PageSize};

/// How long another thread's call may take before the test says it was blocked: far beyond what
/// any of these calls takes on a synthetic card.
const BLOCKED: Duration = Duration::from_secs(20);

/// Runs `f` on a thread of its own and fails the test if it has not returned within [`BLOCKED`].
fn returns_while_blocked<T: Send + 'static>(
    what: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> T {
    let (tx, rx) = channel();
    std::thread::spawn(move || tx.send(f()).ok());
    rx.recv_timeout(BLOCKED)
        .unwrap_or_else(|_| panic!("{what} waited for the thread that is pinning or waiting"))
}

/// Memory whose `pin` stops until the test lets it go on (a GPU driver pinning a large range).
struct SlowPin {
    entered: Mutex<Sender<()>>,
    go_on: Mutex<Receiver<()>>,
}

// SAFETY: the bus addresses it returns are the synthetic card's (which writes nowhere), and it
// never unmaps anything the library mapped.
unsafe impl MemoryProvider for SlowPin {
    fn page_size(&self) -> PageSize {
        PageSize::Page64K
    }

    fn pin(&self, va: u64, len: u64, _card: &CardDma) -> nanet::Result<Vec<u64>> {
        self.entered.lock().unwrap().send(()).unwrap();
        self.go_on.lock().unwrap().recv().unwrap();
        Ok((0..len / (64 << 10)).map(|i| va + (i << 16)).collect())
    }

    fn unpin(&self, _va: u64, _len: u64, _card: &CardDma) -> nanet::Result<()> {
        Ok(())
    }
}

/// (Mutation: holding the state lock through the pin, as the library once did, blocks the
/// other thread's poll and registration and fails here.)
#[test]
fn a_registration_pinning_memory_blocks_no_other_thread() {
    let dev = Device::with_backend(Arc::new(SyntheticCard::new().unwrap())).unwrap();
    let (entered_tx, entered) = channel();
    let (go_on, go_on_rx) = channel();
    let slow = Arc::new(SlowPin {
        entered: Mutex::new(entered_tx),
        go_on: Mutex::new(go_on_rx),
    });
    let d = dev.clone();
    let pinning = std::thread::spawn(move || {
        d.register_provided(
            &ClopConfig::new(0, 6000).buffers(4, 64 << 10),
            slow,
            1 << 30,
        )
    });
    entered.recv().unwrap();
    // The pin is under way: the other threads go on.
    let d = dev.clone();
    returns_while_blocked("a poll", move || d.poll().unwrap());
    let d = dev.clone();
    let other = returns_while_blocked("another registration", move || {
        d.register(&ClopConfig::new(1, 6001).buffers(2, 4096))
            .unwrap()
    });
    // The UDP port the pinning thread reserved is taken meanwhile (nothing is promised twice).
    let d = dev.clone();
    let taken = returns_while_blocked("a registration of the same port", move || {
        d.register(&ClopConfig::new(0, 6000)).err()
    });
    assert!(
        matches!(taken, Some(nanet::Error::UdpPortTaken { .. })),
        "{taken:?}"
    );
    go_on.send(()).unwrap();
    let clop = pinning.join().unwrap().unwrap();
    assert_ne!(clop.id(), other.id());
    clop.deregister().unwrap();
    other.deregister().unwrap();
}

/// A failed pin gives back what the registration reserved: the UDP port and the stream entry
/// are free again.
#[test]
fn a_failed_pin_leaves_nothing_reserved() {
    struct NoPin;
    // SAFETY: pins nothing.
    unsafe impl MemoryProvider for NoPin {
        fn page_size(&self) -> PageSize {
            PageSize::Page64K
        }
        fn pin(&self, _: u64, _: u64, _: &CardDma) -> nanet::Result<Vec<u64>> {
            Err(nanet::Error::Gpu("out of BAR space".into()))
        }
        fn unpin(&self, _: u64, _: u64, _: &CardDma) -> nanet::Result<()> {
            Ok(())
        }
    }
    let dev = Device::with_backend(Arc::new(SyntheticCard::new().unwrap())).unwrap();
    for _ in 0..20 {
        let e = dev
            .register_provided(&ClopConfig::new(0, 6000), Arc::new(NoPin), 1 << 30)
            .err()
            .expect("the pin fails");
        assert!(e.to_string().contains("out of BAR space"), "{e}");
    }
    // All 16 entries of the port are still there.
    let clops: Vec<_> = (0..16)
        .map(|k| {
            dev.register(&ClopConfig::new(0, 6000 + k).buffers(1, 4096))
                .unwrap()
        })
        .collect();
    assert_eq!(clops.len(), 16);
}

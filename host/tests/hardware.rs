//! On real hardware. Each test runs where what it needs is there, and is reported ignored, with the
//! reason on stderr, where it is not (libtest-mimic: libtest decides "ignored" at compile time
//! only, so a skipped test used to pass silently):
//! - the card tests need `NANET_PCI=<PCI address>` (`NANET_PCI=0000:03:00.0 cargo test -p nanet
//!   --test hardware`); with `NANET_PCI_STREAM=PORT:UDP` one also waits up to 10 s for datagrams
//!   sent to that port by a peer on the link;
//! - with `--features gpu`: CUDA and GDRCopy on their own run wherever an NVIDIA driver is
//!   (`/dev/nvidiactl`; `NANET_GPU` picks the CUDA device, 0 by default); the message a machine
//!   without it gets is checked where there is none; GPU memory behind a card needs both.

use std::time::Duration;

use libtest_mimic::{Arguments, Failed, Trial};
use nanet::{ClopConfig, Device};

/// A test: its name, why it cannot run here (None: it runs), its body.
type HardwareTest = (
    &'static str,
    Option<&'static str>,
    fn() -> Result<(), Failed>,
);

fn main() {
    let args = Arguments::from_args();
    let card = std::env::var("NANET_PCI").ok();
    let stream = std::env::var("NANET_PCI_STREAM").ok();
    let no_card = card
        .is_none()
        .then_some("set NANET_PCI=<PCI address> to run it on a card");
    let no_stream = no_card.or(stream
        .is_none()
        .then_some("set NANET_PCI and NANET_PCI_STREAM=PORT:UDP_PORT, and send datagrams to it"));
    #[allow(unused_mut)]
    let mut tests: Vec<HardwareTest> = vec![
        (
            "the_card_answers_and_takes_a_clop",
            no_card,
            the_card_answers_and_takes_a_clop,
        ),
        (
            "datagrams_from_a_peer_land",
            no_stream,
            datagrams_from_a_peer_land,
        ),
    ];
    #[cfg(feature = "gpu")]
    {
        let driver = std::path::Path::new("/dev/nvidiactl").exists();
        let no_gpu = (!driver).then_some("no NVIDIA driver here (/dev/nvidiactl)");
        tests.push((
            "cuda_memory_is_written_through_gdrcopy_and_read_back",
            no_gpu,
            gpu::round_trip,
        ));
        tests.push((
            "a_machine_without_cuda_is_told_what_to_install",
            driver.then_some("this machine has an NVIDIA driver: the CUDA test runs instead"),
            gpu::without_cuda,
        ));
        tests.push((
            "datagrams_from_a_peer_land_in_gpu_memory",
            no_stream.or(no_gpu),
            gpu::datagrams_land_in_gpu_memory,
        ));
    }
    let trials = tests
        .into_iter()
        .map(|(name, why_not, f)| {
            if let Some(why) = why_not {
                eprintln!("hardware: {name} ignored: {why}");
            }
            Trial::test(name, f).with_ignored_flag(why_not.is_some())
        })
        .collect();
    libtest_mimic::run(&args, trials).exit();
}

fn card() -> Device {
    let address = std::env::var("NANET_PCI").expect("NANET_PCI names the card");
    Device::open(&address).unwrap_or_else(|e| panic!("opening {address}: {e}"))
}

/// `NANET_PCI_STREAM` as (port, UDP port).
fn stream() -> (u8, u16) {
    let s = std::env::var("NANET_PCI_STREAM").expect("NANET_PCI_STREAM is set");
    let (p, u) = s.split_once(':').expect("NANET_PCI_STREAM=PORT:UDP_PORT");
    (
        p.parse().expect("a port number"),
        u.parse().expect("a UDP port"),
    )
}

fn the_card_answers_and_takes_a_clop() -> Result<(), Failed> {
    let dev = card();
    println!("{}", dev.describe());
    let t0 = dev.now_cycles().unwrap();
    std::thread::sleep(Duration::from_millis(10));
    assert_ne!(dev.now_cycles().unwrap(), t0, "the card's clock runs");
    for p in 0..dev.ports() as u8 {
        dev.port_counters(p).unwrap();
    }
    let c = dev.register(&ClopConfig::new(0, 5999)).unwrap();
    c.deregister().unwrap();
    Ok(())
}

fn datagrams_from_a_peer_land() -> Result<(), Failed> {
    let dev = card();
    let (p, u) = stream();
    let c = dev.register(&ClopConfig::new(p, u)).unwrap();
    let e = c
        .wait(Duration::from_secs(10))
        .unwrap()
        .expect("datagrams within 10 s");
    let buf = c.take(&e).unwrap();
    assert!(buf.packets().unwrap().count() > 0);
    Ok(())
}

#[cfg(feature = "gpu")]
mod gpu {
    use super::*;
    use nanet::gpu::{CudaGdrcopy, GpuDriver, GpuMemory, GPU_PAGE};

    /// `NANET_GPU`, the CUDA device (0 by default).
    fn ordinal() -> i32 {
        std::env::var("NANET_GPU").map_or(0, |o| o.parse().expect("a CUDA device number"))
    }

    /// CUDA and GDRCopy without a card: device memory allocated, pinned and mapped, written
    /// through the BAR mapping (as the card's DMA reaches it), read back with a CUDA copy.
    pub fn round_trip() -> Result<(), Failed> {
        let gpu = CudaGdrcopy::open(ordinal())?;
        let dptr = gpu.alloc(GPU_PAGE)?;
        let handle = gpu.pin(dptr, GPU_PAGE)?;
        let cpu = gpu.map(handle, GPU_PAGE)?;
        let pattern: Vec<u8> = (0..4096u32).map(|i| (i * 7 + 3) as u8).collect();
        // SAFETY: the mapping is GPU_PAGE bytes long and nothing else uses it.
        unsafe { std::ptr::copy_nonoverlapping(pattern.as_ptr(), cpu, pattern.len()) };
        std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
        let mut back = vec![0u8; pattern.len()];
        gpu.copy_to_host(dptr, &mut back)?;
        // SAFETY: the mapping of map(handle, GPU_PAGE), unused from here on.
        unsafe { gpu.unmap(handle, cpu, GPU_PAGE)? };
        gpu.unpin(handle)?;
        gpu.free(dptr)?;
        assert_eq!(
            back, pattern,
            "what went through the BAR mapping reads back"
        );
        Ok(())
    }

    /// Without the NVIDIA stack (as on CI) opening says what to install, and nothing crashes.
    pub fn without_cuda() -> Result<(), Failed> {
        let e = CudaGdrcopy::open(0)
            .err()
            .expect("no CUDA here")
            .to_string();
        assert!(
            e.contains("libcuda.so.1") && e.contains("install the NVIDIA driver"),
            "{e}"
        );
        Ok(())
    }

    /// Datagrams from a peer land in GPU memory.
    pub fn datagrams_land_in_gpu_memory() -> Result<(), Failed> {
        let dev = card();
        let gpu = GpuMemory::new(std::sync::Arc::new(CudaGdrcopy::open(ordinal())?));
        let (p, u) = stream();
        let config = ClopConfig::new(p, u)
            .buffers(8, 64 << 10)
            .flush_timeout(Some(Duration::from_millis(1)));
        let memory = gpu.alloc(8 * (64 << 10)).unwrap();
        let c = dev
            .register_provided(&config, gpu.clone(), memory.device_address())
            .unwrap();
        let e = c
            .wait(Duration::from_secs(10))
            .unwrap()
            .expect("datagrams within 10 s");
        let at = c.device_address(e.buffer).unwrap() - memory.device_address();
        let mut bytes = vec![0; e.bytes as usize];
        memory.copy_to_host(at, &mut bytes).unwrap();
        // The header layout: the buffer starts with the first packet's header.
        let header = nanet::PacketHeader::decode(bytes[..16].try_into().unwrap());
        assert!(
            header.len > 0 && 16 + header.len as u32 <= e.bytes,
            "{header:?}"
        );
        c.deregister().unwrap();
        assert_eq!(gpu.pinned_ranges(), 0);
        Ok(())
    }
}

//! On a real card: runs only when `NANET_PCI` names one (`NANET_PCI=0000:03:00.0 cargo test -p
//! nanet --test hardware`), and says it skipped otherwise. With `NANET_PCI_STREAM=PORT:UDP` it also
//! waits up to 10 s for datagrams sent to that port by a peer on the link.

use std::time::Duration;

use nanet::{ClopConfig, Device};

fn card() -> Option<Device> {
    let Ok(address) = std::env::var("NANET_PCI") else {
        eprintln!("skipped: set NANET_PCI=<PCI address> to run the hardware tests on a card");
        return None;
    };
    Some(Device::open(&address).unwrap_or_else(|e| panic!("opening {address}: {e}")))
}

#[test]
fn the_card_answers_and_takes_a_clop() {
    let Some(dev) = card() else { return };
    println!("{}", dev.describe());
    let t0 = dev.now_cycles().unwrap();
    std::thread::sleep(Duration::from_millis(10));
    assert_ne!(dev.now_cycles().unwrap(), t0, "the card's clock runs");
    for p in 0..dev.ports() as u8 {
        dev.port_counters(p).unwrap();
    }
    let c = dev.register(&ClopConfig::new(0, 5999)).unwrap();
    c.deregister().unwrap();
}

#[test]
fn datagrams_from_a_peer_land() {
    let Some(dev) = card() else { return };
    let Ok(stream) = std::env::var("NANET_PCI_STREAM") else {
        eprintln!("skipped: set NANET_PCI_STREAM=PORT:UDP_PORT and send datagrams to it");
        return;
    };
    let (p, u) = stream.split_once(':').expect("PORT:UDP_PORT");
    let c = dev
        .register(&ClopConfig::new(p.parse().unwrap(), u.parse().unwrap()))
        .unwrap();
    let e = c
        .wait(Duration::from_secs(10))
        .unwrap()
        .expect("datagrams within 10 s");
    let buf = c.take(&e).unwrap();
    assert!(buf.packets().unwrap().count() > 0);
}

/// Datagrams from a peer land in GPU memory (`--features gpu`, `NANET_GPU=<CUDA ordinal>`, and
/// `NANET_PCI_STREAM` as above).
#[cfg(feature = "gpu")]
#[test]
fn datagrams_from_a_peer_land_in_gpu_memory() {
    use nanet::gpu::{CudaGdrcopy, GpuMemory};
    let Some(dev) = card() else { return };
    let (Ok(stream), Ok(ordinal)) = (
        std::env::var("NANET_PCI_STREAM"),
        std::env::var("NANET_GPU"),
    ) else {
        eprintln!("skipped: set NANET_GPU=<CUDA device> and NANET_PCI_STREAM=PORT:UDP_PORT");
        return;
    };
    let gpu = GpuMemory::new(std::sync::Arc::new(
        CudaGdrcopy::open(ordinal.parse().expect("a CUDA device number")).unwrap(),
    ));
    let (p, u) = stream.split_once(':').expect("PORT:UDP_PORT");
    let config = ClopConfig::new(p.parse().unwrap(), u.parse().unwrap())
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
}

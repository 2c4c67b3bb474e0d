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

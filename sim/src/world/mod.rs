//! The world around the card, independent of the engine that simulates it: the 10G link at the MAC
//! client interface, real peer IPv4 stacks (smoltcp in-process, the Linux kernel behind a TAP
//! device in a network namespace), host memory with its regions and DMA port,
//! the PCIe root complex at TLP level with flow-control credits, the Hard IP's configuration bus and
//! reset outputs, and the board's parts the glue drives (the Si570 on I2C, the MACs' registers).

pub mod config_bus;
pub mod dma_port;
pub mod flow_control;
pub mod hard_ip_reset;
pub mod host_mem;
pub mod link;
pub mod linux_peer;
pub mod mac_csr;
pub mod peer;
pub mod root_complex;
pub mod si570;
pub mod tlp;

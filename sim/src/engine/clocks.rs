//! Clock periods of the two clock domains, for testbenches stepping a design with
//! [`crate::engine::DesignSim`].

/// 156.25 MHz, the 10GbE MAC client clock.
pub const NET_CLOCK_PS: u64 = 6_400;
/// 250 MHz, the PCIe/DMA core clock.
pub const CORE_CLOCK_PS: u64 = 4_000;

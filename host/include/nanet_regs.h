/* nanet register map and record layouts.
 * Generated from the nanet-contract crate by `make docs`; do not edit. */
#ifndef NANET_REGS_H
#define NANET_REGS_H

#include <stdint.h>

#define NANET_BAR0_BYTES 0x10000u
#define NANET_CARD_MAGIC_VALUE 0x4e614e74u
#define NANET_CONTRACT_MAJOR 0x3u
#define NANET_CONTRACT_MINOR 0x2u
#define NANET_BLOCK_TABLE 0x10u
#define NANET_BLOCK_CARD 0x1u
#define NANET_BLOCK_RX_ENGINE 0x2u
#define NANET_BLOCK_PORT 0x3u
#define NANET_BLOCK_TX_ENGINE 0x4u
#define NANET_TX_ENGINE 0x1800u
#define NANET_TX_RING_STRIDE 0x100u
#define NANET_TX_DESC_BYTES 0x20u
#define NANET_TX_DESC_EVENT 0x1u
#define NANET_TX_RING_ENABLE 0x80000000u
#define NANET_TX_RING_MIN_LOG2 0x4u
#define NANET_TX_RING_MAX_LOG2 0xcu
#define NANET_TX_MAX_PAYLOAD 0x5c0u
#define NANET_RX_ENGINE 0x1000u
#define NANET_PORT0 0x2000u
#define NANET_PORT_STRIDE 0x1000u
#define NANET_MAX_PORTS 0x4u
#define NANET_STREAMS_PER_PORT 0x10u
#define NANET_CLOPS 0x40u
#define NANET_MAX_BUFFERS 0x100u
#define NANET_MAX_BUFFER_BYTES 0xffffffu
#define NANET_TLB_ENTRIES 0x80u
#define NANET_CLOP_OP_CONFIGURE 0x1u
#define NANET_CLOP_OP_DISABLE 0x2u
#define NANET_CLOP_COMMAND_BUSY 0x1u
#define NANET_CLOP_COMMAND_REFUSED 0x2u
#define NANET_CLOP_MODE_HEADER 0x1u
#define NANET_CLOP_MODE_SKIP_HELD 0x2u
#define NANET_TLB_COMMAND_VALID 0x10000u
#define NANET_EVENT_QUEUE_ENABLE 0x80000000u
#define NANET_DMA_MPS_256 0x1u
#define NANET_STREAM_VALID 0x80000000u
#define NANET_GEN_START 0x1u
#define NANET_GEN_STOP 0x2u
#define NANET_GEN_RUNNING 0x1u
#define NANET_GEN_MIN_PAYLOAD 0x10u
#define NANET_GEN_MAX_PAYLOAD 0x5c0u
#define NANET_PAGE_4K 0x0u
#define NANET_PAGE_64K 0x1u
#define NANET_PAGE_2M 0x2u
#define NANET_OFFLOAD_ID_VALUE 0x4e4e4554u
#define NANET_ARP_COMMAND_FLUSH 0x1u
#define NANET_ARP_COMMAND_ADD_STATIC 0x2u
#define NANET_ARP_READ_DONE 0x80000000u
#define NANET_ARP_READ_VALID 0x40000000u
#define NANET_STATUS_ARP_FLUSHING 0x1u
#define NANET_CONTROL_UDP_TX_CHECKSUM 0x1u
#define NANET_OFFLOAD_VERSION_VALUE 0x10001u
#define NANET_EVENT_BYTES 0x20u
#define NANET_PACKET_HEADER_BYTES 0x10u
#define NANET_PORT_BASE(p) (NANET_PORT0 + (p) * NANET_PORT_STRIDE)

/* Card block (identification, card-wide counters; block table from word 0x10): byte offsets inside the block */
#define NANET_CARD_MAGIC 0x000u
#define NANET_CARD_VERSION 0x004u
#define NANET_CARD_PORTS 0x008u
#define NANET_CARD_CORE_HZ 0x00cu
#define NANET_CARD_NET_HZ 0x010u
#define NANET_CARD_BLOCKS 0x014u
#define NANET_CARD_PCIE 0x018u
#define NANET_CARD_READ_TAG_WAITS 0x01cu
#define NANET_CARD_PCIE_UNSUPPORTED 0x020u
#define NANET_CARD_PCIE_DROPPED 0x024u
#define NANET_CARD_UNMAPPED 0x028u
#define NANET_CARD_INTERRUPTS 0x02cu
#define NANET_CARD_CREDIT_WAITS 0x030u
#define NANET_CARD_CPL_UNEXPECTED 0x034u
#define NANET_CARD_CPL_TIMEOUTS 0x038u
#define NANET_CARD_PCIE_RX_OVERFLOW 0x03cu

/* Receive engine (CLOPs, TLB, DMA, event queue, interrupt): byte offsets inside the block */
#define NANET_RX_CLOP_COMMAND 0x000u
#define NANET_RX_CLOP_BASE_LO 0x004u
#define NANET_RX_CLOP_BASE_HI 0x008u
#define NANET_RX_CLOP_BUF_SIZE 0x00cu
#define NANET_RX_CLOP_BUF_COUNT 0x010u
#define NANET_RX_CLOP_TLB 0x014u
#define NANET_RX_CLOP_MODE 0x018u
#define NANET_RX_CLOP_TIMEOUT 0x01cu
#define NANET_RX_RELEASE 0x020u
#define NANET_RX_TLB_VPN_LO 0x024u
#define NANET_RX_TLB_VPN_HI 0x028u
#define NANET_RX_TLB_PPN_LO 0x02cu
#define NANET_RX_TLB_PPN_HI 0x030u
#define NANET_RX_TLB_COMMAND 0x034u
#define NANET_RX_EVENT_QUEUE_BASE_LO 0x040u
#define NANET_RX_EVENT_QUEUE_BASE_HI 0x044u
#define NANET_RX_EVENT_QUEUE_SIZE 0x048u
#define NANET_RX_EVENT_QUEUE_HEAD 0x04cu
#define NANET_RX_EVENT_QUEUE_TAIL 0x050u
#define NANET_RX_IRQ_ARM 0x054u
#define NANET_RX_IRQ_MIN_INTERVAL 0x058u
#define NANET_RX_IRQ_COUNT 0x05cu
#define NANET_RX_DMA_CONTROL 0x060u
#define NANET_RX_NOW 0x064u
#define NANET_RX_COMMITTED 0x100u
#define NANET_RX_COMMITTED_BYTES 0x104u
#define NANET_RX_DROP_NO_CLOP 0x108u
#define NANET_RX_DROP_TOO_BIG 0x10cu
#define NANET_RX_DROP_NO_FREE_BUFFER 0x110u
#define NANET_RX_DROP_TLB_MISS 0x114u
#define NANET_RX_DROP_BAD_END 0x118u
#define NANET_RX_BAD_RELEASE 0x11cu
#define NANET_RX_RELEASE_OVERFLOW 0x120u
#define NANET_RX_EVENTS_WRITTEN 0x124u
#define NANET_RX_EVENTS_DROPPED 0x128u
#define NANET_RX_INTERRUPTS 0x12cu
#define NANET_RX_BAD_CLOP_COMMAND 0x130u
#define NANET_RX_BAD_EVENT_HEAD 0x134u
#define NANET_RX_RELEASES_TAKEN 0x138u

/* Transmit ring r, sending from port r (at 0x1800 + r * 0x100): byte offsets inside the block */
#define NANET_TX_TX_RING_BASE_LO 0x000u
#define NANET_TX_TX_RING_BASE_HI 0x004u
#define NANET_TX_TX_RING_SIZE 0x008u
#define NANET_TX_TX_TAIL 0x00cu
#define NANET_TX_TX_HEAD 0x010u
#define NANET_TX_TX_STATUS 0x014u
#define NANET_TX_TX_SENT 0x040u
#define NANET_TX_TX_BAD_DESCRIPTOR 0x044u
#define NANET_TX_TX_READ_ERROR 0x048u
#define NANET_TX_TX_BAD_TAIL 0x04cu
#define NANET_TX_TX_DISCARDED 0x050u

/* Port p: offload core, counters and Multi-Stream (at 0x2000 + p * 0x1000): byte offsets inside the block */
#define NANET_PORT_ID 0x000u
#define NANET_PORT_VERSION 0x004u
#define NANET_PORT_MAC_HI 0x008u
#define NANET_PORT_MAC_LO 0x00cu
#define NANET_PORT_IP 0x010u
#define NANET_PORT_NETMASK 0x014u
#define NANET_PORT_GATEWAY 0x018u
#define NANET_PORT_CONTROL 0x01cu
#define NANET_PORT_ARP_COMMAND 0x020u
#define NANET_PORT_ARP_STATIC_IP 0x024u
#define NANET_PORT_ARP_STATIC_MAC_HI 0x028u
#define NANET_PORT_ARP_STATIC_MAC_LO 0x02cu
#define NANET_PORT_ARP_RETRY_INTERVAL 0x030u
#define NANET_PORT_ARP_RETRIES 0x034u
#define NANET_PORT_STATUS 0x038u
#define NANET_PORT_TTL 0x03cu
#define NANET_PORT_RX_PACKETS 0x040u
#define NANET_PORT_RX_BYTES 0x044u
#define NANET_PORT_TX_PACKETS 0x048u
#define NANET_PORT_TX_BYTES 0x04cu
#define NANET_PORT_ARP_REQUESTS_IN 0x050u
#define NANET_PORT_ARP_REPLIES_IN 0x054u
#define NANET_PORT_ARP_REPLIES_OUT 0x058u
#define NANET_PORT_ARP_REQUESTS_OUT 0x05cu
#define NANET_PORT_ICMP_ECHO_REPLIES 0x060u
#define NANET_PORT_DROP_MAC_ERROR 0x064u
#define NANET_PORT_DROP_RUNT 0x068u
#define NANET_PORT_DROP_OVERSIZE 0x06cu
#define NANET_PORT_DROP_NOT_FOR_US 0x070u
#define NANET_PORT_DROP_IP_VERSION_IHL 0x074u
#define NANET_PORT_DROP_IP_CHECKSUM 0x078u
#define NANET_PORT_DROP_IP_LENGTH 0x07cu
#define NANET_PORT_DROP_FRAGMENT 0x080u
#define NANET_PORT_DROP_UDP_LENGTH 0x084u
#define NANET_PORT_DROP_UDP_CHECKSUM 0x088u
#define NANET_PORT_DROP_UNKNOWN_PROTOCOL 0x08cu
#define NANET_PORT_DROP_ICMP_INVALID 0x090u
#define NANET_PORT_DROP_ICMP_BUSY 0x094u
#define NANET_PORT_TX_DROP_ARP_TIMEOUT 0x098u
#define NANET_PORT_TX_DROP_LENGTH 0x09cu
#define NANET_PORT_ARP_REPLIES_DROPPED 0x0a0u
#define NANET_PORT_DROP_BAD_SOURCE 0x0a4u
#define NANET_PORT_ARP_READ 0x0c0u
#define NANET_PORT_ARP_READ_IP 0x0c4u
#define NANET_PORT_ARP_READ_MAC_HI 0x0c8u
#define NANET_PORT_ARP_READ_MAC_LO 0x0ccu
#define NANET_PORT_STREAM_TABLE 0x100u
#define NANET_PORT_STREAM_ENTRY 0x140u
#define NANET_PORT_DROP_NO_STREAM 0x180u
#define NANET_PORT_DROP_FIFO_FULL 0x184u
#define NANET_PORT_FORWARDED 0x188u
#define NANET_PORT_GEN_CONTROL 0x1a0u
#define NANET_PORT_GEN_DST_IP 0x1a4u
#define NANET_PORT_GEN_PORTS 0x1a8u
#define NANET_PORT_GEN_LEN 0x1acu
#define NANET_PORT_GEN_COUNT 0x1b0u
#define NANET_PORT_GEN_GAP 0x1b4u
#define NANET_PORT_GEN_SENT 0x1b8u

/* Event kinds (bits 3:0 of kind_phase; bit 7 is the phase) */
#define NANET_EVENT_BUFFER_FULL 1u
#define NANET_EVENT_TIMEOUT_FLUSH 2u
#define NANET_EVENT_NO_FREE_BUFFER 3u
#define NANET_EVENT_TLB_MISS 4u
#define NANET_EVENT_ERROR 5u
#define NANET_EVENT_TX_DONE 6u
#define NANET_EVENT_TX_ERROR 7u
#define NANET_EVENT_PHASE 0x80u

struct nanet_event_record {
    uint8_t kind_phase; /* bit 7: phase; bits 3:0: event kind */
    uint8_t clop; /* CLOP id */
    uint16_t buffer; /* buffer index */
    uint32_t bytes; /* bytes written into the buffer (payloads and per-packet headers) */
    uint16_t packets; /* packets in the buffer */
    uint16_t first_seq; /* sequence number of the first packet (per CLOP, wrapping) */
    uint16_t last_seq; /* sequence number of the last packet */
    uint8_t reserved; /* zero */
    uint8_t phase_1; /* bit 7: phase (of the record's second 8 bytes); bits 6:0 zero */
    uint32_t sop_at_mac; /* core cycle counter at the last packet's SOP at the MAC */
    uint32_t header_parsed; /* ... when its headers were parsed, bits 30:0 (bit 31: phase) */
    uint32_t first_dma_beat; /* ... at its first DMA beat */
    uint32_t last_dma_beat; /* ... at its last DMA beat, bits 30:0 (bit 31: phase) */
};
_Static_assert(sizeof(struct nanet_event_record) == 32, "nanet_event_record layout");

struct nanet_packet_header {
    uint16_t len; /* payload length */
    uint16_t src_port; /* source UDP port */
    uint8_t src_ip[4]; /* source IPv4 address, network order (a.b.c.d is bytes a, b, c, d) */
    uint32_t sop_time; /* core cycle counter at the frame's SOP at the MAC */
    uint16_t seq; /* the packet's sequence number in its CLOP (wrapping) */
    uint16_t reserved; /* zero */
};
_Static_assert(sizeof(struct nanet_packet_header) == 16, "nanet_packet_header layout");

struct nanet_tx_descriptor {
    uint64_t buffer; /* bus address of the payload (16-byte aligned) */
    uint16_t len; /* payload bytes, 1 to 1472 */
    uint8_t port; /* the port that sends it: the ring's number */
    uint8_t flags; /* bit 0 (`TX_DESC_EVENT`): a `TxDone` event when done */
    uint8_t dst_ip[4]; /* destination IPv4 address, network order (a.b.c.d is bytes a, b, c, d) */
    uint16_t src_port; /* source UDP port */
    uint16_t dst_port; /* destination UDP port */
    uint8_t reserved[12]; /* zero */
};
_Static_assert(sizeof(struct nanet_tx_descriptor) == 32, "nanet_tx_descriptor layout");

#endif /* NANET_REGS_H */

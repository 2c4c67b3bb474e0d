/* nanet: C API of the host library (libnanet_c.so).
 *
 * The same program runs on a real card ("0000:03:00.0") and on the simulated card ("sim").
 * Every call that can fail returns a negative number or NULL; nanet_last_error() then says why
 * (the message of the last failure in this thread).
 *
 * A buffer the card reported (an event with kind NANET_EVENT_BUFFER_FULL or
 * NANET_EVENT_TIMEOUT_FLUSH) belongs to the application until nanet_release(): read it with
 * nanet_buffer() and give it back; the card never writes it meanwhile.
 */
#ifndef NANET_H
#define NANET_H

#include <stddef.h>
#include <stdint.h>

#include "nanet_regs.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nanet_device nanet_device;
typedef struct nanet_clop nanet_clop;

/* A port's addresses (IPv4 addresses in network order: 10.0.0.1 is {10, 0, 0, 1}). */
typedef struct nanet_port_config {
    uint8_t mac[6];
    uint8_t ip[4];
    uint8_t netmask[4];
    uint8_t gateway[4];
} nanet_port_config;

#define NANET_LAYOUT_RAW 0u
#define NANET_LAYOUT_HEADER 1u

/* A CLOP: the datagrams to udp_port on port, into buffers x buffer_bytes. */
typedef struct nanet_clop_config {
    uint8_t port;
    uint16_t udp_port;
    uint32_t buffers;
    uint32_t buffer_bytes;
    uint8_t layout;            /* NANET_LAYOUT_* */
    uint32_t flush_timeout_us; /* 0: a buffer closes only when full */
    uint8_t skip_held;         /* 1: skip buffers the application holds; 0: drop */
} nanet_clop_config;

/* An event (kinds: NANET_EVENT_* of nanet_regs.h). Timestamps are 250 MHz card cycles. */
typedef struct nanet_event {
    uint8_t kind;
    uint8_t clop;
    uint16_t buffer;
    uint32_t bytes;
    uint16_t packets;
    uint16_t first_seq;
    uint16_t last_seq;
    uint32_t sop_at_mac;
    uint32_t header_parsed;
    uint32_t first_dma_beat;
    uint32_t last_dma_beat;
} nanet_event;

/* The message of this thread's last failure ("" if none). Valid until the next call. */
const char *nanet_last_error(void);

nanet_device *nanet_open(const char *name);
void nanet_close(nanet_device *dev);
int nanet_port_configure(nanet_device *dev, uint8_t port, const nanet_port_config *config);

/* Registers a CLOP; NULL on failure (invalid configuration, UDP port taken, TLB full...). */
nanet_clop *nanet_register(nanet_device *dev, const nanet_clop_config *config);
/* Stops the CLOP: when this returns 0, the card writes none of its buffers and the handle is
 * gone (any later use of it fails). -1 if another thread's call is using the CLOP right now: the
 * handle stays registered; call again. */
int nanet_deregister(nanet_clop *clop);
/* The card's id of the CLOP (the clop field of its events). */
int nanet_clop_id(const nanet_clop *clop);

/* Waits up to timeout_ms for an event of any CLOP (nanet_wait) or of one (nanet_clop_wait):
 * 1 with *event filled, 0 on timeout, -1 on failure. */
int nanet_wait(nanet_device *dev, uint32_t timeout_ms, nanet_event *event);
int nanet_clop_wait(nanet_clop *clop, uint32_t timeout_ms, nanet_event *event);

/* The bytes of the buffer a buffer event reported (*len of them); NULL on failure. */
const uint8_t *nanet_buffer(nanet_clop *clop, const nanet_event *event, size_t *len);
/* Gives a reported buffer back to the card (once). The write is posted: it may reach the card
 * after the call returns. */
int nanet_release(nanet_clop *clop, uint16_t buffer);
/* Returns once every register write made so far (releases above all) has reached the card. */
int nanet_flush_writes(nanet_device *dev);

/* A counter by name (see docs/regmap.md): port -1 for the receive engine, -2 for the transmit
 * engine, 0..3 for a port. */
int nanet_counter(nanet_device *dev, int port, const char *name, uint32_t *value);
/* Sends one UDP datagram (1 to 1472 bytes of payload, copied) from port to dst_ip (network
 * order, 4 bytes):dst_port; waits while the transmit ring is full. */
int nanet_send(nanet_device *dev, uint8_t port, const uint8_t *dst_ip, uint16_t dst_port,
               uint16_t src_port, const uint8_t *payload, size_t len);
/* The interrupt as a pollable fd (eventfd). */
int nanet_event_fd(nanet_device *dev);

/* Simulated card only: the far end of port's link sends one UDP datagram to udp_port. */
int nanet_sim_send_udp(nanet_device *dev, uint8_t port, uint16_t udp_port, const uint8_t *payload,
                       size_t len);

#ifdef __cplusplus
}
#endif

#endif /* NANET_H */

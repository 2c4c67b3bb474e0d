/* nanet: C API of the host library (libnanet_c.so).
 *
 * The same program runs on a real card ("0000:03:00.0") and on the simulated card ("sim").
 *
 * Errors: every call that can fail returns a negative nanet_status (calls that return an int) or
 * NULL (calls that return a pointer); nanet_last_status() then gives the status and
 * nanet_last_error() the message of this thread's last failure. Success leaves both as they were.
 *
 * Threads: every call may be made from any thread, on the same device and CLOPs at once; the
 * library serialises what must be (the card's command sequences) and nothing else. Handles are
 * numbers checked on every call: a handle used after nanet_close() / nanet_deregister(), closed
 * twice or made up is refused with NANET_E_HANDLE, never a use of freed memory.
 *
 * Buffers: a buffer the card reported (an event with kind NANET_EVENT_BUFFER_FULL or
 * NANET_EVENT_TIMEOUT_FLUSH) belongs to the application until nanet_release(): read it with
 * nanet_buffer() and give it back; the card never writes it meanwhile. The pointer nanet_buffer()
 * returns is valid until nanet_release() of that buffer; nanet_deregister() refuses
 * (NANET_E_IN_USE) while any buffer of the CLOP is lent that way, so the memory is never freed
 * under it.
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
typedef struct nanet_gpu nanet_gpu;

/* What kind of failure a call had (the message beside it: nanet_last_error()). */
typedef enum nanet_status {
    NANET_OK = 0,
    NANET_E_ARGUMENT = -1,    /* a NULL pointer or an argument out of range */
    NANET_E_HANDLE = -2,      /* a device handle not open, a CLOP handle not registered */
    NANET_E_CONFIG = -3,      /* an invalid configuration (CLOP, port, send, simulator option) */
    NANET_E_IN_USE = -4,      /* UDP port, stream entry or TLB taken; CLOP in use or buffers lent */
    NANET_E_NOT_HELD = -5,    /* the buffer or event is not the application's */
    NANET_E_CARD = -6,        /* the card refused, did not finish, stopped, or sent nonsense */
    NANET_E_SYSTEM = -7,      /* VFIO, memory, I/O */
    NANET_E_UNSUPPORTED = -8, /* not in this build or on this device */
    NANET_E_INTERNAL = -9     /* a bug in nanet */
} nanet_status;

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

/* One datagram of nanet_send_batch(): from port to dst_ip (network order):dst_port, len (1 to
 * 1472) bytes of payload. */
typedef struct nanet_datagram {
    uint8_t port;
    uint8_t dst_ip[4];
    uint16_t dst_port;
    uint16_t src_port;
    const uint8_t *payload;
    size_t len;
} nanet_datagram;

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

/* This thread's last failure: its message ("" if none; valid until this thread's next failing
 * call), its status (NANET_OK if none), and any status's name ("NANET_E_CARD"; static). */
const char *nanet_last_error(void);
int nanet_last_status(void);
const char *nanet_status_name(int status);

/* The library's version and the contract it speaks: "nanet 0.1.0 (contract 2.0)" (static). */
const char *nanet_version(void);
/* The card's contract version (major in bits 31:16, minor in 15:0). */
int nanet_card_version(nanet_device *dev, uint32_t *version);
/* The PCIe variant the card was generated for: link generation in bits 7:0, lanes in 15:8, the
 * Avalon-ST beat in bytes in 23:16 (0x00100802: Gen2 x8, 128 bits; 0x00200803: Gen3 x8, 256 bits;
 * 0 from a card of contract 3.0, which does not say). */
int nanet_card_pcie(nanet_device *dev, uint32_t *pcie);

/* Opens a card; NULL on failure. The handle is valid until nanet_close(). */
nanet_device *nanet_open(const char *name);
/* Closes the handle (NULL does nothing). The card stays open while CLOPs registered through it
 * are (they keep working until nanet_deregister()). */
void nanet_close(nanet_device *dev);
int nanet_port_configure(nanet_device *dev, uint8_t port, const nanet_port_config *config);

/* Registers a CLOP; NULL on failure (invalid configuration, UDP port taken, TLB full...). The
 * handle is valid until nanet_deregister() returns 0. */
nanet_clop *nanet_register(nanet_device *dev, const nanet_clop_config *config);
/* Stops the CLOP: when this returns 0, the card writes none of its buffers, its memory is freed
 * and the handle is gone (any later use of it fails). NANET_E_IN_USE, the CLOP still registered,
 * while a buffer is lent (nanet_buffer() without nanet_release()) or another thread's call is
 * using the CLOP right now: release, or wait, and call again. */
int nanet_deregister(nanet_clop *clop);
/* The card's id of the CLOP (the clop field of its events). */
int nanet_clop_id(const nanet_clop *clop);

/* GPU memory for CLOPs (the card writes datagrams straight into it, peer to peer).
 * nanet_gpu_open() opens CUDA device `ordinal` through GDRCopy (NVIDIA driver and GDRCopy 2.x are
 * loaded at this call; a real card opened through the legacy VFIO container is needed, see
 * host/README.md); nanet_gpu_open_stand_in() opens a stand-in in host memory for the simulated
 * card and tests. NULL on failure. The handle is valid until nanet_gpu_close(); allocations stay
 * while a CLOP is registered in them, whatever is closed or freed. */
nanet_gpu *nanet_gpu_open(int ordinal);
nanet_gpu *nanet_gpu_open_stand_in(void);
void nanet_gpu_close(nanet_gpu *gpu);
/* Allocates len bytes of device memory (rounded up to, and aligned on, 2 MiB: a CLOP in GPU
 * memory maps the card's TLB in 2 MiB pages, 256 MiB per card); *device_address is the CUDA
 * device pointer. Freed by nanet_gpu_free() (or nanet_gpu_close()) once no CLOP uses it. */
int nanet_gpu_alloc(nanet_gpu *gpu, uint64_t len, uint64_t *device_address);
int nanet_gpu_free(nanet_gpu *gpu, uint64_t device_address);
/* Copies len bytes of device memory inside an allocation of this handle to out (slow: for checks
 * and tools; a CUDA kernel reads the buffers in place). */
int nanet_gpu_copy_to_host(nanet_gpu *gpu, uint64_t device_address, uint8_t *out, size_t len);
/* Registers a CLOP whose buffers are config->buffers x config->buffer_bytes bytes of GPU memory at
 * device_address (2 MiB aligned, inside one allocation of gpu, overlapping no other CLOP); NULL on
 * failure. Its buffer events are delivered only after the card's writes are visible to the GPU's
 * later work (flushed where the GPU does not order them itself). nanet_buffer() refuses its
 * buffers (NANET_E_NOT_HELD): nanet_clop_device_address() says where a buffer is, for a CUDA
 * kernel; nanet_release() gives it back. */
nanet_clop *nanet_register_gpu(nanet_device *dev, const nanet_clop_config *config, nanet_gpu *gpu,
                               uint64_t device_address);
int nanet_clop_device_address(nanet_clop *clop, uint16_t buffer, uint64_t *device_address);

/* The next event of any CLOP (nanet_poll, nanet_wait) or of one (nanet_clop_poll,
 * nanet_clop_wait): 1 with *event filled, 0 if none (the poll calls never block; the wait calls
 * wait up to timeout_ms), negative on failure. Records read for another CLOP are kept for its
 * next call; one CLOP's records are kept up to its buffer count plus 64, then dropped and
 * counted (their buffers go back to the card). */
int nanet_poll(nanet_device *dev, nanet_event *event);
int nanet_clop_poll(nanet_clop *clop, nanet_event *event);
int nanet_wait(nanet_device *dev, uint32_t timeout_ms, nanet_event *event);
int nanet_clop_wait(nanet_clop *clop, uint32_t timeout_ms, nanet_event *event);

/* The interrupt as a pollable fd (an eventfd, owned by the device: do not close it). For an event
 * loop: nanet_arm_interrupt(), poll the fd, then nanet_clear_interrupt() (the interrupts since the
 * last clear, 0 if none) and nanet_poll() until it returns 0, then arm again. */
int nanet_event_fd(nanet_device *dev);
int nanet_arm_interrupt(nanet_device *dev);
int nanet_clear_interrupt(nanet_device *dev);

/* The bytes of the buffer a buffer event reported (*len of them); NULL on failure. Valid until
 * nanet_release() of the buffer. */
const uint8_t *nanet_buffer(nanet_clop *clop, const nanet_event *event, size_t *len);
/* Gives a reported buffer back to the card (once). The write is posted: it may reach the card
 * after the call returns. */
int nanet_release(nanet_clop *clop, uint16_t buffer);
/* Returns once every register write made so far (releases above all) has reached the card. */
int nanet_flush_writes(nanet_device *dev);

/* A counter by name (see docs/regmap.md): port -1 for the receive engine, -2 for the transmit
 * rings' counters summed over the rings, 0 to ports - 1 for a port's (its offload core's, its
 * receive side's and its own transmit ring's: tx_sent, ...); anything else: NANET_E_ARGUMENT. */
int nanet_counter(nanet_device *dev, int port, const char *name, uint32_t *value);
/* Sends one UDP datagram (1 to 1472 bytes of payload, copied) from port to dst_ip (network
 * order, 4 bytes):dst_port, through the port's own transmit ring; waits while that ring is
 * full. A longer len is refused (NANET_E_CONFIG) before payload is read. */
int nanet_send(nanet_device *dev, uint8_t port, const uint8_t *dst_ip, uint16_t dst_port,
               uint16_t src_port, const uint8_t *payload, size_t len);
/* Sends count datagrams as nanet_send() each (each into its port's ring, in order within a
 * port; the ports' rings run independently), with one doorbell (a register write the card takes
 * cycles over) per ring the batch touches, and one more before each wait for a free slot: small
 * datagrams go out faster. Every datagram is checked first: one bad datagram refuses the whole
 * batch, nothing sent (NANET_E_CONFIG for a payload length, NANET_E_ARGUMENT for a NULL pointer
 * or a port the card lacks). A card error or a wait that times out (NANET_E_CARD) may come after
 * some datagrams were posted (the rings are filled in port order): a port's tx_sent counter
 * (nanet_counter) tells what the card sent from it. */
int nanet_send_batch(nanet_device *dev, const nanet_datagram *batch, size_t count);

/* Simulated card only (NANET_E_UNSUPPORTED otherwise): the far end of port's link sends one UDP
 * datagram to udp_port. */
int nanet_sim_send_udp(nanet_device *dev, uint8_t port, uint16_t udp_port, const uint8_t *payload,
                       size_t len);

#ifdef __cplusplus
}
#endif

#endif /* NANET_H */

/* The C API end to end on the simulated card: open, configure a port, register a CLOP, receive
 * datagrams, walk the per-packet headers, release, read counters, send, deregister, close.
 * Exits 0 when every check holds. Built and run by `make test` (see the Makefile). */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <stdio.h>
#include <time.h>
#include <string.h>

#include "nanet.h"

#define CHECK(cond, ...)                                                  \
    do {                                                                  \
        if (!(cond)) {                                                    \
            fprintf(stderr, "rx.c:%d: ", __LINE__);                       \
            fprintf(stderr, __VA_ARGS__);                                 \
            fprintf(stderr, " (nanet: %s)\n", nanet_last_error());        \
            return 1;                                                     \
        }                                                                 \
    } while (0)

int main(void) {
    nanet_device *dev = nanet_open("sim");
    CHECK(dev != NULL, "open");
    CHECK(nanet_open("no-such-card") == NULL && strlen(nanet_last_error()) > 0,
          "a bad name is refused with a message");

    nanet_port_config port = {{0x02, 0, 0, 0, 1, 0}, {10, 0, 0, 10}, {255, 255, 255, 0}, {10, 0, 0, 1}};
    CHECK(nanet_port_configure(dev, 0, &port) == 0, "port config");

    nanet_clop_config cfg = {0, 5000, 4, 4096, NANET_LAYOUT_HEADER, 20, 0};
    nanet_clop *clop = nanet_register(dev, &cfg);
    CHECK(clop != NULL, "register");
    CHECK(nanet_register(dev, &cfg) == NULL, "the UDP port is taken");
    printf("CLOP %d registered; the second registration said: %s\n", nanet_clop_id(clop),
           nanet_last_error());

    enum { N = 20 };
    for (int i = 0; i < N; i++) {
        char msg[64];
        int len = snprintf(msg, sizeof msg, "datagram number %d", i);
        CHECK(nanet_sim_send_udp(dev, 0, 5000, (const uint8_t *)msg, (size_t)len) == 0, "send");
    }

    int seen = 0;
    while (seen < N) {
        nanet_event ev;
        int r = nanet_clop_wait(clop, 20000, &ev);
        CHECK(r == 1, "an event within 20 s");
        CHECK(ev.kind == NANET_EVENT_BUFFER_FULL || ev.kind == NANET_EVENT_TIMEOUT_FLUSH,
              "a buffer event, got kind %u", ev.kind);
        size_t len = 0;
        const uint8_t *buf = nanet_buffer(clop, &ev, &len);
        CHECK(buf != NULL && len == ev.bytes, "buffer");
        size_t off = 0;
        for (int k = 0; k < ev.packets; k++) {
            struct nanet_packet_header h;
            memcpy(&h, buf + off, sizeof h);
            char want[64];
            int wl = snprintf(want, sizeof want, "datagram number %d", seen);
            CHECK(h.len == wl && memcmp(buf + off + sizeof h, want, (size_t)wl) == 0,
                  "datagram %d in order", seen);
            CHECK(h.src_ip[0] == 10 && h.src_ip[3] == 99, "source address");
            off += sizeof h + ((h.len + 15u) & ~15u);
            seen++;
        }
        printf("buffer %u: %u datagrams, %u bytes, card latency %u cycles\n", ev.buffer,
               ev.packets, ev.bytes, ev.last_dma_beat - ev.sop_at_mac);
        CHECK(nanet_release(clop, ev.buffer) == 0, "release");
        CHECK(nanet_release(clop, ev.buffer) < 0, "a second release is refused");
    }
    CHECK(nanet_flush_writes(dev) == 0, "the card has every release");
    CHECK(nanet_flush_writes(NULL) < 0, "a NULL device is refused");

    uint32_t committed = 0;
    CHECK(nanet_counter(dev, -1, "committed", &committed) == 0 && committed == N,
          "committed counter %u", committed);
    uint32_t forwarded = 0;
    CHECK(nanet_counter(dev, 0, "forwarded", &forwarded) == 0 && forwarded == N, "forwarded");
    CHECK(nanet_counter(dev, 0, "no_such_counter", &forwarded) < 0, "unknown counter refused");
    CHECK(nanet_event_fd(dev) >= 0, "event fd");

    /* Sending: a datagram from port 1 through its transmit ring; the card takes it from host
     * memory (the peer never answers ARP, so the port drops it later, counted there). */
    const uint8_t peer[4] = {10, 0, 0, 99};
    CHECK(nanet_send(dev, 1, peer, 9, 4000, (const uint8_t *)"hello", 5) == 0, "send");
    CHECK(nanet_send(dev, 1, peer, 9, 4000, (const uint8_t *)"", 0) < 0, "an empty send refused");
    /* Two more with one doorbell. */
    const nanet_datagram batch[2] = {
        {.port = 1, .dst_ip = {10, 0, 0, 99}, .dst_port = 9, .src_port = 4000,
         .payload = (const uint8_t *)"one", .len = 3},
        {.port = 1, .dst_ip = {10, 0, 0, 99}, .dst_port = 9, .src_port = 4000,
         .payload = (const uint8_t *)"two", .len = 3},
    };
    CHECK(nanet_send_batch(dev, batch, 2) == 0, "send a batch");
    uint32_t sent = 0;
    for (int i = 0; i < 1000 && sent < 3; i++) {
        CHECK(nanet_counter(dev, 1, "tx_sent", &sent) == 0, "port 1's transmit ring's counter");
        nanosleep(&(struct timespec){.tv_sec = 0, .tv_nsec = 1000000}, NULL);
    }
    CHECK(sent == 3, "the card sent %u datagrams", sent);
    CHECK(nanet_deregister(clop) == 0, "deregister");
    nanet_close(dev);
    printf("C API: %d datagrams received and checked\n", N);
    return 0;
}

/* SPDX-License-Identifier: MPL-2.0 */
/* amqp.h - one AMQP 0-9-1 connection (librabbitmq-c) with publisher confirms, manual-ack
 * consumers, dead-lettering with a reason, delay queues and automatic reconnection.
 *
 * Design. A handle owns one connection with two channels: channel 1 consumes (basic.qos
 * prefetch, manual ack), channel 2 publishes in confirm mode and runs declarations, so that
 * a channel error caused by a publish or a passive declare (404, 406) never tears down the
 * consumers. Every publish waits for its basic.ack (a nack, an unroutable return or the
 * confirm timeout is an error). Deliveries that arrive while a publish waits for its confirm
 * are kept in order and handed out by rt_amqp_next.
 *
 * Reconnection. Declarations made through the handle (exchanges, queues, bindings, the
 * topology) and consumers are remembered; when a call finds the connection lost, the handle
 * reconnects with exponential backoff and full jitter (at most reconnect_timeout_ms per
 * call), re-declares everything and restarts the consumers. A publish interrupted by a lost
 * connection is sent again after reconnecting, so delivery is at-least-once (consumers
 * dedupe). Messages received before the loss can no longer be acked: ack/nack return
 * RT_ECONN and the broker redelivers them (redelivered = true). A refused TLS certificate,
 * a refused login or a bad CA file is permanent and is not retried.
 *
 * Delays. rt_amqp_publish_delayed uses one queue per (work queue, delay): "Q.delay.D" with
 * x-message-ttl = D and x-dead-letter-exchange/-routing-key pointing back at Q. Per-queue TTL
 * is used instead of per-message expiration because RabbitMQ only expires messages at the
 * head of a queue: a 60 s message in front of a 1 s message would hold it back for 60 s.
 * With one TTL per queue every message expires in publish order, so nothing is blocked.
 *
 * Heartbeats are handled inside library calls: call into the handle (rt_amqp_next with a
 * timeout) at least every heartbeat interval, or the broker closes the connection.
 * The password never reaches errstr or a log line (it is registered with the logger).
 * Thread-safety: a handle belongs to one thread at a time. */
#ifndef RETRIG_COMMON_AMQP_H
#define RETRIG_COMMON_AMQP_H

#include "common/not_core.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/core/errors.h"

/* Our names (the topology the workers share). */
#define RT_AMQP_EXCHANGE             "retrig"
#define RT_AMQP_DEAD_LETTER_EXCHANGE "retrig.dlx"
#define RT_AMQP_DEAD_LETTER_QUEUE    "retrig.dead-letter"
#define RT_AMQP_SYSTEM_CA_FILE       "/etc/ssl/certs/ca-certificates.crt"
#define RT_AMQP_REASON_MAX           200 /* bytes kept of a dead-letter reason */
#define RT_AMQP_NAME_MAX             255 /* AMQP short string */

typedef struct rt_amqp rt_amqp;

typedef struct rt_amqp_options {
    const char *url;          /* amqp://user:pass@host:port/vhost or amqps://... */
    const char *ca_file;      /* amqps: CA bundle; NULL: RT_AMQP_SYSTEM_CA_FILE */
    const char *worker;       /* connection name "retrig-<worker>"; NULL: "retrig" */
    int prefetch;             /* basic.qos on the consume channel; 0: 10 */
    int heartbeat_s;          /* 0: 30 */
    int connect_timeout_ms;   /* TCP connect + TLS + AMQP handshake; 0: 10000 */
    int rpc_timeout_ms;       /* one broker round trip; 0: 10000 */
    int confirm_timeout_ms;   /* wait for a publisher confirm; 0: 10000 */
    int reconnect_timeout_ms; /* how long one call may spend reconnecting; 0: 30000 */
    int backoff_base_ms;      /* first reconnect delay; 0: 200 */
    int backoff_max_ms;       /* 0: 10000 */
    bool quorum_work_queues;  /* declare the topology's work queues as quorum queues */
} rt_amqp_options;

/* The user name in an amqp(s):// URL ("guest" when it names none), for Pulse queue names
 * (queue/<user>/...). */
void rt_amqp_url_user(const char *url, char *out, size_t size);

/* Creates a handle: checks and copies the options, no I/O. Connect with
 * rt_amqp_ensure_connected. On failure *out is NULL and errstr (RT_ERRSTR_SIZE) says why. */
RT_MUSTCHECK int rt_amqp_new(rt_amqp **out, const rt_amqp_options *opts, char *errstr);
/* Closes the connection cleanly (unacked deliveries go back to their queues) and frees. */
void rt_amqp_free(rt_amqp *h);
/* Human detail of the last failure; never contains the password. */
const char *rt_amqp_errstr(const rt_amqp *h);

/* Connects if not connected, retrying with backoff and jitter for at most timeout_ms
 * (0: one attempt unless the backoff delay has not passed yet). After a reconnect the
 * remembered declarations and consumers are restored. RT_ECONN when still not connected,
 * RT_EAUTH for a refused login or TLS certificate, RT_ECONFIG for a bad CA file. */
RT_MUSTCHECK int rt_amqp_ensure_connected(rt_amqp *h, int timeout_ms);
/* Whether the connection is up as far as the last call could tell (for health checks). */
bool rt_amqp_is_connected(const rt_amqp *h);
/* How many times the handle has connected (1 + reconnects); for metrics and tests. */
unsigned long rt_amqp_connection_count(const rt_amqp *h);
/* The socket of the connection, or -1 (for poll() and for tests that cut the connection). */
int rt_amqp_socket_fd(const rt_amqp *h);

/* ---- topology ---- */

typedef struct rt_amqp_work_queue {
    const char *name;        /* "retrig.retrigger" */
    const char *routing_key; /* its binding on the work exchange, e.g. "retrigger" (no wildcards) */
    const int *delays_ms;    /* delay queues "<name>.delay.<ms>" to declare; may be NULL */
    size_t delay_count;
} rt_amqp_work_queue;

typedef struct rt_amqp_topology {
    const char *exchange;             /* work exchange, durable topic; NULL: "retrig" */
    const char *dead_letter_exchange; /* durable topic; NULL: "retrig.dlx" */
    const char *dead_letter_queue;    /* bound to it with "#"; NULL: "retrig.dead-letter" */
    const rt_amqp_work_queue *queues;
    size_t queue_count;
    long expires_ms; /* x-expires on every queue (tests); 0: none */
} rt_amqp_topology;

typedef struct rt_amqp_queue_args {
    bool transient;                      /* not durable */
    bool auto_delete;                    /* deleted after its last consumer goes */
    long message_ttl_ms;                 /* x-message-ttl; 0: none */
    const char *dead_letter_exchange;    /* x-dead-letter-exchange; NULL: none */
    const char *dead_letter_routing_key; /* x-dead-letter-routing-key; NULL: none */
    long expires_ms;                     /* x-expires; 0: none */
    bool quorum;                         /* x-queue-type quorum (durable, replicated) */
} rt_amqp_queue_args;

/* Declares the work exchange, each work queue bound to it by its routing key (with
 * quorum_work_queues every queue of the topology is a quorum queue, delay and dead-letter
 * queues included, so that a node of a cluster can go without taking a queue with it; a
 * quorum delay queue dead-letters at least once, x-overflow reject-publish) (with
 * x-dead-letter-exchange = the dead-letter exchange, so a nack without requeue is kept),
 * each delay queue, and the dead-letter exchange and queue. Idempotent: the same arguments
 * every time. Remembers the dead-letter exchange for rt_amqp_dead_letter. */
RT_MUSTCHECK int rt_amqp_declare_topology(rt_amqp *h, const rt_amqp_topology *topo);
/* Deletes everything rt_amqp_declare_topology declared (tests, tear-down). */
RT_MUSTCHECK int rt_amqp_delete_topology(rt_amqp *h, const rt_amqp_topology *topo);
/* A durable exchange of type "topic", "direct", "fanout" or "headers". */
RT_MUSTCHECK int rt_amqp_declare_exchange(rt_amqp *h, const char *name, const char *type);
/* A queue; args may be NULL (durable, no arguments). */
RT_MUSTCHECK int rt_amqp_declare_queue(rt_amqp *h, const char *name,
                                       const rt_amqp_queue_args *args);
/* Binds queue to exchange with a routing-key pattern ("primary.#.linux64.#"). */
RT_MUSTCHECK int rt_amqp_bind_queue(rt_amqp *h, const char *queue, const char *exchange,
                                    const char *pattern);
RT_MUSTCHECK int rt_amqp_delete_queue(rt_amqp *h, const char *name);
RT_MUSTCHECK int rt_amqp_delete_exchange(rt_amqp *h, const char *name);
/* Messages ready in a queue (passive declare); RT_ENOTFOUND when it does not exist. */
RT_MUSTCHECK int rt_amqp_queue_depth(rt_amqp *h, const char *queue, uint32_t *count);

/* ---- publishing ---- */

typedef struct rt_amqp_header {
    const char *key;
    const char *value;
} rt_amqp_header;

typedef struct rt_amqp_publish_opts {
    const char *message_id;        /* NULL: a random one */
    const char *content_type;      /* NULL: "application/json" */
    const rt_amqp_header *headers; /* string headers */
    size_t header_count;
    const char *const *cc; /* CC header: extra routing keys (a task's routes), as an array */
    size_t cc_count;
    int attempt;           /* header x-retrig-attempt, sent when > 0 */
    bool allow_unroutable; /* false: a message no queue takes is an error (RT_ENOTFOUND) */
} rt_amqp_publish_opts;

/* Publishes a persistent message and waits for the broker's confirm. opts may be NULL.
 * RT_ENOTFOUND: no such exchange, or unroutable; RT_EUPSTREAM: nacked; RT_ETIMEDOUT: no
 * confirm in time; RT_ECONN: still not connected after reconnect_timeout_ms. */
RT_MUSTCHECK int rt_amqp_publish(rt_amqp *h, const char *exchange, const char *routing_key,
                                 const void *body, size_t len, const rt_amqp_publish_opts *opts);
/* Publishes to the delay queue "<queue>.delay.<delay_ms>" (declared by the topology); the
 * message comes back to queue after delay_ms. RT_ENOTFOUND when that delay queue is missing. */
RT_MUSTCHECK int rt_amqp_publish_delayed(rt_amqp *h, const char *queue, int delay_ms,
                                         const void *body, size_t len,
                                         const rt_amqp_publish_opts *opts);

/* ---- consuming ---- */

typedef struct rt_amqp_message {
    char *body; /* NUL-terminated copy */
    size_t len;
    char *queue; /* the queue it was consumed from */
    char *exchange;
    char *routing_key;
    char *content_type; /* NULL when absent */
    char *message_id;   /* NULL when absent */
    uint64_t delivery_tag;
    bool redelivered;
    rt_amqp_header *headers; /* scalar headers as text (numbers in decimal) */
    size_t header_count;
    char **cc; /* the CC header (Taskcluster routes), when present */
    size_t cc_count;
    long death_count; /* sum of x-death[].count: times the broker dead-lettered it */
    int attempt;      /* x-retrig-attempt, 0 when absent */
    struct rt__amqp_delivery *rt__delivery; /* internal */
} rt_amqp_message;

/* Starts a consumer on queue (manual ack); restarted after reconnects. */
RT_MUSTCHECK int rt_amqp_consume(rt_amqp *h, const char *queue);
/* Cancels every consumer; messages already received can still be acked. */
RT_MUSTCHECK int rt_amqp_stop_consuming(rt_amqp *h);
/* Waits up to timeout_ms for the next message. 0 and *msg filled (free it with
 * rt_amqp_message_free), RT_ETIMEDOUT, or RT_ECONN when the connection is down and could not
 * be restored within the timeout. */
RT_MUSTCHECK int rt_amqp_next(rt_amqp *h, rt_amqp_message *msg, int timeout_ms);
RT_MUSTCHECK int rt_amqp_ack(rt_amqp *h, const rt_amqp_message *msg);
RT_MUSTCHECK int rt_amqp_nack(rt_amqp *h, const rt_amqp_message *msg, bool requeue);
/* Acks n received messages, in one frame when they are all the deliveries of the consume
 * channel still unsettled (the common case for a worker that settles every message before
 * it reads on), else one by one. Returns RT_OK or the first error (RT_ECONN: the broker
 * redelivers what was not acked). */
RT_MUSTCHECK int rt_amqp_ack_many(rt_amqp *h, rt_amqp_message *const *msgs, size_t n);
/* Publishes a copy (same body and properties, plus x-retrig-reason, x-retrig-source-queue,
 * x-retrig-original-exchange, x-retrig-original-routing-key, x-retrig-failed-at) to the
 * dead-letter exchange with a confirm, then acks the original. The reason is cut to
 * RT_AMQP_REASON_MAX bytes, control characters become spaces and secrets are redacted.
 * A crash in between redelivers the original, so a reason may be recorded twice. */
RT_MUSTCHECK int rt_amqp_dead_letter(rt_amqp *h, const rt_amqp_message *msg, const char *reason);
/* The value of a header of msg, or NULL. */
const char *rt_amqp_message_header(const rt_amqp_message *msg, const char *key);
/* Frees what msg owns and zeroes it; safe on a zeroed message. */
void rt_amqp_message_free(rt_amqp_message *msg);

#endif

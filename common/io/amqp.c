/* SPDX-License-Identifier: MPL-2.0 */
/* amqp.c - one AMQP connection: confirms, manual-ack consumers, dead letters, delay queues,
 * reconnection with the topology and consumers restored. See amqp.h for the design.
 * Not thread-safe: one handle per thread. */
#include "common/io/amqp.h"

#include <amqp.h>
#include <amqp_framing.h>
#include <amqp_ssl_socket.h>
#include <amqp_tcp_socket.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "common/io/log.h"
#include "common/io/stop.h"

enum { CH_CONSUME = 1, CH_PUBLISH = 2 };
#define FRAME_MAX      131072
#define RETRY_ATTEMPTS 3 /* tries of one operation across reconnects */

typedef enum { DECL_EXCHANGE, DECL_QUEUE, DECL_BIND } decl_kind;

/* A declaration to replay after a reconnect. */
typedef struct decl {
    decl_kind kind;
    char *name;              /* exchange or queue */
    char *target;            /* exchange type (DECL_EXCHANGE) or exchange (DECL_BIND) */
    char *key;               /* binding pattern (DECL_BIND) */
    rt_amqp_queue_args args; /* DECL_QUEUE; its strings are owned */
} decl;

typedef struct consumer {
    char *queue;
    char *tag; /* from the broker; NULL until started on the current channel */
} consumer;

struct rt__amqp_delivery {
    uint64_t generation; /* of the consume channel it came on */
    bool settled;
    amqp_message_t raw; /* properties for dead-lettering (body already moved out) */
};

typedef struct pending {
    struct pending *next;
    rt_amqp_message msg;
} pending;

struct rt_amqp {
    bool quorum_work_queues;
    char errstr[RT_ERRSTR_SIZE];
    char **url_copies; /* one URL a broker address; amqp_parse_url points into them */
    struct amqp_connection_info *infos;
    size_t nhosts, host;              /* the addresses, and the one in use */
    struct amqp_connection_info info; /* infos[host] */
    char display[RT_ERRSTR_SIZE / 2]; /* amqp://user@host:port/vhost, no password */
    char *ca_file;
    char *connection_name;
    int prefetch, heartbeat_s, connect_timeout_ms, rpc_timeout_ms, confirm_timeout_ms;
    int reconnect_timeout_ms, backoff_base_ms, backoff_max_ms;

    amqp_connection_state_t conn; /* NULL: disconnected */
    bool established;             /* conn finished connect_once */
    bool consume_open, publish_open;
    int publish_close_rc; /* why the broker closed the publish channel */
    uint64_t generation;  /* bumped whenever the consume channel is (re)opened */
    uint64_t unsettled;   /* deliveries of this generation handed out and not settled */
    uint64_t publish_seq; /* publisher-confirm sequence on the publish channel */
    uint64_t waiting_seq; /* the publish waiting for its confirm, or 0 */
    int confirm;          /* for waiting_seq: 0 none yet, 1 ack, -1 nack */
    bool returned;        /* basic.return seen for the publish in flight */
    char return_text[128];

    decl *decls;
    size_t decl_count;
    consumer *consumers;
    size_t consumer_count;
    pending *pending_head, *pending_tail;
    char *dead_letter_exchange;

    unsigned long connections; /* successful connects, for metrics and tests */
    unsigned failures;         /* consecutive failed connection attempts */
    int64_t next_attempt_ms;   /* backoff: no attempt before this */
};

/* ---- small helpers ---- */

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static struct timeval timeval_ms(int64_t ms)
{
    if (ms < 0) ms = 0;
    return (struct timeval){.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};
}

static uint64_t random_u64(void)
{
    uint64_t v = 0;
    if (getrandom(&v, sizeof v, 0) != (ssize_t)sizeof v)
        v = (uint64_t)now_ms() * 6364136223846793005u;
    return v;
}

static char *dup_bytes(amqp_bytes_t b)
{
    char *s = malloc(b.len + 1);
    if (!s) return NULL;
    if (b.len) memcpy(s, b.bytes, b.len);
    s[b.len] = '\0';
    return s;
}

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

static bool same_string(const char *a, const char *b)
{
    return (a == NULL && b == NULL) || (a && b && strcmp(a, b) == 0);
}

static bool valid_name(const char *s, bool allow_empty)
{
    return s && (allow_empty || *s) && strlen(s) <= RT_AMQP_NAME_MAX;
}

/* Library statuses after which the connection cannot be used any more. */
static bool connection_status(int status)
{
    switch (status) {
    case AMQP_STATUS_CONNECTION_CLOSED:
    case AMQP_STATUS_SOCKET_ERROR:
    case AMQP_STATUS_SOCKET_CLOSED:
    case AMQP_STATUS_HEARTBEAT_TIMEOUT:
    case AMQP_STATUS_TIMEOUT:
    case AMQP_STATUS_TIMER_FAILURE:
    case AMQP_STATUS_BAD_AMQP_DATA:
    case AMQP_STATUS_UNKNOWN_CLASS:
    case AMQP_STATUS_UNKNOWN_METHOD:
    case AMQP_STATUS_UNEXPECTED_STATE:
    case AMQP_STATUS_TCP_ERROR:
    case AMQP_STATUS_SSL_ERROR: return true;
    default: return false;
    }
}

static int reply_code_error(unsigned code)
{
    switch (code) {
    case 403: return RT_EAUTH;     /* ACCESS_REFUSED */
    case 404: return RT_ENOTFOUND; /* NOT_FOUND */
    case 405:                      /* RESOURCE_LOCKED */
    case 406: return RT_ECONFLICT; /* PRECONDITION_FAILED: other arguments, unknown tag */
    default: return RT_EUPSTREAM;
    }
}

/* ---- pending deliveries ---- */

static void drop_pending(rt_amqp *h)
{
    pending *p = h->pending_head;
    while (p) {
        pending *next = p->next;
        rt_amqp_message_free(&p->msg);
        free(p);
        p = next;
    }
    h->pending_head = h->pending_tail = NULL;
}

/* ---- broker addresses ---- */

/* Makes address k (modulo their number) the one connections go to. */
static void use_host(rt_amqp *h, size_t k)
{
    h->host = k % h->nhosts;
    h->info = h->infos[h->host];
    snprintf(h->display, sizeof h->display, "%s://%s@%s:%d/%s", h->info.ssl ? "amqps" : "amqp",
             h->info.user, h->info.host, h->info.port,
             strcmp(h->info.vhost, "/") ? h->info.vhost : "");
}

/* Splits "amqp://user:pass@host1:port1,host2:port2/vhost" into one URL per address (the
 * same user, password and vhost), in *out (NULL-terminated, malloc'd); *n their number. */
static int split_url(const char *url, char ***out, size_t *n)
{
    *out = NULL;
    *n = 0;
    const char *scheme_end = strstr(url, "://");
    if (!scheme_end) return RT_ECONFIG;
    const char *authority = scheme_end + 3;
    const char *rest = authority + strcspn(authority, "/?#");
    const char *hosts = authority;
    for (const char *c = authority; c < rest; c++)
        if (*c == '@') hosts = c + 1;
    size_t count = 1;
    for (const char *c = hosts; c < rest; c++) count += *c == ',';
    char **urls = calloc(count + 1, sizeof *urls);
    if (!urls) return RT_ENOMEM;
    const char *host = hosts;
    for (size_t i = 0; i < count; i++) {
        const char *end = host + strcspn(host, ",/?#");
        if (end > rest) end = rest;
        size_t len = (size_t)(hosts - url) + (size_t)(end - host) + strlen(rest) + 1;
        if (!(urls[i] = malloc(len))) {
            for (size_t k = 0; k < i; k++) free(urls[k]);
            free(urls);
            return RT_ENOMEM;
        }
        snprintf(urls[i], len, "%.*s%.*s%s", (int)(hosts - url), url, (int)(end - host), host,
                 rest);
        host = end + 1;
    }
    *out = urls;
    *n = count;
    return RT_OK;
}

/* ---- connection loss and broker-initiated closes ---- */

static void drop_connection(rt_amqp *h)
{
    if (!h->conn) return;
    amqp_destroy_connection(h->conn);
    h->conn = NULL;
    h->consume_open = h->publish_open = false;
    for (size_t i = 0; i < h->consumer_count; i++) {
        free(h->consumers[i].tag);
        h->consumers[i].tag = NULL;
    }
    drop_pending(h); /* their delivery tags died with the connection; they are redelivered */
    if (h->established) {
        rt_log_warn("amqp connection lost", "broker", h->display, "error", h->errstr);
        if (h->nhosts > 1) use_host(h, h->host + 1); /* that node may be gone: try the next */
    }
    h->established = false;
}

static void mark_channel_closed(rt_amqp *h, amqp_channel_t channel, int rc)
{
    if (channel == CH_PUBLISH) {
        h->publish_open = false;
        h->publish_close_rc = rc;
    } else if (channel == CH_CONSUME) {
        h->consume_open = false;
        for (size_t i = 0; i < h->consumer_count; i++) {
            free(h->consumers[i].tag);
            h->consumers[i].tag = NULL;
        }
        drop_pending(h);
    }
}

static int channel_closed_by_broker(rt_amqp *h, amqp_channel_t channel,
                                    const amqp_channel_close_t *close, const char *what)
{
    int rc = reply_code_error(close->reply_code);
    rt_set_errstr(h->errstr, "%s: broker closed channel %u: %u %.*s", what, (unsigned)channel,
                  (unsigned)close->reply_code, (int)close->reply_text.len,
                  (const char *)close->reply_text.bytes);
    amqp_channel_close_ok_t ok = {0};
    int status = amqp_send_method(h->conn, channel, AMQP_CHANNEL_CLOSE_OK_METHOD, &ok);
    mark_channel_closed(h, channel, rc);
    if (status != AMQP_STATUS_OK) {
        drop_connection(h);
        return RT_ECONN;
    }
    return rc;
}

static int connection_closed_by_broker(rt_amqp *h, const amqp_connection_close_t *close,
                                       const char *what)
{
    rt_set_errstr(h->errstr, "%s: broker %s closed the connection: %u %.*s", what, h->display,
                  (unsigned)close->reply_code, (int)close->reply_text.len,
                  (const char *)close->reply_text.bytes);
    int rc = close->reply_code == 403 ? RT_EAUTH : RT_ECONN;
    amqp_connection_close_ok_t ok = {0};
    (void)amqp_send_method(h->conn, 0, AMQP_CONNECTION_CLOSE_OK_METHOD, &ok);
    drop_connection(h); /* frees close */
    return rc;
}

/* Turns an RPC reply into 0 or an RT_E* code with errstr; handles the closes it implies. */
static int check_reply(rt_amqp *h, amqp_rpc_reply_t r, amqp_channel_t channel, const char *what)
{
    switch (r.reply_type) {
    case AMQP_RESPONSE_NORMAL: return RT_OK;
    case AMQP_RESPONSE_SERVER_EXCEPTION:
        if (r.reply.id == AMQP_CHANNEL_CLOSE_METHOD)
            return channel_closed_by_broker(h, channel, r.reply.decoded, what);
        if (r.reply.id == AMQP_CONNECTION_CLOSE_METHOD)
            return connection_closed_by_broker(h, r.reply.decoded, what);
        rt_set_errstr(h->errstr, "%s: unexpected method 0x%08x from %s", what, (unsigned)r.reply.id,
                      h->display);
        drop_connection(h);
        return RT_EPROTO;
    case AMQP_RESPONSE_LIBRARY_EXCEPTION:
        rt_set_errstr(h->errstr, "%s: %s (%s)", what, amqp_error_string2(r.library_error),
                      h->display);
        drop_connection(h);
        return r.library_error == AMQP_STATUS_NO_MEMORY ? RT_ENOMEM : RT_ECONN;
    default:
        rt_set_errstr(h->errstr, "%s: no reply from %s", what, h->display);
        drop_connection(h);
        return RT_ECONN;
    }
}

#define CHECK_RPC(h, channel, what)                                                                \
    check_reply((h), amqp_get_rpc_reply((h)->conn), (channel), (what))

/* ---- building messages from deliveries ---- */

static bool field_integer(const amqp_field_value_t *v, int64_t *out)
{
    switch (v->kind) {
    case AMQP_FIELD_KIND_I8: *out = v->value.i8; return true;
    case AMQP_FIELD_KIND_U8: *out = v->value.u8; return true;
    case AMQP_FIELD_KIND_I16: *out = v->value.i16; return true;
    case AMQP_FIELD_KIND_U16: *out = v->value.u16; return true;
    case AMQP_FIELD_KIND_I32: *out = v->value.i32; return true;
    case AMQP_FIELD_KIND_U32: *out = v->value.u32; return true;
    case AMQP_FIELD_KIND_I64: *out = v->value.i64; return true;
    case AMQP_FIELD_KIND_U64:
    case AMQP_FIELD_KIND_TIMESTAMP: *out = (int64_t)v->value.u64; return true;
    default: return false;
    }
}

/* Text of a scalar field value (malloc'd), or NULL with *skip set for tables and arrays. */
static char *field_text(const amqp_field_value_t *v, bool *skip)
{
    char buf[64];
    int64_t n;
    *skip = false;
    if (v->kind == AMQP_FIELD_KIND_UTF8 || v->kind == AMQP_FIELD_KIND_BYTES)
        return dup_bytes(v->value.bytes);
    if (v->kind == AMQP_FIELD_KIND_BOOLEAN) return strdup(v->value.boolean ? "true" : "false");
    if (field_integer(v, &n)) {
        snprintf(buf, sizeof buf, "%" PRId64, n);
        return strdup(buf);
    }
    if (v->kind == AMQP_FIELD_KIND_F32 || v->kind == AMQP_FIELD_KIND_F64) {
        snprintf(buf, sizeof buf, "%.17g",
                 v->kind == AMQP_FIELD_KIND_F32 ? (double)v->value.f32 : v->value.f64);
        return strdup(buf);
    }
    *skip = true;
    return NULL;
}

static bool key_is(amqp_bytes_t key, const char *name)
{
    size_t n = strlen(name);
    return key.len == n && memcmp(key.bytes, name, n) == 0;
}

/* Fills the header views of msg from the AMQP headers table. */
static int read_headers(rt_amqp_message *msg, const amqp_table_t *table)
{
    msg->headers = calloc((size_t)table->num_entries + 1, sizeof *msg->headers);
    if (!msg->headers) return RT_ENOMEM;
    for (int i = 0; i < table->num_entries; i++) {
        const amqp_table_entry_t *e = &table->entries[i];
        if (key_is(e->key, "CC") && e->value.kind == AMQP_FIELD_KIND_ARRAY) {
            const amqp_array_t *a = &e->value.value.array;
            free(msg->cc);
            msg->cc = calloc((size_t)a->num_entries + 1, sizeof *msg->cc);
            if (!msg->cc) return RT_ENOMEM;
            msg->cc_count = 0;
            for (int j = 0; j < a->num_entries; j++) {
                const amqp_field_value_t *v = &a->entries[j];
                if (v->kind != AMQP_FIELD_KIND_UTF8 && v->kind != AMQP_FIELD_KIND_BYTES) continue;
                if (!(msg->cc[msg->cc_count] = dup_bytes(v->value.bytes))) return RT_ENOMEM;
                msg->cc_count++;
            }
            continue;
        }
        if (key_is(e->key, "x-death") && e->value.kind == AMQP_FIELD_KIND_ARRAY) {
            const amqp_array_t *a = &e->value.value.array;
            for (int j = 0; j < a->num_entries; j++) {
                if (a->entries[j].kind != AMQP_FIELD_KIND_TABLE) continue;
                const amqp_table_t *death = &a->entries[j].value.table;
                for (int k = 0; k < death->num_entries; k++) {
                    int64_t n;
                    if (key_is(death->entries[k].key, "count") &&
                        field_integer(&death->entries[k].value, &n))
                        msg->death_count += (long)n;
                }
            }
            continue;
        }
        bool skip;
        char *value = field_text(&e->value, &skip);
        if (skip) continue;
        char *key = dup_bytes(e->key);
        if (!value || !key) {
            free(value);
            free(key);
            return RT_ENOMEM;
        }
        msg->headers[msg->header_count].key = key;
        msg->headers[msg->header_count].value = value;
        msg->header_count++;
        int64_t n;
        if (!strcmp(key, "x-retrig-attempt") && field_integer(&e->value, &n) && n > 0 &&
            n < 1000000)
            msg->attempt = (int)n;
    }
    return RT_OK;
}

static const char *queue_of_consumer(const rt_amqp *h, amqp_bytes_t tag)
{
    for (size_t i = 0; i < h->consumer_count; i++) {
        const char *t = h->consumers[i].tag;
        if (t && strlen(t) == tag.len && memcmp(t, tag.bytes, tag.len) == 0)
            return h->consumers[i].queue;
    }
    return NULL;
}

/* Reads the content of a basic.deliver and queues it for rt_amqp_next. */
static int receive_delivery(rt_amqp *h, amqp_channel_t channel, const amqp_basic_deliver_t *d)
{
    int rc = RT_ENOMEM;
    pending *p = calloc(1, sizeof *p);
    struct rt__amqp_delivery *delivery = calloc(1, sizeof *delivery);
    if (!p || !delivery) goto fail;
    rt_amqp_message *msg = &p->msg;
    msg->rt__delivery = delivery;
    delivery->generation = h->generation;
    msg->delivery_tag = d->delivery_tag;
    msg->redelivered = d->redelivered != 0;
    const char *queue = queue_of_consumer(h, d->consumer_tag);
    msg->queue = strdup(queue ? queue : "");
    msg->exchange = dup_bytes(d->exchange);
    msg->routing_key = dup_bytes(d->routing_key);
    if (!msg->queue || !msg->exchange || !msg->routing_key) goto fail;

    amqp_rpc_reply_t r = amqp_read_message(h->conn, channel, &delivery->raw, 0);
    if (r.reply_type != AMQP_RESPONSE_NORMAL) {
        memset(&delivery->raw, 0, sizeof delivery->raw);
        rc = check_reply(h, r, channel, "reading a delivery");
        goto fail;
    }
    amqp_bytes_t body = delivery->raw.body;
    msg->len = body.len;
    msg->body = malloc(body.len + 1);
    if (!msg->body) goto fail;
    if (body.len) memcpy(msg->body, body.bytes, body.len);
    msg->body[body.len] = '\0';
    amqp_bytes_free(delivery->raw.body);
    delivery->raw.body = amqp_empty_bytes;

    const amqp_basic_properties_t *props = &delivery->raw.properties;
    if ((props->_flags & AMQP_BASIC_CONTENT_TYPE_FLAG) &&
        !(msg->content_type = dup_bytes(props->content_type)))
        goto fail;
    if ((props->_flags & AMQP_BASIC_MESSAGE_ID_FLAG) &&
        !(msg->message_id = dup_bytes(props->message_id)))
        goto fail;
    if (props->_flags & AMQP_BASIC_HEADERS_FLAG) {
        if (read_headers(msg, &props->headers) != RT_OK) goto fail;
    }
    if (channel != CH_CONSUME) { /* not ours: cannot happen, but never leak it */
        rt_amqp_message_free(msg);
        free(p);
        return RT_OK;
    }
    if (h->pending_tail)
        h->pending_tail->next = p;
    else
        h->pending_head = p;
    h->pending_tail = p;
    return RT_OK;

fail:
    if (p)
        rt_amqp_message_free(&p->msg);
    else
        free(delivery);
    free(p);
    if (rc == RT_ENOMEM) rt_set_errstr(h->errstr, "out of memory reading a delivery");
    return rc;
}

/* ---- the frame pump ---- */

/* Reads and handles one frame, waiting until deadline. RT_OK, RT_ETIMEDOUT, RT_ECONN (the
 * connection is gone) or RT_ENOMEM. Channel closes are recorded on the handle. */
static int pump(rt_amqp *h, int64_t deadline)
{
    amqp_maybe_release_buffers(h->conn);
    struct timeval tv = timeval_ms(deadline - now_ms());
    amqp_frame_t frame;
    int status = amqp_simple_wait_frame_noblock(h->conn, &frame, &tv);
    if (status == AMQP_STATUS_TIMEOUT) return RT_ETIMEDOUT;
    if (status != AMQP_STATUS_OK) {
        rt_set_errstr(h->errstr, "connection to %s lost: %s", h->display,
                      amqp_error_string2(status));
        drop_connection(h);
        return status == AMQP_STATUS_NO_MEMORY ? RT_ENOMEM : RT_ECONN;
    }
    if (frame.frame_type != AMQP_FRAME_METHOD) return RT_OK;
    void *decoded = frame.payload.method.decoded;
    switch (frame.payload.method.id) {
    case AMQP_BASIC_DELIVER_METHOD: {
        int rc = receive_delivery(h, frame.channel, decoded);
        return rc == RT_ECONN || rc == RT_ENOMEM ? rc : RT_OK;
    }
    case AMQP_BASIC_RETURN_METHOD: {
        const amqp_basic_return_t *ret = decoded;
        snprintf(h->return_text, sizeof h->return_text, "%u %.*s", (unsigned)ret->reply_code,
                 (int)ret->reply_text.len, (const char *)ret->reply_text.bytes);
        h->returned = true;
        amqp_message_t m;
        amqp_rpc_reply_t r = amqp_read_message(h->conn, frame.channel, &m, 0);
        if (r.reply_type != AMQP_RESPONSE_NORMAL) {
            int rc = check_reply(h, r, frame.channel, "reading a returned message");
            return rc == RT_ECONN || rc == RT_ENOMEM ? rc : RT_OK;
        }
        amqp_destroy_message(&m);
        return RT_OK;
    }
    case AMQP_BASIC_ACK_METHOD:
    case AMQP_BASIC_NACK_METHOD: {
        uint64_t tag;
        bool multiple;
        if (frame.payload.method.id == AMQP_BASIC_ACK_METHOD) {
            tag = ((amqp_basic_ack_t *)decoded)->delivery_tag;
            multiple = ((amqp_basic_ack_t *)decoded)->multiple;
        } else {
            tag = ((amqp_basic_nack_t *)decoded)->delivery_tag;
            multiple = ((amqp_basic_nack_t *)decoded)->multiple;
        }
        if (frame.channel == CH_PUBLISH && h->waiting_seq &&
            (tag == h->waiting_seq || (multiple && tag >= h->waiting_seq)))
            h->confirm = frame.payload.method.id == AMQP_BASIC_ACK_METHOD ? 1 : -1;
        return RT_OK;
    }
    case AMQP_BASIC_CANCEL_METHOD: { /* the broker cancelled a consumer (queue deleted) */
        const amqp_basic_cancel_t *cancel = decoded;
        for (size_t i = 0; i < h->consumer_count; i++) {
            const char *t = h->consumers[i].tag;
            if (!t || strlen(t) != cancel->consumer_tag.len ||
                memcmp(t, cancel->consumer_tag.bytes, cancel->consumer_tag.len) != 0)
                continue;
            rt_log_warn("amqp consumer cancelled by the broker", "queue", h->consumers[i].queue);
            free(h->consumers[i].queue);
            free(h->consumers[i].tag);
            h->consumers[i] = h->consumers[--h->consumer_count];
            break;
        }
        return RT_OK;
    }
    case AMQP_CHANNEL_CLOSE_METHOD: {
        int rc = channel_closed_by_broker(h, frame.channel, decoded, "while waiting");
        rt_log_warn("amqp channel closed by the broker", "error", h->errstr);
        return rc == RT_ECONN ? rc : RT_OK;
    }
    case AMQP_CONNECTION_CLOSE_METHOD:
        (void)connection_closed_by_broker(h, decoded, "while waiting");
        return RT_ECONN;
    default: return RT_OK;
    }
}

/* ---- channels, consumers, declarations ---- */

static int open_publish_channel(rt_amqp *h)
{
    amqp_channel_open(h->conn, CH_PUBLISH);
    int rc = CHECK_RPC(h, CH_PUBLISH, "opening the publish channel");
    if (rc != RT_OK) return rc;
    amqp_confirm_select(h->conn, CH_PUBLISH);
    rc = CHECK_RPC(h, CH_PUBLISH, "enabling publisher confirms");
    if (rc != RT_OK) return rc;
    h->publish_open = true;
    h->publish_seq = 0;
    return RT_OK;
}

static int start_consumer(rt_amqp *h, consumer *c)
{
    amqp_basic_consume_ok_t *ok =
        amqp_basic_consume(h->conn, CH_CONSUME, amqp_cstring_bytes(c->queue), amqp_empty_bytes, 0,
                           0, 0, amqp_empty_table);
    char what[RT_AMQP_NAME_MAX + 32];
    snprintf(what, sizeof what, "consuming from %s", c->queue);
    int rc = CHECK_RPC(h, CH_CONSUME, what);
    if (rc != RT_OK) return rc;
    free(c->tag);
    c->tag = dup_bytes(ok->consumer_tag);
    if (!c->tag) return RT_ENOMEM;
    return RT_OK;
}

/* Opens the consume channel with its prefetch and (re)starts every consumer. */
static int open_consume_channel(rt_amqp *h)
{
    amqp_channel_open(h->conn, CH_CONSUME);
    int rc = CHECK_RPC(h, CH_CONSUME, "opening the consume channel");
    if (rc != RT_OK) return rc;
    h->generation++;
    h->unsettled = 0;
    h->consume_open = true;
    amqp_basic_qos(h->conn, CH_CONSUME, 0, (uint16_t)h->prefetch, 0);
    rc = CHECK_RPC(h, CH_CONSUME, "setting the prefetch");
    if (rc != RT_OK) return rc;
    for (size_t i = 0; i < h->consumer_count; i++) {
        rc = start_consumer(h, &h->consumers[i]);
        if (rc != RT_OK) return rc;
    }
    return RT_OK;
}

static void put_long(amqp_table_entry_t *e, const char *key, int64_t value)
{
    e->key = amqp_cstring_bytes(key);
    e->value.kind = AMQP_FIELD_KIND_I64;
    e->value.value.i64 = value;
}

static void put_string(amqp_table_entry_t *e, const char *key, const char *value)
{
    e->key = amqp_cstring_bytes(key);
    e->value.kind = AMQP_FIELD_KIND_UTF8;
    e->value.value.bytes = amqp_cstring_bytes(value);
}

static int apply_decl(rt_amqp *h, const decl *d)
{
    char what[2 * RT_AMQP_NAME_MAX + 64];
    switch (d->kind) {
    case DECL_EXCHANGE:
        snprintf(what, sizeof what, "declaring exchange %s", d->name);
        amqp_exchange_declare(h->conn, CH_PUBLISH, amqp_cstring_bytes(d->name),
                              amqp_cstring_bytes(d->target), 0, 1, 0, 0, amqp_empty_table);
        break;
    case DECL_QUEUE: {
        amqp_table_entry_t entries[7];
        int n = 0;
        const rt_amqp_queue_args *a = &d->args;
        if (a->quorum) put_string(&entries[n++], "x-queue-type", "quorum");
        if (a->quorum && a->message_ttl_ms > 0) { /* a delay queue: expired means delivered */
            put_string(&entries[n++], "x-dead-letter-strategy", "at-least-once");
            put_string(&entries[n++], "x-overflow", "reject-publish");
        }
        if (a->message_ttl_ms > 0) put_long(&entries[n++], "x-message-ttl", a->message_ttl_ms);
        if (a->dead_letter_exchange)
            put_string(&entries[n++], "x-dead-letter-exchange", a->dead_letter_exchange);
        if (a->dead_letter_routing_key)
            put_string(&entries[n++], "x-dead-letter-routing-key", a->dead_letter_routing_key);
        if (a->expires_ms > 0) put_long(&entries[n++], "x-expires", a->expires_ms);
        amqp_table_t table = {.num_entries = n, .entries = entries};
        snprintf(what, sizeof what, "declaring queue %s", d->name);
        amqp_queue_declare(h->conn, CH_PUBLISH, amqp_cstring_bytes(d->name), 0, !a->transient, 0,
                           a->auto_delete, table);
        break;
    }
    case DECL_BIND:
        snprintf(what, sizeof what, "binding queue %s to %s with %s", d->name, d->target, d->key);
        amqp_queue_bind(h->conn, CH_PUBLISH, amqp_cstring_bytes(d->name),
                        amqp_cstring_bytes(d->target), amqp_cstring_bytes(d->key),
                        amqp_empty_table);
        break;
    }
    return CHECK_RPC(h, CH_PUBLISH, what);
}

static bool decl_equal(const decl *a, const decl *b)
{
    return a->kind == b->kind && same_string(a->name, b->name) &&
           same_string(a->target, b->target) && same_string(a->key, b->key) &&
           a->args.transient == b->args.transient && a->args.auto_delete == b->args.auto_delete &&
           a->args.message_ttl_ms == b->args.message_ttl_ms &&
           same_string(a->args.dead_letter_exchange, b->args.dead_letter_exchange) &&
           same_string(a->args.dead_letter_routing_key, b->args.dead_letter_routing_key) &&
           a->args.expires_ms == b->args.expires_ms && a->args.quorum == b->args.quorum;
}

static void decl_free(decl *d)
{
    free(d->name);
    free(d->target);
    free(d->key);
    free((char *)d->args.dead_letter_exchange);
    free((char *)d->args.dead_letter_routing_key);
}

/* Appends a copy of d to the replay list unless an equal one is there. */
static int remember_decl(rt_amqp *h, const decl *d)
{
    for (size_t i = 0; i < h->decl_count; i++)
        if (decl_equal(&h->decls[i], d)) return RT_OK;
    decl copy = {.kind = d->kind, .args = d->args};
    copy.name = dup_or_null(d->name);
    copy.target = dup_or_null(d->target);
    copy.key = dup_or_null(d->key);
    copy.args.dead_letter_exchange = dup_or_null(d->args.dead_letter_exchange);
    copy.args.dead_letter_routing_key = dup_or_null(d->args.dead_letter_routing_key);
    decl *grown = realloc(h->decls, (h->decl_count + 1) * sizeof *grown);
    if (!grown || (d->name && !copy.name) || (d->target && !copy.target) || (d->key && !copy.key) ||
        (d->args.dead_letter_exchange && !copy.args.dead_letter_exchange) ||
        (d->args.dead_letter_routing_key && !copy.args.dead_letter_routing_key)) {
        if (grown) h->decls = grown;
        decl_free(&copy);
        rt_set_errstr(h->errstr, "out of memory remembering a declaration");
        return RT_ENOMEM;
    }
    h->decls = grown;
    h->decls[h->decl_count++] = copy;
    return RT_OK;
}

/* Forgets declarations that mention a deleted queue or exchange. */
static void forget_decls(rt_amqp *h, const char *name, bool is_queue)
{
    size_t kept = 0;
    for (size_t i = 0; i < h->decl_count; i++) {
        decl *d = &h->decls[i];
        bool gone =
            is_queue ? ((d->kind == DECL_QUEUE || d->kind == DECL_BIND) && !strcmp(d->name, name))
                     : ((d->kind == DECL_EXCHANGE && !strcmp(d->name, name)) ||
                        (d->kind == DECL_BIND && !strcmp(d->target, name)));
        if (gone)
            decl_free(d);
        else
            h->decls[kept++] = *d;
    }
    h->decl_count = kept;
}

/* ---- connecting ---- */

/* Error for a failed socket open; tells a refused TLS certificate apart. */
static int open_error(rt_amqp *h, int status)
{
    if (h->info.ssl) {
        unsigned long e = ERR_peek_last_error();
        char detail[160] = "";
        if (e) ERR_error_string_n(e, detail, sizeof detail);
        bool certificate = status == AMQP_STATUS_SSL_PEER_VERIFY_FAILED ||
                           status == AMQP_STATUS_SSL_HOSTNAME_VERIFY_FAILED ||
                           (e && ERR_GET_LIB(e) == ERR_LIB_SSL &&
                            ERR_GET_REASON(e) == SSL_R_CERTIFICATE_VERIFY_FAILED);
        ERR_clear_error();
        if (status == AMQP_STATUS_SSL_HOSTNAME_VERIFY_FAILED) {
            rt_set_errstr(h->errstr,
                          "TLS certificate of %s was refused: it is not issued for host %s",
                          h->display, h->info.host);
            return RT_EAUTH;
        }
        if (certificate) {
            rt_set_errstr(h->errstr,
                          "TLS certificate of %s was refused (%s%s%s); set amqp_ca_file to the "
                          "CA that signed the broker's certificate",
                          h->display, amqp_error_string2(status), *detail ? ": " : "", detail);
            return RT_EAUTH;
        }
        if (*detail) {
            rt_set_errstr(h->errstr, "cannot connect to %s: %s (%s)", h->display,
                          amqp_error_string2(status), detail);
            return RT_ECONN;
        }
    }
    rt_set_errstr(h->errstr, "cannot connect to %s: %s", h->display, amqp_error_string2(status));
    return RT_ECONN;
}

static int connect_once(rt_amqp *h)
{
    int rc;
    h->conn = amqp_new_connection();
    if (!h->conn) {
        rt_set_errstr(h->errstr, "out of memory creating an AMQP connection");
        return RT_ENOMEM;
    }
    amqp_socket_t *sock = h->info.ssl ? amqp_ssl_socket_new(h->conn) : amqp_tcp_socket_new(h->conn);
    if (!sock) {
        rt_set_errstr(h->errstr, "cannot create a %s socket", h->info.ssl ? "TLS" : "TCP");
        rc = RT_ENOMEM;
        goto fail;
    }
    if (h->info.ssl) {
        amqp_ssl_socket_set_verify_peer(sock, 1);
        amqp_ssl_socket_set_verify_hostname(sock, 1);
        const char *ca = h->ca_file ? h->ca_file : RT_AMQP_SYSTEM_CA_FILE;
        if (amqp_ssl_socket_set_cacert(sock, ca) != AMQP_STATUS_OK) {
            ERR_clear_error();
            rt_set_errstr(h->errstr, "cannot load the CA bundle %s (amqp_ca_file)", ca);
            rc = RT_ECONFIG;
            goto fail;
        }
    }
    struct timeval connect_tv = timeval_ms(h->connect_timeout_ms);
    struct timeval rpc_tv = timeval_ms(h->rpc_timeout_ms);
    amqp_set_handshake_timeout(h->conn, &connect_tv);
    amqp_set_rpc_timeout(h->conn, &rpc_tv);
    ERR_clear_error();
    int status = amqp_socket_open_noblock(sock, h->info.host, h->info.port, &connect_tv);
    if (status != AMQP_STATUS_OK) {
        rc = open_error(h, status);
        goto fail;
    }

    amqp_table_entry_t capabilities[3];
    amqp_table_entry_t props[3];
    for (int i = 0; i < 3; i++) {
        capabilities[i].value.kind = AMQP_FIELD_KIND_BOOLEAN;
        capabilities[i].value.value.boolean = 1;
    }
    capabilities[0].key = amqp_cstring_bytes("publisher_confirms");
    capabilities[1].key = amqp_cstring_bytes("consumer_cancel_notify");
    capabilities[2].key = amqp_cstring_bytes("authentication_failure_close");
    put_string(&props[0], "connection_name", h->connection_name);
    put_string(&props[1], "retrig_version", RETRIG_VERSION);
    props[2].key = amqp_cstring_bytes("capabilities");
    props[2].value.kind = AMQP_FIELD_KIND_TABLE;
    props[2].value.value.table = (amqp_table_t){.num_entries = 3, .entries = capabilities};
    amqp_table_t client_properties = {.num_entries = 3, .entries = props};
    amqp_rpc_reply_t r = amqp_login_with_properties(
        h->conn, h->info.vhost, 0, FRAME_MAX, h->heartbeat_s, &client_properties,
        AMQP_SASL_METHOD_PLAIN, h->info.user, h->info.password);
    rc = check_reply(h, r, 0, "logging in");
    if (rc != RT_OK) goto fail;

    if ((rc = open_publish_channel(h)) != RT_OK) goto fail;
    for (size_t i = 0; i < h->decl_count; i++)
        if ((rc = apply_decl(h, &h->decls[i])) != RT_OK) goto fail;
    if ((rc = open_consume_channel(h)) != RT_OK) goto fail;
    h->established = true;
    return RT_OK;

fail:
    drop_connection(h);
    return rc;
}

static int backoff_delay_ms(const rt_amqp *h)
{
    int64_t delay = h->backoff_base_ms;
    for (unsigned i = 1; i < h->failures && delay < h->backoff_max_ms; i++) delay *= 2;
    if (delay > h->backoff_max_ms) delay = h->backoff_max_ms;
    /* Equal jitter: half fixed, half random, so replicas do not reconnect in step. */
    int64_t half = delay / 2;
    return (int)(half + (int64_t)(random_u64() % (uint64_t)(half + 1)));
}

static int ensure_until(rt_amqp *h, int64_t deadline)
{
    if (h->conn) return RT_OK;
    for (;;) {
        /* A stopping process does not wait for a broker: what it holds is redelivered. */
        if (rt_stop_requested()) {
            if (!*h->errstr) rt_set_errstr(h->errstr, "not connected to %s (stopping)", h->display);
            return RT_ECONN;
        }
        int64_t now = now_ms();
        if (now < h->next_attempt_ms) {
            if (h->next_attempt_ms > deadline) {
                if (!*h->errstr)
                    rt_set_errstr(h->errstr, "not connected to %s (retrying)", h->display);
                return RT_ECONN;
            }
            if (!rt_stop_sleep_ms(h->next_attempt_ms - now)) continue;
        }
        int rc = connect_once(h);
        if (rc == RT_OK) {
            if (h->connections++ > 0 || h->failures)
                rt_log_info("amqp connected", "broker", h->display, "connection",
                            h->connection_name);
            h->failures = 0;
            h->next_attempt_ms = 0;
            h->errstr[0] = '\0';
            return RT_OK;
        }
        h->failures++;
        /* the next address at once; the backoff after a whole round of them failed */
        if (h->nhosts > 1) use_host(h, h->host + 1);
        int delay = h->nhosts > 1 && h->failures % h->nhosts ? 0 : backoff_delay_ms(h);
        h->next_attempt_ms = now_ms() + delay;
        char delay_text[16];
        snprintf(delay_text, sizeof delay_text, "%d", delay);
        rt_log_warn("amqp connection attempt failed", "broker", h->display, "error", h->errstr,
                    "retry_in_ms", delay_text);
        if (rc == RT_EAUTH || rc == RT_ECONFIG || rc == RT_ENOMEM) return rc;
        if (h->next_attempt_ms > deadline) return RT_ECONN;
    }
}

void rt_amqp_url_user(const char *url, char *out, size_t size)
{
    snprintf(out, size, "guest");
    const char *u = url ? strstr(url, "://") : NULL;
    if (!u) return;
    u += 3;
    const char *host_end = u + strcspn(u, "/?#");
    const char *at = memchr(u, '@', (size_t)(host_end - u));
    if (!at) return; /* no user part: amqp://host:port/ */
    const char *end = u + strcspn(u, ":@");
    if (end > u) snprintf(out, size, "%.*s", (int)(end - u), u);
}

int rt_amqp_ensure_connected(rt_amqp *h, int timeout_ms)
{
    return ensure_until(h, now_ms() + (timeout_ms > 0 ? timeout_ms : 0));
}

bool rt_amqp_is_connected(const rt_amqp *h) { return h && h->conn != NULL; }

unsigned long rt_amqp_connection_count(const rt_amqp *h) { return h ? h->connections : 0; }

int rt_amqp_socket_fd(const rt_amqp *h) { return h && h->conn ? amqp_get_sockfd(h->conn) : -1; }

const char *rt_amqp_errstr(const rt_amqp *h) { return h ? h->errstr : "no handle"; }

/* Runs op on a connected handle with an open publish channel; reconnects and retries when
 * the connection is lost, within reconnect_timeout_ms. */
typedef int (*op_fn)(rt_amqp *h, void *ctx);

static int run_op(rt_amqp *h, op_fn op, void *ctx)
{
    int64_t deadline = now_ms() + h->reconnect_timeout_ms;
    for (int attempt = 1;; attempt++) {
        int rc = ensure_until(h, deadline);
        if (rc != RT_OK) return rc;
        if (!h->publish_open) rc = open_publish_channel(h);
        if (rc == RT_OK) rc = op(h, ctx);
        if (rc != RT_ECONN || attempt >= RETRY_ATTEMPTS) return rc;
        rt_log_warn("amqp operation interrupted, reconnecting", "broker", h->display, "error",
                    h->errstr);
    }
}

/* ---- handle ---- */

static int positive_or(int value, int fallback) { return value > 0 ? value : fallback; }

int rt_amqp_new(rt_amqp **out, const rt_amqp_options *opts, char *errstr)
{
    int rc = RT_ENOMEM;
    *out = NULL;
    if (!opts || !opts->url) {
        rt_set_errstr(errstr, "amqp: no URL given");
        return RT_EINVAL;
    }
    rt_amqp *h = calloc(1, sizeof *h);
    if (!h) goto fail;
    rc = split_url(opts->url, &h->url_copies, &h->nhosts);
    if (rc == RT_OK && !(h->infos = calloc(h->nhosts, sizeof *h->infos))) rc = RT_ENOMEM;
    for (size_t i = 0; rc == RT_OK && i < h->nhosts; i++) {
        if (amqp_parse_url(h->url_copies[i], &h->infos[i]) != AMQP_STATUS_OK)
            rc = RT_ECONFIG;
        else if (!*h->infos[i].vhost)
            h->infos[i].vhost = "/"; /* "amqp://host/" means the default vhost */
    }
    if (rc == RT_ECONFIG) {
        char *shown = rt_redact_dup(opts->url);
        rt_set_errstr(errstr,
                      "amqp: bad URL %s (expected amqp[s]://user:password@host:port/vhost, or"
                      " several addresses as host1:port1,host2:port2)",
                      shown ? shown : "");
        free(shown);
        goto fail;
    }
    if (rc != RT_OK) goto fail;
    rc = RT_ENOMEM;
    use_host(h, random_u64() % h->nhosts); /* replicas spread over the nodes */

    const char *worker = opts->worker && *opts->worker ? opts->worker : NULL;
    size_t name_len = strlen("retrig-") + (worker ? strlen(worker) : 0) + 1;
    h->connection_name = malloc(name_len);
    if (!h->connection_name) goto fail;
    snprintf(h->connection_name, name_len, "retrig%s%s", worker ? "-" : "", worker ? worker : "");
    if (opts->ca_file && !(h->ca_file = strdup(opts->ca_file))) goto fail;
    h->dead_letter_exchange = strdup(RT_AMQP_DEAD_LETTER_EXCHANGE);
    if (!h->dead_letter_exchange) goto fail;

    h->quorum_work_queues = opts->quorum_work_queues;
    h->prefetch = positive_or(opts->prefetch, 10);
    if (h->prefetch > 65535) h->prefetch = 65535;
    h->heartbeat_s = positive_or(opts->heartbeat_s, 30);
    h->connect_timeout_ms = positive_or(opts->connect_timeout_ms, 10000);
    h->rpc_timeout_ms = positive_or(opts->rpc_timeout_ms, 10000);
    h->confirm_timeout_ms = positive_or(opts->confirm_timeout_ms, 10000);
    h->reconnect_timeout_ms = positive_or(opts->reconnect_timeout_ms, 30000);
    h->backoff_base_ms = positive_or(opts->backoff_base_ms, 200);
    h->backoff_max_ms = positive_or(opts->backoff_max_ms, 10000);
    if (h->backoff_max_ms < h->backoff_base_ms) h->backoff_max_ms = h->backoff_base_ms;
    *out = h;
    return RT_OK;

fail:
    if (rc == RT_ENOMEM) rt_set_errstr(errstr, "amqp: out of memory");
    rt_amqp_free(h);
    return rc;
}

void rt_amqp_free(rt_amqp *h)
{
    if (!h) return;
    if (h->conn) {
        /* Close cleanly so the broker requeues unacked deliveries at once. */
        if (h->consume_open) amqp_channel_close(h->conn, CH_CONSUME, AMQP_REPLY_SUCCESS);
        if (h->publish_open) amqp_channel_close(h->conn, CH_PUBLISH, AMQP_REPLY_SUCCESS);
        amqp_connection_close(h->conn, AMQP_REPLY_SUCCESS);
        amqp_destroy_connection(h->conn);
        h->conn = NULL;
    }
    drop_pending(h);
    for (size_t i = 0; i < h->decl_count; i++) decl_free(&h->decls[i]);
    free(h->decls);
    for (size_t i = 0; i < h->consumer_count; i++) {
        free(h->consumers[i].queue);
        free(h->consumers[i].tag);
    }
    free(h->consumers);
    for (size_t i = 0; h->url_copies && h->url_copies[i]; i++) free(h->url_copies[i]);
    free(h->url_copies);
    free(h->infos);
    free(h->ca_file);
    free(h->connection_name);
    free(h->dead_letter_exchange);
    free(h);
}

/* ---- declarations ---- */

static int declare_op(rt_amqp *h, void *ctx) { return apply_decl(h, ctx); }

static int declare(rt_amqp *h, const decl *d)
{
    int rc = run_op(h, declare_op, (void *)d);
    if (rc != RT_OK) return rc;
    return remember_decl(h, d);
}

int rt_amqp_declare_exchange(rt_amqp *h, const char *name, const char *type)
{
    if (!valid_name(name, false) || !type ||
        (strcmp(type, "topic") && strcmp(type, "direct") && strcmp(type, "fanout") &&
         strcmp(type, "headers"))) {
        rt_set_errstr(h->errstr, "declare exchange: bad name or type");
        return RT_EINVAL;
    }
    decl d = {.kind = DECL_EXCHANGE, .name = (char *)name, .target = (char *)type};
    return declare(h, &d);
}

int rt_amqp_declare_queue(rt_amqp *h, const char *name, const rt_amqp_queue_args *args)
{
    if (!valid_name(name, false) || (args && (args->message_ttl_ms < 0 || args->expires_ms < 0))) {
        rt_set_errstr(h->errstr, "declare queue: bad name or arguments");
        return RT_EINVAL;
    }
    decl d = {.kind = DECL_QUEUE, .name = (char *)name};
    if (args) d.args = *args;
    return declare(h, &d);
}

int rt_amqp_bind_queue(rt_amqp *h, const char *queue, const char *exchange, const char *pattern)
{
    if (!valid_name(queue, false) || !valid_name(exchange, false) || !valid_name(pattern, true)) {
        rt_set_errstr(h->errstr, "bind queue: bad queue, exchange or pattern");
        return RT_EINVAL;
    }
    decl d = {.kind = DECL_BIND,
              .name = (char *)queue,
              .target = (char *)exchange,
              .key = (char *)pattern};
    return declare(h, &d);
}

typedef struct delete_ctx {
    const char *name;
    bool is_queue;
} delete_ctx;

static int delete_op(rt_amqp *h, void *ctx)
{
    const delete_ctx *c = ctx;
    char what[RT_AMQP_NAME_MAX + 32];
    snprintf(what, sizeof what, "deleting %s %s", c->is_queue ? "queue" : "exchange", c->name);
    if (c->is_queue)
        amqp_queue_delete(h->conn, CH_PUBLISH, amqp_cstring_bytes(c->name), 0, 0);
    else
        amqp_exchange_delete(h->conn, CH_PUBLISH, amqp_cstring_bytes(c->name), 0);
    return CHECK_RPC(h, CH_PUBLISH, what);
}

static int delete_object(rt_amqp *h, const char *name, bool is_queue)
{
    if (!valid_name(name, false)) {
        rt_set_errstr(h->errstr, "delete: bad name");
        return RT_EINVAL;
    }
    forget_decls(h, name, is_queue);
    delete_ctx c = {name, is_queue};
    return run_op(h, delete_op, &c);
}

int rt_amqp_delete_queue(rt_amqp *h, const char *name) { return delete_object(h, name, true); }

int rt_amqp_delete_exchange(rt_amqp *h, const char *name) { return delete_object(h, name, false); }

typedef struct depth_ctx {
    const char *queue;
    uint32_t count;
} depth_ctx;

static int depth_op(rt_amqp *h, void *ctx)
{
    depth_ctx *c = ctx;
    char what[RT_AMQP_NAME_MAX + 32];
    snprintf(what, sizeof what, "checking queue %s", c->queue);
    amqp_queue_declare_ok_t *ok = amqp_queue_declare(
        h->conn, CH_PUBLISH, amqp_cstring_bytes(c->queue), 1, 0, 0, 0, amqp_empty_table);
    int rc = CHECK_RPC(h, CH_PUBLISH, what);
    if (rc == RT_OK) c->count = ok->message_count;
    return rc;
}

int rt_amqp_queue_depth(rt_amqp *h, const char *queue, uint32_t *count)
{
    if (!valid_name(queue, false)) {
        rt_set_errstr(h->errstr, "queue depth: bad queue name");
        return RT_EINVAL;
    }
    depth_ctx c = {queue, 0};
    int rc = run_op(h, depth_op, &c);
    if (rc == RT_OK) *count = c.count;
    return rc;
}

/* Names of the topology with defaults applied. */
static void topology_names(const rt_amqp_topology *t, const char **exchange, const char **dlx,
                           const char **dlq)
{
    *exchange = t->exchange ? t->exchange : RT_AMQP_EXCHANGE;
    *dlx = t->dead_letter_exchange ? t->dead_letter_exchange : RT_AMQP_DEAD_LETTER_EXCHANGE;
    *dlq = t->dead_letter_queue ? t->dead_letter_queue : RT_AMQP_DEAD_LETTER_QUEUE;
}

static int delay_queue_name(char *out, size_t size, const char *queue, int delay_ms)
{
    int n = snprintf(out, size, "%s.delay.%d", queue, delay_ms);
    return n > 0 && (size_t)n < size && n <= RT_AMQP_NAME_MAX ? RT_OK : RT_EINVAL;
}

int rt_amqp_declare_topology(rt_amqp *h, const rt_amqp_topology *t)
{
    const char *exchange, *dlx, *dlq;
    topology_names(t, &exchange, &dlx, &dlq);
    int rc;
    if ((rc = rt_amqp_declare_exchange(h, exchange, "topic")) != RT_OK) return rc;
    if ((rc = rt_amqp_declare_exchange(h, dlx, "topic")) != RT_OK) return rc;
    rt_amqp_queue_args dlq_args = {.expires_ms = t->expires_ms, .quorum = h->quorum_work_queues};
    if ((rc = rt_amqp_declare_queue(h, dlq, &dlq_args)) != RT_OK) return rc;
    if ((rc = rt_amqp_bind_queue(h, dlq, dlx, "#")) != RT_OK) return rc;
    for (size_t i = 0; i < t->queue_count; i++) {
        const rt_amqp_work_queue *q = &t->queues[i];
        if (!q->name || !q->routing_key) {
            rt_set_errstr(h->errstr, "topology: work queue %zu has no name or routing key", i);
            return RT_EINVAL;
        }
        rt_amqp_queue_args work = {.dead_letter_exchange = dlx,
                                   .expires_ms = t->expires_ms,
                                   .quorum = h->quorum_work_queues};
        if ((rc = rt_amqp_declare_queue(h, q->name, &work)) != RT_OK) return rc;
        if ((rc = rt_amqp_bind_queue(h, q->name, exchange, q->routing_key)) != RT_OK) return rc;
        for (size_t j = 0; j < q->delay_count; j++) {
            char name[RT_AMQP_NAME_MAX + 1];
            if (q->delays_ms[j] <= 0 ||
                delay_queue_name(name, sizeof name, q->name, q->delays_ms[j]) != RT_OK) {
                rt_set_errstr(h->errstr, "topology: bad delay for queue %s", q->name);
                return RT_EINVAL;
            }
            rt_amqp_queue_args delay = {.message_ttl_ms = q->delays_ms[j],
                                        .dead_letter_exchange = exchange,
                                        .dead_letter_routing_key = q->routing_key,
                                        .expires_ms = t->expires_ms,
                                        .quorum = h->quorum_work_queues};
            if ((rc = rt_amqp_declare_queue(h, name, &delay)) != RT_OK) return rc;
        }
    }
    char *copy = strdup(dlx);
    if (!copy) return RT_ENOMEM;
    free(h->dead_letter_exchange);
    h->dead_letter_exchange = copy;
    return RT_OK;
}

int rt_amqp_delete_topology(rt_amqp *h, const rt_amqp_topology *t)
{
    const char *exchange, *dlx, *dlq;
    topology_names(t, &exchange, &dlx, &dlq);
    int first = RT_OK, rc;
#define KEEP_FIRST(call)                                                                           \
    do {                                                                                           \
        rc = (call);                                                                               \
        if (rc != RT_OK && first == RT_OK) first = rc;                                             \
    } while (0)
    for (size_t i = 0; i < t->queue_count; i++) {
        const rt_amqp_work_queue *q = &t->queues[i];
        if (!q->name) continue;
        for (size_t j = 0; j < q->delay_count; j++) {
            char name[RT_AMQP_NAME_MAX + 1];
            if (delay_queue_name(name, sizeof name, q->name, q->delays_ms[j]) == RT_OK)
                KEEP_FIRST(rt_amqp_delete_queue(h, name));
        }
        KEEP_FIRST(rt_amqp_delete_queue(h, q->name));
    }
    KEEP_FIRST(rt_amqp_delete_queue(h, dlq));
    KEEP_FIRST(rt_amqp_delete_exchange(h, dlx));
    KEEP_FIRST(rt_amqp_delete_exchange(h, exchange));
#undef KEEP_FIRST
    return first;
}

/* ---- publishing ---- */

typedef struct publish_ctx {
    const char *exchange;
    const char *routing_key;
    bool mandatory;
    const amqp_basic_properties_t *props;
    amqp_bytes_t body;
} publish_ctx;

static int publish_op(rt_amqp *h, void *ctx)
{
    const publish_ctx *p = ctx;
    h->returned = false;
    h->confirm = 0;
    int status =
        amqp_basic_publish(h->conn, CH_PUBLISH, amqp_cstring_bytes(p->exchange),
                           amqp_cstring_bytes(p->routing_key), p->mandatory, 0, p->props, p->body);
    if (status != AMQP_STATUS_OK) {
        rt_set_errstr(h->errstr, "publishing to exchange '%s': %s", p->exchange,
                      amqp_error_string2(status));
        if (!connection_status(status)) return RT_EINVAL;
        drop_connection(h);
        return RT_ECONN;
    }
    h->waiting_seq = ++h->publish_seq;
    int64_t deadline = now_ms() + h->confirm_timeout_ms;
    int rc = RT_OK;
    while (h->confirm == 0) {
        if (!h->conn) {
            rc = RT_ECONN;
            break;
        }
        if (!h->publish_open) { /* the broker refused the publish (404 no exchange...) */
            rc = h->publish_close_rc;
            break;
        }
        rc = pump(h, deadline);
        if (rc == RT_ETIMEDOUT) {
            rt_set_errstr(h->errstr,
                          "no publisher confirm from %s within %d ms (exchange '%s', key '%s')",
                          h->display, h->confirm_timeout_ms, p->exchange, p->routing_key);
            break;
        }
        if (rc != RT_OK) break;
    }
    h->waiting_seq = 0;
    if (rc != RT_OK) return rc;
    if (h->confirm < 0) {
        rt_set_errstr(h->errstr, "broker nacked the message to exchange '%s' key '%s'", p->exchange,
                      p->routing_key);
        return RT_EUPSTREAM;
    }
    if (h->returned) {
        rt_set_errstr(h->errstr, "no queue took the message to exchange '%s' key '%s' (%s)",
                      p->exchange, p->routing_key, h->return_text);
        return RT_ENOTFOUND;
    }
    return RT_OK;
}

static int publish_props(rt_amqp *h, const char *exchange, const char *routing_key, bool mandatory,
                         const amqp_basic_properties_t *props, const void *body, size_t len)
{
    if (!valid_name(exchange, true) || !valid_name(routing_key, true) || (!body && len)) {
        rt_set_errstr(h->errstr, "publish: bad exchange, routing key or body");
        return RT_EINVAL;
    }
    publish_ctx p = {exchange, routing_key, mandatory, props,
                     (amqp_bytes_t){.len = len, .bytes = (void *)body}};
    return run_op(h, publish_op, &p);
}

static void random_message_id(char out[33])
{
    uint64_t a = random_u64(), b = random_u64();
    snprintf(out, 33, "%016" PRIx64 "%016" PRIx64, a, b);
}

static int publish_with_opts(rt_amqp *h, const char *exchange, const char *routing_key,
                             bool mandatory, const void *body, size_t len,
                             const rt_amqp_publish_opts *opts)
{
    rt_amqp_publish_opts none = {0};
    if (!opts) opts = &none;
    if (opts->header_count > 1000 || (opts->header_count && !opts->headers)) {
        rt_set_errstr(h->errstr, "publish: bad headers");
        return RT_EINVAL;
    }
    char message_id[33];
    if (!opts->message_id) random_message_id(message_id);
    amqp_basic_properties_t props = {0};
    props._flags = AMQP_BASIC_CONTENT_TYPE_FLAG | AMQP_BASIC_DELIVERY_MODE_FLAG |
                   AMQP_BASIC_MESSAGE_ID_FLAG | AMQP_BASIC_TIMESTAMP_FLAG;
    props.content_type =
        amqp_cstring_bytes(opts->content_type ? opts->content_type : "application/json");
    props.delivery_mode = AMQP_DELIVERY_PERSISTENT;
    props.message_id = amqp_cstring_bytes(opts->message_id ? opts->message_id : message_id);
    props.timestamp = (uint64_t)time(NULL);
    amqp_table_entry_t *entries = NULL;
    size_t n = 0;
    amqp_field_value_t *cc_values = NULL;
    if (opts->cc_count > 1000 || (opts->cc_count && !opts->cc)) {
        rt_set_errstr(h->errstr, "publish: bad CC routes");
        return RT_EINVAL;
    }
    if (opts->header_count || opts->attempt > 0 || opts->cc_count) {
        entries = calloc(opts->header_count + 2, sizeof *entries);
        if (!entries) {
            rt_set_errstr(h->errstr, "publish: out of memory");
            return RT_ENOMEM;
        }
        for (size_t i = 0; i < opts->header_count; i++) {
            if (!opts->headers[i].key || !opts->headers[i].value) continue;
            put_string(&entries[n++], opts->headers[i].key, opts->headers[i].value);
        }
        if (opts->cc_count) {
            /* Sender-selected distribution: an array of routing keys, as Taskcluster sends
             * a task's routes. */
            cc_values = calloc(opts->cc_count, sizeof *cc_values);
            if (!cc_values) {
                free(entries);
                rt_set_errstr(h->errstr, "publish: out of memory");
                return RT_ENOMEM;
            }
            for (size_t i = 0; i < opts->cc_count; i++) {
                cc_values[i].kind = AMQP_FIELD_KIND_UTF8;
                cc_values[i].value.bytes = amqp_cstring_bytes(opts->cc[i]);
            }
            entries[n].key = amqp_cstring_bytes("CC");
            entries[n].value.kind = AMQP_FIELD_KIND_ARRAY;
            entries[n].value.value.array.num_entries = (int)opts->cc_count;
            entries[n].value.value.array.entries = cc_values;
            n++;
        }
        if (opts->attempt > 0) {
            entries[n].key = amqp_cstring_bytes("x-retrig-attempt");
            entries[n].value.kind = AMQP_FIELD_KIND_I32;
            entries[n].value.value.i32 = opts->attempt;
            n++;
        }
        props._flags |= AMQP_BASIC_HEADERS_FLAG;
        props.headers = (amqp_table_t){.num_entries = (int)n, .entries = entries};
    }
    int rc = publish_props(h, exchange, routing_key, mandatory, &props, body, len);
    free(entries);
    free(cc_values);
    return rc;
}

int rt_amqp_publish(rt_amqp *h, const char *exchange, const char *routing_key, const void *body,
                    size_t len, const rt_amqp_publish_opts *opts)
{
    bool mandatory = !(opts && opts->allow_unroutable);
    return publish_with_opts(h, exchange, routing_key, mandatory, body, len, opts);
}

int rt_amqp_publish_delayed(rt_amqp *h, const char *queue, int delay_ms, const void *body,
                            size_t len, const rt_amqp_publish_opts *opts)
{
    char name[RT_AMQP_NAME_MAX + 1];
    if (!queue || delay_ms <= 0 || delay_queue_name(name, sizeof name, queue, delay_ms) != RT_OK) {
        rt_set_errstr(h->errstr, "publish delayed: bad queue or delay");
        return RT_EINVAL;
    }
    /* Always mandatory: without its delay queue the default exchange would drop it. */
    return publish_with_opts(h, "", name, true, body, len, opts);
}

/* ---- consuming ---- */

typedef struct consume_ctx {
    const char *queue;
} consume_ctx;

static int consume_op(rt_amqp *h, void *ctx)
{
    const consume_ctx *c = ctx;
    if (!h->consume_open) {
        int rc = open_consume_channel(h);
        if (rc != RT_OK) return rc;
    }
    consumer *grown = realloc(h->consumers, (h->consumer_count + 1) * sizeof *grown);
    if (!grown) return RT_ENOMEM;
    h->consumers = grown;
    consumer added = {.queue = strdup(c->queue)};
    if (!added.queue) return RT_ENOMEM;
    int rc = start_consumer(h, &added);
    if (rc != RT_OK) {
        free(added.queue);
        free(added.tag);
        return rc;
    }
    h->consumers[h->consumer_count++] = added;
    return RT_OK;
}

int rt_amqp_consume(rt_amqp *h, const char *queue)
{
    if (!valid_name(queue, false)) {
        rt_set_errstr(h->errstr, "consume: bad queue name");
        return RT_EINVAL;
    }
    consume_ctx c = {queue};
    int rc = run_op(h, consume_op, &c);
    if (rc == RT_ENOMEM) rt_set_errstr(h->errstr, "consume: out of memory");
    return rc;
}

int rt_amqp_stop_consuming(rt_amqp *h)
{
    int rc = RT_OK;
    for (size_t i = 0; i < h->consumer_count; i++) {
        consumer *c = &h->consumers[i];
        if (h->conn && h->consume_open && c->tag && rc == RT_OK) {
            amqp_basic_cancel(h->conn, CH_CONSUME, amqp_cstring_bytes(c->tag));
            rc = CHECK_RPC(h, CH_CONSUME, "cancelling a consumer");
        }
        free(c->queue);
        free(c->tag);
    }
    h->consumer_count = 0;
    return rc;
}

int rt_amqp_next(rt_amqp *h, rt_amqp_message *msg, int timeout_ms)
{
    memset(msg, 0, sizeof *msg);
    int64_t deadline = now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
    for (;;) {
        if (h->pending_head) {
            pending *p = h->pending_head;
            h->pending_head = p->next;
            if (!h->pending_head) h->pending_tail = NULL;
            *msg = p->msg;
            if (msg->rt__delivery->generation == h->generation) h->unsettled++;
            free(p);
            return RT_OK;
        }
        int rc;
        if (!h->conn && (rc = ensure_until(h, deadline)) != RT_OK) return rc;
        if (!h->consume_open) {
            rc = open_consume_channel(h);
            if (rc == RT_ECONN) continue;
            if (rc != RT_OK) return rc;
        }
        rc = pump(h, deadline);
        if (rc == RT_ETIMEDOUT || rc == RT_ENOMEM) return rc;
        if (rc == RT_ECONN && now_ms() >= deadline) return RT_ECONN;
    }
}

static int settle(rt_amqp *h, const rt_amqp_message *msg, bool ack, bool requeue)
{
    struct rt__amqp_delivery *d = msg ? msg->rt__delivery : NULL;
    if (!d) {
        rt_set_errstr(h->errstr, "ack/nack: not a received message");
        return RT_EINVAL;
    }
    if (d->settled) {
        rt_set_errstr(h->errstr, "ack/nack: delivery %" PRIu64 " was already settled",
                      msg->delivery_tag);
        return RT_EINVAL;
    }
    if (!h->conn || !h->consume_open || d->generation != h->generation) {
        rt_set_errstr(h->errstr,
                      "cannot settle delivery %" PRIu64 " from %s: the channel it came on was "
                      "lost; the broker redelivers it",
                      msg->delivery_tag, msg->queue);
        return RT_ECONN;
    }
    int status = ack ? amqp_basic_ack(h->conn, CH_CONSUME, msg->delivery_tag, 0)
                     : amqp_basic_nack(h->conn, CH_CONSUME, msg->delivery_tag, 0, requeue);
    if (status != AMQP_STATUS_OK) {
        rt_set_errstr(h->errstr, "%s of delivery %" PRIu64 " failed: %s", ack ? "ack" : "nack",
                      msg->delivery_tag, amqp_error_string2(status));
        drop_connection(h);
        return RT_ECONN;
    }
    d->settled = true;
    if (h->unsettled > 0) h->unsettled--;
    return RT_OK;
}

int rt_amqp_ack(rt_amqp *h, const rt_amqp_message *msg) { return settle(h, msg, true, false); }

int rt_amqp_ack_many(rt_amqp *h, rt_amqp_message *const *msgs, size_t n)
{
    /* One basic.ack with `multiple` up to the highest tag acks every outstanding delivery
     * up to it; that is exactly this set when every other delivery handed out on this
     * channel has been settled (later ones, still unread, have higher tags). */
    uint64_t max_tag = 0;
    bool one_frame = n > 1 && h->conn && h->consume_open && h->unsettled == n;
    for (size_t i = 0; i < n && one_frame; i++) {
        const struct rt__amqp_delivery *d = msgs[i]->rt__delivery;
        if (!d || d->settled || d->generation != h->generation) one_frame = false;
        if (msgs[i]->delivery_tag > max_tag) max_tag = msgs[i]->delivery_tag;
    }
    if (!one_frame) {
        int first = RT_OK;
        for (size_t i = 0; i < n; i++) {
            int rc = settle(h, msgs[i], true, false);
            if (rc != RT_OK && first == RT_OK) first = rc;
        }
        return first;
    }
    int status = amqp_basic_ack(h->conn, CH_CONSUME, max_tag, 1);
    if (status != AMQP_STATUS_OK) {
        rt_set_errstr(h->errstr, "ack of deliveries up to %" PRIu64 " failed: %s", max_tag,
                      amqp_error_string2(status));
        drop_connection(h);
        return RT_ECONN;
    }
    for (size_t i = 0; i < n; i++) msgs[i]->rt__delivery->settled = true;
    h->unsettled = 0;
    return RT_OK;
}

int rt_amqp_nack(rt_amqp *h, const rt_amqp_message *msg, bool requeue)
{
    return settle(h, msg, false, requeue);
}

/* Copies reason into out: secrets redacted, control characters as spaces, at most
 * RT_AMQP_REASON_MAX bytes, cut on a UTF-8 character boundary. */
static void sanitise_reason(const char *reason, char out[RT_AMQP_REASON_MAX + 1])
{
    char redacted[4 * RT_AMQP_REASON_MAX];
    rt_redact(reason && *reason ? reason : "unspecified", redacted, sizeof redacted);
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)redacted; *p && n < RT_AMQP_REASON_MAX;
         p++)
        out[n++] = (char)(*p < 0x20 || *p == 0x7f ? ' ' : *p);
    if (n == RT_AMQP_REASON_MAX && ((unsigned char)redacted[n] & 0xc0) == 0x80) {
        /* The cut fell inside a character: drop its continuation bytes and its lead byte. */
        while (n > 0 && ((unsigned char)out[n - 1] & 0xc0) == 0x80) n--;
        if (n > 0 && ((unsigned char)out[n - 1] & 0xc0) == 0xc0) n--;
    }
    out[n] = '\0';
}

static const char *const dead_letter_keys[] = {
    "x-retrig-reason", "x-retrig-source-queue", "x-retrig-original-exchange",
    "x-retrig-original-routing-key", "x-retrig-failed-at"};
#define DEAD_LETTER_KEYS (sizeof dead_letter_keys / sizeof dead_letter_keys[0])

int rt_amqp_dead_letter(rt_amqp *h, const rt_amqp_message *msg, const char *reason)
{
    struct rt__amqp_delivery *d = msg ? msg->rt__delivery : NULL;
    if (!d) {
        rt_set_errstr(h->errstr, "dead letter: not a received message");
        return RT_EINVAL;
    }
    char clean[RT_AMQP_REASON_MAX + 1];
    sanitise_reason(reason, clean);
    char failed_at[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(failed_at, sizeof failed_at, "%Y-%m-%dT%H:%M:%SZ", &tm);

    amqp_basic_properties_t props = d->raw.properties;
    amqp_table_t original =
        (props._flags & AMQP_BASIC_HEADERS_FLAG) ? props.headers : amqp_empty_table;
    amqp_table_entry_t *entries =
        calloc((size_t)original.num_entries + DEAD_LETTER_KEYS, sizeof *entries);
    if (!entries) {
        rt_set_errstr(h->errstr, "dead letter: out of memory");
        return RT_ENOMEM;
    }
    int n = 0;
    for (int i = 0; i < original.num_entries; i++) {
        bool ours = false;
        for (size_t k = 0; k < DEAD_LETTER_KEYS; k++)
            ours = ours || key_is(original.entries[i].key, dead_letter_keys[k]);
        if (!ours) entries[n++] = original.entries[i];
    }
    const char *values[DEAD_LETTER_KEYS] = {clean, msg->queue, msg->exchange, msg->routing_key,
                                            failed_at};
    for (size_t k = 0; k < DEAD_LETTER_KEYS; k++)
        put_string(&entries[n++], dead_letter_keys[k], values[k] ? values[k] : "");
    props.headers = (amqp_table_t){.num_entries = n, .entries = entries};
    props._flags |= AMQP_BASIC_HEADERS_FLAG | AMQP_BASIC_DELIVERY_MODE_FLAG;
    props._flags &= ~(amqp_flags_t)AMQP_BASIC_EXPIRATION_FLAG; /* a dead letter must not expire */
    props.delivery_mode = AMQP_DELIVERY_PERSISTENT;

    int rc = publish_props(h, h->dead_letter_exchange, msg->queue ? msg->queue : "", true, &props,
                           msg->body, msg->len);
    free(entries);
    if (rc != RT_OK) return rc; /* not acked: the original stays in its queue */
    rt_log_info("message dead-lettered", "queue", msg->queue, "message_id", msg->message_id,
                "reason", clean);
    return rt_amqp_ack(h, msg);
}

/* ---- messages ---- */

const char *rt_amqp_message_header(const rt_amqp_message *msg, const char *key)
{
    for (size_t i = 0; msg && key && i < msg->header_count; i++)
        if (!strcmp(msg->headers[i].key, key)) return msg->headers[i].value;
    return NULL;
}

void rt_amqp_message_free(rt_amqp_message *msg)
{
    if (!msg) return;
    free(msg->body);
    free(msg->queue);
    free(msg->exchange);
    free(msg->routing_key);
    free(msg->content_type);
    free(msg->message_id);
    for (size_t i = 0; i < msg->header_count; i++) {
        free((char *)msg->headers[i].key);
        free((char *)msg->headers[i].value);
    }
    free(msg->headers);
    for (size_t i = 0; i < msg->cc_count; i++) free(msg->cc[i]);
    free(msg->cc);
    if (msg->rt__delivery) {
        amqp_destroy_message(&msg->rt__delivery->raw);
        free(msg->rt__delivery);
    }
    memset(msg, 0, sizeof *msg);
}

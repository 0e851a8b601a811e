/* SPDX-License-Identifier: MPL-2.0 */
/* proxy.h - a TCP forwarder a test switches on and off, to make a real service (the local
 * RabbitMQ, Redis or Postgres) unreachable and reachable again for one worker without
 * touching the server other tests share. Down: nothing listens on its port (connections
 * are refused) and every forwarded connection is cut; up: it accepts and forwards to
 * 127.0.0.1:<target port>. One thread per proxy; failures fail the current test. */
#ifndef RETRIG_TESTS_SUPPORT_PROXY_H
#define RETRIG_TESTS_SUPPORT_PROXY_H

typedef struct rt_proxy rt_proxy;

/* A proxy to 127.0.0.1:target_port on a free port of its own, down. */
rt_proxy *rt_proxy_new(int target_port);
/* Its port (the same while it goes down and up). */
int rt_proxy_port(const rt_proxy *p);
void rt_proxy_up(rt_proxy *p);
void rt_proxy_down(rt_proxy *p);
/* Connections it has accepted so far. */
int rt_proxy_accepted(const rt_proxy *p);
void rt_proxy_free(rt_proxy *p);

#endif

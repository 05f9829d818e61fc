/* origins: the names a browser may reach the proxy by and the sites it may
 * come from: `hosts =` and `origins =` (or OLLAMA_ORIGINS) checked and
 * matched, the loopback's names, a Host header's name without its port.
 * Strings in, answers out: no I/O. */
#ifndef VRAM_DAEMON_ORIGINS_H
#define VRAM_DAEMON_ORIGINS_H

#include <stdbool.h>
#include <stddef.h>

/* An origins = list (commas or blanks between): each "*", or
 * SCHEME://HOST[:PORT] where one '*' may stand for any text (a port
 * after "localhost:", a name before ".example.com"). NULL, or what is
 * wrong. */
const char *origins_check(const char *list);

/* Whether origin (len bytes, as a browser's Origin header says it) is one
 * the list allows; "null" (a sandboxed page, a file) only under "*". */
bool origins_allowed(const char *list, const char *origin, size_t len);

/* A hosts = list: each "*", a name or address, or *.DOMAIN. NULL, or
 * what is wrong. */
const char *origins_check_hosts(const char *list);

/* Whether host (its name without the port, len bytes) is in the list. */
bool origins_host_listed(const char *list, const char *host, size_t len);

/* The name in a Host header value (or an origin's host:port) without the
 * port: its start in *name and length; [::1] keeps its brackets. 0 for an
 * empty or unreadable one. */
size_t origins_host_name(const char *hostport, const char **name);

/* localhost, 127.0.0.0/8 or [::1] (a name without its port). */
bool origins_loopback(const char *name, size_t len);

/* An address by number: dotted IPv4, or IPv6 in brackets. */
bool origins_ip_literal(const char *name, size_t len);

#endif

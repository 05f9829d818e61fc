/* errbody: the error answers of vram's HTTP servers, each rendered in the
 * dialect of the route it answers (the route's to say: proxy/routes.c for
 * the proxy's address): OpenAI's {"error": {"message", "type", "param",
 * "code"}}, or the plain {"error": "text"} of Ollama's API and of the
 * control API. One table says each kind's status, type and code. */
#ifndef VRAM_DAEMON_ERRBODY_H
#define VRAM_DAEMON_ERRBODY_H

#include <stddef.h>

enum errbody_kind {
    ERRBODY_BAD_REQUEST,     /* 400: malformed HTTP or JSON, a field missing or wrong */
    ERRBODY_UNAUTHORIZED,    /* 401: no token, or the wrong one */
    ERRBODY_FORBIDDEN,       /* 403: not served on this address */
    ERRBODY_NO_MODEL,        /* 404: no model of that name */
    ERRBODY_NO_ROUTE,        /* 404: no route of that path */
    ERRBODY_TIMEOUT,         /* 408: the request did not arrive in time */
    ERRBODY_TOO_LARGE,       /* 413: a body over max_body */
    ERRBODY_HEADERS_TOO_BIG, /* 431 */
    ERRBODY_INTERNAL,        /* 500: out of memory */
    ERRBODY_BACKEND,         /* 502: the model failed or did not answer */
    ERRBODY_UNAVAILABLE,     /* 503: the model is not there in time, or too many wait */
    ERRBODY_METHOD,          /* 405: a method the route does not take (with Allow) */
    ERRBODY_MEDIA_TYPE,      /* 415: a body that says it is not JSON, from a browser */
    ERRBODY_NOT_IMPLEMENTED, /* 501: a method the proxy does not know (PROPFIND, TRACE) */
    ERRBODY_KINDS
};

enum errbody_dialect {
    ERRBODY_PLAIN,  /* {"error": "text"}: Ollama's, the control API's */
    ERRBODY_OPENAI, /* {"error": {"message", "type", "param", "code"}} */
};

/* The HTTP status of kind. */
int errbody_status(enum errbody_kind kind);

/* The body of an error of kind saying msg (any bytes: escaped, invalid
 * UTF-8 replaced), in dialect d. Written NUL-terminated into buf, cut
 * short (still JSON) when it does not fit; returns its length. len must
 * be at least 128. */
size_t errbody_render(enum errbody_dialect d, enum errbody_kind kind, const char *msg, char *buf,
                      size_t len);

#endif

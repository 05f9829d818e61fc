/* hubfetch: requests to the Hugging Face hub (or the one HF_ENDPOINT
 * names, as huggingface_hub's users set it), for vram fit --online: one
 * GET of a listing, or a range of a file's bytes, bounded. libcurl is
 * loaded when the first request is made, not linked: the libraries it
 * brings (TLS, Kerberos, LDAP...) cost 4-6 ms of every command's start
 * (issue 18), and only this one needs them, and only online. HF_TOKEN
 * (a gated or private repository's) goes to the endpoint's host only,
 * never to where it redirects. */
#ifndef VRAM_CLI_HUBFETCH_H
#define VRAM_CLI_HUBFETCH_H

#include <stddef.h>
#include <stdint.h>

struct hubfetch;

/* NULL with err: libcurl missing (say to install libcurl4), a bad
 * HF_ENDPOINT. */
struct hubfetch *hubfetch_open(char *err, size_t errlen);
void hubfetch_close(struct hubfetch *f);

/* The endpoint's host, for messages ("huggingface.co"). */
const char *hubfetch_host(const struct hubfetch *f);

/* GET the endpoint's path ("/api/models/ORG/REPO/tree/main"); with len,
 * only bytes [from, from + len) of it (a range request; a server that
 * sends the whole file is read no further). The body, at most max bytes
 * (more is an error), into *out (malloc'd, NUL after it), its length in
 * *n. The status, or -1 with err. */
long hubfetch_get(struct hubfetch *f, const char *path, uint64_t from, uint64_t len, size_t max,
                  char **out, size_t *n, char *err, size_t errlen);

#endif

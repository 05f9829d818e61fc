/* testmodel: a stand-in "model server" for vram serve's tests. It loads
 * libcuda.so.1 as frameworks do, allocates --bytes of device memory,
 * writes a pattern derived from its name through the driver, then serves
 * HTTP on $PORT: /health, and /checksum, which reads its memory back from
 * the device and says whether every byte written is still what it was.
 * Writing touches 64 KiB every 16 MiB (and both ends), so that a 6 GiB
 * model costs the simulated machine little real RAM.
 *
 * For the proxy's tests it also answers like a slow model: POST to /v1/...
 * or /api/..., or GET /stream, streams --chunks server-sent events, one every
 * --chunk-ms; GET /crash-stream sends two and dies; GET /cancelled says how
 * many streams a client cut short; GET /echo answers "ok" at once (or its
 * X-Echo header, as a header and as the body); GET /v1/models answers an
 * empty list (a health route of another name). With --until FILE a stream
 * ends (its [DONE]) only once FILE exists: a test says when it may.
 *
 * Over several GPUs (--all-gpus), as tensor-parallel models run: --vmm
 * makes its memory with the virtual memory API (reserve, create, map,
 * access for its own GPU) instead of cuMemAlloc; --peer enable lets every
 * GPU's context reach every other's (cuCtxEnablePeerAccess, what
 * cudaDeviceEnablePeerAccess does), --peer grant gives every other GPU
 * access to its VMM memory (cuMemSetAccess, what PyTorch's expandable
 * segments do). GET /peer has each GPU read every other GPU's memory and
 * write into a scratch buffer on it, device to device, and says whether
 * every byte arrived; GET /unpeer disables the peer access enabled.
 *
 * --openai NAME answers as llama-server does, for vram serve's discovered
 * models: GET /v1/models lists NAME, POST /v1/chat/completions and
 * /v1/completions answer at once (streamed as server-sent events when the
 * body asks), the answer made from its memory read back through the
 * driver: "NAME: memory intact (N bytes checked)", the same every time
 * unless a swap lost something.
 *
 * --grow SIZE: GET /grow allocates SIZE more on GPU 0, once, with a
 * pattern of its own that every check reads too: a server whose memory
 * grew after it loaded (PyTorch's cache after a first generation).
 *
 * As a server whose worker maps its memory (CUDA IPC, as engines share
 * tensors between their processes): --share starts a second process of
 * this program that opens the memory with cuIpcOpenMemHandle; GET /shared
 * has that process read all of it and says whether every byte was the
 * pattern. */
#include <dlfcn.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/units.h"
#include "gpu/cuda_api.h"

#define CHUNK  (64u << 10)
#define STRIDE (16ull << 20)

static CUresult (*htod)(CUdeviceptr, const void *, size_t);
static CUresult (*dtoh)(void *, CUdeviceptr, size_t);
static CUdeviceptr base;
static uint64_t bytes, seed;
/* --all-gpus: the same on every visible GPU, each its own pattern (a model
 * over several GPUs, tensor parallel) */
#define MAX_DEV 16
static CUdeviceptr bases[MAX_DEV];
static CUcontext ctxs[MAX_DEV];
static int ndev = 1;
static uint64_t seed0;
static CUresult (*setcur)(CUcontext);
static CUresult (*dtod)(CUdeviceptr, CUdeviceptr, size_t);
static CUdeviceptr scratch[MAX_DEV];
static bool use_vmm;
static const char *peer_mode;
static int share_in = -1, share_out = -1; /* --share: the worker's pipes */
static uint64_t grow_by;                    /* --grow: what GET /grow adds */
static CUdeviceptr grown;                   /* and what it added, 0 before */

static void pattern(uint64_t off, unsigned char *buf, size_t n)
{
    uint64_t x = seed ^ (off * 0x9e3779b97f4a7c15ULL);
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        buf[i] = (unsigned char)x;
    }
}

static uint64_t seed_of(int d)
{
    return seed0 ^ ((uint64_t)d * 0x9e3779b97f4a7c15ULL);
}

/* Every region written: both ends and one chunk per stride. */
static int each_region(int (*fn)(uint64_t off, size_t n))
{
    for (uint64_t off = 0; off < bytes; off += STRIDE) {
        size_t n = bytes - off < CHUNK ? (size_t)(bytes - off) : CHUNK;
        if (fn(off, n) < 0)
            return -1;
    }
    if (bytes > CHUNK && fn(bytes - CHUNK, CHUNK) < 0)
        return -1;
    return 0;
}

static int write_region(uint64_t off, size_t n)
{
    static unsigned char buf[CHUNK];
    pattern(off, buf, n);
    return htod(base + off, buf, n) == CUDA_SUCCESS ? 0 : -1;
}

static uint64_t checked;

static int check_region(uint64_t off, size_t n)
{
    static unsigned char want[CHUNK], got[CHUNK];
    pattern(off, want, n);
    if (dtoh(got, base + off, n) != CUDA_SUCCESS || memcmp(want, got, n))
        return -1;
    checked += n;
    return 0;
}

/* fn over every region of every GPU's allocation; device 0's after */
static int each_device(int (*fn)(uint64_t off, size_t n))
{
    int rc = 0;
    for (int d = 0; d < ndev && rc == 0; d++) {
        setcur(ctxs[d]);
        base = bases[d];
        seed = seed_of(d);
        rc = each_region(fn);
    }
    setcur(ctxs[0]);
    if (rc == 0 && grown) { /* GET /grow's memory: a region and a pattern of its own */
        uint64_t was = bytes;
        base = grown;
        bytes = grow_by;
        seed = seed0 ^ 0x6a09e667f3bcc909ULL;
        rc = each_region(fn);
        bytes = was;
    }
    base = bases[0];
    seed = seed0;
    return rc;
}

/* GPU a reads n bytes at off of GPU b's memory into its scratch (a read
 * of a peer), and copies its own there into b's scratch (a write to a
 * peer); both are checked from the host. The first error, or 0. */
static CUresult peer_pair(int a, int b, uint64_t off, size_t n)
{
    static unsigned char want[CHUNK], got[CHUNK];
    CUresult rc;
    setcur(ctxs[a]);
    if ((rc = dtod(scratch[a], bases[b] + off, n)) || (rc = dtod(scratch[b], bases[a] + off, n)) ||
        (rc = dtoh(got, scratch[a], n)))
        return rc;
    seed = seed_of(b);
    pattern(off, want, n);
    if (memcmp(want, got, n))
        return -1;
    setcur(ctxs[b]);
    if ((rc = dtoh(got, scratch[b], n)))
        return rc;
    seed = seed_of(a);
    pattern(off, want, n);
    return memcmp(want, got, n) ? -1 : 0;
}

/* Every GPU with every other, at both ends of the memory: the error of
 * the first pair that failed, 0 when all arrived; *copies counts those. */
static CUresult peer_check(unsigned *copies)
{
    CUresult rc = 0;
    size_t n = bytes < CHUNK ? (size_t)bytes : CHUNK;
    *copies = 0;
    for (int a = 0; a < ndev && !rc; a++)
        for (int b = 0; b < ndev && !rc; b++)
            for (int end = 0; a != b && end < 2 && !rc; end++)
                if (!(rc = peer_pair(a, b, end ? bytes - n : 0, n)))
                    *copies += 2;
    setcur(ctxs[0]);
    seed = seed0;
    return rc;
}

static struct event_base *eb;
static const char *openai; /* --openai NAME */
static unsigned answers;
static unsigned nchunks = 5, chunk_ms = 50, cancelled;
static const char *until; /* --until FILE */

struct stream {
    struct evhttp_request *req;
    struct event *tick;
    unsigned sent;
    bool crash;
};

static void stream_gone(struct evhttp_connection *c, void *arg)
{
    (void)c;
    struct stream *st = arg;
    cancelled++;
    event_free(st->tick);
    free(st);
}

static void stream_tick(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct stream *st = arg;
    struct evbuffer *b = evbuffer_new();
    if (st->crash && st->sent == 2)
        _exit(1);
    if (st->sent < nchunks) {
        /* a token, as a real model makes one: through the GPU (a read of
         * its memory), so that a suspended model's stream stops here, and
         * checked against the pattern, so that a stream after a swap says
         * whether the memory it reads is still right */
        unsigned char want[16], got[16];
        uint64_t regions = (bytes + STRIDE - 1) / STRIDE;
        uint64_t off = st->sent % regions * STRIDE;
        pattern(off, want, sizeof want);
        bool right = off + sizeof got <= bytes &&
                     dtoh(got, base + off, sizeof got) == CUDA_SUCCESS &&
                     !memcmp(want, got, sizeof got);
        evbuffer_add_printf(b, "data: {\"chunk\":%u,\"ok\":%s}\n\n", st->sent++,
                            right ? "true" : "false");
        evhttp_send_reply_chunk(st->req, b);
        struct timeval tv = {chunk_ms / 1000, (suseconds_t)(chunk_ms % 1000) * 1000};
        evtimer_add(st->tick, &tv);
    } else if (until && access(until, F_OK) != 0) {
        struct timeval tv = {0, 50 * 1000};
        evtimer_add(st->tick, &tv);
    } else {
        evbuffer_add_printf(b, "data: [DONE]\n\n");
        evhttp_send_reply_chunk(st->req, b);
        evhttp_connection_set_closecb(evhttp_request_get_connection(st->req), NULL, NULL);
        evhttp_send_reply_end(st->req);
        event_free(st->tick);
        free(st);
    }
    evbuffer_free(b);
}

static void stream(struct evhttp_request *req, bool crash)
{
    struct stream *st = calloc(1, sizeof *st);
    st->req = req;
    st->crash = crash;
    st->tick = evtimer_new(eb, stream_tick, st);
    evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type", "text/event-stream");
    evhttp_send_reply_start(req, 200, "OK");
    evhttp_connection_set_closecb(evhttp_request_get_connection(req), stream_gone, st);
    stream_tick(-1, 0, st);
}

static int check_region(uint64_t off, size_t n);
static int each_device(int (*fn)(uint64_t off, size_t n));

/* POST /v1/chat/completions (chat) or /v1/completions, as llama-server
 * answers them. */
static void openai_answer(struct evhttp_request *req, bool chat)
{
    struct evbuffer *in = evhttp_request_get_input_buffer(req);
    size_t n = evbuffer_get_length(in);
    char body[4096] = "";
    evbuffer_copyout(in, body, n < sizeof body - 1 ? n : sizeof body - 1);
    bool stream = strstr(body, "\"stream\":true") || strstr(body, "\"stream\": true");
    checked = 0;
    int ok = each_device(check_region) == 0;
    char text[256], one[768];
    snprintf(text, sizeof text, "%s: memory %s (%llu bytes checked)", openai,
             ok ? "intact" : "CORRUPT", (unsigned long long)checked);
    unsigned id = ++answers;
    struct evbuffer *b = evbuffer_new();
    const char *object = chat ? "chat.completion" : "text_completion";
    if (!stream) {
        if (chat)
            snprintf(one, sizeof one,
                     "{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"%s\"},"
                     "\"finish_reason\":\"stop\"}",
                     text);
        else
            snprintf(one, sizeof one, "{\"index\":0,\"text\":\"%s\",\"finish_reason\":\"stop\"}",
                     text);
        evbuffer_add_printf(b,
                            "{\"id\":\"cmpl-%u\",\"object\":\"%s\",\"created\":1700000000,"
                            "\"model\":\"%s\",\"choices\":[%s],\"usage\":{\"prompt_tokens\":4,"
                            "\"completion_tokens\":6,\"total_tokens\":10}}",
                            id, object, openai, one);
        evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
                          "application/json");
    } else {
        const char *chunk = chat ? "chat.completion.chunk" : "text_completion";
        for (int k = 0; k < 2; k++) {
            if (chat)
                snprintf(one, sizeof one,
                         k ? "{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}"
                           : "{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"%s\"},"
                             "\"finish_reason\":null}",
                         text);
            else
                snprintf(one, sizeof one,
                         k ? "{\"index\":0,\"text\":\"\",\"finish_reason\":\"stop\"}"
                           : "{\"index\":0,\"text\":\"%s\",\"finish_reason\":null}",
                         text);
            evbuffer_add_printf(b,
                                "data: {\"id\":\"cmpl-%u\",\"object\":\"%s\",\"created\":"
                                "1700000000,\"model\":\"%s\",\"choices\":[%s]}\n\n",
                                id, chunk, openai, one);
        }
        evbuffer_add_printf(b, "data: [DONE]\n\n");
        evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
                          "text/event-stream");
    }
    evhttp_send_reply(req, 200, "OK", b);
    evbuffer_free(b);
}

static void reply(struct evhttp_request *req, int code, const char *text)
{
    struct evbuffer *b = evbuffer_new();
    evbuffer_add_printf(b, "%s\n", text);
    evhttp_send_reply(req, code, code == 200 ? "OK" : "Error", b);
    evbuffer_free(b);
}

static CUresult close_peers(void);
static CUresult grow(void);

static void on_request(struct evhttp_request *req, void *arg)
{
    (void)arg;
    const char *uri = evhttp_request_get_uri(req);
    char text[160];
    if (!strcmp(uri, "/health")) {
        reply(req, 200, "ok");
    } else if (!strcmp(uri, "/checksum")) {
        checked = 0;
        int ok = each_device(check_region) == 0;
        snprintf(text, sizeof text, "{\"intact\":%s,\"checked\":%llu,\"bytes\":%llu}",
                 ok ? "true" : "false", (unsigned long long)checked, (unsigned long long)bytes);
        reply(req, ok ? 200 : 500, text);
    } else if (!strcmp(uri, "/peer")) {
        unsigned copies;
        CUresult rc = ndev > 1 ? peer_check(&copies) : -2;
        snprintf(text, sizeof text, "{\"peer\":%s,\"copies\":%u,\"error\":%d}",
                 rc ? "false" : "true", rc ? 0 : copies, rc);
        reply(req, rc ? 500 : 200, text);
    } else if (!strcmp(uri, "/unpeer")) {
        CUresult rc = close_peers();
        snprintf(text, sizeof text, "{\"error\":%d}", rc);
        reply(req, rc ? 500 : 200, text);
    } else if (openai && !strcmp(uri, "/v1/models")) {
        char list[512];
        snprintf(list, sizeof list,
                 "{\"object\":\"list\",\"data\":[{\"id\":\"%s\",\"object\":\"model\","
                 "\"owned_by\":\"llamacpp\"}]}",
                 openai);
        reply(req, 200, list);
    } else if (openai && evhttp_request_get_command(req) == EVHTTP_REQ_POST &&
               (!strcmp(uri, "/v1/chat/completions") || !strcmp(uri, "/v1/completions"))) {
        openai_answer(req, uri[5] == 'h'); /* /v1/chat/... */
    } else if (evhttp_request_get_command(req) == EVHTTP_REQ_POST &&
               (!strncmp(uri, "/v1/", 4) || !strncmp(uri, "/api/", 5))) {
        stream(req, false);
    } else if (!strcmp(uri, "/stream") || !strcmp(uri, "/crash-stream")) {
        stream(req, uri[1] == 'c');
    } else if (!strcmp(uri, "/cancelled")) {
        snprintf(text, sizeof text, "%u", cancelled);
        reply(req, 200, text);
    } else if (!strcmp(uri, "/echo")) { /* X-Echo comes back as a header and as the body */
        const char *echo = evhttp_find_header(evhttp_request_get_input_headers(req), "X-Echo");
        if (echo)
            evhttp_add_header(evhttp_request_get_output_headers(req), "X-Echo", echo);
        reply(req, 200, echo ? echo : "ok");
    } else if (!strcmp(uri, "/shared")) {
        char c = 'c', ok = 0;
        bool yes = share_out >= 0 && write(share_out, &c, 1) == 1 && read(share_in, &ok, 1) == 1 &&
                   ok == '1';
        snprintf(text, sizeof text, "{\"shared\":%s}", yes ? "true" : "false");
        reply(req, yes ? 200 : 500, text);
    } else if (!strcmp(uri, "/v1/models")) { /* a health route other than /health */
        reply(req, 200, "{\"object\":\"list\",\"data\":[]}");
    } else if (!strcmp(uri, "/grow")) {
        CUresult rc = grow_by ? grow() : CUDA_ERROR_INVALID_VALUE;
        snprintf(text, sizeof text, "{\"grown\":%llu,\"error\":%d}",
                 rc ? 0ULL : (unsigned long long)grow_by, rc);
        reply(req, rc ? 500 : 200, text);
    } else if (!strcmp(uri, "/pid")) {
        snprintf(text, sizeof text, "%d", (int)getpid());
        reply(req, 200, text);
    } else {
        reply(req, 404, "not here");
    }
}

static CUresult (*mem_alloc)(CUdeviceptr *, size_t);
static CUresult (*reserve)(CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long);
static CUresult (*create)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *,
                          unsigned long long);
static CUresult (*map)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle,
                       unsigned long long);
static CUresult (*set_access)(CUdeviceptr, size_t, const CUmemAccessDesc *, size_t);
static CUresult (*enable_peer)(CUcontext, unsigned);
static CUresult (*disable_peer)(CUcontext);

static uint64_t vmm_size(uint64_t n)
{
    return (n + (2u << 20) - 1) & ~(uint64_t)((2u << 20) - 1);
}

/* n bytes on GPU d, whose context is current: cuMemAlloc's, or with --vmm
 * one physical allocation mapped whole and given to d alone. */
static CUresult alloc_on(int d, CUdeviceptr *p, uint64_t n)
{
    if (!use_vmm)
        return mem_alloc(p, n);
    CUmemAllocationProp prop = {.type = 1, .location = {1, d}};
    CUmemAccessDesc own = {{1, d}, 3};
    CUmemGenericAllocationHandle h;
    CUresult rc;
    n = vmm_size(n);
    if ((rc = reserve(p, n, 0, 0, 0)) || (rc = create(&h, n, &prop, 0)) ||
        (rc = map(*p, n, 0, h, 0)) || (rc = set_access(*p, n, &own, 1)))
        return rc;
    return CUDA_SUCCESS;
}

/* GET /grow: --grow's bytes more on GPU 0, written; once. */
static CUresult grow(void)
{
    if (grown)
        return CUDA_SUCCESS;
    CUdeviceptr p;
    CUresult rc = alloc_on(0, &p, grow_by);
    if (rc)
        return rc;
    uint64_t was = bytes;
    grown = base = p;
    bytes = grow_by;
    seed = seed0 ^ 0x6a09e667f3bcc909ULL;
    rc = each_region(write_region) == 0 ? CUDA_SUCCESS : CUDA_ERROR_UNKNOWN;
    bytes = was;
    base = bases[0];
    seed = seed0;
    return rc;
}

/* GET /unpeer: every context gives up its peer access. */
static CUresult close_peers(void)
{
    CUresult rc = CUDA_SUCCESS;
    for (int a = 0; a < ndev && !rc; a++) {
        setcur(ctxs[a]);
        for (int b = 0; b < ndev && !rc; b++)
            if (b != a)
                rc = disable_peer(ctxs[b]);
    }
    setcur(ctxs[0]);
    return rc;
}

/* --peer: every context reaches every other GPU (enable), or every GPU
 * is given access to every other's VMM memory (grant). */
static CUresult open_peers(void)
{
    CUresult rc = CUDA_SUCCESS;
    CUmemAccessDesc all[MAX_DEV];
    for (int d = 0; d < ndev; d++)
        all[d] = (CUmemAccessDesc){{1, d}, 3};
    for (int a = 0; a < ndev && !rc; a++) {
        if (!strcmp(peer_mode, "grant")) {
            if (!(rc = set_access(bases[a], vmm_size(bytes), all, (size_t)ndev)))
                rc = set_access(scratch[a], vmm_size(CHUNK), all, (size_t)ndev);
            continue;
        }
        setcur(ctxs[a]);
        for (int b = 0; b < ndev && !rc; b++)
            if (b != a)
                rc = enable_peer(ctxs[b], 0);
    }
    setcur(ctxs[0]);
    return rc;
}

static CUresult (*ipc_get)(CUipcMemHandle *, CUdeviceptr);
static CUresult (*ipc_open)(CUdeviceptr *, CUipcMemHandle, unsigned);

/* --share: a worker of this program gets the memory's handle and answers
 * each byte on its stdin with '1' when all of the memory it opened is
 * the pattern, '0' otherwise. */
static int share(const char *self)
{
    CUipcMemHandle h;
    char hex[2 * sizeof h.reserved + 1], size[32];
    int down[2], up[2];
    if (ipc_get(&h, bases[0]) != CUDA_SUCCESS || pipe(down) < 0 || pipe(up) < 0)
        return -1;
    for (size_t i = 0; i < sizeof h.reserved; i++)
        snprintf(hex + 2 * i, 3, "%02x", (unsigned char)h.reserved[i]);
    snprintf(size, sizeof size, "%llu", (unsigned long long)bytes);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(down[0], 0);
        dup2(up[1], 1);
        execl(self, self, "--bytes", size, "--import", hex, (char *)NULL);
        _exit(127);
    }
    close(down[0]);
    close(up[1]);
    share_out = down[1];
    share_in = up[0];
    return pid > 0 ? 0 : -1;
}

/* The worker: opens the memory, then checks it on each byte it reads. */
static int worker(const char *hex)
{
    CUipcMemHandle h;
    for (size_t i = 0; i < sizeof h.reserved; i++) {
        unsigned v = 0;
        if (sscanf(hex + 2 * i, "%2x", &v) != 1)
            return 2;
        h.reserved[i] = (char)v;
    }
    if (ipc_open(&base, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS) != CUDA_SUCCESS) {
        fprintf(stderr, "testmodel: cannot open the shared memory\n");
        return 1;
    }
    char c;
    while (read(0, &c, 1) == 1) {
        char ok = each_region(check_region) == 0 ? '1' : '0';
        if (write(1, &ok, 1) != 1)
            break;
    }
    return 0;
}

int main(int argc, char **argv)
{
    double startup = 0;
    const char *import = NULL;
    bool sharing = false;
    const char *name = getenv("VRAM_MODEL") ? getenv("VRAM_MODEL") : "model";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--bytes") && i + 1 < argc &&
            units_parse_size(argv[i + 1], &bytes) == 0)
            i++;
        else if (!strcmp(argv[i], "--startup") && i + 1 < argc)
            startup = atof(argv[++i]);
        else if (!strcmp(argv[i], "--chunks") && i + 1 < argc)
            nchunks = (unsigned)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--chunk-ms") && i + 1 < argc)
            chunk_ms = (unsigned)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--until") && i + 1 < argc)
            until = argv[++i];
        else if (!strcmp(argv[i], "--all-gpus"))
            ndev = -1;
        else if (!strcmp(argv[i], "--openai") && i + 1 < argc)
            openai = argv[++i];
        else if (!strcmp(argv[i], "--vmm"))
            use_vmm = true;
        else if (!strcmp(argv[i], "--share"))
            sharing = true;
        else if (!strcmp(argv[i], "--grow") && i + 1 < argc &&
                 units_parse_size(argv[i + 1], &grow_by) == 0)
            i++;
        else if (!strcmp(argv[i], "--import") && i + 1 < argc &&
                 strlen(argv[i + 1]) == 2 * sizeof(CUipcMemHandle))
            import = argv[++i];
        else if (!strcmp(argv[i], "--peer") && i + 1 < argc &&
                 (!strcmp(argv[i + 1], "enable") || !strcmp(argv[i + 1], "grant")))
            peer_mode = argv[++i];
        else {
            fprintf(stderr, "usage: testmodel --bytes SIZE [--startup SECONDS] [--chunks N] "
                            "[--chunk-ms MS] [--until FILE] [--all-gpus] [--vmm] "
                            "[--peer enable|grant] [--openai NAME] [--share] [--grow SIZE] (PORT in the "
                            "environment)\n");
            return 2;
        }
    }
    const char *port = getenv("PORT");
    if ((!port && !import) || !bytes) {
        fprintf(stderr, "testmodel: needs PORT and --bytes\n");
        return 2;
    }
    for (const char *c = name; *c; c++)
        seed = (seed ^ (unsigned char)*c) * 1099511628211ULL;
    void *lib = dlopen("libcuda.so.1", RTLD_NOW);
    if (!lib) {
        fprintf(stderr, "testmodel: %s\n", dlerror());
        return 1;
    }
    CUresult (*init)(unsigned) = (CUresult(*)(unsigned))dlsym(lib, "cuInit");
    CUresult (*get)(CUdevice *, int) = (CUresult(*)(CUdevice *, int))dlsym(lib, "cuDeviceGet");
    CUresult (*retain)(CUcontext *, CUdevice) =
        (CUresult(*)(CUcontext *, CUdevice))dlsym(lib, "cuDevicePrimaryCtxRetain");
    *(void **)&setcur = dlsym(lib, "cuCtxSetCurrent");
    CUresult (*count)(int *) = (CUresult(*)(int *))dlsym(lib, "cuDeviceGetCount");
    *(void **)&mem_alloc = dlsym(lib, "cuMemAlloc_v2");
    *(void **)&htod = dlsym(lib, "cuMemcpyHtoD_v2");
    *(void **)&dtoh = dlsym(lib, "cuMemcpyDtoH_v2");
    *(void **)&dtod = dlsym(lib, "cuMemcpyDtoD_v2");
    *(void **)&reserve = dlsym(lib, "cuMemAddressReserve");
    *(void **)&create = dlsym(lib, "cuMemCreate");
    *(void **)&map = dlsym(lib, "cuMemMap");
    *(void **)&set_access = dlsym(lib, "cuMemSetAccess");
    *(void **)&enable_peer = dlsym(lib, "cuCtxEnablePeerAccess");
    *(void **)&disable_peer = dlsym(lib, "cuCtxDisablePeerAccess");
    *(void **)&ipc_get = dlsym(lib, "cuIpcGetMemHandle");
    *(void **)&ipc_open = dlsym(lib, "cuIpcOpenMemHandle_v2");
    CUdevice dev;
    CUresult rc = CUDA_ERROR_NOT_INITIALIZED;
    seed0 = seed;
    if (!init || !get || !retain || !setcur || !mem_alloc || !htod || !dtoh || !dtod || !count ||
        !reserve || !create || !map || !set_access || !enable_peer || !disable_peer ||
        (rc = init(0)) || (ndev < 0 && (rc = count(&ndev)))) {
        fprintf(stderr, "testmodel: CUDA setup failed (%d)\n", rc);
        return 1;
    }
    if (peer_mode && !strcmp(peer_mode, "grant") && !use_vmm) {
        fprintf(stderr, "testmodel: --peer grant gives access to VMM memory: add --vmm\n");
        return 2;
    }
    ndev = ndev < 1 ? 1 : ndev > MAX_DEV ? MAX_DEV : ndev;
    if (import) { /* the worker of a --share model */
        CUcontext c;
        if ((rc = get(&dev, 0)) || (rc = retain(&c, dev)) || (rc = setcur(c)) || !ipc_open)
            return 1;
        return worker(import);
    }
    for (int d = 0; d < ndev; d++)
        if ((rc = get(&dev, d)) || (rc = retain(&ctxs[d], dev)) || (rc = setcur(ctxs[d])) ||
            (rc = alloc_on(d, &bases[d], bytes)) ||
            (ndev > 1 && (rc = alloc_on(d, &scratch[d], CHUNK)))) {
            fprintf(stderr, "testmodel: cannot allocate %llu bytes on GPU %d (%d)\n",
                    (unsigned long long)bytes, d, rc);
            return 1;
        }
    if (peer_mode && (rc = open_peers())) {
        fprintf(stderr, "testmodel: --peer %s failed (%d)\n", peer_mode, rc);
        return 1;
    }
    if (each_device(write_region) < 0) {
        fprintf(stderr, "testmodel: cannot fill %llu bytes\n", (unsigned long long)bytes);
        return 1;
    }
    if (sharing && (!ipc_get || share(argv[0]) < 0)) {
        fprintf(stderr, "testmodel: cannot share its memory with a worker (CUDA IPC)\n");
        return 1;
    }
    if (startup > 0)
        usleep((useconds_t)(startup * 1e6));
    eb = event_base_new();
    struct evhttp *http = evhttp_new(eb);
    evhttp_set_gencb(http, on_request, NULL);
    if (evhttp_bind_socket(http, "127.0.0.1", (uint16_t)atoi(port)) < 0) {
        fprintf(stderr, "testmodel: cannot listen on port %s\n", port);
        return 1;
    }
    fprintf(stderr, "testmodel %s: %llu bytes, serving on %s\n", name, (unsigned long long)bytes,
            port);
    event_base_dispatch(eb);
    return 0;
}

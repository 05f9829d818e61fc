/* cmd_ps: `vram ps`, the models `vram serve` runs and where each one is. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cli/client.h"
#include "host/clock.h"
#include "app/render_json.h"
#include "cli/cmd.h"
#include "cli/color.h"
#include "core/textsafe.h"
#include "core/units.h"

struct ps_opts {
    bool json;
    const char *socket;
};

static int cmd_ps(const void *opts, int argc, char **argv);

#define O struct ps_opts
static const struct cmd_opt ps_opts[] = {
    {"json", 'j', CMD_FLAG(O, json), .help = "the models as JSON (schema: docs/json.md)"},
    CMD_SOCKET_OPT(O, "the daemon's socket (default $VRAM_SOCKET, else a user daemon's in "
                      "$XDG_RUNTIME_DIR/vram, else /run/vram/vram.sock)"),
    CMD_COLOR_OPT,
    {NULL},
};
#undef O

const struct cmd_entry cmd_ps_entry = {
    .name = "ps",
    .args = "[--json] [--socket PATH] [--color WHEN]",
    .summary = "the models vram serve runs: state, GPU, VRAM, host RAM, last use",
    .opts = ps_opts,
    .size = sizeof(struct ps_opts),
    .exec = cmd_ps,
};

/* docs/json.md: bumped on any incompatible change of --json */
#define PS_JSON_SCHEMA 1

/* ready green, suspended yellow, failed red; the rest as they are */
static const char *state_color(const char *state)
{
    if (!strcmp(state, "ready") || !strcmp(state, "busy"))
        return "\033[32m";
    if (!strcmp(state, "suspended"))
        return "\033[33m";
    if (!strcmp(state, "failed"))
        return "\033[31m";
    return "";
}

static const char *ago(json_t *ms, char *buf, size_t len)
{
    if (!json_is_integer(ms))
        return "-";
    uint64_t then = (uint64_t)json_integer_value(ms), now = clock_wall_ms();
    double s = now > then ? (double)(now - then) / 1000 : 0;
    if (s < 60)
        snprintf(buf, len, "%.0f s ago", s);
    else if (s < 3600)
        snprintf(buf, len, "%.0f min", s / 60);
    else
        snprintf(buf, len, "%.1f h", s / 3600);
    return buf;
}

static const char *size_or_dash(json_t *v, char *buf, size_t len)
{
    json_int_t b = json_integer_value(v);
    return b > 0 ? units_fmt_size((uint64_t)b, buf, len) : "-";
}

/* Where a model came from: the configuration, or a store discover = read
 * (with what it was last started with). */
static void source(json_t *m, char *from, size_t len)
{
    const char *src = json_string_value(json_object_get(m, "source"));
    json_t *ctx = json_object_get(m, "ctx");
    if (src && json_is_integer(ctx))
        snprintf(from, len, "%s -c %lld -ngl %lld/%lld", src, (long long)json_integer_value(ctx),
                 (long long)json_integer_value(json_object_get(m, "ngl")),
                 (long long)json_integer_value(json_object_get(m, "layers")));
    else
        snprintf(from, len, "%s", src ? src : "config");
    textsafe(from);
}

/* One model's line, its name in a column w wide. */
static void row(json_t *m, int w, bool col)
{
    char g[8] = "-", v[32], h[32], dk[32], a[32], from[96], tier[16];
    if (json_is_integer(json_object_get(m, "gpu")))
        snprintf(g, sizeof g, "%lld", (long long)json_integer_value(json_object_get(m, "gpu")));
    /* names, states and errors (a model's last log line) as the daemon
     * sent them, made safe to print */
    char name[256], state[32], sw[32], error[1024];
    const char *s_name = json_string_value(json_object_get(m, "name")),
               *s_state = json_string_value(json_object_get(m, "state")),
               *s_sw = json_string_value(json_object_get(m, "swap")),
               *s_err = json_string_value(json_object_get(m, "error"));
    textsafe_copy(s_name ? s_name : "?", SIZE_MAX, name, sizeof name);
    textsafe_copy(s_state ? s_state : "?", SIZE_MAX, state, sizeof state);
    textsafe_copy(s_sw ? s_sw : "-", SIZE_MAX, sw, sizeof sw);
    textsafe_copy(s_err ? s_err : "", SIZE_MAX, error, sizeof error);
    const char *s_tier = json_string_value(json_object_get(m, "tier"));
    textsafe_copy(s_tier ? s_tier : "-", SIZE_MAX, tier, sizeof tier);
    source(m, from, sizeof from);
    printf("%-*s %s%-10s%s %-4s %-9s %-9s %-10s %-9s %-9s %-10s %-8lld %s%s%s\n", w, name,
           col ? state_color(state) : "", state, col ? "\033[0m" : "", g,
           size_or_dash(json_object_get(m, "vram_bytes"), v, sizeof v),
           size_or_dash(json_object_get(m, "host_bytes"), h, sizeof h), sw, tier,
           size_or_dash(json_object_get(m, "disk_bytes"), dk, sizeof dk),
           ago(json_object_get(m, "last_used_ms"), a, sizeof a),
           (long long)json_integer_value(json_object_get(m, "restarts")), from,
           *error ? "   " : "", error);
}

static void table(json_t *r)
{
    bool col = color_on(stdout);
    size_t i;
    json_t *m;
    int w = 16; /* the column as wide as the longest name ("Qwen/Qwen2.5-7B-Instruct") */
    json_array_foreach(json_object_get(r, "models"), i, m)
    {
        const char *n = json_string_value(json_object_get(m, "name"));
        if (n && strlen(n) > (size_t)w && strlen(n) < 200)
            w = (int)strlen(n);
    }
    printf("%s%-*s %-10s %-4s %-9s %-9s %-10s %-9s %-9s %-10s %-8s %s%s\n", col ? "\033[1m" : "",
           w, "MODEL", "STATE", "GPU", "VRAM", "HOST RAM", "SWAP", "TIER", "DISK", "LAST USED",
           "RESTARTS", "FROM",
           col ? "\033[0m" : "");
    json_array_foreach(json_object_get(r, "models"), i, m) row(m, w, col);
}

static int cmd_ps(const void *opts, int argc, char **argv)
{
    (void)argc, (void)argv;
    const struct ps_opts *o = opts;
    char err[512];
    json_t *r;
    long st = client_call(client_socket(o->socket), "GET", "/v1/models", NULL, &r, err, sizeof err);
    if (st != 200) {
        fprintf(stderr, "vram ps: %s\n", st < 0 ? err : "the daemon refused the request");
        json_decref(r);
        return 1;
    }
    if (o->json) {
        json_object_set_new(r, "schema", json_integer(PS_JSON_SCHEMA));
        json_dumpf(r, stdout, JSON_INDENT(2) | RENDER_JSON_REALS | JSON_PRESERVE_ORDER);
        fputc('\n', stdout);
    } else {
        table(r);
    }
    json_decref(r);
    return 0;
}

/* machine: the simulated machine's description, read from a JSON file.
 *
 * Strict on purpose: an unknown key is an error, so a typo in a test fixture
 * fails loudly instead of silently simulating the default. Sizes are bytes or
 * strings with units ("16G" is GiB). */
#include "sim/machine.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/units.h"

struct ctx {
    const char *file;
    char *err;
    size_t errlen;
};

__attribute__((format(printf, 3, 4))) static int fail(struct ctx *c, const char *where,
                                                      const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(c->err, c->errlen, "%s: %s: %s", c->file, where, msg);
    return -1;
}

static int get_size(struct ctx *c, json_t *v, const char *where, uint64_t *out)
{
    if (json_is_integer(v) && json_integer_value(v) >= 0) {
        *out = (uint64_t)json_integer_value(v);
        return 0;
    }
    if (json_is_string(v) && units_parse_size(json_string_value(v), out) == 0)
        return 0;
    return fail(c, where, "not a size (write bytes, or a string such as \"16G\" or \"512M\")");
}

static int get_uint(struct ctx *c, json_t *v, const char *where, unsigned max, unsigned *out)
{
    if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > max)
        return fail(c, where, "must be an integer from 0 to %u", max);
    *out = (unsigned)json_integer_value(v);
    return 0;
}

static int get_bool(struct ctx *c, json_t *v, const char *where, bool *out)
{
    if (!json_is_boolean(v))
        return fail(c, where, "must be true or false");
    *out = json_is_true(v);
    return 0;
}

static int get_str(struct ctx *c, json_t *v, const char *where, char *out, size_t len)
{
    if (!json_is_string(v) || json_string_length(v) == 0 || json_string_length(v) >= len)
        return fail(c, where, "must be a non-empty string under %zu bytes", len);
    snprintf(out, len, "%s", json_string_value(v));
    return 0;
}

static int load_proc(struct ctx *c, json_t *o, const char *where, struct sim_proc_def *p)
{
    if (!json_is_object(o))
        return fail(c, where, "must be an object {\"pid\", \"name\", \"type\", \"used\"}");
    char w[96];
    const char *k;
    json_t *v;
    bool have_pid = false, have_name = false;
    p->type = SIM_PT_GRAPHICS;
    json_object_foreach(o, k, v)
    {
        snprintf(w, sizeof w, "%s.%s", where, k);
        if (!strcmp(k, "pid")) {
            unsigned pid;
            if (get_uint(c, v, w, 0x7fffffff, &pid) || pid == 0)
                return pid == 0 ? fail(c, w, "pid 0 is not a process") : -1;
            p->pid = pid;
            have_pid = true;
        } else if (!strcmp(k, "name")) {
            if (get_str(c, v, w, p->name, sizeof p->name))
                return -1;
            have_name = true;
        } else if (!strcmp(k, "type")) {
            const char *t = json_is_string(v) ? json_string_value(v) : "";
            if (!strcmp(t, "graphics"))
                p->type = SIM_PT_GRAPHICS;
            else if (!strcmp(t, "compute"))
                p->type = SIM_PT_COMPUTE;
            else if (!strcmp(t, "compute+graphics"))
                p->type = SIM_PT_COMPUTE | SIM_PT_GRAPHICS;
            else if (!strcmp(t, "mps"))
                p->type = SIM_PT_MPS;
            else
                return fail(c, w,
                            "must be \"graphics\", \"compute\", \"compute+graphics\" or \"mps\"");
        } else if (!strcmp(k, "used")) {
            if (get_size(c, v, w, &p->used))
                return -1;
        } else if (!strcmp(k, "sm_util") || !strcmp(k, "memory_util") ||
                   !strcmp(k, "encoder_util") || !strcmp(k, "decoder_util")) {
            unsigned *to = k[0] == 's' ? &p->sm_util : k[0] == 'm' ? &p->mem_util
                           : k[0] == 'e' ? &p->enc_util : &p->dec_util;
            if (get_uint(c, v, w, 100, to))
                return -1;
            p->has_util = true;
        } else {
            return fail(c, w, "unknown key");
        }
    }
    if (!have_pid || !have_name)
        return fail(c, where, "a process needs \"pid\" and \"name\"");
    return 0;
}

static int load_gpu(struct ctx *c, json_t *o, unsigned idx, struct sim_gpu_def *g)
{
    char where[64], w[96];
    snprintf(where, sizeof where, "gpus[%u]", idx);
    if (!json_is_object(o))
        return fail(c, where, "must be an object");
    /* defaults: an idle data-center card */
    g->power_mw = 70000;
    g->power_limit_mw = 700000;
    g->temp_c = 35;
    g->pstate = 0;
    g->pcie_gen = 5;
    g->pcie_width = 16;
    g->minor = idx;
    g->cc_major = 9;
    g->context = 500 * UNITS_MiB;
    g->driver_model = -1;
    g->clock_gfx = g->clock_sm = 345; /* an H100's idle clocks, and its maximum */
    g->clock_mem = g->max_mem = 2619;
    g->max_gfx = g->max_sm = 1980;
    snprintf(g->uuid, sizeof g->uuid, "GPU-5a5a5a5a-0000-4000-8000-%012x", idx);
    snprintf(g->pci_bus_id, sizeof g->pci_bus_id, "00000000:%02X:00.0", 0x18 + idx);
    bool have_name = false, have_mem = false;
    const char *k;
    json_t *v;
    json_object_foreach(o, k, v)
    {
        snprintf(w, sizeof w, "%s.%s", where, k);
        int rc = 0;
        unsigned u;
        if (!strcmp(k, "name"))
            rc = get_str(c, v, w, g->name, sizeof g->name), have_name = true;
        else if (!strcmp(k, "uuid"))
            rc = get_str(c, v, w, g->uuid, sizeof g->uuid);
        else if (!strcmp(k, "pci_bus_id"))
            rc = get_str(c, v, w, g->pci_bus_id, sizeof g->pci_bus_id);
        else if (!strcmp(k, "memory"))
            rc = get_size(c, v, w, &g->memory), have_mem = true;
        else if (!strcmp(k, "reserved"))
            rc = get_size(c, v, w, &g->reserved);
        else if (!strcmp(k, "hidden"))
            rc = get_size(c, v, w, &g->hidden);
        else if (!strcmp(k, "context"))
            rc = get_size(c, v, w, &g->context);
        else if (!strcmp(k, "power_w"))
            rc = get_uint(c, v, w, 5000, &u), g->power_mw = u * 1000;
        else if (!strcmp(k, "power_limit_w"))
            rc = get_uint(c, v, w, 5000, &u), g->power_limit_mw = u * 1000;
        else if (!strcmp(k, "temperature_c"))
            rc = get_uint(c, v, w, 150, &g->temp_c);
        else if (!strcmp(k, "utilization_gpu"))
            rc = get_uint(c, v, w, 100, &g->util_gpu);
        else if (!strcmp(k, "utilization_memory"))
            rc = get_uint(c, v, w, 100, &g->util_mem);
        else if (!strcmp(k, "pstate"))
            rc = get_uint(c, v, w, 15, &g->pstate);
        else if (!strcmp(k, "fan"))
            rc = get_uint(c, v, w, 100, &g->fan), g->has_fan = true;
        else if (!strcmp(k, "pcie_gen"))
            rc = get_uint(c, v, w, 6, &g->pcie_gen);
        else if (!strcmp(k, "pcie_width"))
            rc = get_uint(c, v, w, 32, &g->pcie_width);
        else if (!strcmp(k, "minor"))
            rc = get_uint(c, v, w, 255, &g->minor);
        else if (!strcmp(k, "link_mb_s"))
            rc = get_uint(c, v, w, 1000000, &g->link_mb_s);
        else if (!strcmp(k, "clock_graphics_mhz"))
            rc = get_uint(c, v, w, 100000, &g->clock_gfx);
        else if (!strcmp(k, "clock_sm_mhz"))
            rc = get_uint(c, v, w, 100000, &g->clock_sm);
        else if (!strcmp(k, "clock_memory_mhz"))
            rc = get_uint(c, v, w, 100000, &g->clock_mem);
        else if (!strcmp(k, "max_clock_graphics_mhz"))
            rc = get_uint(c, v, w, 100000, &g->max_gfx);
        else if (!strcmp(k, "max_clock_sm_mhz"))
            rc = get_uint(c, v, w, 100000, &g->max_sm);
        else if (!strcmp(k, "max_clock_memory_mhz"))
            rc = get_uint(c, v, w, 100000, &g->max_mem);
        else if (!strcmp(k, "encoder_util"))
            rc = get_uint(c, v, w, 100, &g->enc_util), g->has_encoder = true;
        else if (!strcmp(k, "decoder_util"))
            rc = get_uint(c, v, w, 100, &g->dec_util);
        else if (!strcmp(k, "pcie_tx_kb_s"))
            rc = get_uint(c, v, w, 1u << 30, &g->pcie_tx_kbs);
        else if (!strcmp(k, "pcie_rx_kb_s"))
            rc = get_uint(c, v, w, 1u << 30, &g->pcie_rx_kbs);
        else if (!strcmp(k, "compute_capability")) {
            unsigned maj = 0, min = 0;
            if (!json_is_string(v) || sscanf(json_string_value(v), "%u.%u", &maj, &min) != 2)
                rc = fail(c, w, "must be a string such as \"9.0\"");
            g->cc_major = (int)maj, g->cc_minor = (int)min;
        } else if (!strcmp(k, "compute_mode")) {
            const char *t = json_is_string(v) ? json_string_value(v) : "";
            /* NVML's values: 0 default, 2 prohibited, 3 exclusive process */
            g->compute_mode = !strcmp(t, "default")             ? 0
                              : !strcmp(t, "prohibited")        ? 2
                              : !strcmp(t, "exclusive_process") ? 3
                                                                : -1;
            if (g->compute_mode < 0)
                rc = fail(c, w, "must be \"default\", \"exclusive_process\" or \"prohibited\"");
        } else if (!strcmp(k, "driver_model")) {
            const char *t = json_is_string(v) ? json_string_value(v) : "";
            /* NVML's values: 0 WDDM, 1 WDM (TCC), 2 MCDM */
            g->driver_model = !strcmp(t, "wddm") ? 0 : !strcmp(t, "tcc") ? 1 : !strcmp(t, "mcdm") ? 2 : -1;
            if (g->driver_model < 0)
                rc = fail(c, w, "must be \"wddm\", \"tcc\" or \"mcdm\" (Windows only)");
        } else if (!strcmp(k, "persistence"))
            rc = get_bool(c, v, w, &g->persistence);
        else if (!strcmp(k, "display_attached"))
            rc = get_bool(c, v, w, &g->display_attached);
        else if (!strcmp(k, "display_active"))
            rc = get_bool(c, v, w, &g->display_active);
        else if (!strcmp(k, "mig"))
            rc = get_bool(c, v, w, &g->mig);
        else if (!strcmp(k, "processes")) {
            if (!json_is_array(v) || json_array_size(v) > SIM_MAX_PROCS)
                return fail(c, w, "must be an array of at most %d processes", SIM_MAX_PROCS);
            size_t i;
            json_t *p;
            json_array_foreach(v, i, p)
            {
                char pw[96];
                snprintf(pw, sizeof pw, "%s[%zu]", w, i);
                if (load_proc(c, p, pw, &g->procs[g->nprocs++]))
                    return -1;
            }
        } else
            return fail(c, w, "unknown key");
        if (rc)
            return -1;
    }
    if (!have_name || !have_mem)
        return fail(c, where, "a GPU needs at least \"name\" and \"memory\"");
    if (g->memory == 0)
        return fail(c, where, "memory must be more than 0");
    uint64_t held = g->reserved + g->hidden;
    for (unsigned i = 0; i < g->nprocs; i++)
        held += g->procs[i].used;
    if (held > g->memory)
        return fail(c, where, "reserved + hidden + processes (%llu bytes) exceed memory (%llu)",
                    (unsigned long long)held, (unsigned long long)g->memory);
    return 0;
}

static int load_root(json_t *root, const json_error_t *jerr, const char *path,
                     struct sim_machine *m, char *err, size_t errlen);

int sim_machine_load(const char *path, struct sim_machine *m, char *err, size_t errlen)
{
    json_error_t je;
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    return load_root(root, &je, path, m, err, errlen);
}

int sim_machine_parse(const char *text, size_t len, const char *name, struct sim_machine *m,
                      char *err, size_t errlen)
{
    json_error_t je;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    return load_root(root, &je, name, m, err, errlen);
}

static int load_root(json_t *root, const json_error_t *jerr, const char *path,
                     struct sim_machine *m, char *err, size_t errlen)
{
    struct ctx c = {path, err, errlen};
    const json_error_t je = *jerr;
    memset(m, 0, sizeof *m);
    snprintf(m->driver_version, sizeof m->driver_version, "580.95.05");
    snprintf(m->nvml_version, sizeof m->nvml_version, "13.580.95.05");
    m->cuda_version = 13000;
    m->proc_record_size = 24;

    if (!root) {
        if (je.line <= 0)
            snprintf(err, errlen, "%s: %s", path, je.text);
        else
            snprintf(err, errlen, "%s:%d:%d: %s", path, je.line, je.column, je.text);
        return -1;
    }
    int rc = -1;
    const char *k;
    json_t *v;
    if (!json_is_object(root)) {
        fail(&c, "top level", "must be an object with a \"gpus\" array");
        goto out;
    }
    json_object_foreach(root, k, v)
    {
        if (!strcmp(k, "driver_version")) {
            if (get_str(&c, v, k, m->driver_version, sizeof m->driver_version))
                goto out;
        } else if (!strcmp(k, "nvml_version")) {
            if (get_str(&c, v, k, m->nvml_version, sizeof m->nvml_version))
                goto out;
        } else if (!strcmp(k, "cuda_version")) {
            unsigned cv;
            if (get_uint(&c, v, k, 99000, &cv))
                goto out;
            m->cuda_version = (int)cv;
        } else if (!strcmp(k, "process_record_size")) {
            unsigned s;
            if (get_uint(&c, v, k, 64, &s))
                goto out;
            if (s != 24 && s != 32) {
                fail(&c, k, "must be 24 (current drivers) or 32 (some 535-series drivers)");
                goto out;
            }
            m->proc_record_size = s;
        } else if (!strcmp(k, "absent")) {
            size_t i;
            json_t *a;
            if (!json_is_array(v) || json_array_size(v) > SIM_MAX_ABSENT) {
                fail(&c, k, "must be an array of at most %d function names", SIM_MAX_ABSENT);
                goto out;
            }
            json_array_foreach(v, i, a)
            {
                if (get_str(&c, a, k, m->absent[m->nabsent++], sizeof m->absent[0]))
                    goto out;
            }
        } else if (!strcmp(k, "gpus")) {
            if (!json_is_array(v) || json_array_size(v) > SIM_MAX_GPUS) {
                fail(&c, k, "must be an array of at most %d GPUs", SIM_MAX_GPUS);
                goto out;
            }
            size_t i;
            json_t *g;
            json_array_foreach(v, i, g)
            {
                if (load_gpu(&c, g, (unsigned)i, &m->gpus[m->ngpus++]))
                    goto out;
            }
        } else if (k[0] != '_') { /* "_comment" and friends are allowed */
            fail(&c, k, "unknown key");
            goto out;
        }
    }
    rc = 0;
out:
    json_decref(root);
    return rc;
}

bool sim_machine_absent(const struct sim_machine *m, const char *fn)
{
    for (unsigned i = 0; i < m->nabsent; i++)
        if (!strcmp(m->absent[i], fn))
            return true;
    return false;
}

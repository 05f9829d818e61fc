/* render_json: a snapshot as JSON, for scripts. Sizes are integer bytes; a
 * field the driver did not give is null, never a made-up 0. */
#include <string.h>

#include "core/acct.h"
#include "core/role.h"
#include "app/render_json.h"
#include "app/render_text.h"

static json_t *opt_uint(bool have, uint64_t v)
{
    return have ? json_integer((json_int_t)v) : json_null();
}

json_t *render_json_proc(const struct snap_proc *p)
{
    char tb[32];
    json_t *o = json_object();
    if (!o)
        return NULL;
    json_object_set_new(o, "pid", json_integer(p->pid));
    json_object_set_new(o, "name", json_string(p->name[0] ? p->name : "?"));
    json_object_set_new(o, "user", p->host_known ? json_string(p->user) : json_null());
    json_object_set_new(o, "uid", p->host_known ? json_integer(p->uid) : json_null());
    json_object_set_new(o, "type", json_string(render_ptype(p->types, tb, sizeof tb)));
    json_object_set_new(o, "role", json_string(role_name(p->role)));
    json_object_set_new(o, "used", opt_uint(p->used_known, p->used));
    json_object_set_new(o, "state", json_string(render_pstate(p->state)));
    json_object_set_new(o, "ppid", p->host_known ? json_integer(p->ppid) : json_null());
    json_object_set_new(o, "start_time",
                        p->host_known ? json_integer((json_int_t)p->start_time) : json_null());
    json_object_set_new(o, "container", p->container[0] ? json_string(p->container) : json_null());
    json_object_set_new(o, "cmdline", p->cmdline[0] ? json_string(p->cmdline) : json_null());
    json_object_set_new(o, "cap", p->cap ? json_integer((json_int_t)p->cap) : json_null());
    json_object_set_new(o, "counted", p->cap ? json_integer((json_int_t)p->counted) : json_null());
    /* where used came from: the driver, or (WDDM) Windows' GPU counters */
    json_object_set_new(o, "used_source",
                        !p->used_known ? json_null()
                        : p->used_wddm ? json_string("windows_counters")
                                       : json_string("driver"));
    json_object_set_new(o, "model", p->model[0] ? json_string(p->model) : json_null());
    json_object_set_new(o, "utilization",
                        p->util_known ? json_pack("{s:i, s:i, s:i, s:i}", "sm", p->sm_util,
                                                  "memory", p->mem_util, "encoder", p->enc_util,
                                                  "decoder", p->dec_util)
                                      : json_null());
    json_object_set_new(o, "rss", opt_uint(p->rss_known, p->rss));
    json_object_set_new(o, "cpu_ms", opt_uint(p->host_known && p->rss_known, p->cpu_ms));
    json_object_set_new(o, "cpu_pct", p->cpu_known ? json_real(p->cpu_pct) : json_null());
    return o;
}

static json_t *gpu_json(const struct snap_gpu *g)
{
    struct acct a;
    acct_gpu(g, &a);
    unsigned h = g->have;
    json_t *o = json_object();
    if (!o)
        return NULL;
    json_object_set_new(o, "index", json_integer(g->index));
    json_object_set_new(o, "name", json_string(g->name));
    json_object_set_new(o, "uuid", json_string(g->uuid));
    json_object_set_new(o, "pci_bus_id", json_string(g->pci_bus_id));
    json_object_set_new(o, "minor", json_integer(g->minor));

    bool m = h & SNAP_HAVE_MEMORY;
    json_object_set_new(o, "memory",
                        json_pack("{s:o, s:o, s:o, s:o, s:s}", "total", opt_uint(m, g->mem.total),
                                  "reserved", opt_uint(m && g->mem.version >= 2, g->mem.reserved),
                                  "used", opt_uint(m, g->mem.used), "free",
                                  opt_uint(m, g->mem.free), "api",
                                  !m                    ? "none"
                                  : g->mem.version >= 2 ? "v2"
                                                        : "v1"));
    json_object_set_new(
        o, "breakdown",
        m ? json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:b, s:b}", "reserved",
                      (json_int_t)a.reserved, "display", (json_int_t)a.display, "workloads",
                      (json_int_t)a.workloads, "other", (json_int_t)a.other, "unattributed",
                      (json_int_t)a.unattributed, "free", (json_int_t)a.free, "consistent",
                      !a.inconsistent, "reserved_in_unattributed", a.reserved_unknown)
          : json_null());
    json_object_set_new(o, "utilization",
                        h & SNAP_HAVE_UTIL
                            ? json_pack("{s:i, s:i}", "gpu", g->util_gpu, "memory", g->util_mem)
                            : json_null());
    json_object_set_new(o, "power_mw", opt_uint(h & SNAP_HAVE_POWER, g->power_mw));
    json_object_set_new(o, "power_limit_mw",
                        opt_uint(h & SNAP_HAVE_POWER_LIMIT, g->power_limit_mw));
    json_object_set_new(o, "energy_mj", opt_uint(h & SNAP_HAVE_ENERGY, g->energy_mj));
    json_object_set_new(o, "temperature_c", opt_uint(h & SNAP_HAVE_TEMP, g->temp_c));
    json_object_set_new(o, "pstate", opt_uint(h & SNAP_HAVE_PSTATE, (uint64_t)g->pstate));
    json_object_set_new(o, "persistence",
                        h & SNAP_HAVE_PERSISTENCE ? json_boolean(g->persistence) : json_null());
    static const char *const modes[] = {"default", "exclusive_thread", "prohibited",
                                        "exclusive_process"};
    json_object_set_new(o, "compute_mode",
                        h & SNAP_HAVE_COMPUTE_MODE && g->compute_mode >= 0 && g->compute_mode < 4
                            ? json_string(modes[g->compute_mode])
                            : json_null());
    json_object_set_new(
        o, "display",
        h & SNAP_HAVE_DISPLAY
            ? json_pack("{s:b, s:b}", "attached", g->display_attached, "active", g->display_active)
            : json_null());
    json_object_set_new(o, "mig", h & SNAP_HAVE_MIG ? json_boolean(g->mig) : json_null());
    json_object_set_new(o, "pcie",
                        h & SNAP_HAVE_PCIE
                            ? json_pack("{s:i, s:i}", "gen", g->pcie_gen, "width", g->pcie_width)
                            : json_null());
    json_object_set_new(o, "fan_pct", opt_uint(h & SNAP_HAVE_FAN, g->fan_pct));
    json_object_set_new(o, "clocks_mhz",
                        h & SNAP_HAVE_CLOCKS
                            ? json_pack("{s:i, s:i, s:i}", "graphics", g->clock_gfx_mhz, "sm",
                                        g->clock_sm_mhz, "memory", g->clock_mem_mhz)
                            : json_null());
    json_object_set_new(o, "max_clocks_mhz",
                        h & SNAP_HAVE_MAX_CLOCKS ? json_pack("{s:i, s:i}", "sm", g->max_sm_mhz,
                                                             "memory", g->max_mem_mhz)
                                                 : json_null());
    json_object_set_new(o, "encoder_pct", opt_uint(h & SNAP_HAVE_ENCODER, g->enc_util));
    json_object_set_new(o, "decoder_pct", opt_uint(h & SNAP_HAVE_DECODER, g->dec_util));
    json_object_set_new(o, "pcie_throughput_kb_s",
                        h & SNAP_HAVE_PCIE_THROUGHPUT
                            ? json_pack("{s:i, s:i}", "tx", g->pcie_tx_kbs, "rx", g->pcie_rx_kbs)
                            : json_null());
    static const char *const models[] = {"wddm", "tcc", "mcdm"};
    json_object_set_new(o, "driver_model",
                        h & SNAP_HAVE_DRIVER_MODEL && (unsigned)g->driver_model < 3
                            ? json_string(models[g->driver_model])
                            : json_null());

    json_t *procs = h & SNAP_HAVE_PROCS ? json_array() : json_null();
    for (size_t i = 0; procs && json_is_array(procs) && i < g->nprocs; i++)
        json_array_append_new(procs, render_json_proc(&g->procs[i]));
    json_object_set_new(o, "processes", procs);
    return o;
}

json_t *render_json(const struct snap *s)
{
    json_t *gpus = json_array();
    for (size_t i = 0; gpus && i < s->ngpus; i++)
        json_array_append_new(gpus, gpu_json(&s->gpus[i]));
    return json_pack("{s:i, s:I, s:{s:s, s:s, s:o}, s:o}", "schema", 1, "taken_ms",
                     (json_int_t)s->taken_ms, "driver", "version", s->driver_version,
                     "nvml_version", s->nvml_version, "cuda_version",
                     s->cuda_version ? json_integer(s->cuda_version) : json_null(), "gpus", gpus);
}

json_t *render_json_findings(const struct doc_finding *f, size_t n, int warnings)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(
            arr, json_pack("{s:s, s:s, s:o, s:o, s:I, s:s, s:s}", "kind",
                           doctor_kind_name(f[i].kind), "level",
                           f[i].level == DOC_WARN ? "warning" : "info", "gpu",
                           f[i].gpu >= 0 ? json_integer(f[i].gpu) : json_null(), "pid",
                           f[i].pid ? json_integer(f[i].pid) : json_null(), "bytes",
                           (json_int_t)f[i].bytes, "what", f[i].what, "fix", f[i].fix));
    return json_pack("{s:i, s:o, s:i}", "schema", RENDER_JSON_DOCTOR_SCHEMA, "findings", arr,
                     "warnings", warnings);
}

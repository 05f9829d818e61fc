/* The JSON a script reads: documented fields, bytes as integers, null for
 * what the driver did not say. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/render_json.h"

#define GiB (1ULL << 30)
#define MiB (1ULL << 20)

static json_int_t iget(json_t *o, const char *path)
{
    json_t *v = o;
    char buf[128];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *k = strtok(buf, "."); k && v; k = strtok(NULL, "."))
        v = json_is_array(v) ? json_array_get(v, (size_t)atoi(k)) : json_object_get(v, k);
    assert_non_null(v);
    assert_true(json_is_integer(v));
    return json_integer_value(v);
}

static void snapshot_to_json(void **st)
{
    (void)st;
    struct snap_proc procs[2];
    memset(procs, 0, sizeof procs);
    procs[0] = (struct snap_proc){.pid = 4242,
                                  .types = SNAP_PT_GRAPHICS,
                                  .used_known = true,
                                  .used = 1100 * MiB,
                                  .role = SNAP_ROLE_DISPLAY};
    snprintf(procs[0].name, sizeof procs[0].name, "Xorg");
    procs[1] = (struct snap_proc){.pid = 77,
                                  .types = SNAP_PT_COMPUTE | SNAP_PT_GRAPHICS,
                                  .used_known = false,
                                  .role = SNAP_ROLE_WORKLOAD,
                                  .host_known = true,
                                  .uid = 1000,
                                  .state = SNAP_PS_STOPPED};
    snprintf(procs[1].name, sizeof procs[1].name, "python3");
    snprintf(procs[1].user, sizeof procs[1].user, "ada");
    snprintf(procs[1].container, sizeof procs[1].container, "docker:0123456789ab");

    struct snap_gpu g;
    memset(&g, 0, sizeof g);
    snprintf(g.name, sizeof g.name, "NVIDIA Test");
    g.have = SNAP_HAVE_MEMORY | SNAP_HAVE_PROCS | SNAP_HAVE_POWER;
    g.mem = (struct snap_mem){16 * GiB, 450 * MiB, 1200 * MiB, 16 * GiB - 1650 * MiB, 2};
    g.power_mw = 24000;
    g.procs = procs;
    g.nprocs = 2;
    struct snap s;
    memset(&s, 0, sizeof s);
    snprintf(s.driver_version, sizeof s.driver_version, "580.1");
    s.gpus = &g;
    s.ngpus = 1;

    json_t *doc = render_json(&s);
    assert_non_null(doc);
    assert_int_equal(iget(doc, "schema"), 1);
    assert_true(iget(doc, "gpus.0.memory.total") == (json_int_t)(16 * GiB));
    assert_true(iget(doc, "gpus.0.memory.reserved") == (json_int_t)(450 * MiB));
    assert_true(iget(doc, "gpus.0.breakdown.display") == (json_int_t)(1100 * MiB));
    assert_true(iget(doc, "gpus.0.breakdown.unattributed") == (json_int_t)(100 * MiB));
    assert_int_equal(iget(doc, "gpus.0.power_mw"), 24000);
    json_t *gpu = json_array_get(json_object_get(doc, "gpus"), 0);
    assert_true(json_is_null(json_object_get(gpu, "temperature_c")));
    assert_true(json_is_null(json_object_get(gpu, "utilization")));
    assert_string_equal(json_string_value(json_object_get(json_object_get(gpu, "memory"), "api")),
                        "v2");
    json_t *p1 = json_array_get(json_object_get(gpu, "processes"), 1);
    assert_true(json_is_null(json_object_get(p1, "used")));
    assert_string_equal(json_string_value(json_object_get(p1, "type")), "compute+graphics");
    assert_string_equal(json_string_value(json_object_get(p1, "role")), "workload");
    assert_string_equal(json_string_value(json_object_get(p1, "state")), "stopped");
    assert_string_equal(json_string_value(json_object_get(p1, "user")), "ada");
    assert_string_equal(json_string_value(json_object_get(p1, "container")), "docker:0123456789ab");
    json_t *p0 = json_array_get(json_object_get(gpu, "processes"), 0);
    assert_true(json_is_null(json_object_get(p0, "user"))); /* not visible on this host */
    /* Linux: no driver model; a figure from the driver, none where it gave none */
    assert_true(json_is_null(json_object_get(gpu, "driver_model")));
    assert_string_equal(json_string_value(json_object_get(p0, "used_source")), "driver");
    assert_true(json_is_null(json_object_get(p1, "used_source")));
    json_decref(doc);

    /* Windows under WDDM: python3's figure came from the GPU counters */
    g.have |= SNAP_HAVE_DRIVER_MODEL;
    g.driver_model = SNAP_DM_WDDM;
    procs[1].used_known = procs[1].used_wddm = true;
    procs[1].used = 100 * MiB;
    doc = render_json(&s);
    gpu = json_array_get(json_object_get(doc, "gpus"), 0);
    assert_string_equal(json_string_value(json_object_get(gpu, "driver_model")), "wddm");
    p1 = json_array_get(json_object_get(gpu, "processes"), 1);
    assert_string_equal(json_string_value(json_object_get(p1, "used_source")), "windows_counters");
    assert_true(iget(doc, "gpus.0.breakdown.workloads") == (json_int_t)(100 * MiB));
    json_decref(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(snapshot_to_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* The table of demands waiting on the scheduler: every demand is answered
 * to the one who asked, once, whoever else waits; a full table says so
 * rather than losing one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "daemon/demand.h"

static void granted(void *arg, unsigned model)
{
    (void)arg;
    (void)model;
}

static void refused(void *arg, unsigned model, enum sched_refusal why, const char *text)
{
    (void)arg;
    (void)model;
    (void)why;
    (void)text;
}

static const struct demand_ops api_ops = {granted, refused}, proxy_ops = {granted, refused};

static void answered_to_who_asked(void **st)
{
    (void)st;
    static struct demands t;
    int a = 1, b = 2, c = 3;
    uint64_t ia = demand_add(&t, &api_ops, &a);
    uint64_t ib = demand_add(&t, &proxy_ops, &b);
    uint64_t ic = demand_add(&t, &proxy_ops, &c);
    assert_true(ia && ib && ic && ia != ib && ib != ic);
    struct demand d;
    assert_true(demand_take(&t, ib, &d));
    assert_ptr_equal(d.ops, &proxy_ops);
    assert_ptr_equal(d.arg, &b);
    assert_false(demand_take(&t, ib, &d)); /* once */
    assert_true(demand_take(&t, ia, &d));
    assert_ptr_equal(d.ops, &api_ops);
    assert_ptr_equal(d.arg, &a);
    assert_true(demand_take(&t, ic, &d));
    assert_ptr_equal(d.arg, &c);
    assert_int_equal(t.n, 0);
}

static void full_table_refuses_and_recovers(void **st)
{
    (void)st;
    static struct demands t;
    static uint64_t ids[DEMAND_MAX];
    for (size_t k = 0; k < DEMAND_MAX; k++)
        assert_true((ids[k] = demand_add(&t, &api_ops, NULL)) != 0);
    assert_true(demand_add(&t, &api_ops, NULL) == 0);
    struct demand d;
    /* answered out of order: the others stay findable */
    for (size_t k = 0; k < DEMAND_MAX; k += 2)
        assert_true(demand_take(&t, ids[k], &d));
    for (size_t k = 1; k < DEMAND_MAX; k += 2)
        assert_true(demand_take(&t, ids[k], &d));
    assert_int_equal(t.n, 0);
    uint64_t again = demand_add(&t, &api_ops, NULL);
    assert_true(again > ids[DEMAND_MAX - 1]); /* ids are never reused */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(answered_to_who_asked),
        cmocka_unit_test(full_table_refuses_and_recovers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

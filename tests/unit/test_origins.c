/* Unit tests for conf/origins.c (origins =, hosts =, the loopback's
 * names) and conf/keys.c (token =, tokens =, key files, Authorization). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf/keys.h"
#include "conf/origins.h"

static bool allowed(const char *list, const char *origin)
{
    return origins_allowed(list, origin, strlen(origin));
}

static void test_origin_lists(void **state)
{
    (void)state;
    const char *list = "http://app.example:3000, http://localhost:*  https://*.example.com";
    assert_null(origins_check(list));
    assert_true(allowed(list, "http://app.example:3000"));
    assert_true(allowed(list, "HTTP://APP.EXAMPLE:3000")); /* scheme and host: no case */
    assert_false(allowed(list, "http://app.example:3001"));
    assert_false(allowed(list, "https://app.example:3000"));
    assert_true(allowed(list, "http://localhost:5173"));
    assert_false(allowed(list, "http://localhost.evil.example"));
    assert_true(allowed(list, "https://a.b.example.com"));
    assert_false(allowed(list, "https://example.com"));         /* a name under it, not it */
    assert_false(allowed(list, "https://evil.com/.example.com")); /* '*' never spans a '/' */
    assert_false(allowed(list, "https://x@y.example.com"));
    assert_false(allowed(list, "null"));
    assert_false(allowed("", "http://app.example:3000"));
    assert_true(allowed("*", "http://anything.example"));
    assert_true(allowed("*", "null")); /* only under * */
    assert_non_null(origins_check("null"));
    assert_non_null(origins_check("app.example"));
    assert_non_null(origins_check("http://app.example/"));
    assert_non_null(origins_check("http://*.*.example"));
    assert_non_null(origins_check("ht tp://x"));
    assert_null(origins_check("chrome-extension://*, tauri://localhost"));
}

static bool listed(const char *list, const char *host)
{
    return origins_host_listed(list, host, strlen(host));
}

static void test_hosts(void **state)
{
    (void)state;
    assert_null(origins_check_hosts("gpu-box, *.lan 10.0.0.5"));
    assert_non_null(origins_check_hosts("gpu-box:8080/x"));
    assert_true(listed("gpu-box, *.lan", "GPU-BOX"));
    assert_true(listed("gpu-box, *.lan", "a.lan"));
    assert_false(listed("gpu-box, *.lan", "lan"));
    assert_false(listed("gpu-box, *.lan", "gpu-box.evil"));
    assert_true(listed("*", "anything"));
    const char *name;
    assert_int_equal(origins_host_name("localhost:11500", &name), 9);
    assert_int_equal(origins_host_name("[::1]:11500", &name), 5);
    assert_int_equal(origins_host_name("[::1]x", &name), 0);
    assert_int_equal(origins_host_name("::1", &name), 0);
    assert_true(origins_loopback("127.0.0.1", 9));
    assert_true(origins_loopback("127.9.8.7", 9));
    assert_true(origins_loopback("LocalHost", 9));
    assert_true(origins_loopback("[::1]", 5));
    assert_false(origins_loopback("127.0.0.1.evil.example", 22));
    assert_false(origins_loopback("localhost.evil", 14));
    assert_false(origins_loopback("10.0.0.1", 8));
    assert_true(origins_ip_literal("10.0.0.1", 8));
    assert_false(origins_ip_literal("10.0.0", 6));
    assert_false(origins_ip_literal("1000.0.0.1", 10));
    assert_true(origins_ip_literal("[fe80::1]", 9));
}

static void test_keys(void **state)
{
    (void)state;
    struct keys ks = {0};
    char why[300];
    assert_null(keys_add(&ks, "token", "s3cret"));
    assert_int_equal(keys_parse(&ks, "alice:KA, bob:KB", why, sizeof why), 0);
    assert_int_equal(keys_match(&ks, "Bearer s3cret"), 0);
    assert_int_equal(keys_match(&ks, "bearer KA"), 1);
    assert_int_equal(keys_match(&ks, "BEARER   KB  "), 2);
    assert_int_equal(keys_match(&ks, "Bearer KB2"), -1);
    assert_int_equal(keys_match(&ks, "Bearer K"), -1);
    assert_int_equal(keys_match(&ks, "Basic KA"), -1);
    assert_int_equal(keys_match(&ks, NULL), -1);
    assert_int_equal(keys_match(&ks, "Bearer"), -1);
    assert_int_equal(keys_parse(&ks, "carol:KA", why, sizeof why), -1); /* the same key */
    assert_int_equal(keys_parse(&ks, "alice:KZ", why, sizeof why), -1); /* the same name */
    assert_int_equal(keys_parse(&ks, "nocolon", why, sizeof why), -1);
    assert_int_equal(keys_parse(&ks, "a b c:", why, sizeof why), -1);

    char dir[] = "/tmp/vram-keys-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[64];
    snprintf(path, sizeof path, "%s/keys", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("# team\n  dave:KD  \r\n\neve:KE\n", f);
    fclose(f);
    chmod(path, 0644);
    assert_int_equal(keys_parse(&ks, path, why, sizeof why), -1); /* others may read it */
    assert_non_null(strstr(why, "chmod 600"));
    chmod(path, 0600);
    assert_int_equal(keys_parse(&ks, path, why, sizeof why), 0);
    assert_int_equal(keys_match(&ks, "Bearer KD"), 3);
    assert_string_equal(ks.k[4].name, "eve");
    assert_int_equal(keys_parse(&ks, dir, why, sizeof why), -1); /* not a regular file */
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_origin_lists),
        cmocka_unit_test(test_hosts),
        cmocka_unit_test(test_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* origins: hosts = and origins = lists, the loopback's names.
 *
 * Browsers write an Origin as scheme://host[:port], lower case, with no
 * path; scheme and host compare without case. A '*' in a listed origin
 * stands for any run of characters but '/' and '@', so that it can only
 * ever widen the name or the port it stands in. */
#include "conf/origins.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

/* The next entry of a list: its start and length; 0 at the end. */
static size_t next_entry(const char **p)
{
    *p += strspn(*p, ", \t");
    size_t n = strcspn(*p, ", \t");
    return n;
}

static bool wild_char(char c)
{
    return c != '/' && c != '@' && c != '\0';
}

/* pattern (plen bytes, at most one '*') against s (n bytes), no case */
static bool glob1(const char *pat, size_t plen, const char *s, size_t n)
{
    const char *star = memchr(pat, '*', plen);
    if (!star)
        return plen == n && !strncasecmp(pat, s, n);
    size_t pre = (size_t)(star - pat), suf = plen - pre - 1;
    if (n < pre + suf || strncasecmp(pat, s, pre) || strncasecmp(star + 1, s + n - suf, suf))
        return false;
    for (size_t i = pre; i < n - suf; i++)
        if (!wild_char(s[i]))
            return false;
    return true;
}

const char *origins_check(const char *list)
{
    for (const char *p = list;; p += strcspn(p, ", \t")) {
        size_t n = next_entry(&p);
        if (!n)
            return NULL;
        if (n == 1 && *p == '*')
            continue;
        if (n == 4 && !strncasecmp(p, "null", 4))
            return "null is what any sandboxed page or file sends: only * allows it";
        const char *sep = strstr(p, "://");
        if (!sep || sep >= p + n || sep == p)
            return "each origin is SCHEME://HOST[:PORT], like http://localhost:3000, or *";
        for (const char *q = p; q < sep; q++)
            if (!isalnum((unsigned char)*q) && !strchr("+-.", *q))
                return "an origin's scheme is letters, digits, '+', '-', '.'";
        const char *host = sep + 3, *end = p + n;
        if (host == end)
            return "an origin names its host: SCHEME://HOST[:PORT]";
        if (memchr(host, '/', (size_t)(end - host)))
            return "an origin has no path (a browser sends http://host:port, no '/' after it)";
        const char *star = memchr(p, '*', n);
        if (star && memchr(star + 1, '*', (size_t)(end - star - 1)))
            return "at most one '*' in an origin";
        for (const char *q = host; q < end; q++)
            if (!isalnum((unsigned char)*q) && !strchr("-.:[]*_", *q))
                return "an origin's host is a name or an address, with :PORT";
    }
}

bool origins_allowed(const char *list, const char *origin, size_t len)
{
    bool null = len == 4 && !strncasecmp(origin, "null", 4);
    for (const char *p = list;; p += strcspn(p, ", \t")) {
        size_t n = next_entry(&p);
        if (!n)
            return false;
        if (n == 1 && *p == '*')
            return true;
        if (!null && glob1(p, n, origin, len))
            return true;
    }
}

const char *origins_check_hosts(const char *list)
{
    for (const char *p = list;; p += strcspn(p, ", \t")) {
        size_t n = next_entry(&p);
        if (!n)
            return NULL;
        if (n == 1 && *p == '*')
            continue;
        const char *from = n > 2 && !strncmp(p, "*.", 2) ? p + 2 : p;
        for (const char *q = from; q < p + n; q++)
            if (!isalnum((unsigned char)*q) && !strchr("-._:[]", *q))
                return "each host is a name or an address without a port (gpu-box, "
                       "gpu-box.example.com, 10.0.0.5), *.DOMAIN, or * for any";
    }
}

bool origins_host_listed(const char *list, const char *host, size_t len)
{
    for (const char *p = list;; p += strcspn(p, ", \t")) {
        size_t n = next_entry(&p);
        if (!n)
            return false;
        if (n == 1 && *p == '*')
            return true;
        if (n > 2 && !strncmp(p, "*.", 2)) { /* a name under the domain, not the domain */
            if (len > n - 1 && !strncasecmp(host + len - (n - 1), p + 1, n - 1))
                return true;
        } else if (n == len && !strncasecmp(p, host, n)) {
            return true;
        }
    }
}

size_t origins_host_name(const char *hp, const char **name)
{
    *name = hp;
    if (hp[0] == '[') {
        const char *e = strchr(hp, ']');
        if (!e || (e[1] && e[1] != ':'))
            return 0;
        return (size_t)(e - hp) + 1;
    }
    size_t n = strcspn(hp, ":");
    if (hp[n] == ':' && strchr(hp + n + 1, ':'))
        return 0; /* an IPv6 address not in brackets: no Host says that */
    return n;
}

bool origins_ip_literal(const char *s, size_t n)
{
    if (n >= 2 && s[0] == '[' && s[n - 1] == ']') {
        for (size_t i = 1; i < n - 1; i++)
            if (!isxdigit((unsigned char)s[i]) && s[i] != ':' && s[i] != '.')
                return false;
        return n > 2;
    }
    unsigned dots = 0, digits = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '.') {
            if (!digits)
                return false;
            dots++;
            digits = 0;
        } else if (isdigit((unsigned char)s[i]) && digits < 3) {
            digits++;
        } else {
            return false;
        }
    }
    return dots == 3 && digits;
}

bool origins_loopback(const char *s, size_t n)
{
    if (n == 9 && !strncasecmp(s, "localhost", 9))
        return true;
    if (n == 5 && !strncmp(s, "[::1]", 5))
        return true;
    return origins_ip_literal(s, n) && n > 4 && !strncmp(s, "127.", 4);
}

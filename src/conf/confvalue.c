/* confvalue: the values of vram.conf that are more than a number or a
 * size: yes/no, GPU lists, budgets, a model's environment, the stores
 * discover = reads (conf/confvalue.h). */
#include "conf/confvalue.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/sched.h"
#include "core/units.h"

bool confvalue_bool(const char *v, bool *out)
{
    if (!strcmp(v, "yes") || !strcmp(v, "true") || !strcmp(v, "on") || !strcmp(v, "1"))
        *out = true;
    else if (!strcmp(v, "no") || !strcmp(v, "false") || !strcmp(v, "off") || !strcmp(v, "0"))
        *out = false;
    else
        return false;
    return true;
}

/* "any" (one GPU), "N" (any N), or a list "0,1" (those, all at once). */
bool confvalue_gpus(const char *v, uint32_t *gpus, unsigned *width)
{
    char *end;
    if (!strcmp(v, "any")) {
        *gpus = 0;
        *width = 1;
        return true;
    }
    if (!strchr(v, ',')) {
        long n = strtol(v, &end, 10);
        if (*end || !*v || n < 1 || n > SCHED_MAX_GPUS)
            return false;
        *gpus = 0;
        *width = (unsigned)n;
        return true;
    }
    uint32_t mask = 0;
    for (const char *p = v; *p;) {
        long g = strtol(p, &end, 10);
        if (end == p || g < 0 || g >= SCHED_MAX_GPUS || (mask & (1u << g)))
            return false;
        mask |= 1u << g;
        p = end;
        if (*p == ',')
            p++;
        else if (*p)
            return false;
    }
    *gpus = mask;
    *width = (unsigned)__builtin_popcount(mask);
    return mask != 0;
}

/* "22G" for every GPU, or "0:22G,1:20G". */
bool confvalue_budget(const char *v, uint64_t *budget, bool *set)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", v);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *colon = strchr(tok, ':');
        uint64_t bytes;
        if (!colon) {
            if (units_parse_size(tok, &bytes) < 0 || !bytes)
                return false;
            for (int g = 0; g < SCHED_MAX_GPUS; g++) {
                budget[g] = bytes;
                set[g] = true;
            }
            continue;
        }
        *colon = '\0';
        char *end;
        long g = strtol(tok, &end, 10);
        if (*end || g < 0 || g >= SCHED_MAX_GPUS || units_parse_size(colon + 1, &bytes) < 0 ||
            !bytes)
            return false;
        budget[g] = bytes;
        set[g] = true;
    }
    return true;
}

/* env = KEY=VALUE ...: words split at blanks, a value quoted ("..." with
 * \" and \\, or '...') when it holds blanks. The names vram sets itself
 * are refused: a model's placement and its tie to the daemon are not the
 * configuration's to change. NULL, or what is wrong. */
const char *confvalue_env(const char *v, char *env, size_t cap, size_t *len, unsigned *nenv)
{
    const char *p = v;
    while (*p) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p)
            break;
        const char *k = p;
        if (!isalpha((unsigned char)*p) && *p != '_')
            return "each entry is KEY=VALUE, KEY letters, digits and '_'";
        while (isalnum((unsigned char)*p) || *p == '_')
            p++;
        if (*p != '=')
            return "each entry is KEY=VALUE, KEY letters, digits and '_'";
        size_t kl = (size_t)(p - k);
        if ((kl == 4 && !strncmp(k, "PORT", 4)) || !strncmp(k, "VRAM_", kl < 5 ? kl + 1 : 5) ||
            (kl == 20 && !strncmp(k, "CUDA_VISIBLE_DEVICES", 20)) ||
            (kl == 10 && !strncmp(k, "LD_PRELOAD", 10)))
            return "PORT, CUDA_VISIBLE_DEVICES, LD_PRELOAD and VRAM_* are vram's to set";
        p++;
        char val[1024];
        size_t n = 0;
        while (*p && *p != ' ' && *p != '\t') {
            char q = *p;
            if (q == '"' || q == '\'') {
                for (p++; *p && *p != q; p++) {
                    if (q == '"' && *p == '\\' && (p[1] == '"' || p[1] == '\\'))
                        p++;
                    if (n + 1 < sizeof val)
                        val[n++] = *p;
                }
                if (*p != q)
                    return "a quoted value does not end";
                p++;
            } else if (n + 1 < sizeof val) {
                val[n++] = *p++;
            } else {
                p++;
            }
        }
        val[n] = '\0';
        size_t need = kl + 1 + n + 1;
        if (*len + need > cap)
            return "too long: at most 1023 characters in all"; /* CONFIG_ENV_MAX's */
        memcpy(env + *len, k, kl + 1); /* KEY= */
        memcpy(env + *len + kl + 1, val, n + 1);
        *len += need;
        (*nenv)++;
    }
    return NULL;
}

/* "ollama huggingface" (or "all"): each known store once, blank-separated */
bool confvalue_stores(const char *v, char *out, size_t len)
{
    static const char *const known[] = {"ollama", "huggingface", "lmstudio", "llamacpp"};
    char buf[256];
    snprintf(buf, sizeof buf, "%s", v);
    out[0] = '\0';
    char *save = NULL;
    for (char *t = strtok_r(buf, ", \t", &save); t; t = strtok_r(NULL, ", \t", &save)) {
        bool ok = false;
        for (size_t k = 0; k < 4; k++)
            if (!strcmp(t, known[k]) || !strcmp(t, "all")) {
                ok = true;
                char word[24];
                size_t at = strlen(out);
                snprintf(word, sizeof word, " %s ", known[k]);
                if (!strstr(out, word)) /* " a b " + "c ": " a b c " */
                    snprintf(out + at, len - at, "%s", at ? word + 1 : word);
            }
        if (!ok)
            return false;
    }
    return out[0] != '\0';
}

const char *confvalue_account(const char *v)
{
    size_t n = strlen(v);
    if (n == 0 || n > 32)
        return "a name of 1 to 32 characters";
    if (v[0] == '-')
        return "a name does not start with '-'";
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)v[i]) && v[i] != '.' && v[i] != '_' && v[i] != '-')
            return "a name of letters, digits, '.', '_' and '-'";
    return NULL;
}

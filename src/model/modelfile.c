/* modelfile: any model path into a model_info, by what the path is: a folder of
 * shards (or with only a config.json), or a file recognised by its first
 * bytes, not its name. */
#include "model/modelfile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/err.h"
#include "model/gguf.h"
#include "model/hfconfig.h"
#include "model/safetensors.h"

static bool dir_has_safetensors(const char *path)
{
    DIR *d = opendir(path);
    if (!d)
        return false;
    struct dirent *e;
    bool found = false;
    while (!found && (e = readdir(d))) {
        size_t l = strlen(e->d_name);
        found = (l > 12 && !strcmp(e->d_name + l - 12, ".safetensors")) ||
                !strcmp(e->d_name, "model.safetensors.index.json");
    }
    closedir(d);
    return found;
}

static void base_name(const char *path, char *out, size_t len)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s", path);
    size_t l = strlen(tmp);
    while (l > 1 && tmp[l - 1] == '/')
        tmp[--l] = '\0';
    const char *b = strrchr(tmp, '/');
    b = b ? b + 1 : tmp;
    snprintf(out, len, "%s", b);
    char *dot = strrchr(out, '.');
    if (dot && (!strcmp(dot, ".gguf") || !strcmp(dot, ".safetensors") || !strcmp(dot, ".json")))
        *dot = '\0';
}

int modelfile_load(const char *path, struct model_info *m, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    struct stat st;
    if (stat(path, &st) < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return VRAM_EINPUT;
    }
    int rc;
    if (S_ISDIR(st.st_mode)) {
        char cfg[4200];
        snprintf(cfg, sizeof cfg, "%s/config.json", path);
        if (dir_has_safetensors(path))
            rc = safetensors_load(path, m, err, errlen);
        else if (access(cfg, R_OK) == 0)
            rc = hfconfig_load(cfg, m, err, errlen);
        else {
            snprintf(err, errlen,
                     "%s: no *.safetensors, model.safetensors.index.json or "
                     "config.json in this folder",
                     path);
            return VRAM_EINPUT;
        }
    } else {
        unsigned char magic[8] = {0};
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n = fd >= 0 ? read(fd, magic, sizeof magic) : -1;
        if (fd >= 0)
            close(fd);
        if (n >= 4 && !memcmp(magic, "GGUF", 4))
            rc = gguf_load(path, m, err, errlen);
        else if (n >= 1 && (magic[0] == '{' || magic[0] == ' ' || magic[0] == '\n'))
            rc = hfconfig_load(path, m, err, errlen);
        else if (n == 8)
            rc = safetensors_load(path, m, err, errlen);
        else {
            snprintf(err, errlen,
                     "%s: not a model file vram reads (GGUF, safetensors, "
                     "config.json)",
                     path);
            return VRAM_EINPUT;
        }
    }
    if (rc == VRAM_OK && !m->name[0])
        base_name(path, m->name, sizeof m->name);
    if (rc == VRAM_OK) {
        model_complete(m);
        if (!m->params_active)
            m->params_active = m->params;
    }
    return rc;
}

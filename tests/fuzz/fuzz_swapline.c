/* Fuzz target: the lines of a process's fast-swap socket. The answer's
 * peer is checked to be the pid asked for, but that process runs
 * anything; the request comes from its owner or root. What is parsed must also format back into a line the
 * parser reads the same. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/swapline.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *line = malloc(size + 1);
    if (!line)
        return 0;
    memcpy(line, data, size);
    line[size] = '\0';
    struct swapline_info in, again;
    swapline_parse(line, &in);
    if (strnlen(in.state, sizeof in.state) == sizeof in.state ||
        strnlen(in.why, sizeof in.why) == sizeof in.why)
        abort();
    char out[512];
    int n = swapline_format(&in, out, sizeof out);
    if (n > 0 && !strchr(in.state, ' ') && !strchr(in.policy, ' ') && !strchr(in.why, '\n') &&
        !strstr(in.state, "why=") && !strstr(in.policy, "why=") && in.state[0] && in.policy[0]) {
        out[n - 1] = '\0';
        swapline_parse(out + 2, &again);
        if (again.bytes != in.bytes || again.pool != in.pool || strcmp(again.why, in.why) ||
            strcmp(again.state, in.state) || again.copy_ms != in.copy_ms)
            abort();
    }
    struct swapline_req q, q2;
    if (!strchr(line, '\n') && swapline_parse_request(line, &q) == 0) {
        char req[512];
        if (swapline_format_request(&q, req, sizeof req) < 0 ||
            swapline_parse_request(req, &q2) < 0 || q2.verb != q.verb ||
            q2.timeout_ms != q.timeout_ms || q2.floor != q.floor)
            abort();
    }
    free(line);
    return 0;
}

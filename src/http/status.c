/* status: the reason phrases of the status codes the product answers
 * with (see status.h). Clients read the code; the phrase is for people
 * reading a capture, so an unlisted code gets a neutral one. */
#include "http/status.h"

#include <stddef.h>

static const struct {
    int code;
    const char *phrase;
} phrases[] = {
    {100, "Continue"},
    {200, "OK"},
    {201, "Created"},
    {202, "Accepted"},
    {204, "No Content"},
    {303, "See Other"},
    {304, "Not Modified"},
    {400, "Bad Request"},
    {401, "Unauthorized"},
    {403, "Forbidden"},
    {404, "Not Found"},
    {405, "Method Not Allowed"},
    {408, "Request Timeout"},
    {413, "Payload Too Large"},
    {415, "Unsupported Media Type"},
    {431, "Request Header Fields Too Large"},
    {500, "Internal Server Error"},
    {501, "Not Implemented"},
    {502, "Bad Gateway"},
    {503, "Service Unavailable"},
    {504, "Gateway Timeout"},
};

const char *status_reason(int status)
{
    for (size_t i = 0; i < sizeof phrases / sizeof phrases[0]; i++)
        if (phrases[i].code == status)
            return phrases[i].phrase;
    return "Status";
}

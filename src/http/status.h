/* status: the reason phrase of an HTTP status code, for the status lines
 * the product writes. */
#ifndef VRAM_HTTP_STATUS_H
#define VRAM_HTTP_STATUS_H

/* The standard phrase ("Service Unavailable"); "Status" for a code the
 * product never sends. */
const char *status_reason(int status);

#endif

/* units: parsing and printing sizes and durations the way users type them.
 * Sizes are bytes; "16G" means 16 GiB, as nvidia-smi's MiB are mebibytes. */
#ifndef VRAM_CORE_UNITS_H
#define VRAM_CORE_UNITS_H

#include <stddef.h>
#include <stdint.h>

#define UNITS_KiB (1024ULL)
#define UNITS_MiB (1024ULL * 1024)
#define UNITS_GiB (1024ULL * 1024 * 1024)

/* "16G", "1.5GiB", "512M", "300MB", "4096" (bytes), "0.45 G". Returns 0 or -1. */
int units_parse_size(const char *s, uint64_t *out);

/* A count of tokens: "4096", "128k" (131072: a model's "128k context" is
 * 128 x 1024 tokens, as llama.cpp and Ollama users write it), "1M", "32K";
 * a whole number. Returns 0 or -1. */
int units_parse_tokens(const char *s, uint64_t *out);

/* "2s", "1.5", "500ms", "10m", "1h", "1h30m"; a bare number is seconds.
 * Returns 0 or -1. */
int units_parse_seconds(const char *s, double *out);

/* The largest whole unit: "2h", "10m", "90s", "1.5s"; units_parse_seconds
 * reads it back. */
const char *units_fmt_duration(double seconds, char *buf, size_t len);

/* "15.4 GiB" style, two decimals under 10, one above; never longer than 11 chars. */
const char *units_fmt_size(uint64_t bytes, char *buf, size_t len);

/* Fixed unit GiB with two decimals ("0.45"), for aligned columns. */
const char *units_fmt_gib(uint64_t bytes, char *buf, size_t len);

#endif

/* uuid: NVIDIA's GPU UUID strings ("GPU-8c3f4b2e-...") and the 16 bytes the
 * driver API uses for the same GPU (CUuuid). */
#ifndef VRAM_GPU_UUID_H
#define VRAM_GPU_UUID_H

/* Returns 0 with the 16 bytes in out, -1 when s is not such a string. */
int gpu_uuid_parse(const char *s, unsigned char out[16]);

#endif

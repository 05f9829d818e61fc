/* cudaver: the CUDA driver's version (13000 for 13.0), as the CUDA driver
 * library says it. nvmlSystemGetCudaDriverVersion_v2 answers the same by
 * loading libcuda.so.1 and asking cuDriverGetVersion; asked here directly,
 * the load can run on another thread while NVML starts, instead of after. */
#ifndef VRAM_GPU_CUDAVER_H
#define VRAM_GPU_CUDAVER_H

/* The version, or 0 when there is no libcuda.so.1 to ask. Thread-safe;
 * libcuda stays loaded (the process's later CUDA calls would load it). */
int cudaver_read(void);

#endif

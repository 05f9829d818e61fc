/* cuda_api: the slice of the CUDA driver API's ABI this project touches
 * (libvramcap wraps it; any library with this ABI can stand behind it), declared
 * here without vendor headers. Layouts follow cuda.h of CUDA 12/13. */
#ifndef VRAM_GPU_CUDA_API_H
#define VRAM_GPU_CUDA_API_H

#include <stddef.h>
#include <stdint.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef uint64_t cuuint64_t;

typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct CUmemPoolHandle_st *CUmemoryPool;
typedef struct CUarray_st *CUarray;
typedef struct CUmipmappedArray_st *CUmipmappedArray;
typedef unsigned long long CUmemGenericAllocationHandle;
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphExec_st *CUgraphExec;
typedef struct CUgraphNode_st *CUgraphNode;

typedef struct {
    char bytes[16];
} CUuuid;

#define CU_MEM_LOCATION_TYPE_DEVICE 1

typedef struct {
    int type; /* CU_MEM_LOCATION_TYPE_DEVICE, or the host's */
    int id;
} CUmemLocation;

typedef struct {
    int type;                 /* CU_MEM_ALLOCATION_TYPE_PINNED = 1 */
    int requestedHandleTypes; /* CUmemAllocationHandleType bits */
    CUmemLocation location;
    void *win32HandleMetaData;
    struct {
        unsigned char compressionType, gpuDirectRDMACapable;
        unsigned short usage;
        unsigned char reserved[4];
    } allocFlags;
} CUmemAllocationProp;

typedef struct {
    CUmemLocation location;
    int flags; /* CU_MEM_ACCESS_FLAGS_PROT_READWRITE = 3 */
} CUmemAccessDesc;

/* A stream-ordered pool's properties (cuMemPoolCreate). */
typedef struct {
    int allocType;   /* CU_MEM_ALLOCATION_TYPE_PINNED = 1 */
    int handleTypes; /* CU_MEM_HANDLE_TYPE_* bits its memory can be exported as */
    CUmemLocation location;
    void *win32SecurityAttributes;
    size_t maxSize;
    unsigned short usage;
    unsigned char reserved[54];
} CUmemPoolProps;

enum {
    CU_MEM_HANDLE_TYPE_NONE = 0,
    CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR = 1,
};

/* cuMemPoolSetAttribute / GetAttribute: the reuse flags are ints, the
 * rest cuuint64_t */
enum {
    CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES = 1,
    CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC = 2,
    CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES = 3,
    CU_MEMPOOL_ATTR_RELEASE_THRESHOLD = 4,
    CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT = 5,
    CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH = 6,
    CU_MEMPOOL_ATTR_USED_MEM_CURRENT = 7,
    CU_MEMPOOL_ATTR_USED_MEM_HIGH = 8,
};

/* cuDeviceGetGraphMemAttribute: cuuint64_t each */
enum {
    CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT = 0,
    CU_GRAPH_MEM_ATTR_USED_MEM_HIGH = 1,
    CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT = 2,
    CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH = 3,
};

typedef enum {
    CU_STREAM_CAPTURE_STATUS_NONE = 0,
    CU_STREAM_CAPTURE_STATUS_ACTIVE = 1,
    CU_STREAM_CAPTURE_STATUS_INVALIDATED = 2,
} CUstreamCaptureStatus;

typedef enum {
    CU_STREAM_CAPTURE_MODE_GLOBAL = 0,
    CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1,
    CU_STREAM_CAPTURE_MODE_RELAXED = 2,
} CUstreamCaptureMode;

/* The special stream handles: the legacy default stream, and the calling
 * thread's own default stream. */
#define CU_STREAM_LEGACY     ((CUstream)0x1)
#define CU_STREAM_PER_THREAD ((CUstream)0x2)

#define CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH 1
#define CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS              1

typedef struct {
    CUmemPoolProps poolProps; /* where; handleTypes must be none */
    const CUmemAccessDesc *accessDescs;
    size_t accessDescCount;
    size_t bytesize;
    CUdeviceptr dptr; /* out: the allocation's address, fixed for the graph's life */
} CUDA_MEM_ALLOC_NODE_PARAMS;

typedef struct {
    CUdeviceptr dst;
    size_t pitch;
    unsigned int value;
    unsigned int elementSize; /* 1, 2 or 4 */
    size_t width, height;
} CUDA_MEMSET_NODE_PARAMS;

_Static_assert(sizeof(CUmemPoolProps) == 88, "CUmemPoolProps as in cuda.h");
_Static_assert(sizeof(CUDA_MEM_ALLOC_NODE_PARAMS) == 120, "as in cuda.h");
_Static_assert(sizeof(CUDA_MEMSET_NODE_PARAMS) == 40, "as in cuda.h");

typedef struct {
    size_t Width, Height;
    int Format; /* CUarray_format */
    unsigned NumChannels;
} CUDA_ARRAY_DESCRIPTOR;

typedef struct {
    size_t Width, Height, Depth;
    int Format;
    unsigned NumChannels, Flags;
} CUDA_ARRAY3D_DESCRIPTOR;

typedef struct {
    char reserved[64];
} CUipcMemHandle;

enum {
    CU_AD_FORMAT_UNSIGNED_INT8 = 0x01,
    CU_AD_FORMAT_UNSIGNED_INT16 = 0x02,
    CU_AD_FORMAT_UNSIGNED_INT32 = 0x03,
    CU_AD_FORMAT_SIGNED_INT8 = 0x08,
    CU_AD_FORMAT_SIGNED_INT16 = 0x09,
    CU_AD_FORMAT_SIGNED_INT32 = 0x0a,
    CU_AD_FORMAT_HALF = 0x10,
    CU_AD_FORMAT_FLOAT = 0x20,
};

enum {
    CUDA_SUCCESS = 0,
    CUDA_ERROR_INVALID_VALUE = 1,
    CUDA_ERROR_OUT_OF_MEMORY = 2,
    CUDA_ERROR_NOT_INITIALIZED = 3,
    CUDA_ERROR_NO_DEVICE = 100,
    CUDA_ERROR_OPERATING_SYSTEM = 304,
    CUDA_ERROR_INVALID_DEVICE = 101,
    CUDA_ERROR_INVALID_CONTEXT = 201,
    CUDA_ERROR_ALREADY_MAPPED = 208,
    CUDA_ERROR_PEER_ACCESS_UNSUPPORTED = 217,
    CUDA_ERROR_INVALID_HANDLE = 400,
    CUDA_ERROR_NOT_FOUND = 500,
    CUDA_ERROR_NOT_READY = 600,
    CUDA_ERROR_ILLEGAL_ADDRESS = 700,
    CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED = 704,
    CUDA_ERROR_PEER_ACCESS_NOT_ENABLED = 705,
    CUDA_ERROR_TOO_MANY_PEERS = 711,
    CUDA_ERROR_ILLEGAL_STATE = 401,
    CUDA_ERROR_NOT_PERMITTED = 800,
    CUDA_ERROR_NOT_SUPPORTED = 801,
    CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED = 900,
    CUDA_ERROR_STREAM_CAPTURE_INVALIDATED = 901,
    CUDA_ERROR_STREAM_CAPTURE_UNMATCHED = 903,
    CUDA_ERROR_STREAM_CAPTURE_IMPLICIT = 906,
    CUDA_ERROR_TIMEOUT = 909,
    CUDA_ERROR_UNKNOWN = 999,
};

/* Process checkpoints (driver 570+, CUDA 12.8+; GPU remapping in 12.9+).
 * Every argument struct is 64 bytes, zeroed where reserved. */
typedef enum {
    CU_PROCESS_STATE_RUNNING = 0,
    CU_PROCESS_STATE_LOCKED = 1,
    CU_PROCESS_STATE_CHECKPOINTED = 2,
    CU_PROCESS_STATE_FAILED = 3,
} CUprocessState;

typedef struct {
    unsigned int timeoutMs; /* 0: wait as long as it takes */
    unsigned int reserved0;
    cuuint64_t reserved1[7];
} CUcheckpointLockArgs;

typedef struct {
    cuuint64_t reserved[8];
} CUcheckpointCheckpointArgs;

typedef struct {
    cuuint64_t reserved[8];
} CUcheckpointUnlockArgs;

typedef struct {
    CUuuid oldUuid, newUuid;
} CUcheckpointGpuPair;

typedef struct {
    CUcheckpointGpuPair *gpuPairs;
    unsigned int gpuPairsCount;
    unsigned int padding0;
    char reserved[48];
} CUcheckpointRestoreArgs;

enum {
    CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
    CU_DEVICE_ATTRIBUTE_PCI_BUS_ID = 33,
    CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID = 34,
    CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID = 50,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
};

enum {
    CU_GET_PROC_ADDRESS_SUCCESS = 0,
    CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND = 1,
    CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT = 2,
};

#endif

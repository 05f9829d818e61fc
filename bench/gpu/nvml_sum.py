"""nvml_sum: samples, as fast as NVML answers, the sum of the GPU memory
NVML gives every compute process on GPU 0 (run it on a GPU that holds only
the group under test), until STOP_FILE exists; then prints
"samples N over M max BYTES" against CAP bytes.
usage: python3 nvml_sum.py CAP STOP_FILE"""
import ctypes
import os
import sys


class Proc(ctypes.Structure):
    _fields_ = [("pid", ctypes.c_uint), ("used", ctypes.c_ulonglong),
                ("gi", ctypes.c_uint), ("ci", ctypes.c_uint)]


def main():
    cap, stop = int(sys.argv[1]), sys.argv[2]
    nv = ctypes.CDLL("libnvidia-ml.so.1")
    assert nv.nvmlInit_v2() == 0
    h = ctypes.c_void_p()
    assert nv.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(h)) == 0
    buf = (Proc * 1024)()
    samples = over = top = 0
    print("sampling", flush=True)
    while not os.path.exists(stop):
        n = ctypes.c_uint(1024)
        if nv.nvmlDeviceGetComputeRunningProcesses_v3(h, ctypes.byref(n), buf) != 0:
            continue
        s = sum(buf[i].used for i in range(n.value))
        samples += 1
        over += s > cap
        top = max(top, s)
    print(f"samples {samples} over {over} max {top}")


if __name__ == "__main__":
    main()

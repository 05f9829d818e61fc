/* gate: holding every application thread at the entry of the driver API
 * while the process is suspended. With fast swap on, the entry points a
 * program looks up (dlsym, cuGetProcAddress) are trampolines that count the
 * calls in flight and wait while the gate is closed; libvramcap's own work
 * calls the real entry points and never waits. */
#ifndef VRAM_SHIM_GATE_H
#define VRAM_SHIM_GATE_H

#include <stdbool.h>

/* Whether this build can gate (x86-64 only: the trampolines are assembly). */
bool gate_supported(void);

/* The trampoline for fn (a real entry point or one of our wrappers), or fn
 * itself when no slot is left (then gate_complete() turns false). */
void *gate_wrap(void *fn);

/* How many driver calls the application has made so far (outermost
 * ones): unchanged over a while, the process is idle at the driver. */
unsigned long gate_entries(void);

/* How many of its calls are in the driver now (a long copy is one). */
unsigned gate_inflight(void);

/* False once an entry point had to be handed out ungated. */
bool gate_complete(void);

/* For libvramcap's own wrappers, reached directly by programs linked
 * against libcuda (not through a trampoline): counts the call in flight,
 * waiting while the gate is closed; a call already counted (through a
 * trampoline) passes. Use GATE_SCOPE(): the count ends with the scope. */
int gate_scope_enter(void);
void gate_scope_leave(int *token);
#define GATE_SCOPE()                                                                               \
    __attribute__((cleanup(gate_scope_leave), unused)) int gate_token_ = gate_scope_enter()

/* Closes the gate (one hold more: it stays closed until each is given
 * back) and waits up to timeout_ms for the calls in flight to return. 0,
 * or -1 (the hold given back) with *busy the calls still in flight. */
int gate_close(unsigned timeout_ms, unsigned *busy);

/* Gives a hold back: once none is left, every held thread goes on. */
void gate_open(void);

#endif

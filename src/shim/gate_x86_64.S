/* gate_x86_64: the trampolines libvramcap hands out in place of the driver's
 * entry points when fast swap is on. Each stub loads its slot number and
 * jumps to one common body, which asks gate_enter (gate.c) for the real
 * function (waiting there while the process is suspended), calls it with
 * the caller's registers and stack arguments exactly as they came, and
 * returns through gate_leave, which hands back the caller's return
 * address. That address is kept on a per-thread stack, so the callee sees
 * its stack arguments where the caller put them: this works for any
 * signature, including cuLaunchKernel's eleven arguments. */
#if defined(__x86_64__)

    .text
    .p2align 4
    .type vram_gate_common, @function
vram_gate_common:
    /* on entry: %r11 = slot, (%rsp) = the caller's return address */
    sub     $200, %rsp              /* 8 GP + 8 XMM, keeps 16-byte alignment */
    mov     %rdi, 0(%rsp)
    mov     %rsi, 8(%rsp)
    mov     %rdx, 16(%rsp)
    mov     %rcx, 24(%rsp)
    mov     %r8, 32(%rsp)
    mov     %r9, 40(%rsp)
    mov     %rax, 48(%rsp)
    mov     %r10, 56(%rsp)
    movdqu  %xmm0, 64(%rsp)
    movdqu  %xmm1, 80(%rsp)
    movdqu  %xmm2, 96(%rsp)
    movdqu  %xmm3, 112(%rsp)
    movdqu  %xmm4, 128(%rsp)
    movdqu  %xmm5, 144(%rsp)
    movdqu  %xmm6, 160(%rsp)
    movdqu  %xmm7, 176(%rsp)
    mov     %r11, %rdi
    mov     200(%rsp), %rsi
    call    vram_gate_enter@PLT     /* -> the real function */
    mov     %rax, %r11
    mov     0(%rsp), %rdi
    mov     8(%rsp), %rsi
    mov     16(%rsp), %rdx
    mov     24(%rsp), %rcx
    mov     32(%rsp), %r8
    mov     40(%rsp), %r9
    mov     48(%rsp), %rax
    mov     56(%rsp), %r10
    movdqu  64(%rsp), %xmm0
    movdqu  80(%rsp), %xmm1
    movdqu  96(%rsp), %xmm2
    movdqu  112(%rsp), %xmm3
    movdqu  128(%rsp), %xmm4
    movdqu  144(%rsp), %xmm5
    movdqu  160(%rsp), %xmm6
    movdqu  176(%rsp), %xmm7
    add     $208, %rsp              /* and the return address, kept by gate_enter */
    call    *%r11                   /* the stack arguments are where they were */
    push    %rax
    push    %rdx
    call    vram_gate_leave@PLT     /* -> the caller's return address */
    mov     %rax, %r11
    pop     %rdx
    pop     %rax
    push    %r11
    ret
    .size vram_gate_common, .-vram_gate_common

    .p2align 4
    .globl vram_gate_stubs
    .hidden vram_gate_stubs
vram_gate_stubs:
    .set slot, 0
    .rept 1024
    .p2align 4
    mov     $slot, %r11d
    jmp     vram_gate_common
    .set slot, slot + 1
    .endr

#endif
    .section .note.GNU-stack, "", @progbits

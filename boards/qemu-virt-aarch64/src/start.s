// Start-up for QEMU's Arm virt machine, entered at EL1 with the MMU off. Core 0 starts at
// `_start`; a second core, where the firmware starts one, at `_secondary`.
//
// Masks every interrupt (they stay masked: the critical-section implementation relies on it),
// sets the stack, turns on FP/SIMD (Rust uses it), installs the exception vectors, zeroes
// .bss and the shared region, turns the MMU on with an identity map (the first GiB Device
// memory, DRAM Normal write-back: with the MMU off every access is Device memory, where an
// unaligned access faults), and calls `board_main`, which never returns.

.section .text._start, "ax"
.global _start
_start:
    msr     daifset, #0xf
    mrs     x0, mpidr_el1
    and     x0, x0, #0xff
    cbnz    x0, 9f                      // only core 0 runs
    ldr     x0, =__stack_top
    mov     sp, x0
    mov     x0, #(3 << 20)              // CPACR_EL1.FPEN: no FP/SIMD traps
    msr     cpacr_el1, x0
    isb
    ldr     x0, =__vectors
    msr     vbar_el1, x0
    ldr     x0, =__bss_start
    ldr     x1, =__bss_end
    bl      __zero
    ldr     x0, =__shared_start
    ldr     x1, =__shared_end
    bl      __zero
    bl      __mmu_on
    bl      board_main
9:  wfe
    b       9b

// A second core, started by PSCI CPU_ON (`start_second_core`) with its stack top as the
// context id in x0: the same set-up as core 0 without the zeroing, then
// `board_secondary`, which never returns.
.section .text._secondary, "ax"
.global _secondary
_secondary:
    msr     daifset, #0xf
    mov     sp, x0
    mov     x0, #(3 << 20)
    msr     cpacr_el1, x0
    isb
    ldr     x0, =__vectors
    msr     vbar_el1, x0
    bl      __mmu_on
    bl      board_secondary
9:  wfe
    b       9b

// The MMU on with the identity map, data and instruction caches on (every core runs it).
__mmu_on:
    ldr     x0, =0xff00                 // MAIR: attr 0 Device-nGnRnE, attr 1 Normal WB
    msr     mair_el1, x0
    ldr     x0, =((1 << 32) | (1 << 23) | (3 << 12) | (1 << 10) | (1 << 8) | 25)
    msr     tcr_el1, x0                 // 39-bit VA, 4 KiB granule, WB walks, no TTBR1
    ldr     x0, =__page_table
    msr     ttbr0_el1, x0
    dsb     ish
    tlbi    vmalle1
    dsb     ish
    isb
    mrs     x0, sctlr_el1
    orr     x0, x0, #(1 << 0)           // M: MMU on
    orr     x0, x0, #(1 << 2)           // C: data cache
    orr     x0, x0, #(1 << 12)          // I: instruction cache
    bic     x0, x0, #(1 << 1)           // A: unaligned accesses allowed
    msr     sctlr_el1, x0
    isb
    ret

__zero:
    cmp     x0, x1
    b.hs    1f
    str     xzr, [x0], #8
    b       __zero
1:  ret

.section .text.vectors, "ax"
.balign 2048
__vectors:
.rept 16
    .balign 128
    b       __exception
.endr
__exception:
    bl      board_exception
    b       __exception

// Level-1 table, 1 GiB blocks: [0] devices (Device-nGnRnE), [1] DRAM (Normal, inner
// shareable); access flag set on both.
.section .rodata.page_table, "a"
.balign 4096
__page_table:
    .quad   0x00000401
    .quad   0x40000705
    .fill   510, 8, 0

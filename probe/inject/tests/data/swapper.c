/* Calls eglSwapBuffers(EGL_NO_DISPLAY, EGL_NO_SURFACE) in a loop (it fails fast with
 * EGL_BAD_DISPLAY, but it is the real libEGL entry point) and checks after every call that
 * the values it keeps across the call (callee-saved registers, the stack, MXCSR and the
 * x87 control word) are intact. On a mismatch it prints "CORRUPT ..." and exits 3. */
#include <EGL/egl.h>
#include <stdio.h>
#include <stdlib.h>
#include <xmmintrin.h>

static unsigned long mix(unsigned long i, unsigned long k) {
    return (i + k) * 0x9E3779B97F4A7C15ul ^ (k << 17);
}

int main(void) {
    /* Round toward zero, flush denormals: unusual values that must survive. */
    _mm_setcsr((_mm_getcsr() & ~0x6000u) | 0x6000u | 0x8000u);
    unsigned short cw = 0x027f ^ 0x0c00; /* x87: round toward zero */
    __asm__ volatile("fldcw %0" : : "m"(cw));
    unsigned int csr0 = _mm_getcsr();
    volatile double on_stack[8];
    printf("ready\n");
    fflush(stdout);
    for (unsigned long i = 0;; i++) {
        unsigned long a = mix(i, 1), b = mix(i, 2), c = mix(i, 3), d = mix(i, 4), e = mix(i, 5);
        for (int k = 0; k < 8; k++)
            on_stack[k] = (double)(i * 8 + k);
        __asm__ volatile("" : "+r"(a), "+r"(b), "+r"(c), "+r"(d), "+r"(e));
        eglSwapBuffers(EGL_NO_DISPLAY, EGL_NO_SURFACE);
        __asm__ volatile("" : "+r"(a), "+r"(b), "+r"(c), "+r"(d), "+r"(e));
        unsigned short cw_now;
        __asm__ volatile("fnstcw %0" : "=m"(cw_now));
        int bad = a != mix(i, 1) || b != mix(i, 2) || c != mix(i, 3) || d != mix(i, 4) ||
                  e != mix(i, 5) || _mm_getcsr() != csr0 || cw_now != cw;
        for (int k = 0; k < 8; k++)
            bad |= on_stack[k] != (double)(i * 8 + k);
        if (bad) {
            printf("CORRUPT at iteration %lu\n", i);
            fflush(stdout);
            exit(3);
        }
    }
}

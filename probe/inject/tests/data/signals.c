/* Swaps (eglSwapBuffers on no display) in a loop and counts a real-time signal, which the
 * kernel queues one by one: after the test has sent N of them it sends SIGUSR2 and the
 * program prints "count=N" if none was lost, and exits. The count is atomic: each injected
 * test entry starts a thread, and the kernel may run the handler on several threads at once
 * (a plain `count++` lost one of 400 increments that way, once in a full test run). */
#include <EGL/egl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

static atomic_int count;
static volatile sig_atomic_t report;

static void on_rt(int s) {
    (void)s;
    atomic_fetch_add(&count, 1);
}

static void on_usr2(int s) {
    (void)s;
    report = 1;
}

int main(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sa.sa_handler = on_rt;
    sigaction(SIGRTMIN + 1, &sa, NULL);
    sa.sa_handler = on_usr2;
    sigaction(SIGUSR2, &sa, NULL);
    printf("ready\n");
    fflush(stdout);
    while (!report)
        eglSwapBuffers(EGL_NO_DISPLAY, EGL_NO_SURFACE);
    printf("count=%d\n", atomic_load(&count));
    fflush(stdout);
    return 0;
}

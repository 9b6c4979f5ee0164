/* Swaps (eglSwapBuffers on no display) in a loop and counts a real-time signal, which the
 * kernel queues one by one: after the test has sent N of them it sends SIGUSR2 and the
 * program prints "count=N" if none was lost, and exits. */
#include <EGL/egl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

static volatile sig_atomic_t count;
static volatile sig_atomic_t report;

static void on_rt(int s) {
    (void)s;
    count++;
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
    printf("count=%d\n", (int)count);
    fflush(stdout);
    return 0;
}

/* Never swaps itself, but keeps forking children that call eglSwapBuffers once and exit.
 * A child inherits the parent's memory, breakpoints included: if one dies (SIGTRAP), the
 * parent prints "CHILD DIED" and exits 4. */
#include <EGL/egl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
    printf("ready\n");
    fflush(stdout);
    for (;;) {
        pid_t p = fork();
        if (p < 0)
            continue;
        if (p == 0) {
            eglSwapBuffers(EGL_NO_DISPLAY, EGL_NO_SURFACE);
            _exit(0);
        }
        int st = 0;
        while (waitpid(p, &st, 0) < 0)
            ;
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            printf("CHILD DIED status %#x\n", st);
            fflush(stdout);
            exit(4);
        }
        usleep(10000);
    }
}

/* A program that loads libEGL but never swaps: the injector must time out and leave it
 * running, untraced. */
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

int main(void) {
    void *egl = dlopen("libEGL.so.1", RTLD_NOW);
    if (!egl) {
        fprintf(stderr, "no libEGL.so.1: %s\n", dlerror());
        return 1;
    }
    printf("ready\n");
    fflush(stdout);
    for (;;)
        sleep(1);
}

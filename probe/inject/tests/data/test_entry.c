/* The library the tests inject.
 *
 * test_entry(path) writes "pid=P tid=T calls=N ctor=C" to the file named by its argument
 * and returns 42. N counts calls in this process (a second injection shows that dlopen
 * returned the already-loaded instance); C says the constructor ran. Like the real agent,
 * it also starts a thread: that thread writes "tid=T" to "<path>.thread" and then sleeps
 * for ever, so the tests can check it runs, and runs untraced. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int calls;
static int constructed;

__attribute__((constructor)) static void init(void) { constructed = 1; }

static void *worker(void *arg) {
    char *path = arg;
    FILE *f = fopen(path, "w");
    if (f) {
        fprintf(f, "tid=%ld\n", (long)syscall(SYS_gettid));
        fclose(f);
    }
    free(path);
    for (;;)
        pause();
    return NULL;
}

int test_entry(const char *arg) {
    calls++;
    FILE *f = fopen(arg, "w");
    if (!f)
        return -1;
    fprintf(f, "pid=%d tid=%ld calls=%d ctor=%d\n", (int)getpid(), (long)syscall(SYS_gettid),
            calls, constructed);
    fclose(f);

    size_t n = strlen(arg);
    char *thread_path = malloc(n + sizeof(".thread"));
    if (!thread_path)
        return -2;
    memcpy(thread_path, arg, n);
    memcpy(thread_path + n, ".thread", sizeof(".thread"));
    pthread_t t;
    if (pthread_create(&t, NULL, worker, thread_path) != 0)
        return -3;
    pthread_detach(t);
    return 42;
}

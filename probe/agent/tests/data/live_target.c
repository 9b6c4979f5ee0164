/* Test program for the agent's live hooks (probe/agent/tests/live_hooks.rs).
 *
 *   live_target AGENT_SO|none PLUGIN_SO
 *
 * Creates an EGL surfaceless pbuffer GLES 3 context (Mesa), caches function pointers the way
 * loaders do before an attach (eglGetProcAddress for GL, dlsym(dlopen("libEGL.so.1")) for
 * EGL), renders frames, then (unless "none") dlopen()s the agent with RTLD_NOW and calls its
 * test entry gpuheat_live_install_for_test() twice, and keeps rendering through direct
 * symbol calls, the cached pointers, a lazily bound PLT slot and a module loaded afterwards.
 *
 * With the agent it checks (lines "check NAME ok|FAIL ..."):
 *  - structure: the program's GOT, the glvnd (or Mesa) dispatch table entry behind a cached
 *    pointer, the code of the cached eglSwapBuffers/eglGetProcAddress/eglMakeCurrent, the
 *    program's dlsym and a plugin loaded afterwards all lead to the agent's wrappers;
 *  - behaviour: hardware execute breakpoints (perf_event_open) on the wrappers count every
 *    call made through each path ("perf=unavailable" when the kernel refuses them);
 * and always prints the FNV-1a hash of the final framebuffer and the GL error state, which
 * must be the same with and without the agent. Exit status 0 only when every check passed.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* ---- EGL / GLES declarations (no dependency on the -dev headers) ---- */
typedef void *EGLDisplay, *EGLConfig, *EGLSurface, *EGLContext;
typedef int EGLint;
typedef unsigned int EGLBoolean, EGLenum;
typedef unsigned int GLenum, GLuint, GLbitfield;
typedef int GLint, GLsizei;
typedef float GLfloat;
typedef char GLchar;
typedef unsigned char GLboolean;
typedef long GLsizeiptr;

extern EGLBoolean eglInitialize(EGLDisplay, EGLint *, EGLint *);
extern EGLBoolean eglBindAPI(EGLenum);
extern EGLBoolean eglChooseConfig(EGLDisplay, const EGLint *, EGLConfig *, EGLint, EGLint *);
extern EGLSurface eglCreatePbufferSurface(EGLDisplay, EGLConfig, const EGLint *);
extern EGLContext eglCreateContext(EGLDisplay, EGLConfig, EGLContext, const EGLint *);
extern EGLBoolean eglMakeCurrent(EGLDisplay, EGLSurface, EGLSurface, EGLContext);
extern EGLBoolean eglSwapBuffers(EGLDisplay, EGLSurface);
extern void *eglGetProcAddress(const char *);

extern void glClearColor(GLfloat, GLfloat, GLfloat, GLfloat);
extern void glClear(GLbitfield);
extern void glDrawArrays(GLenum, GLint, GLsizei);
extern void glFlush(void);
extern void glFinish(void);
extern GLenum glGetError(void);
extern void glReadPixels(GLint, GLint, GLsizei, GLsizei, GLenum, GLenum, void *);
extern GLuint glCreateShader(GLenum);
extern void glShaderSource(GLuint, GLsizei, const GLchar *const *, const GLint *);
extern void glCompileShader(GLuint);
extern void glGetShaderiv(GLuint, GLenum, GLint *);
extern GLuint glCreateProgram(void);
extern void glAttachShader(GLuint, GLuint);
extern void glLinkProgram(GLuint);
extern void glGetProgramiv(GLuint, GLenum, GLint *);
extern void glUseProgram(GLuint);
extern GLint glGetUniformLocation(GLuint, const GLchar *);
extern void glUniform2f(GLint, GLfloat, GLfloat);
extern void glUniform4f(GLint, GLfloat, GLfloat, GLfloat, GLfloat);
extern void glGenBuffers(GLsizei, GLuint *);
extern void glBindBuffer(GLenum, GLuint);
extern void glBufferData(GLenum, GLsizeiptr, const void *, GLenum);
extern void glVertexAttribPointer(GLuint, GLint, GLenum, GLboolean, GLsizei, const void *);
extern void glEnableVertexAttribArray(GLuint);
extern void glEnable(GLenum);
extern void glBlendFunc(GLenum, GLenum);

#define EGL_PLATFORM_SURFACELESS_MESA 0x31DD
#define EGL_SURFACE_TYPE 0x3033
#define EGL_PBUFFER_BIT 0x0001
#define EGL_RENDERABLE_TYPE 0x3040
#define EGL_OPENGL_ES3_BIT 0x0040
#define EGL_RED_SIZE 0x3024
#define EGL_GREEN_SIZE 0x3023
#define EGL_BLUE_SIZE 0x3022
#define EGL_ALPHA_SIZE 0x3021
#define EGL_NONE 0x3038
#define EGL_WIDTH 0x3057
#define EGL_HEIGHT 0x3056
#define EGL_OPENGL_ES_API 0x30A0
#define EGL_CONTEXT_MAJOR_VERSION 0x3098

#define GL_COLOR_BUFFER_BIT 0x4000
#define GL_TRIANGLES 0x0004
#define GL_VERTEX_SHADER 0x8B31
#define GL_FRAGMENT_SHADER 0x8B30
#define GL_COMPILE_STATUS 0x8B81
#define GL_LINK_STATUS 0x8B82
#define GL_ARRAY_BUFFER 0x8892
#define GL_STATIC_DRAW 0x88E4
#define GL_FLOAT 0x1406
#define GL_BLEND 0x0BE2
#define GL_ONE 1
#define GL_RGBA 0x1908
#define GL_UNSIGNED_BYTE 0x1401

#define W 64
#define H 64

typedef EGLDisplay (*GetPlatformDisplayFn)(EGLenum, void *, const EGLint *);
typedef void (*DrawArraysFn)(GLenum, GLint, GLsizei);
typedef void (*Uniform2fFn)(GLint, GLfloat, GLfloat);
typedef EGLBoolean (*SwapFn)(EGLDisplay, EGLSurface);
typedef void *(*GetProcFn)(const char *);
typedef EGLBoolean (*MakeCurrentFn)(EGLDisplay, EGLSurface, EGLSurface, EGLContext);

static EGLDisplay dpy;
static EGLSurface surf;
static EGLContext ctx;
static GLint u_off;
static int failures;

/* Pointers cached before the attach. */
static DrawArraysFn cached_draw;
static Uniform2fFn cached_uniform2f;
static SwapFn cached_swap;
static GetProcFn cached_get_proc;
static MakeCurrentFn cached_make_current;

static void die(const char *what) {
    fprintf(stderr, "live_target: %s failed\n", what);
    exit(2);
}

static void check(const char *name, int ok, const char *detail) {
    printf("check %s %s %s\n", name, ok ? "ok" : "FAIL", detail ? detail : "");
    if (!ok)
        failures++;
}

static void setup(void) {
    GetPlatformDisplayFn gpd = (GetPlatformDisplayFn)eglGetProcAddress("eglGetPlatformDisplayEXT");
    if (!gpd)
        die("eglGetPlatformDisplayEXT");
    dpy = gpd(EGL_PLATFORM_SURFACELESS_MESA, NULL, NULL);
    EGLint major, minor;
    if (!dpy || !eglInitialize(dpy, &major, &minor))
        die("eglInitialize");
    if (!eglBindAPI(EGL_OPENGL_ES_API))
        die("eglBindAPI");
    const EGLint cfg_attr[] = {EGL_SURFACE_TYPE, EGL_PBUFFER_BIT, EGL_RENDERABLE_TYPE,
                               EGL_OPENGL_ES3_BIT, EGL_RED_SIZE, 8, EGL_GREEN_SIZE, 8,
                               EGL_BLUE_SIZE, 8, EGL_ALPHA_SIZE, 8, EGL_NONE};
    EGLConfig cfg;
    EGLint n = 0;
    if (!eglChooseConfig(dpy, cfg_attr, &cfg, 1, &n) || n < 1)
        die("eglChooseConfig");
    const EGLint surf_attr[] = {EGL_WIDTH, W, EGL_HEIGHT, H, EGL_NONE};
    surf = eglCreatePbufferSurface(dpy, cfg, surf_attr);
    if (!surf)
        die("eglCreatePbufferSurface");
    const EGLint ctx_attr[] = {EGL_CONTEXT_MAJOR_VERSION, 3, EGL_NONE};
    ctx = eglCreateContext(dpy, cfg, NULL, ctx_attr);
    if (!ctx)
        die("eglCreateContext");
    if (!eglMakeCurrent(dpy, surf, surf, ctx))
        die("eglMakeCurrent");

    static const char *vs = "#version 300 es\n"
                            "layout(location = 0) in vec2 a_pos;\n"
                            "uniform vec2 u_off;\n"
                            "void main() { gl_Position = vec4(a_pos * 0.5 + u_off, 0.0, 1.0); }\n";
    static const char *fs = "#version 300 es\n"
                            "precision highp float;\n"
                            "out vec4 o;\n"
                            "void main() { o = vec4(0.06, 0.03, 0.02, 0.05) * step(0.0, gl_FragCoord.x); }\n";
    GLint ok = 0;
    GLuint v = glCreateShader(GL_VERTEX_SHADER);
    glShaderSource(v, 1, &vs, NULL);
    glCompileShader(v);
    glGetShaderiv(v, GL_COMPILE_STATUS, &ok);
    if (!ok)
        die("vertex shader");
    GLuint f = glCreateShader(GL_FRAGMENT_SHADER);
    glShaderSource(f, 1, &fs, NULL);
    glCompileShader(f);
    glGetShaderiv(f, GL_COMPILE_STATUS, &ok);
    if (!ok)
        die("fragment shader");
    GLuint prog = glCreateProgram();
    glAttachShader(prog, v);
    glAttachShader(prog, f);
    glLinkProgram(prog);
    glGetProgramiv(prog, GL_LINK_STATUS, &ok);
    if (!ok)
        die("link");
    glUseProgram(prog);
    u_off = glGetUniformLocation(prog, "u_off");
    static const float tri[] = {-1.0f, -1.0f, 1.0f, -1.0f, 0.0f, 1.0f};
    GLuint vbo;
    glGenBuffers(1, &vbo);
    glBindBuffer(GL_ARRAY_BUFFER, vbo);
    glBufferData(GL_ARRAY_BUFFER, sizeof tri, tri, GL_STATIC_DRAW);
    glVertexAttribPointer(0, 2, GL_FLOAT, 0, 0, 0);
    glEnableVertexAttribArray(0);
    glEnable(GL_BLEND);
    glBlendFunc(GL_ONE, GL_ONE); /* additive: every draw leaves its mark exactly once */
    glClearColor(0.1f, 0.2f, 0.3f, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
}

/* Each draw lands somewhere else, so the final image depends on every draw. */
static int draw_no;
static void offset(int cached) {
    float x = (float)((draw_no * 37) % 11) / 10.0f - 0.5f;
    float y = (float)((draw_no * 53) % 7) / 6.0f - 0.5f;
    draw_no++;
    if (cached)
        cached_uniform2f(u_off, x, y);
    else
        glUniform2f(u_off, x, y);
}

/* ---- hardware execute breakpoints counting entries into one address ---- */
static int perf_ok = 1;
static int bp_open(void *addr) {
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.type = PERF_TYPE_BREAKPOINT;
    a.size = sizeof a;
    a.bp_type = HW_BREAKPOINT_X;
    a.bp_addr = (uint64_t)(uintptr_t)addr;
    a.bp_len = sizeof(long);
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
    if (fd < 0)
        perf_ok = 0;
    return fd;
}
static long long bp_close(int fd) {
    long long c = -1;
    if (fd >= 0) {
        if (read(fd, &c, sizeof c) != sizeof c)
            c = -1;
        close(fd);
    }
    return c;
}
static void expect_count(const char *name, int fd, long long want) {
    long long got = bp_close(fd);
    if (!perf_ok)
        return;
    char detail[96];
    snprintf(detail, sizeof detail, "entries=%lld expected=%lld", got, want);
    check(name, got == want, detail);
}

/* Follows jmp rel32 / jmp [rip+x] / movabs rax; jmp rax chains (inline hooks, relays). */
static void *follow(void *p) {
    for (int i = 0; i < 4; i++) {
        const unsigned char *b = p;
        if (b[0] == 0xF3 && b[1] == 0x0F && b[2] == 0x1E && b[3] == 0xFA)
            b += 4; /* endbr64 */
        if (b[0] == 0xE9) {
            int32_t rel;
            memcpy(&rel, b + 1, 4);
            p = (void *)(b + 5 + rel);
        } else if (b[0] == 0xFF && b[1] == 0x25) {
            int32_t rel;
            memcpy(&rel, b + 2, 4);
            memcpy(&p, b + 6 + rel, 8);
        } else if (b[0] == 0x48 && b[1] == 0xB8 && b[10] == 0xFF && b[11] == 0xE0) {
            memcpy(&p, b + 2, 8);
        } else {
            break;
        }
    }
    return p;
}

/* The dispatch slot of a glvnd stub: ... jmp *disp32(%r11) (41 ff a3) or disp8 (41 ff 63). */
static long glvnd_slot(void *stub) {
    const unsigned char *b = stub;
    for (int i = 0; i < 24; i++) {
        if (b[i] == 0x41 && b[i + 1] == 0xFF && b[i + 2] == 0xA3) {
            int32_t d;
            memcpy(&d, b + i + 3, 4);
            return d / 8;
        }
        if (b[i] == 0x41 && b[i + 1] == 0xFF && b[i + 2] == 0x63)
            return (signed char)b[i + 3] / 8;
    }
    return -1;
}

static void *table_entry(const char *name, void *stub) {
    const char *mode = getenv("GPUHEAT_LIVE_DISPATCH");
    if (mode && strcmp(mode, "mesa") == 0) {
        void *h = dlopen("libglapi.so.0", RTLD_LAZY | RTLD_NOLOAD);
        void **(*get)(void) = h ? (void **(*)(void))dlsym(h, "_glapi_get_dispatch") : NULL;
        int (*off)(const char *) = h ? (int (*)(const char *))dlsym(h, "_glapi_get_proc_offset") : NULL;
        if (!get || !off || off(name) < 0)
            return NULL;
        return get()[off(name)];
    }
    void *h = dlopen("libGLdispatch.so.0", RTLD_LAZY | RTLD_NOLOAD);
    void **(*get)(void) = h ? (void **(*)(void))dlsym(h, "_glapi_get_current") : NULL;
    long slot = glvnd_slot(stub);
    if (!get || slot < 0)
        return NULL;
    return get()[slot];
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: live_target AGENT_SO|none PLUGIN_SO\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IONBF, 0);
    int live = strcmp(argv[1], "none") != 0;
    setup();

    /* What glad/epoxy/SDL and glmark2 keep from before the attach. */
    cached_draw = (DrawArraysFn)eglGetProcAddress("glDrawArrays");
    cached_uniform2f = (Uniform2fFn)eglGetProcAddress("glUniform2f");
    void *egl = dlopen("libEGL.so.1", RTLD_NOW);
    cached_swap = (SwapFn)dlsym(egl, "eglSwapBuffers");
    cached_get_proc = (GetProcFn)dlsym(egl, "eglGetProcAddress");
    cached_make_current = (MakeCurrentFn)dlsym(egl, "eglMakeCurrent");
    if (!cached_draw || !cached_uniform2f || !cached_swap || !cached_get_proc || !cached_make_current)
        die("caching pointers");

    /* Frames before the attach, through every path. */
    for (int f = 0; f < 3; f++) {
        offset(0);
        glDrawArrays(GL_TRIANGLES, 0, 3);
        offset(1);
        cached_draw(GL_TRIANGLES, 0, 3);
        if (f % 2)
            eglSwapBuffers(dpy, surf);
        else
            cached_swap(dpy, surf);
    }

    void *agent = NULL;
    void *w_draw = NULL, *w_swap = NULL, *w_flush = NULL, *w_get_proc = NULL, *w_make_current = NULL;
    if (live) {
        agent = dlopen(argv[1], RTLD_NOW);
        if (!agent) {
            fprintf(stderr, "live_target: dlopen agent: %s\n", dlerror());
            return 2;
        }
        int (*install)(void) = (int (*)(void))dlsym(agent, "gpuheat_live_install_for_test");
        if (!install)
            die("gpuheat_live_install_for_test");
        struct timespec t0, t1, t2;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        int first = install();
        clock_gettime(CLOCK_MONOTONIC, &t1);
        int second = install();
        clock_gettime(CLOCK_MONOTONIC, &t2);
        printf("install1=%d install2=%d install1_us=%ld install2_us=%ld\n", first, second,
               (t1.tv_sec - t0.tv_sec) * 1000000L + (t1.tv_nsec - t0.tv_nsec) / 1000,
               (t2.tv_sec - t1.tv_sec) * 1000000L + (t2.tv_nsec - t1.tv_nsec) / 1000);
        check("install-patched-something", first > 0, NULL);
        check("install-idempotent", second == 0, NULL);
        w_draw = dlsym(agent, "glDrawArrays");
        w_swap = dlsym(agent, "eglSwapBuffers");
        w_flush = dlsym(agent, "glFlush");
        w_get_proc = dlsym(agent, "eglGetProcAddress");
        w_make_current = dlsym(agent, "eglMakeCurrent");
        if (!w_draw || !w_swap || !w_flush || !w_get_proc || !w_make_current)
            die("agent wrappers");

        /* Structure. */
        void *volatile got_draw = (void *)&glDrawArrays;
        void *volatile got_swap = (void *)&eglSwapBuffers;
        check("got-glDrawArrays", got_draw == w_draw, NULL);
        check("got-eglSwapBuffers", got_swap == w_swap, NULL);
        check("inline-eglSwapBuffers", follow((void *)cached_swap) == w_swap, NULL);
        check("inline-eglGetProcAddress", follow((void *)cached_get_proc) == w_get_proc, NULL);
        check("inline-eglMakeCurrent", follow((void *)cached_make_current) == w_make_current, NULL);
        check("dispatch-glDrawArrays", table_entry("glDrawArrays", (void *)cached_draw) == w_draw, NULL);
        check("cached-eglGetProcAddress-hands-out-wrapper", cached_get_proc("glDrawArrays") == w_draw, NULL);
        void *gles = dlopen("libGLESv2.so.2", RTLD_LAZY | RTLD_NOLOAD);
        check("dlsym-hands-out-wrapper", gles && dlsym(gles, "glDrawArrays") == w_draw, NULL);
        check("dlsym-RTLD_DEFAULT", dlsym(RTLD_DEFAULT, "glDrawArrays") == w_draw, NULL);
        check("dlsym-RTLD_NEXT-passes-through", dlsym(RTLD_NEXT, "printf") == dlsym(RTLD_DEFAULT, "printf"), NULL);
        check("dlsym-missing-stays-missing", dlsym(RTLD_DEFAULT, "glNoSuchFunctionGPUHEAT") == NULL && dlerror() != NULL, NULL);
    }

    /* Frames after the attach: the same GL work with or without the agent. */
    int fd;
    /* (1) direct symbol calls (GOT, already bound) */
    fd = live ? bp_open(w_draw) : -1;
    for (int k = 0; k < 3; k++) {
        offset(0);
        glDrawArrays(GL_TRIANGLES, 0, 3);
    }
    if (live)
        expect_count("enter-direct-glDrawArrays", fd, 3);
    fd = live ? bp_open(w_swap) : -1;
    eglSwapBuffers(dpy, surf);
    if (live)
        expect_count("enter-direct-eglSwapBuffers", fd, 1);

    /* (2) pointers cached from eglGetProcAddress before the attach (glvnd stubs) */
    fd = live ? bp_open(w_draw) : -1;
    for (int k = 0; k < 3; k++) {
        offset(1);
        cached_draw(GL_TRIANGLES, 0, 3);
    }
    if (live)
        expect_count("enter-cached-glDrawArrays", fd, 3);

    /* (3) eglSwapBuffers cached with dlsym before the attach (inline hook) */
    fd = live ? bp_open(w_swap) : -1;
    for (int k = 0; k < 2; k++)
        if (!cached_swap(dpy, surf))
            die("cached eglSwapBuffers");
    if (live)
        expect_count("enter-cached-eglSwapBuffers", fd, 2);

    /* (4) eglMakeCurrent cached with dlsym (inline hook), re-making the same context current */
    fd = live ? bp_open(w_make_current) : -1;
    if (!cached_make_current(dpy, surf, surf, ctx))
        die("cached eglMakeCurrent");
    if (live)
        expect_count("enter-cached-eglMakeCurrent", fd, 1);

    /* (5) a PLT slot never bound before the attach (lazy binding) */
    fd = live ? bp_open(w_flush) : -1;
    glFlush();
    glFlush();
    if (live)
        expect_count("enter-lazy-glFlush", fd, 2);

    /* (6) a module loaded after the attach */
    void *plugin = dlopen(argv[2], RTLD_NOW);
    if (!plugin)
        die("dlopen plugin");
    void (*plugin_draw)(void) = (void (*)(void))dlsym(plugin, "plugin_draw");
    void *(*plugin_addr)(void) = (void *(*)(void))dlsym(plugin, "plugin_draw_address");
    if (!plugin_draw || !plugin_addr)
        die("plugin symbols");
    if (live)
        check("got-plugin-loaded-later", plugin_addr() == w_draw, NULL);
    fd = live ? bp_open(w_draw) : -1;
    offset(0);
    plugin_draw();
    if (live)
        expect_count("enter-plugin-glDrawArrays", fd, 1);
    eglSwapBuffers(dpy, surf);

    if (live && !perf_ok)
        printf("perf=unavailable\n");

    glFinish();
    static unsigned char px[W * H * 4];
    glReadPixels(0, 0, W, H, GL_RGBA, GL_UNSIGNED_BYTE, px);
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < sizeof px; i++)
        h = (h ^ px[i]) * 16777619u;
    GLenum err = glGetError();
    printf("hash=%08x error=0x%x draws=%d\n", h, err, draw_no);
    check("no-gl-error", err == 0, NULL);
    if (failures)
        printf("failures=%d\n", failures);
    return failures ? 1 : 0;
}

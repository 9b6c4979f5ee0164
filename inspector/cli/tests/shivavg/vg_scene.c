/* A small OpenVG scene on ShivaVG-es (a VG library written outside this project), for the
 * agent's invisibility tests (inspector/cli/tests/shivavg.rs).
 *
 *   vg_scene --frames N   draws N frames, then prints the last one's checksum and exits;
 *   vg_scene --frames 0   draws until SIGUSR1, then does the same (for attach tests).
 *
 * Paths and paints are made once, before the frame loop, as real programs do (so an agent
 * attached later meets handles it never saw made); one path is made and destroyed every
 * frame. ShivaVG-es maps path coordinates through the matrix straight to clip space, so
 * the scene is drawn in 0..100 user units scaled to -1..1, as its own test_vgu does.
 *
 * Prints, after the last frame (read back with glReadPixels before its swap):
 *   frame_crc=<FNV-1a 64 of the RGBA pixels, bottom row first>
 *   painted=<pixels that differ from the clear colour>
 *   vg_error=0x<vgGetError once, after the frames>
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <VG/openvg.h>
#include <VG/vgu.h>
#include "shGLESinit.h"

#define W 256
#define H 192

extern EGLDisplay egl_display;
extern EGLSurface egl_surface;

static volatile sig_atomic_t stop;

static void on_sigusr1(int sig) {
    (void)sig;
    stop = 1;
}

static VGPath new_path(void) {
    return vgCreatePath(VG_PATH_FORMAT_STANDARD, VG_PATH_DATATYPE_F, 1, 0, 0, 0,
                        VG_PATH_CAPABILITY_ALL);
}

static VGPaint colour(float r, float g, float b, float a) {
    VGfloat c[4] = {r, g, b, a};
    VGPaint p = vgCreatePaint();
    vgSetParameteri(p, VG_PAINT_TYPE, VG_PAINT_TYPE_COLOR);
    vgSetParameterfv(p, VG_PAINT_COLOR, 4, c);
    return p;
}

int main(int argc, char **argv) {
    long frames = 4;
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], "--frames"))
            frames = strtol(argv[i + 1], NULL, 10);

    if (shGLESinit(W, H) != 0) {
        fprintf(stderr, "shGLESinit failed\n");
        return 1;
    }
    /* 0..100 → -1..1 on both axes. */
    const VGfloat to_clip[9] = {0.02f, 0, 0, 0, 0.02f, 0, -1, -1, 1};
    const VGfloat clear[4] = {0.1f, 0.1f, 0.15f, 1};

    VGPath star = new_path();
    {
        static const VGubyte seg[] = {VG_MOVE_TO_ABS, VG_LINE_TO_ABS, VG_LINE_TO_ABS,
                                      VG_LINE_TO_ABS, VG_LINE_TO_ABS, VG_CLOSE_PATH};
        static const VGfloat xy[] = {30, 90, 42, 55, 10, 77, 50, 77, 18, 55};
        vgAppendPathData(star, 6, seg, xy);
    }
    VGPath round = new_path();
    vguRoundRect(round, 55, 55, 35, 30, 8, 8);
    VGPath oval = new_path();
    vguEllipse(oval, 70, 25, 30, 20);
    VGPath curve = new_path();
    {
        static const VGubyte seg[] = {VG_MOVE_TO_ABS, VG_CUBIC_TO_ABS};
        static const VGfloat xy[] = {5, 10, 20, 45, 40, -10, 50, 30};
        vgAppendPathData(curve, 2, seg, xy);
    }
    VGPaint blue = colour(0.2f, 0.4f, 0.9f, 1);
    VGPaint green = colour(0.1f, 0.8f, 0.3f, 1);
    VGPaint red = colour(0.9f, 0.1f, 0.1f, 1);
    VGPaint amber = colour(1.0f, 0.7f, 0.0f, 1);

    uint8_t *pixels = malloc((size_t)W * H * 4);
    /* Installed only now, so that a test waiting for the handler (SigCgt) attaches to the
     * frame loop, not to the set-up (its driver threads still starting). */
    if (frames == 0)
        signal(SIGUSR1, on_sigusr1);
    for (long f = 0; frames == 0 ? 1 : f < frames; f++) {
        int last = frames == 0 ? stop : f == frames - 1;
        vgSetfv(VG_CLEAR_COLOR, 4, clear);
        vgClear(0, 0, W, H);
        vgSeti(VG_MATRIX_MODE, VG_MATRIX_PATH_USER_TO_SURFACE);
        vgLoadMatrix(to_clip);

        vgSeti(VG_FILL_RULE, VG_EVEN_ODD);
        vgSetPaint(blue, VG_FILL_PATH);
        vgDrawPath(star, VG_FILL_PATH);

        vgSeti(VG_FILL_RULE, VG_NON_ZERO);
        vgSetf(VG_STROKE_LINE_WIDTH, 3);
        vgSetPaint(green, VG_FILL_PATH);
        vgSetPaint(red, VG_STROKE_PATH);
        vgDrawPath(round, VG_FILL_PATH | VG_STROKE_PATH);
        vgDrawPath(oval, VG_FILL_PATH);

        vgSetf(VG_STROKE_LINE_WIDTH, 2);
        vgSetPaint(amber, VG_STROKE_PATH);
        vgDrawPath(curve, VG_STROKE_PATH);

        /* Made and destroyed every frame, the same every frame (the last frame does not
         * depend on how many came before it, so an attached run compares with a plain one). */
        VGPath pie = new_path();
        vguArc(pie, 20, 20, 24, 24, 0, 100, VGU_ARC_PIE);
        vgSetPaint(amber, VG_FILL_PATH);
        vgDrawPath(pie, VG_FILL_PATH);
        vgDestroyPath(pie);

        if (last) {
            glPixelStorei(GL_PACK_ALIGNMENT, 1);
            glReadPixels(0, 0, W, H, GL_RGBA, GL_UNSIGNED_BYTE, pixels);
        }
        eglSwapBuffers(egl_display, egl_surface);
        if (last)
            break;
    }

    uint64_t h = 0xcbf29ce484222325ull;
    long painted = 0;
    for (size_t i = 0; i < (size_t)W * H * 4; i++) {
        h ^= pixels[i];
        h *= 0x100000001b3ull;
    }
    for (size_t i = 0; i < (size_t)W * H; i++)
        if (pixels[4 * i] != pixels[0] || pixels[4 * i + 1] != pixels[1] ||
            pixels[4 * i + 2] != pixels[2])
            painted++;
    printf("frame_crc=%016llx\n", (unsigned long long)h);
    printf("painted=%ld\n", painted);
    printf("vg_error=0x%04x\n", (unsigned)vgGetError());
    fflush(stdout);
    free(pixels);
    shGLESdeinit();
    return 0;
}

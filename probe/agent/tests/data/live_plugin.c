/* A module the live-hooks test program dlopen()s after the agent's install(): its GOT must
 * be patched by the agent's dlopen hook before it draws. */
typedef int GLint;
typedef int GLsizei;
typedef unsigned int GLenum;

extern void glDrawArrays(GLenum mode, GLint first, GLsizei count);

/* What this module's GOT entry for glDrawArrays holds (taking the address reads the GOT). */
void *plugin_draw_address(void) {
    void *volatile p = (void *)&glDrawArrays;
    return p;
}

/* One draw through the module's own PLT/GOT. */
void plugin_draw(void) {
    glDrawArrays(0x0004 /* GL_TRIANGLES */, 0, 3);
}

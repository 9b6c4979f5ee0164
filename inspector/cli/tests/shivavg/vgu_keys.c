/* Presses ShivaVG-es' test_vgu "next primitive" key (space, X keycode 65) once: an X
 * KeyPress event sent to its window (named "OpenVG"), so a test can step it through its nine
 * VGU primitives without a keyboard or xdotool. Exits 0 once the event is sent. */
#include <X11/Xlib.h>
#include <stdio.h>
#include <string.h>

static Window find(Display *d, Window w, const char *name) {
    char *n = NULL;
    if (XFetchName(d, w, &n) && n) {
        int match = !strcmp(n, name);
        XFree(n);
        if (match)
            return w;
    }
    Window root, parent, *kids = NULL;
    unsigned count = 0;
    if (!XQueryTree(d, w, &root, &parent, &kids, &count))
        return 0;
    Window found = 0;
    for (unsigned i = 0; i < count && !found; i++)
        found = find(d, kids[i], name);
    if (kids)
        XFree(kids);
    return found;
}

int main(void) {
    Display *d = XOpenDisplay(NULL);
    if (!d) {
        fprintf(stderr, "cannot open the display\n");
        return 1;
    }
    Window w = find(d, DefaultRootWindow(d), "OpenVG");
    if (!w) {
        fprintf(stderr, "no window named OpenVG\n");
        return 2;
    }
    XEvent e;
    memset(&e, 0, sizeof e);
    e.xkey.type = KeyPress;
    e.xkey.display = d;
    e.xkey.window = w;
    e.xkey.root = DefaultRootWindow(d);
    e.xkey.keycode = 65;
    e.xkey.same_screen = True;
    int sent = XSendEvent(d, w, True, KeyPressMask, &e);
    XCloseDisplay(d);
    return sent ? 0 : 3;
}

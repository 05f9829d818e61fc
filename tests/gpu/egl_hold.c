/* egl_hold: a graphics client for the real-GPU check. Opens the NVIDIA GPU
 * through EGL (no display server needed), creates an OpenGL context and a
 * large texture, says "ready PID", and holds them until killed, so that
 * NVML lists it as a graphics process. Loads EGL with dlopen: no headers. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

typedef void *EGLDisplay, *EGLConfig, *EGLContext, *EGLDeviceEXT;
typedef int32_t EGLint;
typedef unsigned EGLBoolean, EGLenum;

#define EGL_NONE                0x3038
#define EGL_SURFACE_TYPE        0x3033
#define EGL_PBUFFER_BIT         0x0001
#define EGL_RENDERABLE_TYPE     0x3040
#define EGL_OPENGL_BIT          0x0008
#define EGL_OPENGL_API          0x30A2
#define EGL_PLATFORM_DEVICE_EXT 0x313F
#define GL_TEXTURE_2D           0x0DE1
#define GL_RGBA8                0x8058
#define GL_RGBA                 0x1908
#define GL_UNSIGNED_BYTE        0x1401

int main(int argc, char **argv)
{
    int side = argc > 1 ? atoi(argv[1]) : 8192; /* 8192^2 RGBA8 = 256 MiB */
    void *egl = dlopen("libEGL.so.1", RTLD_NOW);
    if (!egl) {
        fprintf(stderr, "egl_hold: %s\n", dlerror());
        return 1;
    }
    void *(*getproc)(const char *) = (void *(*)(const char *))dlsym(egl, "eglGetProcAddress");
    EGLBoolean (*queryDevices)(EGLint, EGLDeviceEXT *, EGLint *) =
        (EGLBoolean(*)(EGLint, EGLDeviceEXT *, EGLint *))getproc("eglQueryDevicesEXT");
    EGLDisplay (*platformDisplay)(EGLenum, void *, const EGLint *) =
        (EGLDisplay(*)(EGLenum, void *, const EGLint *))getproc("eglGetPlatformDisplayEXT");
    EGLBoolean (*init)(EGLDisplay, EGLint *, EGLint *) =
        (EGLBoolean(*)(EGLDisplay, EGLint *, EGLint *))dlsym(egl, "eglInitialize");
    EGLBoolean (*choose)(EGLDisplay, const EGLint *, EGLConfig *, EGLint, EGLint *) =
        (EGLBoolean(*)(EGLDisplay, const EGLint *, EGLConfig *, EGLint, EGLint *))dlsym(
            egl, "eglChooseConfig");
    EGLBoolean (*bind)(EGLenum) = (EGLBoolean(*)(EGLenum))dlsym(egl, "eglBindAPI");
    EGLContext (*create)(EGLDisplay, EGLConfig, EGLContext, const EGLint *) =
        (EGLContext(*)(EGLDisplay, EGLConfig, EGLContext, const EGLint *))dlsym(egl,
                                                                                "eglCreateContext");
    EGLBoolean (*current)(EGLDisplay, void *, void *, EGLContext) =
        (EGLBoolean(*)(EGLDisplay, void *, void *, EGLContext))dlsym(egl, "eglMakeCurrent");
    if (!getproc || !queryDevices || !platformDisplay || !init || !choose || !bind || !create ||
        !current) {
        fprintf(stderr, "egl_hold: EGL lacks the device platform\n");
        return 1;
    }
    EGLDeviceEXT devs[8];
    EGLint ndev = 0, major, minor, nconf = 0;
    if (!queryDevices(8, devs, &ndev) || ndev < 1) {
        fprintf(stderr, "egl_hold: no EGL device\n");
        return 1;
    }
    EGLDisplay dpy = platformDisplay(EGL_PLATFORM_DEVICE_EXT, devs[0], NULL);
    if (!dpy || !init(dpy, &major, &minor)) {
        fprintf(stderr, "egl_hold: eglInitialize failed\n");
        return 1;
    }
    const EGLint attrs[] = {EGL_SURFACE_TYPE, EGL_PBUFFER_BIT, EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT,
                            EGL_NONE};
    EGLConfig cfg;
    if (!choose(dpy, attrs, &cfg, 1, &nconf) || nconf < 1 || !bind(EGL_OPENGL_API)) {
        fprintf(stderr, "egl_hold: no OpenGL config\n");
        return 1;
    }
    EGLContext ctx = create(dpy, cfg, NULL, NULL);
    if (!ctx || !current(dpy, NULL, NULL, ctx)) {
        fprintf(stderr, "egl_hold: no context\n");
        return 1;
    }
    void (*genTextures)(int, unsigned *) = (void (*)(int, unsigned *))getproc("glGenTextures");
    void (*bindTexture)(unsigned, unsigned) =
        (void (*)(unsigned, unsigned))getproc("glBindTexture");
    void (*texImage)(unsigned, int, int, int, int, int, unsigned, unsigned, const void *) =
        (void (*)(unsigned, int, int, int, int, int, unsigned, unsigned, const void *))getproc(
            "glTexImage2D");
    void (*finish)(void) = (void (*)(void))getproc("glFinish");
    unsigned tex;
    genTextures(1, &tex);
    bindTexture(GL_TEXTURE_2D, tex);
    texImage(GL_TEXTURE_2D, 0, GL_RGBA8, side, side, 0, GL_RGBA, GL_UNSIGNED_BYTE, NULL);
    finish();
    printf("ready %d egl %d.%d\n", (int)getpid(), major, minor);
    fflush(stdout);
    pause();
    return 0;
}

/*
 * standin_nvrtc.c — a stand-in libnvrtc (NVRTC 12.4, archs sm_75..sm_90) for the host tests of
 * the NVRTC path and the kernel cache (test_kcache_nvrtc.c, and test_runtime's "standin" mode
 * with the stand-in libcuda.so.1). It "compiles" a source into a fixed text naming the source and
 * the options it was given, after checking what a real compile would need: every quoted
 * #include is among the headers handed over. A source containing "wf_no_such_thing" fails to
 * compile with a multi-line log, as nvrtc does for an undefined identifier.
 *
 * Test hooks: standin_nvrtc_compiles() counts nvrtcCompileProgram calls, standin_nvrtc_last()
 * returns the last program's "name|option|option|...|headers:a,b" description.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define API                       __attribute__((visibility("default")))
#define NVRTC_SUCCESS             0
#define NVRTC_ERROR_INVALID_INPUT 3
#define NVRTC_ERROR_COMPILATION   6

typedef struct prog {
    char *src, *name, *log, *out;
    char headers[1024];
} prog;

static int compiles;
static char last[2048];

API int standin_nvrtc_compiles(void) {
    return compiles;
}
API const char *standin_nvrtc_last(void) {
    return last;
}

API const char *nvrtcGetErrorString(int r) {
    return r == NVRTC_SUCCESS             ? "NVRTC_SUCCESS"
           : r == NVRTC_ERROR_COMPILATION ? "NVRTC_ERROR_COMPILATION"
                                          : "NVRTC_ERROR_INVALID_INPUT";
}
API int nvrtcVersion(int *major, int *minor) {
    *major = 12;
    *minor = 4;
    return NVRTC_SUCCESS;
}
static const int archs[] = {75, 80, 86, 89, 90};
API int nvrtcGetNumSupportedArchs(int *n) {
    *n = (int)(sizeof archs / sizeof archs[0]);
    return NVRTC_SUCCESS;
}
API int nvrtcGetSupportedArchs(int *out) {
    memcpy(out, archs, sizeof archs);
    return NVRTC_SUCCESS;
}
API int nvrtcCreateProgram(prog **p, const char *src, const char *name, int n,
                           const char *const *headers, const char *const *names) {
    if (!p || !src || n < 0 || (n > 0 && (!headers || !names)))
        return NVRTC_ERROR_INVALID_INPUT;
    prog *q = calloc(1, sizeof *q);
    q->src = strdup(src);
    q->name = strdup(name ? name : "default_program");
    for (int i = 0; i < n; i++) {
        size_t k = strlen(q->headers);
        snprintf(q->headers + k, sizeof q->headers - k, "%s%s", k ? "," : "", names[i]);
    }
    *p = q;
    return NVRTC_SUCCESS;
}
API int nvrtcDestroyProgram(prog **p) {
    if (!p || !*p)
        return NVRTC_ERROR_INVALID_INPUT;
    free((*p)->src);
    free((*p)->name);
    free((*p)->log);
    free((*p)->out);
    free(*p);
    *p = NULL;
    return NVRTC_SUCCESS;
}

/* Every `#include "x"` of the source must be a header handed over. */
static const char *missing_include(prog *p) {
    static char miss[256];
    for (const char *s = strstr(p->src, "#include \""); s; s = strstr(s + 1, "#include \"")) {
        const char *b = s + 10, *e = strchr(b, '"');
        if (!e)
            break;
        snprintf(miss, sizeof miss, "%.*s", (int)(e - b), b);
        char padded[1100];
        snprintf(padded, sizeof padded, ",%s,", p->headers);
        char want[300];
        snprintf(want, sizeof want, ",%s,", miss);
        if (!strstr(padded, want))
            return miss;
    }
    return NULL;
}

API int nvrtcCompileProgram(prog *p, int n, const char *const *opts) {
    if (!p || n < 0)
        return NVRTC_ERROR_INVALID_INPUT;
    compiles++;
    char desc[2048];
    snprintf(desc, sizeof desc, "%s", p->name);
    for (int i = 0; i < n; i++) {
        size_t k = strlen(desc);
        snprintf(desc + k, sizeof desc - k, "|%s", opts[i]);
    }
    size_t k = strlen(desc);
    snprintf(desc + k, sizeof desc - k, "|headers:%s", p->headers);
    memcpy(last, desc, sizeof last);
    char log[512];
    const char *miss = missing_include(p);
    if (miss)
        snprintf(log, sizeof log,
                 "%s(1): catastrophic error: cannot open source file \"%s\"\n\n"
                 "1 catastrophic error detected in the compilation of \"%s\".\n",
                 p->name, miss, p->name);
    else if (strstr(p->src, "wf_no_such_thing"))
        snprintf(log, sizeof log,
                 "%s(1): error: identifier \"wf_no_such_thing\" is undefined\n"
                 "\n1 error detected in the compilation of \"%s\".\n",
                 p->name, p->name);
    else
        log[0] = '\0';
    p->log = strdup(log);
    if (log[0])
        return NVRTC_ERROR_COMPILATION;
    size_t len = strlen(desc) + 64;
    p->out = malloc(len);
    snprintf(p->out, len, "// stand-in NVRTC output: %s\n", desc);
    return NVRTC_SUCCESS;
}
API int nvrtcGetProgramLogSize(prog *p, size_t *n) {
    *n = strlen(p->log ? p->log : "") + 1;
    return NVRTC_SUCCESS;
}
API int nvrtcGetProgramLog(prog *p, char *out) {
    strcpy(out, p->log ? p->log : "");
    return NVRTC_SUCCESS;
}
/* PTX and CUBIN are the same text here; sizes count the NUL for PTX only, as NVRTC's do. */
static int out_size(prog *p, size_t *n, size_t nul) {
    if (!p->out)
        return NVRTC_ERROR_INVALID_INPUT;
    *n = strlen(p->out) + nul;
    return NVRTC_SUCCESS;
}
static int out_copy(prog *p, char *out, size_t nul) {
    if (!p->out)
        return NVRTC_ERROR_INVALID_INPUT;
    memcpy(out, p->out, strlen(p->out) + nul);
    return NVRTC_SUCCESS;
}
API int nvrtcGetPTXSize(prog *p, size_t *n) {
    return out_size(p, n, 1);
}
API int nvrtcGetPTX(prog *p, char *out) {
    return out_copy(p, out, 1);
}
API int nvrtcGetCUBINSize(prog *p, size_t *n) {
    return out_size(p, n, 0);
}
API int nvrtcGetCUBIN(prog *p, char *out) {
    return out_copy(p, out, 0);
}

/*
 * test_flycl.c - the C test of libflycl, built and run by
 * TestCProgram (libflycl_test.go), which writes the data, checks the
 * values this program prints against the Go API's on the same data, and
 * fails on any line starting with "FAIL".
 *
 * usage: test_flycl DIR   (DIR holds the data files the Go test wrote,
 * and gets the model files this program saves)
 *
 * Printed values are exact: floats as their bits in hex.
 */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flycl.h"

static int failures = 0;

#define CHECK(cond, ...)                                     \
    do {                                                     \
        if (!(cond)) {                                       \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);      \
            printf(__VA_ARGS__);                             \
            printf(" [last error: %s]\n", last_error());     \
            failures++;                                      \
        }                                                    \
    } while (0)

#define OK(call) CHECK((call) == FLYCL_OK, "%s", #call)

static const char *last_error(void) {
    static __thread char buf[4096];
    size_t len = 0;
    flycl_last_error(buf, sizeof buf, &len);
    return buf;
}

static char dir[1024];

static void *read_file(const char *name, size_t *size) {
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f) {
        printf("FAIL cannot open %s\n", path);
        exit(2);
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *p = malloc(n > 0 ? n : 1);
    if (fread(p, 1, n, f) != (size_t)n) {
        printf("FAIL cannot read %s\n", path);
        exit(2);
    }
    fclose(f);
    *size = n;
    return p;
}

static uint32_t bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static void print_floats(const char *key, const float *v, size_t n) {
    printf("%s", key);
    for (size_t i = 0; i < n; i++) printf(" %08x", bits(v[i]));
    printf("\n");
}

/* the data the Go test wrote */
static int64_t d, n1, n2, n3, nt;
static float *x1, *x2, *x3, *xt;
static int32_t *y1, *y2, *y3;
static const char *names12[] = {"cat", "dog", "bird", "fish"};

static float *scores_of(flycl_model h, int64_t *nc_out) {
    int64_t nc = 0;
    OK(flycl_model_num_classes(h, &nc));
    float *s = calloc((size_t)(nt * nc) + 1, sizeof(float));
    OK(flycl_scores(h, xt, nt, d, s, (size_t)(nt * nc)));
    /* flycl_scores_n: the same scores, with their class count; a short
     * buffer gets FLYCL_E_BUFFER with the count it needs */
    float *s2 = calloc((size_t)(nt * nc) + 1, sizeof(float));
    int64_t c2 = -1;
    CHECK(flycl_scores_n(h, xt, nt, d, s2, (size_t)(nt * nc) - 1, &c2) == FLYCL_E_BUFFER, "short scores_n buffer");
    CHECK(c2 == nc, "scores_n needs %lld classes, num_classes says %lld", (long long)c2, (long long)nc);
    c2 = -1;
    OK(flycl_scores_n(h, xt, nt, d, s2, (size_t)(nt * nc), &c2));
    CHECK(c2 == nc && memcmp(s, s2, sizeof(float) * (size_t)(nt * nc)) == 0, "scores_n differs from scores");
    free(s2);
    *nc_out = nc;
    return s;
}

/* ---- concurrency ---- */

struct reader {
    flycl_model h;
    const float *before, *after; /* the scores before and after the learn */
    size_t len;
    int iters, saw_before, saw_after, bad;
};

static void *read_loop(void *arg) {
    struct reader *r = arg;
    float *s = malloc(r->len * sizeof(float));
    for (int i = 0; i < r->iters; i++) {
        if (flycl_scores(r->h, xt, nt, d, s, r->len) != FLYCL_OK) {
            r->bad++;
            continue;
        }
        if (memcmp(s, r->before, r->len * sizeof(float)) == 0)
            r->saw_before++;
        else if (memcmp(s, r->after, r->len * sizeof(float)) == 0)
            r->saw_after++;
        else
            r->bad++;
    }
    free(s);
    return NULL;
}

struct learner {
    flycl_model h;
    int status;
};

static void *learn_once(void *arg) {
    struct learner *l = arg;
    l->status = flycl_learn(l->h, x3, n3, d, y3, names12, 2, 0, 0, NULL);
    return NULL;
}

/* l->status counts the learns that failed */
static void *learn_loop(void *arg) {
    struct learner *l = arg;
    int n = l->status;
    l->status = 0;
    for (int i = 0; i < n; i++) l->status += flycl_learn(l->h, x3, n3, d, y3, names12, 2, 0, 0, NULL) != FLYCL_OK;
    return NULL;
}

/* a thread's last error is its own */
struct errthread {
    int fail;
    char msg[256];
};

static void *error_thread(void *arg) {
    struct errthread *e = arg;
    if (e->fail) flycl_model_free(0); /* FLYCL_E_HANDLE */
    size_t len = 0;
    flycl_last_error(e->msg, sizeof e->msg, &len);
    return NULL;
}

/* ---- images: the shipped backbone (when the Go test found ONNX Runtime) ---- */
static void test_images(void) {
    char path[2048];
    snprintf(path, sizeof path, "%s/images.txt", dir);
    FILE *f = fopen(path, "r");
    if (!f) {
        printf("images: skipped (no ONNX Runtime)\n");
        return;
    }
    int n = 0;
    if (fscanf(f, "%d", &n) != 1 || n <= 0 || n > 64) {
        printf("FAIL images.txt\n");
        exit(2);
    }
    char **paths = calloc(n, sizeof(char *));
    int32_t *y = calloc(n, sizeof(int32_t));
    for (int i = 0; i < n; i++) {
        paths[i] = calloc(1024, 1);
        if (fscanf(f, "%d %1023s", &y[i], paths[i]) != 2) {
            printf("FAIL images.txt line %d\n", i);
            exit(2);
        }
    }
    fclose(f);
    flycl_extractor e = 0;
    int64_t dim = 0;
    CHECK(flycl_extractor_open("no-such-backbone", NULL, NULL, &e, &dim) == FLYCL_E_BACKBONE, "an unknown backbone");
    OK(flycl_extractor_open(NULL, NULL, NULL, &e, &dim)); /* mobilenetv2, built-in weights, ONNX Runtime found */
    printf("imgdim %lld\n", (long long)dim);
    float *feat = malloc(sizeof(float) * n * dim);
    CHECK(flycl_extract_files(e, (const char *const *)paths, n, feat, (size_t)(n * dim - 1)) == FLYCL_E_BUFFER, "short features buffer");
    OK(flycl_extract_files(e, (const char *const *)paths, n, feat, (size_t)(n * dim)));
    print_floats("imgfeatures", feat, (size_t)(n * dim));
    const char *missing[] = {"/no/such/image.jpg"};
    CHECK(flycl_extract_files(e, missing, 1, feat, (size_t)(n * dim)) != FLYCL_OK, "a missing image");

    /* photos to a model: record the pipeline, learn their features, save */
    flycl_model h = 0;
    OK(flycl_model_new("{\"m\":512,\"k\":128,\"seed\":1,\"lambda_scale\":\"relative\"}", dim, &h));
    flycl_extractor e2 = 0;
    CHECK(flycl_extractor_for_model(h, NULL, NULL, &e2, NULL) == FLYCL_E_BAD_INPUT, "an extractor for a model without a pipeline");
    const char *pnames[] = {"discs", "stripes"};
    OK(flycl_model_use_extractor(h, e));
    OK(flycl_learn(h, feat, n, dim, y, pnames, 2, 0, 0, NULL));
    snprintf(path, sizeof path, "%s/images.flycl", dir);
    OK(flycl_model_save(h, path));
    flycl_model h2 = 0;
    OK(flycl_model_load(path, &h2));
    OK(flycl_extractor_for_model(h2, NULL, NULL, &e2, &dim));
    float *feat2 = malloc(sizeof(float) * n * dim);
    OK(flycl_extract_files(e2, (const char *const *)paths, n, feat2, (size_t)(n * dim)));
    CHECK(memcmp(feat, feat2, sizeof(float) * n * dim) == 0, "the model's extractor gives other features");
    int32_t *cls = malloc(sizeof(int32_t) * n);
    OK(flycl_answer(h2, feat2, n, dim, "off", cls, NULL, NULL, NULL));
    int right = 0;
    for (int i = 0; i < n; i++) right += cls[i] == y[i];
    printf("images: %d of %d learned images answered their class\n", right, n);
    CHECK(right == n, "%d of %d", right, n);
    OK(flycl_extractor_free(e));
    OK(flycl_extractor_free(e2));
    CHECK(flycl_extract_files(e, (const char *const *)paths, n, feat, (size_t)(n * dim)) == FLYCL_E_HANDLE, "a freed extractor");
    OK(flycl_model_free(h));
    OK(flycl_model_free(h2));
    for (int i = 0; i < n; i++) free(paths[i]);
    free(paths), free(y), free(feat), free(feat2), free(cls);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: test_flycl DIR\n");
        return 2;
    }
    snprintf(dir, sizeof dir, "%s", argv[1]);
    size_t sz;
    int64_t *dims = read_file("dims.i64", &sz);
    d = dims[0], n1 = dims[1], n2 = dims[2], n3 = dims[3], nt = dims[4];
    x1 = read_file("x1.f32", &sz), x2 = read_file("x2.f32", &sz), x3 = read_file("x3.f32", &sz);
    xt = read_file("xt.f32", &sz);
    y1 = read_file("y1.i32", &sz), y2 = read_file("y2.i32", &sz), y3 = read_file("y3.i32", &sz);
    size_t cfglen;
    char *cfg = read_file("config.json", &cfglen);
    cfg = realloc(cfg, cfglen + 1);
    cfg[cfglen] = 0;

    CHECK(flycl_abi_version() == FLYCL_ABI_VERSION, "abi version %d", flycl_abi_version());
    CHECK(strcmp(flycl_status_name(FLYCL_E_NO_UNDO), "nothing to undo") == 0, "status name %s", flycl_status_name(FLYCL_E_NO_UNDO));
    CHECK(strcmp(flycl_status_name(12345), "unknown status") == 0, "status name of an unknown code");

    /* ---- configuration errors ---- */
    flycl_model h = 0, bad = 0;
    CHECK(flycl_model_new("{\"m\": 0.5}", d, &bad) == FLYCL_E_CONFIG, "a non-integer m");
    CHECK(flycl_model_new("{\"mm\": 5}", d, &bad) == FLYCL_E_CONFIG, "an unknown key");
    CHECK(strstr(last_error(), "mm") != NULL, "the message names the key: %s", last_error());
    CHECK(flycl_model_new("{\"k\": 100000}", d, &bad) == FLYCL_E_CONFIG, "k > m");
    CHECK(flycl_model_new(NULL, 0, &bad) == FLYCL_E_BAD_INPUT, "d = 0");
    /* sizes no process holds: refused before they are allocated (Go would
     * end the process) */
    CHECK(flycl_model_new("{\"m\":10,\"p\":1,\"k\":1}", (int64_t)1 << 40, &bad) == FLYCL_E_BAD_INPUT, "d = 2^40");
    CHECK(flycl_model_new("{\"m\":1048576,\"p\":1,\"k\":1}", 8, &bad) == FLYCL_E_TOO_LARGE, "m = 2^20: %s", last_error());
    CHECK(flycl_model_new(NULL, d, NULL) == FLYCL_E_NULL, "out NULL");
    CHECK(flycl_model_new("", d, &bad) == FLYCL_E_CONFIG, "the default p=300 > d");
    OK(flycl_model_new("", 512, &bad)); /* the defaults */
    int64_t got = 0;
    OK(flycl_model_input_dim(bad, &got));
    CHECK(got == 512, "input dim %lld", (long long)got);
    OK(flycl_model_free(bad));
    CHECK(flycl_model_free(bad) == FLYCL_E_HANDLE, "a freed handle");
    CHECK(flycl_model_num_classes(bad, &got) == FLYCL_E_HANDLE, "a freed handle's getter");

    OK(flycl_model_new(cfg, d, &h));

    /* ---- before learning ---- */
    float tiny[8];
    CHECK(flycl_scores(h, xt, 1, d, tiny, 8) == FLYCL_E_NOT_TRAINED, "scores before learning");
    CHECK(flycl_unlearn(h) == FLYCL_E_NO_UNDO, "unlearn before learning");

    /* ---- learn errors: the model stays untouched ---- */
    CHECK(flycl_learn(h, x1, n1, d + 1, y1, names12, 2, 0, 0, NULL) == FLYCL_E_BAD_INPUT, "wrong dimension");
    int32_t ybad[2] = {0, 7};
    CHECK(flycl_learn(h, x1, 2, d, ybad, names12, 2, 0, 0, NULL) == FLYCL_E_BAD_INPUT, "label out of range");
    const char *badnames[] = {"ok", " padded"};
    CHECK(flycl_learn(h, x1, n1, d, y1, badnames, 2, 0, 0, NULL) == FLYCL_E_CLASS_NAME, "a bad class name");
    const char *dupnames[] = {"same", "same"};
    CHECK(flycl_learn(h, x1, n1, d, y1, dupnames, 2, 0, 0, NULL) == FLYCL_E_CLASS_NAME, "two labels with one name");
    CHECK(flycl_learn(h, NULL, n1, d, y1, names12, 2, 0, 0, NULL) == FLYCL_E_NULL, "x NULL");
    CHECK(flycl_learn(h, x1, n1, d, y1, names12, 2, -1, 0, NULL) == FLYCL_E_BAD_INPUT, "a negative lambda");
    float nanx[64];
    for (int i = 0; i < 64; i++) nanx[i] = NAN;
    int32_t y0[4] = {0, 1, 0, 1};
    CHECK(d * 4 > 64 || flycl_learn(h, nanx, 4, d, y0, names12, 2, 0, 0, NULL) == FLYCL_E_BAD_INPUT, "NaN features");
    OK(flycl_model_num_classes(h, &got));
    CHECK(got == 0, "a refused learn left %lld classes", (long long)got);

    /* ---- two tasks, lambda by GCV ---- */
    double l1 = 0, l2 = 0;
    OK(flycl_learn(h, x1, n1, d, y1, names12, 2, 0, 0, &l1));
    printf("lambda1 %a\n", l1);
    OK(flycl_learn(h, x2, n2, d, y2, names12 + 2, 2, 0, 0, &l2));
    printf("lambda2 %a\n", l2);
    double lm = 0;
    OK(flycl_model_lambda(h, &lm));
    CHECK(lm == l2, "model lambda %a, learn's %a", lm, l2);

    int64_t nc = 0;
    float *s12 = scores_of(h, &nc);
    CHECK(nc == 4, "classes %lld", (long long)nc);
    print_floats("scores12", s12, (size_t)(nt * nc));

    /* class names, in learning order */
    char name[64];
    size_t nlen = 0;
    printf("names");
    for (int64_t i = 0; i < nc; i++) {
        OK(flycl_model_class_name(h, i, name, sizeof name, &nlen));
        printf(" %s", name);
    }
    printf("\n");
    CHECK(flycl_model_class_name(h, 2, name, 3, &nlen) == FLYCL_E_BUFFER && nlen == 4 && strcmp(name, "bi") == 0,
          "a short buffer: len %zu, truncated %s", nlen, name);
    CHECK(flycl_model_class_name(h, 4, name, sizeof name, &nlen) == FLYCL_E_BAD_INPUT, "class index out of range");
    int64_t idx = -1;
    OK(flycl_model_class_index(h, "bird", &idx));
    CHECK(idx == 2, "index of bird %lld", (long long)idx);
    CHECK(flycl_model_class_index(h, "zebra", &idx) == FLYCL_E_UNKNOWN_CLASS, "an unknown class's index");

    /* the output buffer must hold n*classes */
    CHECK(flycl_scores(h, xt, nt, d, s12, (size_t)(nt * nc - 1)) == FLYCL_E_BUFFER, "short scores buffer");
    CHECK(flycl_scores(h, xt, nt, d - 1, s12, (size_t)(nt * nc)) == FLYCL_E_BAD_INPUT, "scores: wrong dimension");

    /* top-k and answers */
    int32_t *tc = malloc(sizeof(int32_t) * nt * 5);
    float *ts = malloc(sizeof(float) * nt * 5);
    OK(flycl_top(h, xt, nt, d, 5, tc, ts, (size_t)(nt * 5)));
    printf("top");
    for (int64_t i = 0; i < nt * 5; i++) printf(" %d:%08x", tc[i], bits(ts[i]));
    printf("\n");
    int32_t *cls = malloc(sizeof(int32_t) * nt), *unk = malloc(sizeof(int32_t) * nt);
    double *prob = malloc(sizeof(double) * nt), *margin = malloc(sizeof(double) * nt);
    OK(flycl_answer(h, xt, nt, d, NULL, cls, unk, prob, margin));
    printf("answer");
    for (int64_t i = 0; i < nt; i++) printf(" %d:%d:%a:%a", cls[i], unk[i], prob[i], margin[i]);
    printf("\n");
    OK(flycl_answer(h, xt, nt, d, "off", cls, unk, NULL, NULL));
    for (int64_t i = 0; i < nt; i++) CHECK(unk[i] == 0, "rejection off answered unknown");
    OK(flycl_answer(h, xt, nt, d, "1e30", cls, unk, NULL, margin));
    for (int64_t i = 0; i < nt; i++) CHECK(unk[i] == 1 && margin[i] < 0, "a threshold of 1e30 kept sample %lld", (long long)i);
    CHECK(flycl_answer(h, xt, nt, d, "maybe", cls, unk, NULL, NULL) == FLYCL_E_BAD_INPUT, "a bad rejection");

    /* history and info */
    size_t jlen = 0;
    CHECK(flycl_model_history_json(h, NULL, 0, &jlen) == FLYCL_E_BUFFER, "history: ask for the length");
    char *js = malloc(jlen + 1);
    OK(flycl_model_history_json(h, js, jlen + 1, &jlen));
    printf("history %s\n", js);
    free(js);
    OK(flycl_model_info_json(h, NULL, 0, &jlen) == FLYCL_E_BUFFER ? FLYCL_OK : -1);
    js = malloc(jlen + 1);
    OK(flycl_model_info_json(h, js, jlen + 1, &jlen));
    printf("info %s\n", js);
    free(js);

    /* ---- save and load: bytes and files ---- */
    void *buf = NULL;
    size_t blen = 0;
    OK(flycl_model_save_bytes(h, &buf, &blen));
    flycl_model h2 = 0;
    OK(flycl_model_load_bytes(buf, blen, &h2));
    int64_t nc2 = 0;
    float *s2 = scores_of(h2, &nc2);
    CHECK(nc2 == nc && memcmp(s2, s12, sizeof(float) * nt * nc) == 0, "scores after a bytes round trip");
    free(s2);
    ((unsigned char *)buf)[blen / 2] ^= 0x40;
    flycl_model hb = 0;
    CHECK(flycl_model_load_bytes(buf, blen, &hb) == FLYCL_E_FORMAT, "corrupt bytes");
    CHECK(flycl_model_load_bytes(buf, 10, &hb) == FLYCL_E_FORMAT, "truncated bytes");
    flycl_free(buf);
    OK(flycl_model_free(h2));

    char path[2048];
    snprintf(path, sizeof path, "%s/c.flycl", dir);
    OK(flycl_model_save(h, path));
    CHECK(flycl_model_save(h, path) == FLYCL_E_EXISTS, "save over a file");
    OK(flycl_model_load(path, &h2));
    s2 = scores_of(h2, &nc2);
    CHECK(nc2 == nc && memcmp(s2, s12, sizeof(float) * nt * nc) == 0, "scores after a file round trip");
    free(s2);
    OK(flycl_model_free(h2));
    snprintf(path, sizeof path, "%s/missing.flycl", dir);
    CHECK(flycl_model_load(path, &h2) == FLYCL_E_IO, "a missing file");

    /* a model file written as flycl learn writes it (with its journal):
     * it loads, predicts as this model, and its journal's last learn can
     * be taken back */
    snprintf(path, sizeof path, "%s/cli.flycl", dir);
    flycl_model hc = 0;
    OK(flycl_model_load(path, &hc));
    s2 = scores_of(hc, &nc2);
    CHECK(nc2 == nc && memcmp(s2, s12, sizeof(float) * nt * nc) == 0, "scores of the CLI's model");
    free(s2);
    OK(flycl_unlearn(hc));
    s2 = scores_of(hc, &nc2);
    print_floats("cliundo", s2, (size_t)(nt * nc2));
    free(s2);
    OK(flycl_model_free(hc));

    /* ---- errors are per thread ---- */
    struct errthread ea = {1, ""}, eb = {0, ""};
    pthread_t ta, tb;
    pthread_create(&ta, NULL, error_thread, &ea);
    pthread_join(ta, NULL);
    pthread_create(&tb, NULL, error_thread, &eb);
    pthread_join(tb, NULL);
    CHECK(strstr(ea.msg, "not a model handle") != NULL, "thread a's error: %s", ea.msg);
    CHECK(eb.msg[0] == 0, "thread b saw another thread's error: %s", eb.msg);

    /* ---- concurrency: reads while a learn runs on the same model ---- */
    flycl_model hq = 0;
    OK(flycl_model_new(cfg, d, &hq));
    OK(flycl_learn(hq, x1, n1, d, y1, names12, 2, 0, 0, NULL));
    int64_t ncq = 0;
    float *before = scores_of(hq, &ncq);
    /* the scores after learning x3 too: on a second model */
    flycl_model hr = 0;
    OK(flycl_model_new(cfg, d, &hr));
    OK(flycl_learn(hr, x1, n1, d, y1, names12, 2, 0, 0, NULL));
    OK(flycl_learn(hr, x3, n3, d, y3, names12, 2, 0, 0, NULL));
    float *after = scores_of(hr, &ncq);
    print_floats("scores13", after, (size_t)(nt * ncq));
    enum { READERS = 6 };
    struct reader rd[READERS];
    pthread_t th[READERS];
    for (int i = 0; i < READERS; i++) {
        rd[i] = (struct reader){hq, before, after, (size_t)(nt * ncq), 150, 0, 0, 0};
        pthread_create(&th[i], NULL, read_loop, &rd[i]);
    }
    struct learner ln = {hq, -1};
    pthread_t tl;
    pthread_create(&tl, NULL, learn_once, &ln);
    pthread_join(tl, NULL);
    int saw_before = 0, saw_after = 0, badreads = 0;
    for (int i = 0; i < READERS; i++) {
        pthread_join(th[i], NULL);
        saw_before += rd[i].saw_before, saw_after += rd[i].saw_after, badreads += rd[i].bad;
    }
    CHECK(ln.status == FLYCL_OK, "the concurrent learn: %d", ln.status);
    CHECK(badreads == 0, "%d concurrent reads were neither the scores before nor after the learn", badreads);
    printf("concurrent reads: %d before the learn, %d after, %d bad\n", saw_before, saw_after, badreads);
    float *final = scores_of(hq, &ncq);
    CHECK(memcmp(final, after, sizeof(float) * nt * ncq) == 0, "scores after the concurrent learn");
    free(final);

    /* concurrent learns on one model are serialized: all count, and each
     * can be taken back */
    enum { LEARNERS = 4, LEARNS = 10 };
    struct learner ls[LEARNERS];
    pthread_t tls[LEARNERS];
    for (int i = 0; i < LEARNERS; i++) {
        ls[i] = (struct learner){hq, LEARNS};
        pthread_create(&tls[i], NULL, learn_loop, &ls[i]);
    }
    int learnfail = 0;
    for (int i = 0; i < LEARNERS; i++) {
        pthread_join(tls[i], NULL);
        learnfail += ls[i].status;
    }
    CHECK(learnfail == 0, "%d concurrent learns failed", learnfail);
    int64_t samples = 0;
    OK(flycl_model_samples(hq, &samples));
    CHECK(samples == n1 + (1 + LEARNERS * LEARNS) * n3, "samples after concurrent learns: %lld, want %lld", (long long)samples,
          (long long)(n1 + (1 + LEARNERS * LEARNS) * n3));
    for (int i = 0; i < LEARNERS * LEARNS; i++) OK(flycl_unlearn(hq));
    OK(flycl_model_samples(hq, &samples));
    CHECK(samples == n1 + n3, "samples after the unlearns: %lld, want %lld", (long long)samples, (long long)(n1 + n3));
    OK(flycl_model_free(hq));
    OK(flycl_model_free(hr));
    free(before);
    free(after);

    /* ---- forget (exact, from the history) and unlearn ---- */
    int exact = -1;
    CHECK(flycl_forget(h, "zebra", NULL, 0, d, &exact) == FLYCL_E_UNKNOWN_CLASS, "forget an unknown class");
    OK(flycl_forget(h, "bird", NULL, 0, d, &exact));
    CHECK(exact == 1, "the forget was not exact");
    float *sf = scores_of(h, &nc);
    CHECK(nc == 3, "classes after a forget: %lld", (long long)nc);
    print_floats("forget", sf, (size_t)(nt * nc));
    free(sf);
    /* a forget ends what unlearn takes back */
    CHECK(flycl_unlearn(h) == FLYCL_E_NO_UNDO, "unlearn past a forget");

    /* a fresh model: learn, learn, unlearn gives the first learn's model */
    flycl_model hu = 0;
    OK(flycl_model_new(cfg, d, &hu));
    OK(flycl_learn(hu, x1, n1, d, y1, names12, 2, 0, 0, NULL));
    OK(flycl_learn(hu, x2, n2, d, y2, names12 + 2, 2, 0, 0, NULL));
    OK(flycl_unlearn(hu));
    float *su = scores_of(hu, &nc);
    CHECK(nc == 2, "classes after unlearn: %lld", (long long)nc);
    print_floats("unlearn", su, (size_t)(nt * nc));
    free(su);
    OK(flycl_model_lambda(hu, &lm));
    CHECK(lm == l1, "lambda after unlearn %a, the first learn's %a", lm, l1);

    /* a fixed lambda, and online mini-batches */
    double lf = 0;
    OK(flycl_learn(hu, x2, n2, d, y2, names12 + 2, 2, 1234.5, 0, &lf));
    CHECK(lf == 1234.5, "a fixed lambda gave %a", lf);
    OK(flycl_learn(hu, x3, n3, d, y3, names12, 2, 0, 7, &lf));
    OK(flycl_model_history_json(hu, NULL, 0, &jlen) == FLYCL_E_BUFFER ? FLYCL_OK : -1);
    js = malloc(jlen + 1);
    OK(flycl_model_history_json(hu, js, jlen + 1, &jlen));
    printf("onlinehistory %s\n", js);
    free(js);
    OK(flycl_model_free(hu));
    OK(flycl_model_free(h));

    test_images();

    printf("done: %d failures\n", failures);
    return failures ? 1 : 0;
}

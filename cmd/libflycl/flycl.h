/*
 * flycl.h - the C interface of flycl (libflycl), version 1.
 *
 * Fly-CL continual learning: a frozen backbone's features, a sparse random
 * projection, top-k, and a streaming ridge classifier whose lambda is
 * chosen by GCV. This header is the whole public interface of
 * libflycl.so / libflycl.a (built with `make libflycl`); the header cgo
 * generates is internal and may change.
 *
 * OWNERSHIP AND THREADING, in one paragraph. Models and extractors are
 * handles (64-bit ids; 0 is never valid), never pointers: a freed or
 * unknown handle gives FLYCL_E_HANDLE, never a crash. Every buffer is the
 * caller's: the library reads inputs only during the call and keeps no
 * pointer to them, and writes outputs only into buffers the caller passes
 * with their capacity (FLYCL_E_BUFFER, with the size needed in the
 * function's length out-parameter, when one is too small). The one
 * exception, flycl_model_save_bytes, allocates and is freed with
 * flycl_free. Every function is safe to call from any thread. On one
 * model, the reading calls (flycl_scores, flycl_top, flycl_answer, the
 * flycl_model_* getters, flycl_model_save*) run concurrently with each
 * other; the changing calls (flycl_learn, flycl_forget, flycl_unlearn,
 * flycl_model_use_extractor, flycl_model_free) are serialized and wait
 * for the reads in progress (a read-write lock per model). Calls on
 * different models never wait for each other. Calls on one extractor are
 * serialized. Every function but flycl_abi_version, flycl_status_name
 * and flycl_free returns a status (FLYCL_OK or an error code); the message of the last error on the calling thread is
 * flycl_last_error's (like errno: a success does not clear it; per
 * thread on Linux, the process's last elsewhere). No Go
 * panic crosses this interface: one becomes FLYCL_E_INTERNAL.
 *
 * Conventions. Features are float32, row-major, n rows of d values (a C
 * array x[n*d]). Classes are numbered by their index in the model,
 * 0 .. flycl_model_num_classes()-1, in the order they were first learned
 * (a forget removes one, and the later ones move down): the column order
 * of scores; flycl_model_class_name gives an index's name. Strings are UTF-8, NUL-terminated. A string output is copied into
 * buf (capacity cap bytes, the terminating NUL included); *len (when len
 * is not NULL) receives the string's length without the NUL, also when
 * the buffer is too small, so a caller can ask with cap 0 and allocate
 * *len+1 bytes.
 */
#ifndef FLYCL_H
#define FLYCL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this interface: flycl_abi_version() returns it. It grows
 * when a function is added; an existing function never changes. */
#define FLYCL_ABI_VERSION 2

/* Status codes. The first five are the Go package's typed errors, one to
 * one (flycl.ErrBadInput, ErrNotTrained, ErrUnknownClass, ErrTooLarge,
 * *flycl.NameError). */
#define FLYCL_OK 0
#define FLYCL_E_BAD_INPUT 1     /* input that does not fit: a dimension, a count, a label out of range, an empty task, data that is not what a class learned */
#define FLYCL_E_NOT_TRAINED 2   /* a prediction before any class was learned */
#define FLYCL_E_UNKNOWN_CLASS 3 /* a class name the model does not have */
#define FLYCL_E_TOO_LARGE 4     /* features whose statistics float32 cannot hold */
#define FLYCL_E_CLASS_NAME 5    /* a class name that breaks a rule (empty, white space at an end, invisible characters, too long), or two labels given one name */
#define FLYCL_E_NO_UNDO 6       /* flycl_unlearn with no learn left to take back */
#define FLYCL_E_HANDLE 7        /* 0, a freed or an unknown handle */
#define FLYCL_E_BUFFER 8        /* an output buffer too small (the size needed is in the length out-parameter) */
#define FLYCL_E_CONFIG 9        /* a configuration that is not valid JSON for flycl.Config, or an invalid value */
#define FLYCL_E_IO 10           /* a file that cannot be read or written (missing, permission, full disk) */
#define FLYCL_E_FORMAT 11       /* bytes or a file that are not a model file flycl can read (corrupt, truncated, a newer format) */
#define FLYCL_E_LOCKED 12       /* a model file another writer (flycl learn, flycl serve) holds the lock of */
#define FLYCL_E_EXISTS 13       /* flycl_model_save to a path that exists */
#define FLYCL_E_BACKBONE 14     /* an image extractor that cannot be opened or run (ONNX Runtime missing, bad weights, an image that cannot be decoded) */
#define FLYCL_E_NULL 15         /* a NULL pointer where one is required */
#define FLYCL_E_FAILED 16       /* an operation that failed for another reason, the message says which (a solve that cannot factor, a file system error) */
#define FLYCL_E_INTERNAL 99     /* a bug in flycl (a recovered panic): the message says where */

/* A model: an id, 0 never valid. */
typedef uint64_t flycl_model;
/* An image feature extractor (a backbone and its preprocessing). */
typedef uint64_t flycl_extractor;

/* ---- the library ---- */

/* FLYCL_ABI_VERSION of the library loaded (compare it to the header's). */
int flycl_abi_version(void);

/* The message of the last call that failed on this thread (empty when
 * none has). The status is FLYCL_OK, or FLYCL_E_BUFFER when cap is too
 * small (the message is then truncated, NUL-terminated when cap > 0). */
int flycl_last_error(char *buf, size_t cap, size_t *len);

/* A short name of a status code ("bad input", "no undo", ...); never
 * NULL; static storage, not to be freed. */
const char *flycl_status_name(int status);

/* Frees memory the library allocated (flycl_model_save_bytes). NULL is
 * accepted. */
void flycl_free(void *p);

/* ---- models ---- */

/* Creates an untrained model for d-dimensional features. config_json is
 * a flycl.Config as JSON, the keys of a model file's header: {"m":10000,
 * "p":300, "k":3000, "seed":0, "topk":"signed", "lambdas":[1e6,1e7,1e8,1e9],
 * "gcv":"auto", "gcv_scope":"task", "projection":"auto",
 * "lambda_scale":"absolute", "widen_grid":false}; a key left out, NULL or
 * "" or "{}" takes the default (the paper's, as `flycl learn`), an unknown
 * key is FLYCL_E_CONFIG. *out receives the new model's handle. */
int flycl_model_new(const char *config_json, int64_t d, flycl_model *out);

/* Reads the model file at path, as `flycl learn` and `flycl serve` write
 * it (its journal's changes replayed, so a file a writer is changing
 * loads at its last durable state). The learns recorded in its journal
 * since the last forget can be taken back with flycl_unlearn. The file
 * is read, never locked or written. */
int flycl_model_load(const char *path, flycl_model *out);

/* Reads a model from the bytes of a model file (flycl_model_save_bytes,
 * or a file's content; a journal is not part of it). Any bytes are safe:
 * what is not a model file is FLYCL_E_FORMAT. */
int flycl_model_load_bytes(const void *buf, size_t len, flycl_model *out);

/* Writes the model to a new model file at path, atomically and durably,
 * through flycl's model store (the lock `flycl learn` and `flycl serve`
 * take is held while writing), in the format `flycl learn` writes:
 * `flycl predict`, `flycl serve` and flycl_model_load read it. A path
 * that exists is FLYCL_E_EXISTS: flycl does not replace a model file
 * behind its journal; remove the old one (and its .journal) first, or
 * save under a new name. The folder must exist. */
int flycl_model_save(flycl_model h, const char *path);

/* The bytes of the model file flycl_model_save would write (for pickling
 * or a database). *buf is allocated by the library: free it with
 * flycl_free. Two saves of one model differ only in the file's time
 * stamp ("saved" in its header). */
int flycl_model_save_bytes(flycl_model h, void **buf, size_t *len);

/* Frees a model; its handle becomes invalid (FLYCL_E_HANDLE after). */
int flycl_model_free(flycl_model h);

/* ---- learning ---- */

/* Learns n samples: x (n*d floats), y (n labels, each an index into
 * names), names (n_names class names; a name the model knows adds to that
 * class, a new one adds a class). d must be the model's dimension.
 * batch = 0: the samples are one task, lambda chosen by GCV on it (as
 * `flycl learn` does) when lambda is 0, else fixed to lambda (> 0).
 * batch > 0: online, mini-batches of batch samples in order, re-solved
 * after each (`flycl learn --online --batch`). The model's rejection
 * ("unknown") and probabilities are recalibrated on the samples. On an
 * error from refused input the model is unchanged; a failed single task
 * is taken back out, and so are the mini-batches an online learn learned
 * before the one that failed (as flycl_unlearn would: the statistics as
 * before up to float32 rounding, the classes, lambda and calibration as
 * before; flycl_unlearn then goes on from the learns before). lambda_out (may be NULL) receives the lambda of the
 * classifier after the learn. */
int flycl_learn(flycl_model h, const float *x, int64_t n, int64_t d, const int32_t *y,
                const char *const *names, int64_t n_names, double lambda, int64_t batch,
                double *lambda_out);

/* Removes the class called name. x (n*d) are the features of every
 * sample it learned, for an exact removal (the model then equals one
 * that never learned them, up to float32 rounding); with x NULL (n 0)
 * the model takes them from its history of learns when it holds them all
 * (as `flycl forget` takes them from the journal), else only the class's
 * column goes and its samples stay in the statistics. *exact (may be
 * NULL) receives 1 for an exact removal, else 0. A forget ends what
 * flycl_unlearn can take back. */
int flycl_forget(flycl_model h, const char *name, const float *x, int64_t n, int64_t d, int *exact);

/* Takes the last learn back out exactly (`flycl undo`): its samples'
 * statistics are subtracted, the classes it added removed, the lambda and
 * the calibration it replaced restored. Repeated, it takes back the
 * learns before, up to the last forget (or the history a loaded file's
 * journal kept; the model keeps the features of its learns, at most
 * 64 MiB of them, for this). FLYCL_E_NO_UNDO when there is none. */
int flycl_unlearn(flycl_model h);

/* ---- predicting (concurrent on one model) ---- */

/* The class scores of n samples: out[i*c + j] is sample i's score for
 * class j, c = flycl_model_num_classes; out_len (in floats) must be at
 * least n*c. Each sample's scores depend on it alone, to the bit, and
 * equal `flycl predict`'s and the Go Predictor's. */
int flycl_scores(flycl_model h, const float *x, int64_t n, int64_t d, float *out, size_t out_len);

/* flycl_scores that also writes *classes (when not NULL), the class
 * count c of the scores it wrote, read together with them: another
 * thread's learn or forget between a flycl_model_num_classes and the
 * scores cannot make them disagree. When out_len is less than n*c it
 * returns FLYCL_E_BUFFER with *classes set, to size the buffer and call
 * again. */
int flycl_scores_n(flycl_model h, const float *x, int64_t n, int64_t d, float *out, size_t out_len,
                   int64_t *classes);

/* The k best classes of each sample, best first (ties keep class order):
 * classes[i*k + r] and scores[i*k + r] for rank r; when k exceeds the
 * classes the rest is -1 and NaN. out_len (entries of each array) must
 * be at least n*k; scores may be NULL. */
int flycl_top(flycl_model h, const float *x, int64_t n, int64_t d, int32_t k, int32_t *classes,
              float *scores, size_t out_len);

/* The answer for each sample, as `flycl predict` gives it: cls[i] the top
 * class, unknown[i] 1 when the model's rejection says the sample is none
 * of its classes (answered "unknown"), else 0; prob[i] the calibrated
 * probability of the top class (NaN when the model has none); margin[i]
 * the open-set score less the threshold (negative: unknown; NaN when
 * rejection is off). rejection: NULL or "auto" (the model's calibrated
 * threshold), "off", or a threshold as a decimal number. Each array holds
 * n entries; unknown, prob and margin may be NULL. */
int flycl_answer(flycl_model h, const float *x, int64_t n, int64_t d, const char *rejection, int32_t *cls,
                 int32_t *unknown, double *prob, double *margin);

/* ---- reading a model ---- */

int flycl_model_input_dim(flycl_model h, int64_t *d);
int flycl_model_num_classes(flycl_model h, int64_t *c);
/* The name of class index i. */
int flycl_model_class_name(flycl_model h, int64_t i, char *buf, size_t cap, size_t *len);
/* The index of the class called name (FLYCL_E_UNKNOWN_CLASS if none). */
int flycl_model_class_index(flycl_model h, const char *name, int64_t *i);
/* The lambda of the current classifier (0 before any learn). */
int flycl_model_lambda(flycl_model h, double *lambda);
/* The samples learned (in the statistics). */
int flycl_model_samples(flycl_model h, int64_t *n);

/* The model's task records as a JSON array, one per learning step
 * (learn, mini-batch, forget, unlearn), oldest first, with the keys of a
 * model file's history: {"samples":N, "new_classes":[...],
 * "removed":[...], "classes":[...], "lambda":L, "raised_from":L0,
 * "gcv":[score per lambda scored, null for one not finite],
 * "grid":[lambdas scored], "gcv_scope":"all", "seconds":{stage:s}}; the
 * class labels in it are the model's internal labels, and
 * flycl_model_info_json maps them to names. */
int flycl_model_history_json(flycl_model h, char *buf, size_t cap, size_t *len);

/* The model as a JSON object: {"d", "config" (as flycl_model_new takes
 * it, defaults filled in), "classes" (names in index order), "labels"
 * (internal labels in index order), "counts" (samples per class, -1:
 * unknown), "samples", "lambda", "version", "rejection" (the calibrated
 * threshold and temperature, or null), "pipeline" (the backbone images
 * go through, or null)}. */
int flycl_model_info_json(flycl_model h, char *buf, size_t cap, size_t *len);

/* ---- images: the shipped backbones ---- */

/* Opens an image feature extractor: backbone is a backbone spec as
 * `flycl learn --backbone` takes it ("mobilenetv2", "squeezenet",
 * "mobilenetv2:DIR", an .onnx file...; NULL: mobilenetv2); models_dir the
 * folder of backbone weights (NULL: the weights built into the library);
 * ort_library the ONNX Runtime shared library (NULL: the one flycl finds
 * as `flycl learn` does: FLYCL_ORT_LIB, else where `make install` puts
 * it relative to this library, PREFIX/lib/flycl/ beside
 * PREFIX/lib/libflycl.so (or beside libflycl.so in the Python wheel),
 * else where `make ort` installs it, looked for from the working folder
 * up). ONNX Runtime is loaded
 * once per process: a later call naming another library is
 * FLYCL_E_BACKBONE. *dim receives the feature dimension. */
int flycl_extractor_open(const char *backbone, const char *models_dir, const char *ort_library,
                         flycl_extractor *out, int64_t *dim);

/* Opens the extractor a trained model's features came from (its
 * pipeline: the same weights, output and preprocessing), for predicting
 * or learning more from images. FLYCL_E_BAD_INPUT when the model records
 * none. */
int flycl_extractor_for_model(flycl_model h, const char *models_dir, const char *ort_library,
                              flycl_extractor *out, int64_t *dim);

/* The features of n image files (JPEG, PNG, ...): out[i*dim ..] for
 * paths[i]; out_len (floats) at least n*dim. */
int flycl_extract_files(flycl_extractor e, const char *const *paths, int64_t n, float *out, size_t out_len);

/* Records on the model that its features come from e (its pipeline:
 * backbone, weights, output, preprocessing), so that a saved model serves
 * images (`flycl serve`, `flycl predict --images`). Call it before the
 * model's first learn: an untrained model adopts the pipeline; a trained
 * one must already record the same (a model that learned from feature
 * vectors without one, or records another, is FLYCL_E_BAD_INPUT, as is
 * an extractor of another dimension). */
int flycl_model_use_extractor(flycl_model h, flycl_extractor e);

int flycl_extractor_free(flycl_extractor e);

#ifdef __cplusplus
}
#endif

#endif /* FLYCL_H */

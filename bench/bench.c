/* libreceipt benchmark: one process times, side by side on the same receipts,
 *   - libreceipt: parse only, parse + JSON, verify with a cold verifier (built
 *     beforehand, no chain seen yet) and a warm one (the chain already seen);
 *     both figures include parsing, as the raw path includes d2i_PKCS7;
 *   - the raw OpenSSL path: d2i_PKCS7 + PKCS7_verify against the same anchor at
 *     the receipt's creation date;
 *   - an allocation-free C walk over every payload attribute;
 * and prints medians (min-max) per receipt with the ratios the performance targets
 * name. Other modes: --threads (scaling of one shared verifier), --memory WARMUP FILE
 * (peak and retained memory of one parse of FILE, after a parse of the small WARMUP).
 *
 *   bench [--anchor CERT]... FILE...
 *   bench --threads [--anchor CERT]... FILE
 *   bench --memory WARMUP FILE
 *   bench --scaling FILE...                     (parse time against purchases)
 *   bench --jws [--anchor CERT]... FILE...      (StoreKit 2 JWS: warm verification against the ES256 floor,
 *                                                and a verifier made for each verification against warm)
 *   bench --profile-parse|--profile-json|--profile-cold|--profile-warm|--profile-raw|--profile-walk|--profile-build FILE   (a fixed loop for callgrind)
 *   bench --profile-jws-warm|--profile-jws-floor [--anchor CERT]... FILE
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/err.h>
#include <openssl/sha.h>
#include <openssl/evp.h>
#include <openssl/rsa.h>
#include <openssl/pkcs7.h>
#include <openssl/x509.h>
#include <openssl/pem.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

#include "receipt.h"

typedef struct {
    uint8_t *bytes;
    size_t length;
} buffer_t;

static buffer_t read_file(const char *path) {
    buffer_t file = {0};
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); exit(2); }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    file.bytes = malloc((size_t)size + 1);
    file.length = fread(file.bytes, 1, (size_t)size, f);
    fclose(f);
    return file;
}

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* ------------------------------------------------------------ timing */

enum { SAMPLES = 11 };
static const double batch_target_ns = 20e6; /* each sample is the mean of a batch this long */

typedef struct {
    double median, min, max; /* ns per operation, or a ratio */
} timing_t;

typedef void (*operation_t)(void *context);

/* One operation under measurement. `prepare` and `finish` run around each timed
 * batch, untimed: the cold figure uses them to build and free its verifiers. */
typedef struct {
    operation_t run;
    void *context;
    void (*prepare)(void *context, long batch);
    void (*finish)(void *context, long batch);
    long batch;
    double ns[SAMPLES];
} measured_t;

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static timing_t summarize(const double *values) {
    double sorted[SAMPLES];
    memcpy(sorted, values, sizeof sorted);
    qsort(sorted, SAMPLES, sizeof sorted[0], compare_doubles);
    return (timing_t){sorted[SAMPLES / 2], sorted[0], sorted[SAMPLES - 1]};
}

static double timed_batch(measured_t *m, long batch) {
    if (m->prepare) m->prepare(m->context, batch);
    double start = now_ns();
    for (long i = 0; i < batch; i++) m->run(m->context);
    double elapsed = now_ns() - start;
    if (m->finish) m->finish(m->context, batch);
    return elapsed;
}

static void calibrate(measured_t *m) {
    long batch = 1;
    for (;;) {
        double elapsed = timed_batch(m, batch);
        if (elapsed > batch_target_ns / 4 || batch > (1L << 24)) {
            m->batch = (long)((double)batch * batch_target_ns / (elapsed > 1 ? elapsed : 1)) + 1;
            return;
        }
        batch *= 4;
    }
}

/* Sample s of every operation runs before sample s+1 of any. This VM's speed
 * drifts by up to 2x over seconds; interleaving makes a slow spell hit all the
 * operations of a sample alike, and the per-sample ratios (ratio()) cancel it. */
static void measure_interleaved(measured_t *operations, int count) {
    for (int i = 0; i < count; i++) calibrate(&operations[i]);
    for (int s = 0; s < SAMPLES; s++) {
        for (int i = 0; i < count; i++) {
            operations[i].ns[s] = timed_batch(&operations[i], operations[i].batch) / (double)operations[i].batch;
        }
    }
}

static timing_t timing_of(const measured_t *m) { return summarize(m->ns); }

/* Median (min-max) of the ratio within each sample. */
static timing_t ratio(const measured_t *numerator, const measured_t *denominator) {
    double ratios[SAMPLES];
    for (int s = 0; s < SAMPLES; s++) ratios[s] = numerator->ns[s] / denominator->ns[s];
    return summarize(ratios);
}

/* ------------------------------------------------------------ the C walk */

typedef struct {
    const uint8_t *p, *end;
} cursor_t;

/* Reads one TLV; sets *content and *content_end; handles indefinite lengths by
 * walking children. Returns 0 on malformed input. Allocation-free. */
static int tlv(cursor_t *c, uint8_t *tag, const uint8_t **content, const uint8_t **content_end) {
    if (c->end - c->p < 2) return 0;
    *tag = c->p[0];
    uint8_t first = c->p[1];
    const uint8_t *q = c->p + 2;
    if (first == 0x80) {
        cursor_t inner = {q, c->end};
        while (inner.end - inner.p >= 2 && !(inner.p[0] == 0 && inner.p[1] == 0)) {
            uint8_t t; const uint8_t *s, *e;
            if (!tlv(&inner, &t, &s, &e)) return 0;
        }
        if (inner.end - inner.p < 2) return 0;
        *content = q; *content_end = inner.p;
        c->p = inner.p + 2;
        return 1;
    }
    size_t length = first;
    if (first & 0x80) {
        int n = first & 0x7F;
        if (n > 4 || c->end - q < n) return 0;
        length = 0;
        while (n--) length = (length << 8) | *q++;
    }
    if ((size_t)(c->end - q) < length) return 0;
    *content = q; *content_end = q + length;
    c->p = q + length;
    return 1;
}

static uint8_t joined[1 << 24];

/* Finds the payload: ContentInfo > [0] > SignedData > contentInfo > [0] > OCTET STRING. */
static int find_payload(const uint8_t *bytes, size_t length, const uint8_t **payload, size_t *payload_length) {
    cursor_t c = {bytes, bytes + length};
    uint8_t tag; const uint8_t *s, *e;
    if (!tlv(&c, &tag, &s, &e)) return 0;              /* ContentInfo */
    c = (cursor_t){s, e};
    if (!tlv(&c, &tag, &s, &e)) return 0;              /* OID */
    if (!tlv(&c, &tag, &s, &e)) return 0;              /* [0] */
    c = (cursor_t){s, e};
    if (!tlv(&c, &tag, &s, &e)) return 0;              /* SignedData */
    c = (cursor_t){s, e};
    for (int i = 0; i < 3; i++) if (!tlv(&c, &tag, &s, &e)) return 0; /* version, digests, contentInfo */
    c = (cursor_t){s, e};
    if (!tlv(&c, &tag, &s, &e)) return 0;              /* OID data */
    if (!tlv(&c, &tag, &s, &e)) return 0;              /* [0] */
    c = (cursor_t){s, e};
    if (!tlv(&c, &tag, &s, &e)) return 0;              /* OCTET STRING */
    if (tag == 0x04) { *payload = s; *payload_length = (size_t)(e - s); return 1; }
    size_t used = 0;                                   /* constructed: join the chunks */
    cursor_t chunks = {s, e};
    while (chunks.p < chunks.end) {
        const uint8_t *cs, *ce;
        if (!tlv(&chunks, &tag, &cs, &ce)) return 0;
        memcpy(joined + used, cs, (size_t)(ce - cs));
        used += (size_t)(ce - cs);
    }
    *payload = joined; *payload_length = used;
    return 1;
}

static uint64_t walk_attributes(const uint8_t *s, const uint8_t *e, int depth) {
    uint64_t checksum = 0;
    cursor_t set = {s, e};
    while (set.p < set.end) {
        uint8_t tag; const uint8_t *as, *ae, *ts, *te, *vs, *ve, *os, *oe;
        if (!tlv(&set, &tag, &as, &ae)) return checksum;
        cursor_t attribute = {as, ae};
        if (!tlv(&attribute, &tag, &ts, &te) || !tlv(&attribute, &tag, &vs, &ve) ||
            !tlv(&attribute, &tag, &os, &oe)) return checksum;
        int64_t type = 0;
        for (const uint8_t *p = ts; p < te; p++) type = (type << 8) | *p;
        checksum += (uint64_t)type + (uint64_t)(oe - os);
        if (type == 17 && depth == 0) {
            cursor_t inner = {os, oe};
            const uint8_t *is, *ie;
            if (tlv(&inner, &tag, &is, &ie)) checksum += walk_attributes(is, ie, 1);
        }
    }
    return checksum;
}

static volatile uint64_t sink;

static void c_walk(void *context) {
    buffer_t *file = context;
    const uint8_t *payload; size_t length;
    if (!find_payload(file->bytes, file->length, &payload, &length)) return;
    cursor_t top = {payload, payload + length};
    uint8_t tag; const uint8_t *s, *e;
    if (tlv(&top, &tag, &s, &e)) sink += walk_attributes(s, e, 0);
}

/* ------------------------------------------------------------ operations */

typedef struct {
    buffer_t file;
    char **anchors;
    int anchor_count;
    receipt_verifier_t **pool; /* fresh verifiers for the cold figure, built outside the timing */
    long pool_next;
    receipt_t *receipt;
    receipt_verifier_t *warm;
    X509_STORE *raw_store;
} subject_t;

static void parse_only(void *context) {
    subject_t *s = context;
    receipt_t *r = NULL;
    receipt_parse(s->file.bytes, s->file.length, &r, NULL);
    receipt_free(r);
}

static void parse_json(void *context) {
    subject_t *s = context;
    receipt_t *r = NULL;
    char *json = NULL;
    receipt_parse(s->file.bytes, s->file.length, &r, NULL);
    receipt_to_json(r, RECEIPT_JSON_COMPACT, &json, NULL);
    receipt_string_free(json);
    receipt_free(r);
}

static buffer_t anchor_bytes[16];

static receipt_verifier_t *new_verifier(char **anchors, int count) {
    receipt_verifier_builder_t *builder = NULL;
    receipt_verifier_t *verifier = NULL;
    receipt_verifier_builder_new(&builder);
    receipt_verifier_builder_set_trust(builder, RECEIPT_TRUST_APPLE_ROOT | RECEIPT_TRUST_XCODE_STOREKIT);
    for (int i = 0; i < count; i++) {
        if (!anchor_bytes[i].bytes) anchor_bytes[i] = read_file(anchors[i]);
        receipt_verifier_builder_add_anchor(builder, anchor_bytes[i].bytes, anchor_bytes[i].length, NULL);
    }
    receipt_verifier_build(builder, &verifier);
    receipt_verifier_builder_free(builder);
    return verifier;
}

/* The cold figures' untimed set-up: one fresh verifier per operation of the batch. */
static void build_cold_pool(void *context, long batch) {
    subject_t *s = context;
    s->pool = malloc(sizeof *s->pool * (size_t)batch);
    for (long i = 0; i < batch; i++) s->pool[i] = new_verifier(s->anchors, s->anchor_count);
    s->pool_next = 0;
}

static void free_cold_pool(void *context, long batch) {
    subject_t *s = context;
    for (long i = 0; i < batch; i++) receipt_verifier_free(s->pool[i]);
    free(s->pool);
    s->pool = NULL;
}

/* Verdicts, as a caller who wants only the verdict gets them: receipt_verify_bytes,
 * which types no purchase. `cold` uses a verifier that has seen no chain, from a
 * pool built before the timing; `warm` one that has verified this receipt before. */
static receipt_verifier_t *cold_verifier(subject_t *s) {
    return s->pool ? s->pool[s->pool_next++] : new_verifier(s->anchors, s->anchor_count);
}

static void check_verdict(receipt_status_t status, const char *what) {
    if (status != RECEIPT_OK) { fprintf(stderr, "%s verification failed: %s\n", what, receipt_status_name(status)); exit(1); }
}

static void verify_cold(void *context) {
    subject_t *s = context;
    receipt_verifier_t *verifier = cold_verifier(s);
    check_verdict(receipt_verify_bytes(verifier, s->file.bytes, s->file.length, NULL, NULL), "cold");
    if (!s->pool) receipt_verifier_free(verifier);
}

static void verify_warm(void *context) {
    subject_t *s = context;
    check_verdict(receipt_verify_bytes(s->warm, s->file.bytes, s->file.length, NULL, NULL), "warm");
}

/* The same verdicts for a caller who also reads the fields: receipt_parse (every
 * field typed) and then receipt_verify. */
static void parse_verify_cold(void *context) {
    subject_t *s = context;
    receipt_t *r = NULL;
    receipt_parse(s->file.bytes, s->file.length, &r, NULL);
    receipt_verifier_t *verifier = cold_verifier(s);
    check_verdict(receipt_verify(verifier, r, NULL), "cold");
    if (!s->pool) receipt_verifier_free(verifier);
    receipt_free(r);
}

static void parse_verify_warm(void *context) {
    subject_t *s = context;
    receipt_t *r = NULL;
    receipt_parse(s->file.bytes, s->file.length, &r, NULL);
    check_verdict(receipt_verify(s->warm, r, NULL), "warm");
    receipt_free(r);
}

static void raw_openssl(void *context) {
    subject_t *s = context;
    const unsigned char *p = s->file.bytes;
    PKCS7 *p7 = d2i_PKCS7(NULL, &p, (long)s->file.length);
    BIO *out = BIO_new(BIO_s_mem());
    if (!p7 || PKCS7_verify(p7, NULL, s->raw_store, NULL, out, 0) != 1) {
        fprintf(stderr, "raw OpenSSL verification failed\n");
        ERR_print_errors_fp(stderr);
        exit(1);
    }
    BIO_free(out);
    PKCS7_free(p7);
}

/* The raw path's store: the receipt's own self-signed root (what the pin matches)
 * or the given anchors, evaluated at the creation date, SHA-1 allowed. */
/* The least any verifier must do for this receipt: hash the payload with the
 * signer's digest and make one RSA public-key operation with the leaf's key,
 * already decoded. Its result is ignored (receipts with signed attributes hash
 * those too, which only adds): it is here to show how far below the raw path a
 * warm verifier can possibly go. */
typedef struct {
    const uint8_t *payload;
    size_t length;
    const EVP_MD *md;
    const unsigned char *signature;
    size_t signature_length;
    EVP_PKEY_CTX *verify;
    PKCS7 *p7;
} floor_t;

static int floor_for(const subject_t *s, floor_t *f) {
    const unsigned char *p = s->file.bytes;
    memset(f, 0, sizeof *f);
    if (!(f->p7 = d2i_PKCS7(NULL, &p, (long)s->file.length))) return 0;
    if (!find_payload(s->file.bytes, s->file.length, &f->payload, &f->length)) return 0;
    PKCS7_SIGNER_INFO *info = sk_PKCS7_SIGNER_INFO_value(PKCS7_get_signer_info(f->p7), 0);
    STACK_OF(X509) *signers = PKCS7_get0_signers(f->p7, NULL, 0);
    if (!info || !signers) return 0;
    f->md = EVP_get_digestbyobj(info->digest_alg->algorithm);
    f->signature = info->enc_digest->data;
    f->signature_length = (size_t)info->enc_digest->length;
    f->verify = EVP_PKEY_CTX_new(X509_get0_pubkey(sk_X509_value(signers, 0)), NULL);
    sk_X509_free(signers);
    return f->md && f->verify && EVP_PKEY_verify_init(f->verify) == 1 &&
           EVP_PKEY_CTX_set_rsa_padding(f->verify, RSA_PKCS1_PADDING) == 1 &&
           EVP_PKEY_CTX_set_signature_md(f->verify, f->md) == 1;
}

static void signature_floor(void *context) {
    floor_t *f = context;
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int digest_length = 0;
    EVP_Digest(f->payload, f->length, digest, &digest_length, f->md, NULL);
    sink += (uint64_t)EVP_PKEY_verify(f->verify, f->signature, f->signature_length, digest, digest_length);
}

static X509_STORE *raw_store_for(subject_t *s) {
    X509_STORE *store = X509_STORE_new();
    const unsigned char *p = s->file.bytes;
    PKCS7 *p7 = d2i_PKCS7(NULL, &p, (long)s->file.length);
    STACK_OF(X509) *certificates = p7->d.sign->cert;
    for (int i = 0; i < sk_X509_num(certificates); i++) {
        X509 *certificate = sk_X509_value(certificates, i);
        if (X509_check_issued(certificate, certificate) == X509_V_OK) X509_STORE_add_cert(store, certificate);
    }
    for (int i = 0; i < s->anchor_count; i++) {
        FILE *f = fopen(s->anchors[i], "r");
        X509 *anchor = PEM_read_X509(f, NULL, NULL, NULL);
        fclose(f);
        if (anchor) { X509_STORE_add_cert(store, anchor); X509_free(anchor); }
    }
    PKCS7_free(p7);
    int64_t created_ms = 0;
    receipt_get_date(s->receipt, RECEIPT_FIELD_RECEIPT_CREATION_DATE, &created_ms);
    X509_VERIFY_PARAM *param = X509_STORE_get0_param(store);
    X509_VERIFY_PARAM_set_time(param, (time_t)(created_ms / 1000));
    X509_VERIFY_PARAM_set_auth_level(param, 0);
    X509_STORE_set_purpose(store, X509_PURPOSE_ANY);
    return store;
}

/* ------------------------------------------------------------ modes */

static void print_timing(const char *label, timing_t t) {
    printf("  %-18s %11.2f us  (%.2f-%.2f)\n", label, t.median / 1e3, t.min / 1e3, t.max / 1e3);
}

static void print_ratio(const char *label, timing_t r, const char *note) {
    printf("    %-15s %7.3fx (%.3f-%.3f)  %s\n", label, r.median, r.min, r.max, note);
}

static int run_table(char **files, int file_count, char **anchors, int anchor_count) {
    printf("%-40s %9s %9s\n", "receipt", "bytes", "purchases");
    for (int i = 0; i < file_count; i++) {
        subject_t s = {.file = read_file(files[i]), .anchors = anchors, .anchor_count = anchor_count};
        receipt_error_t error;
        if (receipt_parse(s.file.bytes, s.file.length, &s.receipt, &error) != RECEIPT_OK) {
            printf("%s: %s\n", files[i], error.detail);
            continue;
        }
        s.warm = new_verifier(anchors, anchor_count);
        s.raw_store = raw_store_for(&s);
        const char *name = strrchr(files[i], '/') ? strrchr(files[i], '/') + 1 : files[i];
        printf("%-40s %9zu %9zu\n", name, s.file.length, receipt_purchase_count(s.receipt));
        floor_t floor;
        if (!floor_for(&s, &floor)) { fprintf(stderr, "%s: cannot set up the signature floor\n", name); exit(1); }
        enum { WALK, PARSE, JSON, COLD, WARM, PARSE_COLD, PARSE_WARM, RAW, FLOOR, OPERATIONS };
        measured_t operations[OPERATIONS] = {
            [WALK] = {.run = c_walk, .context = &s.file},
            [PARSE] = {.run = parse_only, .context = &s},
            [JSON] = {.run = parse_json, .context = &s},
            [COLD] = {.run = verify_cold, .context = &s, .prepare = build_cold_pool, .finish = free_cold_pool},
            [WARM] = {.run = verify_warm, .context = &s},
            [PARSE_COLD] = {.run = parse_verify_cold, .context = &s, .prepare = build_cold_pool, .finish = free_cold_pool},
            [PARSE_WARM] = {.run = parse_verify_warm, .context = &s},
            [RAW] = {.run = raw_openssl, .context = &s},
            [FLOOR] = {.run = signature_floor, .context = &floor},
        };
        const char *labels[OPERATIONS] = {"C walk", "parse", "parse+JSON", "verify cold", "verify warm",
                                          "parse+verify cold", "parse+verify warm", "raw OpenSSL", "signature floor"};
        measure_interleaved(operations, OPERATIONS);
        for (int op = 0; op < OPERATIONS; op++) print_timing(labels[op], timing_of(&operations[op]));
        printf("  ratios, median (min-max) of the %d interleaved samples:\n", SAMPLES);
        print_ratio("parse/C walk", ratio(&operations[PARSE], &operations[WALK]), "target <= 3");
        print_ratio("warm/raw", ratio(&operations[WARM], &operations[RAW]), "target <= 0.1");
        print_ratio("cold/raw", ratio(&operations[COLD], &operations[RAW]), "target <= 1.1");
        print_ratio("floor/raw", ratio(&operations[FLOOR], &operations[RAW]), "no warm verifier can go below this");
        print_ratio("warm/floor", ratio(&operations[WARM], &operations[FLOOR]), "target <= 1.10");
        print_ratio("parse+warm/raw", ratio(&operations[PARSE_WARM], &operations[RAW]), "reading every field too");
        print_ratio("parse+cold/raw", ratio(&operations[PARSE_COLD], &operations[RAW]), "reading every field too");
        EVP_PKEY_CTX_free(floor.verify);
        PKCS7_free(floor.p7);
        X509_STORE_free(s.raw_store);
        receipt_verifier_free(s.warm);
        receipt_free(s.receipt);
        free(s.file.bytes);
    }
    return 0;
}


/* ------------------------------------------------------------ StoreKit 2 JWS */

/* The floor of a warm JWS verification: what no verifier can skip. The three
 * base64url segments decoded, SHA-256 over header.payload, and one P-256 ECDSA
 * verify with the leaf's key already decoded (the low-level call, no provider
 * context per call). It parses no JSON, which a verifier must: the ratio
 * charges libreceipt for its JSON reader, its header checks and its cache. */
typedef struct {
    buffer_t token;
    size_t dots[2];
    EC_KEY *key;
    receipt_verifier_t *verifier;
    char **anchors;
    int anchor_count;
} jws_subject_t;

static int base64url_value(uint8_t c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    return c == '-' ? 62 : c == '_' ? 63 : -1;
}

static size_t base64url_decode(const uint8_t *in, size_t length, uint8_t *out) {
    size_t written = 0;
    uint32_t quantum = 0;
    int filled = 0;
    for (size_t i = 0; i < length; i++) {
        quantum = quantum << 6 | (uint32_t)base64url_value(in[i]);
        if (++filled == 4) {
            out[written++] = (uint8_t)(quantum >> 16);
            out[written++] = (uint8_t)(quantum >> 8);
            out[written++] = (uint8_t)quantum;
            quantum = 0;
            filled = 0;
        }
    }
    if (filled == 2) out[written++] = (uint8_t)(quantum >> 4);
    if (filled == 3) {
        out[written++] = (uint8_t)(quantum >> 10);
        out[written++] = (uint8_t)(quantum >> 2);
    }
    return written;
}

static uint8_t jws_scratch[3][1 << 16];

static void jws_floor(void *context) {
    jws_subject_t *j = context;
    const uint8_t *t = j->token.bytes;
    base64url_decode(t, j->dots[0], jws_scratch[0]);
    base64url_decode(t + j->dots[0] + 1, j->dots[1] - j->dots[0] - 1, jws_scratch[1]);
    size_t signature_length = base64url_decode(t + j->dots[1] + 1, j->token.length - j->dots[1] - 1, jws_scratch[2]);
    unsigned char digest[32];
    SHA256(t, j->dots[1], digest);
    ECDSA_SIG *sig = ECDSA_SIG_new();
    ECDSA_SIG_set0(sig, BN_bin2bn(jws_scratch[2], 32, NULL), BN_bin2bn(jws_scratch[2] + 32, (int)signature_length - 32, NULL));
    sink += (uint64_t)ECDSA_do_verify(digest, 32, sig, j->key);
    ECDSA_SIG_free(sig);
}

static void jws_warm(void *context) {
    jws_subject_t *j = context;
    check_verdict(receipt_verify_jws(j->verifier, j->token.bytes, j->token.length, NULL, NULL, NULL), "JWS warm");
}

/* A verifier made for the request, used once and freed, as a backend that makes one per request
 * does: its own chain cache is empty, so this is what the process's shared chains and leaf-key
 * tables leave of a first verification. */
static void jws_fresh(void *context) {
    jws_subject_t *j = context;
    receipt_verifier_t *verifier = new_verifier(j->anchors, j->anchor_count);
    check_verdict(receipt_verify_jws(verifier, j->token.bytes, j->token.length, NULL, NULL, NULL), "JWS fresh");
    receipt_verifier_free(verifier);
}

static void jws_decode(void *context) {
    jws_subject_t *j = context;
    receipt_jws_t *jws = NULL;
    if (receipt_jws_decode_unverified(j->token.bytes, j->token.length, &jws, NULL) != RECEIPT_OK) exit(1);
    receipt_jws_free(jws);
}

/* The leaf's key, from x5c[0] of the decoded header, decoded once. */
static EC_KEY *jws_leaf_key(const jws_subject_t *j) {
    size_t header_length = base64url_decode(j->token.bytes, j->dots[0], jws_scratch[0]);
    jws_scratch[0][header_length] = 0;
    const char *start = strstr((const char *)jws_scratch[0], "\"x5c\":[\"");
    if (!start) return NULL;
    start += 8;
    const char *end = strchr(start, '"');
    uint8_t der[8192];
    int der_length = EVP_DecodeBlock(der, (const unsigned char *)start, (int)(end - start));
    while (der_length > 0 && end[-1] == '=') { der_length--; end--; }
    const unsigned char *p = der;
    X509 *leaf = d2i_X509(NULL, &p, der_length);
    if (!leaf) return NULL;
    EC_KEY *key = EC_KEY_dup(EVP_PKEY_get0_EC_KEY(X509_get0_pubkey(leaf)));
    X509_free(leaf);
    return key;
}

static int run_jws(char **files, int file_count, char **anchors, int anchor_count) {
    printf("%-44s %7s\n", "JWS", "bytes");
    for (int i = 0; i < file_count; i++) {
        jws_subject_t j = {.token = read_file(files[i]), .anchors = anchors, .anchor_count = anchor_count};
        while (j.token.length && (j.token.bytes[j.token.length - 1] == '\n')) j.token.length--;
        int dots = 0;
        for (size_t k = 0; k < j.token.length && dots < 2; k++) if (j.token.bytes[k] == '.') j.dots[dots++] = k;
        if (dots != 2 || !(j.key = jws_leaf_key(&j))) { fprintf(stderr, "%s: not a JWS with x5c\n", files[i]); return 1; }
        j.verifier = new_verifier(anchors, anchor_count);
        const char *name = strrchr(files[i], '/') ? strrchr(files[i], '/') + 1 : files[i];
        printf("%-44s %7zu\n", name, j.token.length);
        enum { FLOOR, WARM, DECODE, OPERATIONS };
        measured_t operations[OPERATIONS] = {
            [FLOOR] = {.run = jws_floor, .context = &j},
            [WARM] = {.run = jws_warm, .context = &j},
            [DECODE] = {.run = jws_decode, .context = &j},
        };
        const char *labels[OPERATIONS] = {"ES256 floor", "verify warm", "decode only"};
        measure_interleaved(operations, OPERATIONS);
        for (int op = 0; op < OPERATIONS; op++) print_timing(labels[op], timing_of(&operations[op]));
        /* A verifier made per request against the reused one, interleaved with each other only: the
         * floor's generic arithmetic evicts the leaf key's table (150 KB) from the caches, which would
         * charge whichever of the two ran after it. */
        measured_t per_request[2] = {{.run = jws_warm, .context = &j}, {.run = jws_fresh, .context = &j}};
        measure_interleaved(per_request, 2);
        print_timing("verify warm, beside", timing_of(&per_request[0]));
        print_timing("verify fresh", timing_of(&per_request[1]));
        printf("  ratios, median (min-max) of the %d interleaved samples:\n", SAMPLES);
        print_ratio("warm/floor", ratio(&operations[WARM], &operations[FLOOR]), "target <= 1.3");
        print_ratio("fresh/warm", ratio(&per_request[1], &per_request[0]),
                    "a verifier made per request, against warm measured beside it; target <= 3 for a notification");
        print_ratio("decode/floor", ratio(&operations[DECODE], &operations[FLOOR]), "base64url + JSON + typing");
        EC_KEY_free(j.key);
        receipt_verifier_free(j.verifier);
        free(j.token.bytes);
    }
    return 0;
}

/* Parse time per purchase count: the curve the scaling target asks for. */
static int run_scaling(char **files, int file_count) {
    printf("%-28s %10s %10s %14s %14s %14s\n", "receipt", "bytes", "purchases", "parse us", "us/purchase", "C walk us");
    for (int i = 0; i < file_count; i++) {
        subject_t s = {.file = read_file(files[i])};
        if (receipt_parse(s.file.bytes, s.file.length, &s.receipt, NULL) != RECEIPT_OK) continue;
        size_t purchases = receipt_purchase_count(s.receipt);
        measured_t operations[] = {{.run = parse_only, .context = &s}, {.run = c_walk, .context = &s.file}};
        measure_interleaved(operations, 2);
        timing_t parse = timing_of(&operations[0]), walk = timing_of(&operations[1]);
        const char *name = strrchr(files[i], '/') ? strrchr(files[i], '/') + 1 : files[i];
        printf("%-28s %10zu %10zu %14.1f %14.3f %14.1f\n", name, s.file.length, purchases, parse.median / 1e3,
               parse.median / 1e3 / (double)(purchases ? purchases : 1), walk.median / 1e3);
        receipt_free(s.receipt);
        free(s.file.bytes);
    }
    return 0;
}

typedef struct {
    subject_t *subject;
    double seconds;
    long done;
} worker_t;

static void *verify_loop(void *argument) {
    worker_t *w = argument;
    double end = now_ns() + w->seconds * 1e9;
    while (now_ns() < end) {
        for (int i = 0; i < 64; i++) verify_warm(w->subject);
        w->done += 64;
    }
    return NULL;
}

static double throughput(subject_t *s, int threads, double seconds) {
    pthread_t ids[8];
    worker_t workers[8];
    for (int i = 0; i < threads; i++) {
        workers[i] = (worker_t){s, seconds, 0};
        pthread_create(&ids[i], NULL, verify_loop, &workers[i]);
    }
    long total = 0;
    for (int i = 0; i < threads; i++) { pthread_join(ids[i], NULL); total += workers[i].done; }
    return (double)total / seconds;
}

/* Rounds of one thread then two, so that the VM's drift hits both alike; the
 * figure is the median of the rounds' ratios. */
static int run_threads(const char *file, char **anchors, int anchor_count) {
    subject_t s = {.file = read_file(file), .anchors = anchors, .anchor_count = anchor_count};
    receipt_parse(s.file.bytes, s.file.length, &s.receipt, NULL);
    s.warm = new_verifier(anchors, anchor_count);
    verify_warm(&s);
    double ones[SAMPLES], twos[SAMPLES], ratios[SAMPLES];
    for (int r = 0; r < SAMPLES; r++) {
        ones[r] = throughput(&s, 1, 0.4);
        twos[r] = throughput(&s, 2, 0.4);
        ratios[r] = twos[r] / ones[r];
    }
    timing_t one = summarize(ones), two = summarize(twos), ratio = summarize(ratios);
    printf("threads: 1 thread %.0f verifications/s, 2 threads %.0f/s (medians of %d rounds): %.2fx (%.2f-%.2f) "
           "(target >= 1.8)\n", one.median, two.median, SAMPLES, ratio.median, ratio.min, ratio.max);
    return 0;
}

static long max_rss_kb(void) {
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_maxrss;
}

/* Heap in use, mmapped blocks included: large receipts get theirs from mmap. */
static size_t heap_in_use(void) {
    struct mallinfo2 info = mallinfo2();
    return info.uordblks + info.hblkhd;
}

/* Peak and retained memory of one parse of `file`. The runtime's one-time state is
 * loaded first by parsing `warmup`, a small receipt, so that it counts as the fixed
 * base and does not raise the peak before the measured parse. */
static int run_memory(const char *file, const char *warmup_file) {
    buffer_t input = read_file(file), small = read_file(warmup_file);
    receipt_t *warmup = NULL;
    receipt_parse(small.bytes, small.length, &warmup, NULL);
    receipt_free(warmup);
    size_t heap_before = heap_in_use();
    long rss_before = max_rss_kb();
    receipt_t *receipt = NULL;
    if (receipt_parse(input.bytes, input.length, &receipt, NULL) != RECEIPT_OK) return 1;
    long peak_kb = max_rss_kb() - rss_before;
    size_t retained = heap_in_use() - heap_before;
    printf("memory: %zu bytes in, %zu purchases: retained %.2fx input, peak RSS growth %.2fx input\n",
           input.length, receipt_purchase_count(receipt), (double)retained / (double)input.length,
           (double)peak_kb * 1024 / (double)input.length);
    receipt_free(receipt);
    return 0;
}

int main(int argc, char **argv) {
    char *anchors[16], *files[256];
    int anchor_count = 0, file_count = 0, threads = 0, memory = 0, profile = 0, scaling = 0, jws = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--anchor") && i + 1 < argc && anchor_count < 16) anchors[anchor_count++] = argv[++i];
        else if (!strcmp(argv[i], "--threads")) threads = 1;
        else if (!strcmp(argv[i], "--memory")) memory = 1;
        else if (!strcmp(argv[i], "--scaling")) scaling = 1;
        else if (!strcmp(argv[i], "--jws")) jws = 1;
        else if (!strcmp(argv[i], "--profile-parse")) profile = 1;
        else if (!strcmp(argv[i], "--profile-json")) profile = 2;
        else if (!strcmp(argv[i], "--profile-cold")) profile = 3;
        else if (!strcmp(argv[i], "--profile-warm")) profile = 4;
        else if (!strcmp(argv[i], "--profile-raw")) profile = 5;
        else if (!strcmp(argv[i], "--profile-walk")) profile = 6;
        else if (!strcmp(argv[i], "--profile-build")) profile = 7;
        else if (!strcmp(argv[i], "--profile-jws-warm")) profile = 8;
        else if (!strcmp(argv[i], "--profile-jws-floor")) profile = 9;
        else if (!strcmp(argv[i], "--profile-floor")) profile = 10;
        else if (file_count < 256) files[file_count++] = argv[i];
    }
    if (file_count == 0) { fprintf(stderr, "usage: bench [--threads|--memory] [--anchor CERT]... FILE...\n"); return 2; }
    if (memory) {
        if (file_count != 2) { fprintf(stderr, "usage: bench --memory WARMUP FILE\n"); return 2; }
        return run_memory(files[1], files[0]);
    }
    if (scaling) return run_scaling(files, file_count);
    if (jws) return run_jws(files, file_count, anchors, anchor_count);
    if (profile == 8 || profile == 9) { /* JWS: a fixed loop for callgrind */
        jws_subject_t j = {.token = read_file(files[0])};
        while (j.token.length && j.token.bytes[j.token.length - 1] == '\n') j.token.length--;
        for (size_t k = 0, dots = 0; k < j.token.length && dots < 2; k++) if (j.token.bytes[k] == '.') j.dots[dots++] = k;
        j.key = jws_leaf_key(&j);
        j.verifier = new_verifier(anchors, anchor_count);
        const char *count = getenv("BENCH_ITERATIONS");
        int iterations = count ? atoi(count) : 500;
        for (int i = 0; i < iterations; i++) (profile == 8 ? jws_warm : jws_floor)(&j);
        return 0;
    }
    if (profile) { /* a fixed loop for valgrind --tool=callgrind */
        subject_t s = {.file = read_file(files[0]), .anchors = anchors, .anchor_count = anchor_count};
        s.warm = new_verifier(anchors, anchor_count);
        if (profile == 5) {
            receipt_parse(s.file.bytes, s.file.length, &s.receipt, NULL);
            s.raw_store = raw_store_for(&s);
        }
        floor_t floor;
        if (profile == 10 && !floor_for(&s, &floor)) { fprintf(stderr, "cannot set up the signature floor\n"); return 1; }
        const char *count = getenv("BENCH_ITERATIONS");
        int iterations = count ? atoi(count) : 500;
        for (int i = 0; i < iterations; i++) {
            if (profile == 1) parse_only(&s);
            else if (profile == 2) parse_json(&s);
            else if (profile == 3) verify_cold(&s);
            else if (profile == 4) verify_warm(&s);
            else if (profile == 5) raw_openssl(&s);
            else if (profile == 6) c_walk(&s.file);
            else if (profile == 10) signature_floor(&floor);
            else receipt_verifier_free(new_verifier(s.anchors, s.anchor_count));
        }
        return 0;
    }
    if (threads) return run_threads(files[0], anchors, anchor_count);
    return run_table(files, file_count, anchors, anchor_count);
}

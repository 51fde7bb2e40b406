#ifndef RECEIPT_COPENSSL_SHIM_H
#define RECEIPT_COPENSSL_SHIM_H
#include <string.h>
#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/objects.h>
#include <openssl/ocsp.h>
#include <openssl/sha.h>
#include <time.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

/* OpenSSL's STACK_OF(X509) API is made of function-like macros, which Swift
 * cannot import. These static inline wrappers have internal linkage, so they
 * are never exported from libreceipt.so. */
static inline STACK_OF(X509) *shim_x509_stack_new(void) { return sk_X509_new_null(); }
static inline int shim_x509_stack_push(STACK_OF(X509) *stack, X509 *certificate) {
    return sk_X509_push(stack, certificate);
}
static inline void shim_x509_stack_free(STACK_OF(X509) *stack) { sk_X509_free(stack); }
static inline int shim_x509_stack_count(const STACK_OF(X509) *stack) { return sk_X509_num(stack); }
static inline X509 *shim_x509_stack_at(const STACK_OF(X509) *stack, int index) {
    return sk_X509_value(stack, index);
}

/* RSA PKCS #1 v1.5 verification (RFC 8017 §8.2.2) with a public key made ready
 * once: its modulus's Montgomery form is computed when the key is made, and the
 * caller passes scratch space (a BN_CTX it keeps), so a verification is the one
 * modular exponentiation and a compare. RSA_verify, by contrast, allocates a
 * BN_CTX and its numbers, takes a lock for the cached Montgomery form, strips the
 * padding and encodes a DigestInfo to compare, on every call; EVP_DigestVerify also builds a provider context.
 * The signature is checked the way the RFC recommends, by encoding, not parsing:
 * s^e mod n must equal, byte for byte, the EMSA-PKCS1-v1_5 encoding the caller
 * built from the digest, so no lax padding or DigestInfo parse can be fooled. */
typedef struct shim_rsa_public {
    BIGNUM *n, *e;
    BN_MONT_CTX *mont;
    int length; /* k: the modulus in bytes, the length of a signature and of the encoding */
} shim_rsa_public;

static inline void shim_rsa_public_free(shim_rsa_public *k) {
    if (!k) return;
    BN_free(k->n);
    BN_free(k->e);
    BN_MONT_CTX_free(k->mont);
    OPENSSL_free(k);
}

/* NULL when memory ran out, or the modulus is even (no RSA key has one). */
static inline shim_rsa_public *shim_rsa_public_new(const RSA *rsa) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    shim_rsa_public *k = OPENSSL_zalloc(sizeof *k);
    BN_CTX *ctx = BN_CTX_new();
    if (!k || !ctx) goto fail;
    k->n = BN_dup(RSA_get0_n(rsa));
    k->e = BN_dup(RSA_get0_e(rsa));
    k->mont = BN_MONT_CTX_new();
    if (!k->n || !k->e || !k->mont || !BN_is_odd(k->n) || BN_MONT_CTX_set(k->mont, k->n, ctx) != 1) goto fail;
    k->length = BN_num_bytes(k->n);
    BN_CTX_free(ctx);
#pragma GCC diagnostic pop
    return k;
fail:
    BN_CTX_free(ctx);
    shim_rsa_public_free(k);
    return NULL;
}

/* RSAVP1 on `signature`, compared with `expected` (k bytes): 1 when equal, 0 when
 * not (a signature of another length than k, or not below n, included), -2 when
 * memory ran out. `ctx` is used between BN_CTX_start and BN_CTX_end only. */
static inline int shim_rsa_public_matches(const shim_rsa_public *k, BN_CTX *ctx, const unsigned char *signature,
                                          size_t signature_length, const unsigned char *expected) {
    enum { most = 512 }; /* 4096 bits, the largest key SignatureCheck allows */
    unsigned char em[most];
    if (signature_length != (size_t)k->length || k->length > most) return 0;
    BN_CTX_start(ctx);
    int result = -2;
    BIGNUM *s = BN_CTX_get(ctx), *m = BN_CTX_get(ctx);
    if (!m || !BN_bin2bn(signature, (int)signature_length, s)) goto end;
    result = 0;
    if (BN_ucmp(s, k->n) >= 0) goto end;
    result = -2;
    if (BN_mod_exp_mont(m, s, k->e, k->n, ctx, k->mont) != 1 || BN_bn2binpad(m, em, k->length) != k->length) goto end;
    result = memcmp(em, expected, (size_t)k->length) == 0 ? 1 : 0;
end:
    BN_CTX_end(ctx);
    return result;
}

/* The RSA key of `key`, NULL when it is not RSA, with its modulus size and
 * whether its public exponent is 65537 (F4): the shape a verifier checks before
 * any arithmetic. One call, since EVP_PKEY_get_base_id and each EVP_PKEY_get0_RSA
 * take libcrypto's locks, on every verdict's path. */
static inline const RSA *shim_rsa_key(const EVP_PKEY *key, int *bits, int *exponent_is_f4) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    const RSA *rsa = EVP_PKEY_get0_RSA(key);
    if (rsa) {
        const BIGNUM *e = RSA_get0_e(rsa);
        *bits = RSA_bits(rsa);
        *exponent_is_f4 = e && BN_is_word(e, RSA_F4);
    }
#pragma GCC diagnostic pop
    return rsa;
}

/* SHA-1 or SHA-256 of `data` into `out` (20 or 32 bytes) with the low-level
 * functions, deprecated in OpenSSL 3 like RSA_verify above and for the same
 * reason: EVP_Digest allocates a context and SHA256() fetches the algorithm from
 * a provider on every call, 3,000 instructions that a warm verdict would pay. */
static inline void shim_sha_digest(int sha256, const unsigned char *data, size_t length, unsigned char *out) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    if (sha256) {
        SHA256_CTX context;
        SHA256_Init(&context);
        SHA256_Update(&context, data, length);
        SHA256_Final(out, &context);
    } else {
        SHA_CTX context;
        SHA1_Init(&context);
        SHA1_Update(&context, data, length);
        SHA1_Final(out, &context);
    }
#pragma GCC diagnostic pop
}


/* ES256 (ECDSA over P-256 with SHA-256) of a digest with an EVP_PKEY's EC key,
 * the signature given as r||s of 32 bytes each (RFC 7518 §3.4). Returns 1 when
 * valid, 0 when not, -1 when the key is not a P-256 key, -2 when memory ran out.
 * The low-level EC_KEY path for the reason given above for RSA. */
static inline int shim_es256_verify_digest(const unsigned char *digest, const unsigned char *signature,
                                           const EVP_PKEY *key) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    const EC_KEY *ec = EVP_PKEY_get0_EC_KEY(key);
    if (!ec || !EC_KEY_get0_group(ec) || EC_GROUP_get_curve_name(EC_KEY_get0_group(ec)) != NID_X9_62_prime256v1)
        return -1;
    ECDSA_SIG *sig = ECDSA_SIG_new();
    BIGNUM *r = BN_bin2bn(signature, 32, NULL), *s = BN_bin2bn(signature + 32, 32, NULL);
    if (!sig || !r || !s || ECDSA_SIG_set0(sig, r, s) != 1) {
        ECDSA_SIG_free(sig);
        BN_free(r);
        BN_free(s);
        return -2;
    }
    int result = ECDSA_do_verify(digest, 32, sig, (EC_KEY *)ec);
    ECDSA_SIG_free(sig);
#pragma GCC diagnostic pop
    return result == 1 ? 1 : 0;
}

/* ES256 with a precomputed table for one public key, for a key that signs many
 * JWS (Apple's leaf of the day). ECDSA verification (SEC 1 §4.1.4) computes
 * u1*G + u2*Q; OpenSSL precomputes multiples of G only, so u2*Q, the dearer half,
 * is computed from scratch on every call. Here a copy of the P-256 group whose
 * generator is Q gets its own precomputed table, making both halves fixed-base.
 * Building it costs about 25 ms and 150 KB; each verification then costs about
 * half of ECDSA_do_verify. Everything here reads public data only. */
typedef struct shim_es256_key {
    EC_GROUP *curve;  /* P-256, generator G (OpenSSL's built-in table) */
    EC_GROUP *key;    /* P-256, generator Q, with a table of its own */
} shim_es256_key;

static inline void shim_es256_key_free(shim_es256_key *k) {
    if (!k) return;
    EC_GROUP_free(k->curve);
    EC_GROUP_free(k->key);
    OPENSSL_free(k);
}

/* NULL when the key is not P-256 or memory ran out. */
static inline shim_es256_key *shim_es256_key_new(const EVP_PKEY *pkey) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    const EC_KEY *ec = EVP_PKEY_get0_EC_KEY(pkey);
    if (!ec || !EC_KEY_get0_group(ec) || EC_GROUP_get_curve_name(EC_KEY_get0_group(ec)) != NID_X9_62_prime256v1)
        return NULL;
    shim_es256_key *k = OPENSSL_zalloc(sizeof *k);
    if (!k) return NULL;
    k->curve = EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1);
    k->key = k->curve ? EC_GROUP_dup(k->curve) : NULL;
    if (!k->key || EC_GROUP_set_generator(k->key, EC_KEY_get0_public_key(ec), EC_GROUP_get0_order(k->curve),
                                          EC_GROUP_get0_cofactor(k->curve)) != 1 ||
        EC_GROUP_precompute_mult(k->key, NULL) != 1) {
        shim_es256_key_free(k);
        return NULL;
    }
#pragma GCC diagnostic pop
    return k;
}

/* 1 valid, 0 not, -2 out of memory. r and s outside [1, n-1] are invalid. `ctx`:
 * scratch space the caller keeps (see shim_rsa_public), used between BN_CTX_start
 * and BN_CTX_end only. */
static inline int shim_es256_key_verify(const shim_es256_key *k, BN_CTX *ctx, const unsigned char *digest,
                                        const unsigned char *signature) {
    int result = -2;
    const BIGNUM *n = EC_GROUP_get0_order(k->curve);
    EC_POINT *sum = EC_POINT_new(k->curve), *keyed = EC_POINT_new(k->key);
    if (!sum || !keyed) goto done;
    BN_CTX_start(ctx);
    BIGNUM *r = BN_CTX_get(ctx), *s = BN_CTX_get(ctx), *e = BN_CTX_get(ctx), *w = BN_CTX_get(ctx);
    BIGNUM *u1 = BN_CTX_get(ctx), *u2 = BN_CTX_get(ctx), *x = BN_CTX_get(ctx);
    if (!x || !BN_bin2bn(signature, 32, r) || !BN_bin2bn(signature + 32, 32, s) || !BN_bin2bn(digest, 32, e)) goto end;
    result = 0;
    if (BN_is_zero(r) || BN_cmp(r, n) >= 0 || BN_is_zero(s) || BN_cmp(s, n) >= 0) goto end;
    result = -2;
    if (!BN_mod_inverse(w, s, n, ctx) || !BN_mod_mul(u1, e, w, n, ctx) || !BN_mod_mul(u2, r, w, n, ctx)) goto end;
    if (EC_POINT_mul(k->curve, sum, u1, NULL, NULL, ctx) != 1 || EC_POINT_mul(k->key, keyed, u2, NULL, NULL, ctx) != 1 ||
        EC_POINT_add(k->curve, sum, sum, keyed, ctx) != 1)
        goto end;
    result = 0;
    if (EC_POINT_is_at_infinity(k->curve, sum)) goto end;
    if (EC_POINT_get_affine_coordinates(k->curve, sum, x, NULL, ctx) != 1 || !BN_nnmod(x, x, n, ctx)) {
        result = -2;
        goto end;
    }
    result = BN_cmp(x, r) == 0 ? 1 : 0;
end:
    BN_CTX_end(ctx);
done:
    EC_POINT_free(sum);
    EC_POINT_free(keyed);
    return result;
}
/* A PKCS #8 PEM private key ("BEGIN PRIVATE KEY", as App Store Connect hands out
 * in-app purchase keys), or NULL. 1 in *is_p256 when it is an EC key on P-256. */
static inline EVP_PKEY *shim_private_key_from_pem(const void *pem, int length, int *is_p256) {
    BIO *bio = BIO_new_mem_buf(pem, length);
    EVP_PKEY *key = bio ? PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL) : NULL;
    BIO_free(bio);
    *is_p256 = 0;
    if (key && EVP_PKEY_get_base_id(key) == EVP_PKEY_EC) {
        char group[64];
        size_t length_out = 0;
        *is_p256 = EVP_PKEY_get_group_name(key, group, sizeof group, &length_out) == 1 &&
                   strcmp(group, "prime256v1") == 0;
    }
    return key;
}

/* ES256 signature of a SHA-256 digest with a P-256 private key, written as r||s
 * (32 bytes each) into out. 1 on success, 0 on failure. */
static inline int shim_es256_sign_digest(EVP_PKEY *key, const unsigned char *digest, unsigned char *out) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    const EC_KEY *ec = EVP_PKEY_get0_EC_KEY(key);
    ECDSA_SIG *sig = ec ? ECDSA_do_sign(digest, 32, (EC_KEY *)ec) : NULL;
#pragma GCC diagnostic pop
    if (!sig) return 0;
    const BIGNUM *r = NULL, *s = NULL;
    ECDSA_SIG_get0(sig, &r, &s);
    int ok = BN_bn2binpad(r, out, 32) == 32 && BN_bn2binpad(s, out + 32, 32) == 32;
    ECDSA_SIG_free(sig);
    return ok;
}
/* ---------------------------------------------------------------- OCSP (RFC 6960) */

/* The first OCSP responder URL of a certificate's Authority Information Access,
 * copied NUL-terminated into out; 0 when it names none or it does not fit. */
static inline int shim_ocsp_responder_url(X509 *certificate, char *out, int size) {
    STACK_OF(OPENSSL_STRING) *urls = X509_get1_ocsp(certificate);
    int ok = 0;
    if (urls && sk_OPENSSL_STRING_num(urls) > 0) {
        const char *url = sk_OPENSSL_STRING_value(urls, 0);
        if (url && (int)strlen(url) < size) {
            strcpy(out, url);
            ok = 1;
        }
    }
    X509_email_free(urls);
    return ok;
}

/* The DER of an OCSP request for `certificate` issued by `issuer` (CertID with
 * SHA-1, as RFC 5019 responders expect), with a nonce when one is given, and the
 * DER of the CertID alone (a cache key). Each output is OPENSSL_malloc'd; 1 on success. */
static inline int shim_ocsp_request(X509 *certificate, X509 *issuer, const unsigned char *nonce, int nonce_length,
                                    unsigned char **request_der, int *request_length,
                                    unsigned char **id_der, int *id_length) {
    OCSP_CERTID *id = OCSP_cert_to_id(EVP_sha1(), certificate, issuer);
    if (!id) return 0;
    *id_der = NULL;
    *id_length = i2d_OCSP_CERTID(id, id_der);
    OCSP_REQUEST *request = OCSP_REQUEST_new();
    int ok = request && *id_length > 0 && OCSP_request_add0_id(request, id) != NULL;
    if (!ok) {
        OCSP_CERTID_free(id);
    } else if (nonce_length > 0) {
        ok = OCSP_request_add1_nonce(request, (unsigned char *)nonce, nonce_length) == 1;
    }
    *request_der = NULL;
    *request_length = ok ? i2d_OCSP_REQUEST(request, request_der) : 0;
    OCSP_REQUEST_free(request);
    return ok && *request_length > 0;
}

static inline long long shim_asn1_time_epoch(const ASN1_GENERALIZEDTIME *time) {
    struct tm parts;
    if (!time || ASN1_TIME_to_tm(time, &parts) != 1) return -1;
    return (long long)timegm(&parts);
}

/* What an OCSP answer says of one CertID, after every check: */
enum {
    SHIM_OCSP_OK = 0,
    SHIM_OCSP_MALFORMED = 1,     /* not an OCSPResponse */
    SHIM_OCSP_UNSUCCESSFUL = 2,  /* responseStatus other than successful (status in *reason) */
    SHIM_OCSP_NOT_BASIC = 3,     /* no BasicOCSPResponse */
    SHIM_OCSP_BAD_SIGNATURE = 4, /* not signed by the issuer or its delegated OCSP signer */
    SHIM_OCSP_NONCE = 5,         /* the nonce sent is absent or different */
    SHIM_OCSP_NO_STATUS = 6,     /* no SingleResponse for this CertID */
    SHIM_OCSP_BAD_TIME = 7,      /* thisUpdate or nextUpdate unreadable */
    SHIM_OCSP_TOO_MANY_CERTIFICATES = 8 /* more certificates than SHIM_OCSP_MAX_CERTIFICATES */
};

/* Reads and checks one OCSP answer for `id_der` (a CertID made by shim_ocsp_request):
 * the signer must be `issuer`, or a certificate issued by it with the OCSP-signing
 * extended key usage (OCSP_basic_verify's rule), chained to `anchor` at `now`;
 * `nonce`, when given, must come back. Fills the certificate's status
 * (V_OCSP_CERTSTATUS_*), revocation reason and instant, thisUpdate and nextUpdate
 * (-1 when absent). Dates are checked by the caller. */
#define SHIM_OCSP_MAX_CERTIFICATES 4

static inline int shim_ocsp_check(const unsigned char *answer, long length, const unsigned char *id_der, long id_length,
                                  X509 *issuer, STACK_OF(X509) *chain, X509 *anchor, long long now,
                                  const unsigned char *nonce, int nonce_length, int *status, int *reason,
                                  long long *revoked_at, long long *this_update, long long *next_update) {
    const unsigned char *cursor = answer;
    OCSP_RESPONSE *response = d2i_OCSP_RESPONSE(NULL, &cursor, length);
    if (!response || cursor != answer + length) { OCSP_RESPONSE_free(response); return SHIM_OCSP_MALFORMED; }
    int result = SHIM_OCSP_OK;
    OCSP_BASICRESP *basic = NULL;
    OCSP_CERTID *id = NULL;
    X509_STORE *store = NULL;
    int response_status = OCSP_response_status(response);
    if (response_status != OCSP_RESPONSE_STATUS_SUCCESSFUL) { *reason = response_status; result = SHIM_OCSP_UNSUCCESSFUL; goto done; }
    basic = OCSP_response_get1_basic(response);
    if (!basic) { result = SHIM_OCSP_NOT_BASIC; goto done; }
    /* A responder sends its own certificate, perhaps its issuer: path building over
       thousands of look-alikes would cost a signature check each. */
    if (sk_X509_num(OCSP_resp_get0_certs(basic)) > SHIM_OCSP_MAX_CERTIFICATES) {
        result = SHIM_OCSP_TOO_MANY_CERTIFICATES;
        goto done;
    }
    store = X509_STORE_new();
    if (!store || X509_STORE_add_cert(store, anchor) != 1) { result = SHIM_OCSP_BAD_SIGNATURE; goto done; }
    X509_VERIFY_PARAM *param = X509_STORE_get0_param(store);
    X509_VERIFY_PARAM_set_time(param, (time_t)now);
    /* The issuer and its chain are the only certificates besides the answer's own;
     * nothing comes from a system store. */
    if (OCSP_basic_verify(basic, chain, store, 0) != 1) { result = SHIM_OCSP_BAD_SIGNATURE; goto done; }
    if (nonce_length > 0) {
        OCSP_REQUEST *sent = OCSP_REQUEST_new();
        int same = sent && OCSP_request_add1_nonce(sent, (unsigned char *)nonce, nonce_length) == 1 &&
                   OCSP_check_nonce(sent, basic) == 1;
        OCSP_REQUEST_free(sent);
        if (!same) { result = SHIM_OCSP_NONCE; goto done; }
    }
    const unsigned char *id_cursor = id_der;
    id = d2i_OCSP_CERTID(NULL, &id_cursor, id_length);
    ASN1_GENERALIZEDTIME *revoked = NULL, *this_time = NULL, *next_time = NULL;
    if (!id || OCSP_resp_find_status(basic, id, status, reason, &revoked, &this_time, &next_time) != 1) {
        result = SHIM_OCSP_NO_STATUS;
        goto done;
    }
    *revoked_at = revoked ? shim_asn1_time_epoch(revoked) : -1;
    *this_update = shim_asn1_time_epoch(this_time);
    *next_update = next_time ? shim_asn1_time_epoch(next_time) : -1;
    if (*this_update < 0 || (next_time && *next_update < 0)) result = SHIM_OCSP_BAD_TIME;
    (void)issuer;
done:
    OCSP_CERTID_free(id);
    X509_STORE_free(store);
    OCSP_BASICRESP_free(basic);
    OCSP_RESPONSE_free(response);
    return result;
}
#endif

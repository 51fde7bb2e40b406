#ifndef RECEIPT_COPENSSL_SHIM_H
#define RECEIPT_COPENSSL_SHIM_H
#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/pem.h>
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

/* RSA PKCS #1 v1.5 verification of a digest with an EVP_PKEY's RSA key. The
 * low-level RSA_verify is deprecated in OpenSSL 3, but EVP_DigestVerify builds a
 * provider context on every call, which costs as much as a warm verification.
 * Returns 1 when the signature is valid. */
static inline int shim_rsa_verify_digest(int digest_nid, const unsigned char *digest, unsigned digest_length,
                                         const unsigned char *signature, unsigned signature_length,
                                         const EVP_PKEY *key) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    const RSA *rsa = EVP_PKEY_get0_RSA(key);
    int result = rsa ? RSA_verify(digest_nid, digest, digest_length, signature, signature_length, (RSA *)rsa) : -1;
#pragma GCC diagnostic pop
    return result;
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
#endif

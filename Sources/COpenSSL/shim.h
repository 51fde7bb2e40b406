#ifndef RECEIPT_COPENSSL_SHIM_H
#define RECEIPT_COPENSSL_SHIM_H
#include <openssl/crypto.h>
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
#endif

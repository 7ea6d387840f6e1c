/* Declarations shared by openssl.go (cgo preamble) and openssl.c. */
#ifndef STUPIDGCM_H
#define STUPIDGCM_H

#include <stddef.h>
#include <stdint.h>

/* Algorithms. */
#define STUPID_AES256GCM 0
#define STUPID_CHACHA20POLY1305 1
#define STUPID_XCHACHA20POLY1305 2

/* Results of the single-message calls. */
#define STUPID_OK 0
#define STUPID_AUTH 1 /* tag mismatch: output was zeroed */
#define STUPID_ERR 2  /* OpenSSL failed for another reason */

/* Batch calls return the index of the failing block, or one of these. */
#define STUPID_BATCH_OK (-1)
#define STUPID_BATCH_ERR (-2)

uintptr_t stupid_fetch(int alg);
void stupid_cipher_free(uintptr_t cipher);
void stupid_ctx_free(uintptr_t ctx);

int stupid_seal(uintptr_t *slot, uintptr_t cipher, int alg, const uint8_t *key,
                const uint8_t *nonce, const uint8_t *in, size_t len,
                const uint8_t *ad, size_t adlen, uint8_t *out);

int stupid_open(uintptr_t *slot, uintptr_t cipher, int alg, const uint8_t *key,
                const uint8_t *nonce, const uint8_t *in, size_t len,
                const uint8_t *tag, const uint8_t *ad, size_t adlen,
                uint8_t *out);

int64_t stupid_seal_batch(uintptr_t *slot, uintptr_t cipher, int alg,
                          const uint8_t *key, const uint8_t *nonces,
                          size_t nonce_len, const uint8_t *in, size_t in_len,
                          size_t bs, uint64_t first, const uint8_t *fid,
                          size_t fid_len, uint8_t *out);

int64_t stupid_open_batch(uintptr_t *slot, uintptr_t cipher, int alg,
                          const uint8_t *key, size_t nonce_len,
                          const uint8_t *in, size_t in_len, size_t bs,
                          uint64_t first, const uint8_t *fid, size_t fid_len,
                          uint8_t *out);

void stupid_hchacha20(uint8_t out[32], const uint8_t key[32],
                      const uint8_t nonce[16]);

#endif

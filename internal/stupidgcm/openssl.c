//go:build !without_openssl && cgo

/*
 * The whole of one AEAD operation (or of one batch of them) happens in a
 * single call from Go, because a cgo call costs far more than an EVP call.
 * Contexts are keyed once and kept by the Go side in *slot; a NULL slot
 * pointer means "create and free a context for this call only", which the
 * benchmarks use to measure what the pool saves.
 */

#include "stupidgcm.h"

#include <limits.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>

#define TAG_LEN 16
/* EVP takes int lengths; feed longer inputs in 1 GiB pieces (a multiple of
 * the ChaCha20 block size, so the keystream continues seamlessly). */
#define CHUNK ((size_t)1 << 30)

uintptr_t stupid_fetch(int alg) {
  const char *name =
      alg == STUPID_AES256GCM ? "AES-256-GCM" : "ChaCha20-Poly1305";
  return (uintptr_t)EVP_CIPHER_fetch(NULL, name, NULL);
}

void stupid_cipher_free(uintptr_t cipher) {
  EVP_CIPHER_free((EVP_CIPHER *)cipher);
}

void stupid_ctx_free(uintptr_t ctx) {
  /* Frees the provider context with OPENSSL_clear_free, which wipes the
   * expanded key. */
  EVP_CIPHER_CTX_free((EVP_CIPHER_CTX *)ctx);
}

static uint32_t load32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
         (uint32_t)p[3] << 24;
}

static void store32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
  p[2] = (uint8_t)(v >> 16);
  p[3] = (uint8_t)(v >> 24);
}

#define ROTL(v, n) (((v) << (n)) | ((v) >> (32 - (n))))
#define QR(a, b, c, d)                                                       \
  do {                                                                       \
    a += b; d ^= a; d = ROTL(d, 16);                                         \
    c += d; b ^= c; b = ROTL(b, 12);                                         \
    a += b; d ^= a; d = ROTL(d, 8);                                          \
    c += d; b ^= c; b = ROTL(b, 7);                                          \
  } while (0)

/* HChaCha20 (draft-irtf-cfrg-xchacha section 2.2): the ChaCha20 core on
 * key and a 16-byte nonce, without the final addition, keeping words 0..3
 * and 12..15. OpenSSL does not export it. */
void stupid_hchacha20(uint8_t out[32], const uint8_t key[32],
                      const uint8_t nonce[16]) {
  uint32_t x[16];
  int i;
  x[0] = 0x61707865;
  x[1] = 0x3320646e;
  x[2] = 0x79622d32;
  x[3] = 0x6b206574;
  for (i = 0; i < 8; i++) x[4 + i] = load32(key + 4 * i);
  for (i = 0; i < 4; i++) x[12 + i] = load32(nonce + 4 * i);
  for (i = 0; i < 10; i++) {
    QR(x[0], x[4], x[8], x[12]);
    QR(x[1], x[5], x[9], x[13]);
    QR(x[2], x[6], x[10], x[14]);
    QR(x[3], x[7], x[11], x[15]);
    QR(x[0], x[5], x[10], x[15]);
    QR(x[1], x[6], x[11], x[12]);
    QR(x[2], x[7], x[8], x[13]);
    QR(x[3], x[4], x[9], x[14]);
  }
  for (i = 0; i < 4; i++) {
    store32(out + 4 * i, x[i]);
    store32(out + 16 + 4 * i, x[12 + i]);
  }
  OPENSSL_cleanse(x, sizeof(x));
}

/* new_ctx returns a context with the cipher selected and, except for
 * XChaCha20 (whose key changes with every nonce), keyed. */
static EVP_CIPHER_CTX *new_ctx(const EVP_CIPHER *cipher, int alg,
                               const uint8_t *key) {
  EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
  if (ctx == NULL) return NULL;
  if (!EVP_CipherInit_ex(ctx, cipher, NULL, NULL, NULL, 1)) goto fail;
  switch (alg) {
    case STUPID_AES256GCM:
      if (!EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_IVLEN, 16, NULL))
        goto fail;
      /* fall through */
    case STUPID_CHACHA20POLY1305:
      if (!EVP_CipherInit_ex(ctx, NULL, NULL, key, NULL, -1)) goto fail;
  }
  return ctx;
fail:
  EVP_CIPHER_CTX_free(ctx);
  return NULL;
}

/* get_ctx takes the pooled context from *slot, creating it on first use. */
static EVP_CIPHER_CTX *get_ctx(uintptr_t *slot, uintptr_t cipher, int alg,
                               const uint8_t *key) {
  EVP_CIPHER_CTX *ctx;
  if (slot != NULL && *slot != 0) return (EVP_CIPHER_CTX *)*slot;
  ctx = new_ctx((const EVP_CIPHER *)cipher, alg, key);
  if (slot != NULL) *slot = (uintptr_t)ctx;
  return ctx;
}

/* put_ctx ends a call: a throw-away context is freed, and so is a pooled
 * one after an internal error, since its state is then unknown. Failures
 * leave entries in OpenSSL's per-thread error queue; clear them so that
 * later, unrelated OpenSSL users on this thread do not see stale errors. */
static void put_ctx(uintptr_t *slot, EVP_CIPHER_CTX *ctx, int rc) {
  if (rc != STUPID_OK) ERR_clear_error();
  if (slot == NULL) {
    EVP_CIPHER_CTX_free(ctx);
  } else if (rc == STUPID_ERR) {
    EVP_CIPHER_CTX_free(ctx);
    *slot = 0;
  }
}

static int update(EVP_CIPHER_CTX *ctx, uint8_t *out, const uint8_t *in,
                  size_t len) {
  int outl;
  while (len > 0) {
    size_t n = len < CHUNK ? len : CHUNK;
    if (!EVP_CipherUpdate(ctx, out, &outl, in, (int)n)) return 0;
    if (out != NULL) out += n;
    in += n;
    len -= n;
  }
  return 1;
}

/* one performs a single AEAD operation on a prepared context. For
 * decryption, tag is the expected tag and out is wiped on any failure. */
static int one(EVP_CIPHER_CTX *ctx, int alg, int enc, const uint8_t *key,
               const uint8_t *nonce, const uint8_t *ad1, size_t ad1len,
               const uint8_t *ad2, size_t ad2len, const uint8_t *in,
               uint8_t *out, size_t len, uint8_t *tag) {
  uint8_t subkey[32], iv[12], tagbuf[TAG_LEN], fin[32];
  const uint8_t *k = NULL;
  int outl, rc = STUPID_ERR;

  if (alg == STUPID_XCHACHA20POLY1305) {
    stupid_hchacha20(subkey, key, nonce);
    memset(iv, 0, 4);
    memcpy(iv + 4, nonce + 16, 8);
    k = subkey;
    nonce = iv;
  }
  if (!EVP_CipherInit_ex(ctx, NULL, NULL, k, nonce, enc)) goto out;
  if (!enc) {
    /* Copy first: in-place callers may overwrite the tag's memory. */
    memcpy(tagbuf, tag, TAG_LEN);
    if (!EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, TAG_LEN, tagbuf))
      goto out;
  }
  if (ad1len > 0 && !update(ctx, NULL, ad1, ad1len)) goto out;
  if (ad2len > 0 && !update(ctx, NULL, ad2, ad2len)) goto out;
  if (len > 0 && !update(ctx, out, in, len)) goto out;
  if (EVP_CipherFinal_ex(ctx, fin, &outl) <= 0) {
    /* For decryption a failing final is the tag check. */
    rc = enc ? STUPID_ERR : STUPID_AUTH;
    goto out;
  }
  if (enc && !EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, TAG_LEN, tag))
    goto out;
  rc = STUPID_OK;
out:
  if (alg == STUPID_XCHACHA20POLY1305) OPENSSL_cleanse(subkey, sizeof(subkey));
  if (rc != STUPID_OK && len > 0) OPENSSL_cleanse(out, len);
  return rc;
}

int stupid_seal(uintptr_t *slot, uintptr_t cipher, int alg, const uint8_t *key,
                const uint8_t *nonce, const uint8_t *in, size_t len,
                const uint8_t *ad, size_t adlen, uint8_t *out) {
  int rc;
  EVP_CIPHER_CTX *ctx = get_ctx(slot, cipher, alg, key);
  if (ctx == NULL) return STUPID_ERR;
  rc = one(ctx, alg, 1, key, nonce, ad, adlen, NULL, 0, in, out, len,
           out + len);
  put_ctx(slot, ctx, rc);
  return rc;
}

int stupid_open(uintptr_t *slot, uintptr_t cipher, int alg, const uint8_t *key,
                const uint8_t *nonce, const uint8_t *in, size_t len,
                const uint8_t *tag, const uint8_t *ad, size_t adlen,
                uint8_t *out) {
  int rc;
  EVP_CIPHER_CTX *ctx = get_ctx(slot, cipher, alg, key);
  if (ctx == NULL) {
    if (len > 0) OPENSSL_cleanse(out, len);
    return STUPID_ERR;
  }
  rc = one(ctx, alg, 0, key, nonce, ad, adlen, NULL, 0, in, out, len,
           (uint8_t *)tag);
  put_ctx(slot, ctx, rc);
  return rc;
}

static int overlap(const uint8_t *a, size_t alen, const uint8_t *b,
                   size_t blen) {
  return alen > 0 && blen > 0 && a < b + blen && b < a + alen;
}

static void be64(uint8_t *p, uint64_t v) {
  int i;
  for (i = 7; i >= 0; i--) {
    p[i] = (uint8_t)v;
    v >>= 8;
  }
}

/* Block i of the output is nonce_i || C_i || tag_i at i*(nonce_len+bs+16).
 * When out starts exactly at in (in-place use), output block i lies at or
 * after input block i, so going backwards never overwrites input that is
 * still needed; each block is first moved to its final place. */
int64_t stupid_seal_batch(uintptr_t *slot, uintptr_t cipher, int alg,
                          const uint8_t *key, const uint8_t *nonces,
                          size_t nonce_len, const uint8_t *in, size_t in_len,
                          size_t bs, uint64_t first, const uint8_t *fid,
                          size_t fid_len, uint8_t *out) {
  size_t nblocks = (in_len + bs - 1) / bs, cbs = nonce_len + bs + TAG_LEN, i;
  uint8_t aad[8];
  EVP_CIPHER_CTX *ctx;

  if (nblocks == 0) return STUPID_BATCH_OK;
  ctx = get_ctx(slot, cipher, alg, key);
  if (ctx == NULL) return STUPID_BATCH_ERR;
  for (i = nblocks; i-- > 0;) {
    size_t n = i == nblocks - 1 ? in_len - i * bs : bs;
    const uint8_t *src = in + i * bs;
    uint8_t *dn = out + i * cbs, *dd = dn + nonce_len;
    if (src != dd && overlap(src, n, dn, nonce_len + n + TAG_LEN)) {
      memmove(dd, src, n);
      src = dd;
    }
    memcpy(dn, nonces + i * nonce_len, nonce_len);
    be64(aad, first + i);
    if (one(ctx, alg, 1, key, dn, aad, 8, fid, fid_len, src, dd, n, dd + n) !=
        STUPID_OK) {
      put_ctx(slot, ctx, STUPID_ERR);
      return STUPID_BATCH_ERR;
    }
  }
  put_ctx(slot, ctx, STUPID_OK);
  return STUPID_BATCH_OK;
}

/* Output block i lies at i*bs, at or before its input block, so going
 * forwards is safe in place; nonce and tag are copied out before the
 * ciphertext is moved over them. Returns the index of the first block that
 * fails authentication (its output wiped, earlier blocks decrypted). */
int64_t stupid_open_batch(uintptr_t *slot, uintptr_t cipher, int alg,
                          const uint8_t *key, size_t nonce_len,
                          const uint8_t *in, size_t in_len, size_t bs,
                          uint64_t first, const uint8_t *fid, size_t fid_len,
                          uint8_t *out) {
  size_t cbs = nonce_len + bs + TAG_LEN, nblocks = (in_len + cbs - 1) / cbs, i;
  uint8_t aad[8], nonce[24], tag[TAG_LEN];
  EVP_CIPHER_CTX *ctx;
  int rc;

  if (nblocks == 0) return STUPID_BATCH_OK;
  ctx = get_ctx(slot, cipher, alg, key);
  if (ctx == NULL) return STUPID_BATCH_ERR;
  for (i = 0; i < nblocks; i++) {
    const uint8_t *src = in + i * cbs, *sd = src + nonce_len;
    size_t n = i == nblocks - 1 ? in_len - i * cbs - nonce_len - TAG_LEN : bs;
    uint8_t *dst = out + i * bs;
    memcpy(nonce, src, nonce_len);
    memcpy(tag, sd + n, TAG_LEN);
    if (sd != dst && overlap(dst, n, src, nonce_len + n + TAG_LEN)) {
      memmove(dst, sd, n);
      sd = dst;
    }
    be64(aad, first + i);
    rc = one(ctx, alg, 0, key, nonce, aad, 8, fid, fid_len, sd, dst, n, tag);
    if (rc != STUPID_OK) {
      put_ctx(slot, ctx, rc);
      return rc == STUPID_AUTH ? (int64_t)i : STUPID_BATCH_ERR;
    }
  }
  put_ctx(slot, ctx, STUPID_OK);
  return STUPID_BATCH_OK;
}

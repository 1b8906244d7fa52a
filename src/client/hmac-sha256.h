/*
 * SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104) for the hook client, which must prove nothing to a
 * crypto library: none is guaranteed on a user's machine. Included by reins-hook.c (one translation unit,
 * so `reins init` still compiles one file). Tested against node:crypto in test/client-hmac.test.ts.
 */
#ifndef REINS_HMAC_SHA256_H
#define REINS_HMAC_SHA256_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct sha256 {
  uint32_t state[8];
  uint64_t bits; /* message length so far, in bits */
  unsigned char block[64];
  size_t used; /* bytes waiting in block */
};

static const uint32_t SHA256_K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

#define SHA256_ROTR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

/* One 64-byte block into the state (FIPS 180-4, 6.2.2). */
static void sha256_block(uint32_t state[8], const unsigned char *p) {
  uint32_t w[64];
  for (int t = 0; t < 16; t++)
    w[t] = (uint32_t)p[4 * t] << 24 | (uint32_t)p[4 * t + 1] << 16 | (uint32_t)p[4 * t + 2] << 8 |
           (uint32_t)p[4 * t + 3];
  for (int t = 16; t < 64; t++) {
    uint32_t s0 = SHA256_ROTR(w[t - 15], 7) ^ SHA256_ROTR(w[t - 15], 18) ^ (w[t - 15] >> 3);
    uint32_t s1 = SHA256_ROTR(w[t - 2], 17) ^ SHA256_ROTR(w[t - 2], 19) ^ (w[t - 2] >> 10);
    w[t] = w[t - 16] + s0 + w[t - 7] + s1;
  }
  uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
  uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
  for (int t = 0; t < 64; t++) {
    uint32_t t1 = h + (SHA256_ROTR(e, 6) ^ SHA256_ROTR(e, 11) ^ SHA256_ROTR(e, 25)) + ((e & f) ^ (~e & g)) +
                  SHA256_K[t] + w[t];
    uint32_t t2 = (SHA256_ROTR(a, 2) ^ SHA256_ROTR(a, 13) ^ SHA256_ROTR(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    h = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  state[0] += a;
  state[1] += b;
  state[2] += c;
  state[3] += d;
  state[4] += e;
  state[5] += f;
  state[6] += g;
  state[7] += h;
}

static void sha256_init(struct sha256 *s) {
  static const uint32_t initial[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                      0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  memcpy(s->state, initial, sizeof initial);
  s->bits = 0;
  s->used = 0;
}

static void sha256_update(struct sha256 *s, const void *data, size_t length) {
  const unsigned char *p = data;
  s->bits += (uint64_t)length * 8;
  if (s->used > 0) {
    size_t take = 64 - s->used < length ? 64 - s->used : length;
    memcpy(s->block + s->used, p, take);
    s->used += take;
    p += take;
    length -= take;
    if (s->used < 64) return;
    sha256_block(s->state, s->block);
    s->used = 0;
  }
  for (; length >= 64; p += 64, length -= 64) sha256_block(s->state, p);
  memcpy(s->block, p, length);
  s->used = length;
}

/* Pads (a 1 bit, zeros, the length in bits as 64 bits big-endian: FIPS 180-4, 5.1.1) and writes the digest. */
static void sha256_final(struct sha256 *s, unsigned char digest[32]) {
  uint64_t bits = s->bits;
  s->block[s->used++] = 0x80;
  if (s->used > 56) {
    memset(s->block + s->used, 0, 64 - s->used);
    sha256_block(s->state, s->block);
    s->used = 0;
  }
  memset(s->block + s->used, 0, 56 - s->used);
  for (int i = 0; i < 8; i++) s->block[56 + i] = (unsigned char)(bits >> (56 - 8 * i));
  sha256_block(s->state, s->block);
  for (int i = 0; i < 8; i++) {
    digest[4 * i] = (unsigned char)(s->state[i] >> 24);
    digest[4 * i + 1] = (unsigned char)(s->state[i] >> 16);
    digest[4 * i + 2] = (unsigned char)(s->state[i] >> 8);
    digest[4 * i + 3] = (unsigned char)s->state[i];
  }
}

/* HMAC-SHA256 over several parts, begun with the key: a key longer than a block is hashed first (RFC 2104). */
struct hmac_sha256 {
  struct sha256 inner;
  unsigned char outer_pad[64];
};

static void hmac_sha256_init(struct hmac_sha256 *h, const void *key, size_t key_length) {
  unsigned char block[64] = {0}, pad[64];
  if (key_length > 64) {
    struct sha256 s;
    sha256_init(&s);
    sha256_update(&s, key, key_length);
    sha256_final(&s, block);
  } else if (key_length > 0)
    memcpy(block, key, key_length);
  for (int i = 0; i < 64; i++) {
    pad[i] = block[i] ^ 0x36;
    h->outer_pad[i] = block[i] ^ 0x5c;
  }
  sha256_init(&h->inner);
  sha256_update(&h->inner, pad, 64);
}

static void hmac_sha256_update(struct hmac_sha256 *h, const void *data, size_t length) {
  sha256_update(&h->inner, data, length);
}

/* Writes the MAC as 64 lower-case hex digits and a NUL. */
static void hmac_sha256_hex(struct hmac_sha256 *h, char hex[65]) {
  static const char digits[] = "0123456789abcdef";
  unsigned char inner[32], mac[32];
  struct sha256 outer;
  sha256_final(&h->inner, inner);
  sha256_init(&outer);
  sha256_update(&outer, h->outer_pad, 64);
  sha256_update(&outer, inner, 32);
  sha256_final(&outer, mac);
  for (int i = 0; i < 32; i++) {
    hex[2 * i] = digits[mac[i] >> 4];
    hex[2 * i + 1] = digits[mac[i] & 15];
  }
  hex[64] = '\0';
}

#endif

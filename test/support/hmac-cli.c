/*
 * A test driver for src/client/hmac-sha256.h: `hmac-cli sha <chunk>` prints the SHA-256 of stdin,
 * `hmac-cli hmac <chunk> <key-file>` its HMAC-SHA256 under the key file's bytes; stdin is fed to the hash
 * `chunk` bytes per update, so the tests reach every way a block boundary can fall.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "../../src/client/hmac-sha256.h"

static unsigned char *slurp(FILE *file, size_t *length) {
  size_t size = 4096, used = 0, n;
  unsigned char *data = malloc(size);
  while (data != NULL && (n = fread(data + used, 1, size - used, file)) > 0)
    if ((used += n) == size) data = realloc(data, size *= 2);
  *length = used;
  return data;
}

int main(int argc, char **argv) {
  if (argc < 3) return 2;
  size_t chunk = (size_t)strtoul(argv[2], NULL, 10), length, key_length = 0;
  if (chunk == 0) chunk = 1;
  unsigned char *message = slurp(stdin, &length), *key = NULL;
  if (message == NULL) return 2;
  char hex[65];
  if (argv[1][0] == 's') {
    static const char digits[] = "0123456789abcdef";
    struct sha256 s;
    unsigned char digest[32];
    sha256_init(&s);
    for (size_t i = 0; i < length; i += chunk) sha256_update(&s, message + i, length - i < chunk ? length - i : chunk);
    sha256_final(&s, digest);
    for (int i = 0; i < 32; i++) {
      hex[2 * i] = digits[digest[i] >> 4];
      hex[2 * i + 1] = digits[digest[i] & 15];
    }
    hex[64] = '\0';
  } else {
    if (argc < 4) return 2;
    FILE *file = fopen(argv[3], "rb");
    if (file == NULL) return 2;
    key = slurp(file, &key_length);
    fclose(file);
    struct hmac_sha256 h;
    hmac_sha256_init(&h, key, key_length);
    for (size_t i = 0; i < length; i += chunk)
      hmac_sha256_update(&h, message + i, length - i < chunk ? length - i : chunk);
    hmac_sha256_hex(&h, hex);
  }
  printf("%s\n", hex);
  free(message);
  free(key);
  return 0;
}

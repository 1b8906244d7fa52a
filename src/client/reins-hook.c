/*
 * reins-hook: the command-hook client. It forwards one hook call (JSON on stdin) to the user's reins hook
 * daemon over its Unix socket and prints the reply, without starting Node. The daemon answers for every
 * project of the user; the call names its project (the root found as reins finds it) and is signed with
 * the project's hook secret (the secret itself never leaves this process). The daemon signs its answer with
 * the user's daemon key (<runtime>/daemon.key, which the agent's boundary keeps it from reading) over this
 * call's fresh nonce; an answer without that proof is never printed (docs/daemon-proof.md). When no daemon
 * answers, or one answers without proof, the client hands the input to `reins hook <agent>` in-process,
 * which also starts the daemon in the background (and records the unproven answer), so a call is never left
 * unguarded.
 *
 * usage: reins-hook <agent> <node> <reins.js> <daemon-name>
 * The socket is <runtime>/<daemon-name>.sock, <runtime> being $REINS_RUNTIME_DIR, else $XDG_RUNTIME_DIR/reins,
 * else $HOME/.cache/reins/run (src/guard/daemon/paths.ts). `reins init` builds the client with the system C
 * compiler; without one, bin/reins-hook (sh + curl) does the same job more slowly.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <time.h>
#include <signal.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hmac-sha256.h"

extern char **environ;

/* The hook protocol version (src/guard/daemon/protocol.ts). */
#define PROTOCOL "2"

static char *read_all(int fd, size_t *length) {
  size_t size = 65536, used = 0;
  char *buffer = malloc(size);
  ssize_t n;
  while (buffer != NULL && (n = read(fd, buffer + used, size - used)) > 0) {
    used += (size_t)n;
    if (used == size) {
      char *bigger = realloc(buffer, size *= 2);
      if (bigger == NULL) free(buffer);
      buffer = bigger;
    }
  }
  *length = used;
  return buffer;
}

static int write_all(int fd, const char *data, size_t length) {
  while (length > 0) {
    ssize_t n = write(fd, data, length);
    if (n <= 0) return -1;
    data += n;
    length -= (size_t)n;
  }
  return 0;
}

/* A growing string. */
struct text {
  char *data;
  size_t length, size;
};

static int append(struct text *t, const char *data, size_t length) {
  if (t->length + length + 1 > t->size) {
    size_t size = t->size == 0 ? 1024 : t->size;
    while (t->length + length + 1 > size) size *= 2;
    char *bigger = realloc(t->data, size);
    if (bigger == NULL) return -1;
    t->data = bigger;
    t->size = size;
  }
  memcpy(t->data + t->length, data, length);
  t->length += length;
  t->data[t->length] = '\0';
  return 0;
}

static int append_str(struct text *t, const char *s) { return append(t, s, strlen(s)); }

/* Percent-encodes every byte outside A-Z a-z 0-9 - . _ ~ / (src/guard/daemon/protocol.ts, encodeHeaderValue). */
static int append_encoded(struct text *t, const char *s, size_t length) {
  static const char hex[] = "0123456789ABCDEF";
  for (size_t i = 0; i < length; i++) {
    unsigned char c = (unsigned char)s[i];
    int plain = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
                c == '.' || c == '_' || c == '~' || c == '/';
    char escaped[3] = {'%', hex[c >> 4], hex[c & 15]};
    if (plain ? append(t, (const char *)&c, 1) : append(t, escaped, 3)) return -1;
  }
  return 0;
}

static int exists(const char *dir, const char *name) {
  char path[PATH_MAX];
  struct stat st;
  if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path) return 0;
  return stat(path, &st) == 0;
}

/*
 * The project's root as reins finds it (src/base/config/load-policy.ts, findRoot): the nearest folder up from
 * `dir` holding reins.config.json, .reins or .git, else `dir` itself.
 */
static void find_root(const char *dir, char *root, size_t size) {
  char here[PATH_MAX];
  snprintf(here, sizeof here, "%s", dir);
  size_t n = strlen(here);
  while (n > 1 && here[n - 1] == '/') here[--n] = '\0';
  snprintf(root, size, "%s", here);
  for (;;) {
    if (exists(here, "reins.config.json") || exists(here, ".reins") || exists(here, ".git")) {
      snprintf(root, size, "%s", here);
      return;
    }
    char *slash = strrchr(here, '/');
    if (slash == NULL || strcmp(here, "/") == 0) return;
    if (slash == here) here[1] = '\0';
    else *slash = '\0';
  }
}

/* The folder the agent was started in, as the agent says it (src/guard/hooks/hook-call.ts, projectOf), else the cwd. */
static const char *project_dir(const char *agent, char *cwd, size_t size) {
  const char *dir = NULL;
  if (strcmp(agent, "claude") == 0) dir = getenv("CLAUDE_PROJECT_DIR");
  if (strcmp(agent, "copilot") == 0) dir = getenv("COPILOT_PROJECT_DIR");
  if (strcmp(agent, "gemini") == 0) {
    dir = getenv("GEMINI_PROJECT_DIR");
    if (dir == NULL) dir = getenv("CLAUDE_PROJECT_DIR");
  }
  if (strcmp(agent, "qwen") == 0) dir = getenv("QWEN_PROJECT_DIR");
  if (dir != NULL && dir[0] == '/') return dir;
  return getcwd(cwd, size);
}

/* The runtime folder (src/base/config/user-dirs.ts, runtimeDir); -1 when it does not fit. */
static int runtime_dir(char *path, size_t size) {
  const char *given = getenv("REINS_RUNTIME_DIR");
  const char *xdg = getenv("XDG_RUNTIME_DIR");
  const char *home = getenv("HOME");
  int n;
  if (given != NULL && given[0] != '\0') n = snprintf(path, size, "%s", given);
  else if (xdg != NULL && xdg[0] != '\0') n = snprintf(path, size, "%s/reins", xdg);
  else if (home != NULL && home[0] != '\0') n = snprintf(path, size, "%s/.cache/reins/run", home);
  else return -1;
  return n < 0 || (size_t)n >= size ? -1 : 0;
}

/* The user's daemon key (src/guard/daemon/key.ts): 64 hex digits in a file of this user's that no one else may
   read; -1 when there is none such (then no answer can be trusted). */
static int daemon_key(const char *runtime, char key[65]) {
  char path[PATH_MAX];
  struct stat st;
  if (snprintf(path, sizeof path, "%s/daemon.key", runtime) >= (int)sizeof path) return -1;
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t got = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == getuid() && (st.st_mode & 077) == 0
                    ? read(fd, key, 64)
                    : -1;
  close(fd);
  if (got != 64) return -1;
  key[64] = '\0';
  for (int i = 0; i < 64; i++)
    if (!((key[i] >= '0' && key[i] <= '9') || (key[i] >= 'a' && key[i] <= 'f'))) return -1;
  return 0;
}

/* A fresh nonce, `<unix seconds>-<32 hex digits>` from /dev/urandom (src/guard/daemon/protocol.ts, NONCE). */
static int fresh_nonce(char nonce[64]) {
  static const char digits[] = "0123456789abcdef";
  unsigned char random[16];
  int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t got = read(fd, random, sizeof random);
  close(fd);
  if (got != (ssize_t)sizeof random) return -1;
  int n = snprintf(nonce, 64, "%lld-", (long long)time(NULL));
  for (int i = 0; i < 16; i++) {
    nonce[n + 2 * i] = digits[random[i] >> 4];
    nonce[n + 2 * i + 1] = digits[random[i] & 15];
  }
  nonce[n + 32] = '\0';
  return 0;
}

/* Whether two strings of one length are equal, taking the same time wherever they differ. */
static int same(const char *a, const char *b, size_t length) {
  unsigned char diff = 0;
  for (size_t i = 0; i < length; i++) diff |= (unsigned char)(a[i] ^ b[i]);
  return diff == 0;
}

/* Whether a variable of the hook's environment is one of the project's (src/guard/daemon/protocol.ts). */
static int project_variable(const char *entry) {
  static const char *daemon[] = {"REINS_RUNTIME_DIR=", "REINS_DAEMON_IDLE=", "REINS_DAEMON_PROJECT_IDLE=",
                                 "REINS_PORT="};
  if (strncmp(entry, "REINS_", 6) != 0 || strchr(entry, '=') == NULL) return 0;
  for (size_t i = 0; i < sizeof daemon / sizeof *daemon; i++)
    if (strncmp(entry, daemon[i], strlen(daemon[i])) == 0) return 0;
  return 1;
}

/* ANSWERED: the daemon answered. AGAIN: no daemon answered as one (none there, a dead socket, a refusal):
   in-process, which starts one. UNPROVEN: something answered without the daemon key's proof: in-process,
   which records it and starts a daemon (which takes the socket back). PLAIN: no daemon can serve this
   call: in-process only. */
enum outcome { ANSWERED, AGAIN, UNPROVEN, PLAIN };

/* The value of the daemon's proof header in a reply's head (64 hex digits), or NULL. */
static const char *proof_of(const char *head, size_t length) {
  static const char header[] = "\r\nx-reins-proof: ";
  size_t n = sizeof header - 1;
  for (size_t i = 0; i + n + 64 <= length; i++)
    if (strncasecmp(head + i, header, n) == 0) return head + i + n;
  return NULL;
}

/* Whether the reply proves the daemon key: HMAC(key, nonce + "\n" + body), so no other program that
   answers 200 on the socket is ever taken for the daemon. */
static int proven(const char *key, const char *nonce, const char *head, size_t head_length, const char *body,
                  size_t body_length) {
  const char *given = proof_of(head, head_length);
  if (given == NULL) return 0;
  struct hmac_sha256 h;
  char want[65];
  hmac_sha256_init(&h, key, 64);
  hmac_sha256_update(&h, nonce, strlen(nonce));
  hmac_sha256_update(&h, "\n", 1);
  hmac_sha256_update(&h, body, body_length);
  hmac_sha256_hex(&h, want);
  char lower[64];
  for (int i = 0; i < 64; i++) lower[i] = (char)(given[i] >= 'A' && given[i] <= 'F' ? given[i] + 32 : given[i]);
  return same(lower, want, 64);
}

/* Builds the request's head: the root and env headers, and the call signed with the project's hook secret
   over the nonce, the agent, both headers and the body (src/guard/daemon/protocol.ts, callParts). */
static int request_head(struct text *head, const char *agent, const char *root, const char *secret,
                        const char *nonce, const char *input, size_t length) {
  struct text root_value = {0}, env_value = {0};
  int failed = append_encoded(&root_value, root, strlen(root)) || append_str(&root_value, "");
  int first = 1;
  for (char **entry = environ; *entry != NULL && !failed; entry++) {
    if (!project_variable(*entry)) continue;
    const char *eq = strchr(*entry, '=');
    failed = (!first && append_str(&env_value, "&")) || append_encoded(&env_value, *entry, (size_t)(eq - *entry)) ||
             append_str(&env_value, "=") || append_encoded(&env_value, eq + 1, strlen(eq + 1));
    first = 0;
  }
  failed = failed || append_str(&env_value, "");
  char mac[65] = {0}, line[512];
  if (!failed) {
    struct hmac_sha256 h;
    hmac_sha256_init(&h, secret, strlen(secret));
    const char *parts[] = {nonce, agent, root_value.data, env_value.data};
    for (int i = 0; i < 4; i++) {
      hmac_sha256_update(&h, parts[i], strlen(parts[i]));
      hmac_sha256_update(&h, "\n", 1);
    }
    hmac_sha256_update(&h, input, length);
    hmac_sha256_hex(&h, mac);
  }
  snprintf(line, sizeof line,
           "POST /hooks/%s HTTP/1.1\r\nHost: reins\r\nX-Reins-Protocol: " PROTOCOL
           "\r\nX-Reins-Nonce: %s\r\nX-Reins-Auth: %s\r\nX-Reins-Root: ",
           agent, nonce, mac);
  failed = failed || append_str(head, line) || append_str(head, root_value.data);
  if (!failed && env_value.length > 0) failed = append_str(head, "\r\nX-Reins-Env: ") || append_str(head, env_value.data);
  snprintf(line, sizeof line,
           "\r\nContent-Type: application/json\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n", length);
  failed = failed || append_str(head, line);
  free(root_value.data);
  free(env_value.data);
  return failed;
}

/* Asks the daemon; prints its reply and returns ANSWERED, or says why it could not. */
static enum outcome ask_daemon(const char *agent, const char *name, const char *input, size_t length) {
  char cwd[PATH_MAX], root[PATH_MAX], path[PATH_MAX + 32], secret[256], runtime[PATH_MAX], key[65], nonce[64];
  const char *dir = project_dir(agent, cwd, sizeof cwd);
  if (dir == NULL) return PLAIN;
  find_root(dir, root, sizeof root);
  snprintf(path, sizeof path, "%s/.reins/hook-secret", root);
  FILE *file = fopen(path, "r");
  if (file == NULL) return AGAIN; /* in-process makes the project's secret, and starts the daemon */
  size_t got = fread(secret, 1, sizeof secret - 1, file);
  fclose(file);
  while (got > 0 && (secret[got - 1] == '\n' || secret[got - 1] == '\r' || secret[got - 1] == ' ')) got--;
  secret[got] = '\0';
  if (runtime_dir(runtime, sizeof runtime) != 0) return PLAIN;
  /* No key: no daemon has started, or it was removed: in-process, which starts a daemon (that makes one). */
  if (daemon_key(runtime, key) != 0 || fresh_nonce(nonce) != 0) return AGAIN;

  struct sockaddr_un address = {0};
  address.sun_family = AF_UNIX;
  int n = snprintf(address.sun_path, sizeof address.sun_path, "%s/%s.sock", runtime, name);
  if (n < 0 || (size_t)n >= sizeof address.sun_path) return PLAIN;
  int sock = socket(AF_UNIX, SOCK_STREAM, 0);
  if (sock < 0) return PLAIN;
  struct timeval timeout = {10, 0};
  setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  setsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
  if (connect(sock, (struct sockaddr *)&address, sizeof address) != 0) {
    close(sock);
    return AGAIN;
  }
#ifdef SO_PEERCRED
  /* Only a daemon of this very user answers its hooks. */
  struct ucred peer;
  socklen_t peer_length = sizeof peer;
  if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &peer, &peer_length) != 0 || peer.uid != getuid()) {
    close(sock);
    return PLAIN;
  }
#endif

  struct text head = {0};
  if (request_head(&head, agent, root, secret, nonce, input, length) || write_all(sock, head.data, head.length) != 0 ||
      write_all(sock, input, length) != 0) {
    free(head.data);
    close(sock);
    return AGAIN;
  }
  free(head.data);
  size_t reply_length;
  char *reply = read_all(sock, &reply_length);
  close(sock);
  if (reply == NULL || reply_length < 12 || strncmp(reply + 9, "200", 3) != 0) {
    free(reply);
    return AGAIN;
  }
  char *whole = realloc(reply, reply_length + 1);
  if (whole == NULL) {
    free(reply);
    return AGAIN;
  }
  whole[reply_length] = '\0';
  char *body = strstr(whole, "\r\n\r\n");
  if (body == NULL) {
    free(whole);
    return UNPROVEN;
  }
  size_t head_length = (size_t)(body - whole) + 2; /* the last header's CRLF kept */
  body += 4;
  if (!proven(key, nonce, whole, head_length, body, reply_length - (size_t)(body - whole))) {
    free(whole);
    return UNPROVEN;
  }
  if (strcmp(body, "{}") != 0 && *body != '\0') printf("%s\n", body);
  free(whole);
  return ANSWERED;
}

int main(int argc, char **argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: reins-hook <agent> <node> <reins.js> <daemon-name> (re-run reins init)\n");
    if (argc < 4) return 0; /* never fail the agent's hook */
  }
  /* A daemon that closes its end early must not kill the client: the call then goes in-process. */
  signal(SIGPIPE, SIG_IGN);
  size_t length;
  char *input = read_all(0, &length);
  if (input == NULL) return 0;
  enum outcome outcome = argc >= 5 ? ask_daemon(argv[1], argv[4], input, length) : PLAIN;
  if (outcome == ANSWERED) return 0;

  /* No daemon answered (or one without proof): `node reins.js hook <agent>` with the same input on its
     stdin, which answers the call in-process and starts a daemon for the next calls (one that finds a
     daemon there steps aside; one that finds another program on the socket takes it over, and with
     --unproven the unproven answer is written to the tamper record first). */
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return 0;
  pid_t child = fork();
  if (child == 0) {
    signal(SIGPIPE, SIG_DFL);
    dup2(pipe_fds[0], 0);
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    if (outcome == AGAIN)
      execl(argv[2], argv[2], argv[3], "hook", argv[1], "--start-daemon", argv[4], (char *)NULL);
    else if (outcome == UNPROVEN)
      execl(argv[2], argv[2], argv[3], "hook", argv[1], "--unproven", argv[4], (char *)NULL);
    else
      execl(argv[2], argv[2], argv[3], "hook", argv[1], (char *)NULL);
    _exit(0);
  }
  close(pipe_fds[0]);
  write_all(pipe_fds[1], input, length);
  close(pipe_fds[1]);
  int status;
  waitpid(child, &status, 0);
  return 0;
}

/*
 * reins-hook: the command-hook client for agents without http hooks (Codex CLI, Gemini CLI). It forwards
 * one hook call (JSON on stdin) to the project's reins daemon on 127.0.0.1 and prints the reply, without
 * starting Node. When no daemon answers, it hands the input to `reins hook <agent>` in-process.
 *
 * usage: reins-hook <agent> <node> <reins.js>      (REINS_PORT overrides the port 7878)
 * `reins init codex|gemini` builds it with the system C compiler; without one, bin/reins-hook (sh + curl)
 * does the same job more slowly.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

static char *read_all(int fd, size_t *length) {
  size_t size = 65536, used = 0;
  char *buffer = malloc(size);
  ssize_t n;
  while (buffer != NULL && (n = read(fd, buffer + used, size - used)) > 0) {
    used += (size_t)n;
    if (used == size) buffer = realloc(buffer, size *= 2);
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

/* Asks the daemon; returns 0 and prints its reply on success. */
static int ask_daemon(const char *agent, const char *input, size_t length) {
  const char *project = getenv("CLAUDE_PROJECT_DIR");
  if (project == NULL) project = getenv("GEMINI_PROJECT_DIR");
  char cwd[4096], path[4352], secret[256];
  if (project == NULL) project = getcwd(cwd, sizeof cwd);
  if (project == NULL) return -1;
  snprintf(path, sizeof path, "%s/.reins/hook-secret", project);
  FILE *file = fopen(path, "r");
  if (file == NULL) return -1;
  size_t got = fread(secret, 1, sizeof secret - 1, file);
  fclose(file);
  while (got > 0 && (secret[got - 1] == '\n' || secret[got - 1] == '\r' || secret[got - 1] == ' ')) got--;
  secret[got] = '\0';

  const char *port_text = getenv("REINS_PORT");
  int port = port_text != NULL ? atoi(port_text) : 7878;
  int sock = socket(AF_INET, SOCK_STREAM, 0);
  if (sock < 0) return -1;
  struct timeval timeout = {10, 0};
  setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  setsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
  struct sockaddr_in address = {0};
  address.sin_family = AF_INET;
  address.sin_port = htons((unsigned short)port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(sock, (struct sockaddr *)&address, sizeof address) != 0) {
    close(sock);
    return -1;
  }
  char head[1024];
  int head_length = snprintf(head, sizeof head,
                             "POST /hooks/%s HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\n"
                             "Content-Type: application/json\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
                             agent, secret, length);
  if (write_all(sock, head, (size_t)head_length) != 0 || write_all(sock, input, length) != 0) {
    close(sock);
    return -1;
  }
  size_t reply_length;
  char *reply = read_all(sock, &reply_length);
  close(sock);
  if (reply == NULL || reply_length < 12 || strncmp(reply + 9, "200", 3) != 0) return -1;
  reply = realloc(reply, reply_length + 1);
  reply[reply_length] = '\0';
  char *body = strstr(reply, "\r\n\r\n");
  if (body == NULL) return -1;
  body += 4;
  if (strcmp(body, "{}") != 0 && *body != '\0') printf("%s\n", body);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: reins-hook <agent> <node> <reins.js>\n");
    return 0; /* never fail the agent's hook */
  }
  size_t length;
  char *input = read_all(0, &length);
  if (input == NULL) return 0;
  if (ask_daemon(argv[1], input, length) == 0) return 0;

  /* No daemon: `node reins.js hook <agent>` with the same input on its stdin. */
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return 0;
  pid_t child = fork();
  if (child == 0) {
    dup2(pipe_fds[0], 0);
    close(pipe_fds[0]);
    close(pipe_fds[1]);
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

/* Loopback socket copy: the sender writes from a buffer of BUF bytes in calls of at most 1 MiB
 * (cycling through it), the receiver reads into its own buffer of BUF bytes, 1 MiB per call;
 * prints GB/s, and memcpy bandwidth between two BUF-sized buffers. Measures how the size of the
 * memory a copy streams through changes loopback throughput (benchmarks/README.md).
 * Build: gcc -O2 -pthread -o sockcopy sockcopy.c    Usage: sockcopy BUF_MIB SECONDS */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static size_t BUF;
static double SECS;

static void check(int ok, const char *what) {
    if (!ok) { perror(what); exit(1); }
}

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }

static void *receiver(void *arg) {
    int l = *(int *)arg, c = accept(l, NULL, NULL);
    char *b = aligned_alloc(4096, BUF);
    check(c >= 0 && b != NULL, "accept");
    memset(b, 1, BUF);
    size_t off = 0; ssize_t n;
    while ((n = read(c, b + off, (BUF - off) < (1 << 20) ? BUF - off : (1 << 20))) > 0) { off += n; if (off == BUF) off = 0; }
    close(c); return NULL;
}

int main(int argc, char **argv) {
    if (argc != 3 || atoi(argv[1]) < 1 || atof(argv[2]) <= 0) {
        fprintf(stderr, "usage: sockcopy BUF_MIB SECONDS  (BUF_MIB >= 1, SECONDS > 0)\n");
        return 2;
    }
    BUF = (size_t)atoi(argv[1]) << 20; SECS = atof(argv[2]);
    char *a = aligned_alloc(4096, BUF), *b = aligned_alloc(4096, BUF);
    check(a && b, "aligned_alloc");
    memset(a, 2, BUF); memset(b, 3, BUF);
    double t0 = now(); size_t copied = 0;
    while (now() - t0 < 1.0) { memcpy(b, a, BUF); copied += BUF; }
    double mc = copied / (now() - t0) / 1e9;
    int l = socket(AF_INET, SOCK_STREAM, 0); struct sockaddr_in sa = {0};
    sa.sin_family = AF_INET; sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    check(l >= 0, "socket");
    check(bind(l, (struct sockaddr *)&sa, sizeof sa) == 0, "bind");
    check(listen(l, 1) == 0, "listen");
    socklen_t sl = sizeof sa; getsockname(l, (struct sockaddr *)&sa, &sl);
    pthread_t th; pthread_create(&th, NULL, receiver, &l);
    int s = socket(AF_INET, SOCK_STREAM, 0);
    check(s >= 0 && connect(s, (struct sockaddr *)&sa, sizeof sa) == 0, "connect");
    size_t sent = 0, off = 0; t0 = now(); double t;
    while ((t = now()) - t0 < SECS) {
        size_t len = BUF - off < (1 << 20) ? BUF - off : (1 << 20);
        ssize_t n = write(s, a + off, len); if (n <= 0) break;
        sent += n; off += n; if (off == BUF) off = 0;
    }
    double gbs = sent / (t - t0) / 1e9;
    close(s); pthread_join(th, NULL);
    printf("buffer %zu MiB: memcpy %.2f GB/s, loopback socket copy (1 MiB writes) %.2f GB/s\n", BUF >> 20, mc, gbs);
    return 0;
}

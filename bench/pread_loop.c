/* The floor for 4 KiB random reads from the page cache: a bare pread loop with no statistics.
 * Usage: pread_loop FILE SECONDS [threaded]. Prints IOPS. Used by vs-fio.sh only.
 * "threaded" starts one idle thread first: the process's file table is then shared, so every
 * pread takes and drops a reference on the file (fdget's slow path), as in any threaded
 * benchmark (iogauge's workers are threads; fio's jobs are processes by default). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void *idle(void *arg) {
    (void)arg;
    for (;;) pause();
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 3 || argc > 4 || (argc == 4 && strcmp(argv[3], "threaded"))) {
        fprintf(stderr, "usage: %s FILE SECONDS [threaded]\n", argv[0]);
        return 2;
    }
    pthread_t th;
    if (argc == 4 && pthread_create(&th, NULL, idle, NULL)) { perror("pthread_create"); return 1; }
    int fd = open(argv[1], O_RDONLY);
    if (fd < 0) { perror(argv[1]); return 1; }
    struct stat st;
    fstat(fd, &st);
    uint64_t blocks = st.st_size / 4096, x = 0x89, n = 0;
    static char buf[4096] __attribute__((aligned(4096)));
    uint64_t end = now_ns() + (uint64_t)(atof(argv[2]) * 1e9), t0 = now_ns();
    for (;;) {
        for (int i = 0; i < 1024; i++) {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
            if (pread(fd, buf, 4096, (off_t)((x % blocks) * 4096)) != 4096) { perror("pread"); return 1; }
        }
        n += 1024;
        if (now_ns() >= end) break;
    }
    printf("%.0f\n", n / ((now_ns() - t0) / 1e9));
    return 0;
}

/* The floor for 4 KiB random reads from the page cache: a bare pread loop with no statistics.
 * Usage: pread_loop FILE SECONDS [threaded|perm]. Prints IOPS. Used by vs-fio.sh only.
 * Offsets are xorshift draws (with replacement); "perm" walks a permutation of the blocks per
 * pass instead, the way iogauge's (and fio's) random map visits every block once per pass
 * (the same scrambled full-period LCG as src/workload/randmap.rs, seed 0x89).
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
    int threaded = argc == 4 && !strcmp(argv[3], "threaded");
    int perm = argc == 4 && !strcmp(argv[3], "perm");
    if (argc < 3 || argc > 4 || (argc == 4 && !threaded && !perm)) {
        fprintf(stderr, "usage: %s FILE SECONDS [threaded|perm]\n", argv[0]);
        return 2;
    }
    pthread_t th;
    if (threaded && pthread_create(&th, NULL, idle, NULL)) { perror("pthread_create"); return 1; }
    int fd = open(argv[1], O_RDONLY);
    if (fd < 0) { perror(argv[1]); return 1; }
    struct stat st;
    fstat(fd, &st);
    uint64_t blocks = st.st_size / 4096, x = 0x89, n = 0;
    /* The permutation: state' = state * M + inc (mod 2^bits), scrambled, values >= blocks skipped. */
    unsigned bits = blocks > 1 ? 64 - __builtin_clzll(blocks - 1) : 1, s = bits / 2 ? bits / 2 : 1;
    uint64_t mask = bits == 64 ? ~0ull : (1ull << bits) - 1, state = 0x89 & mask;
    uint64_t inc = ((0x89ull >> 17) | 1) & mask;
    static char buf[4096] __attribute__((aligned(4096)));
    uint64_t end = now_ns() + (uint64_t)(atof(argv[2]) * 1e9), t0 = now_ns();
    for (;;) {
        for (int i = 0; i < 1024; i++) {
            uint64_t b;
            if (perm) {
                do {
                    state = (state * 6364136223846793005ull + inc) & mask;
                    b = state;
                    b ^= b >> s; b = (b * 0x9E3779B97F4A7C15ull) & mask;
                    b ^= b >> s; b = (b * 0xBF58476D1CE4E5B9ull) & mask;
                    b ^= b >> s;
                } while (b >= blocks);
            } else {
                x ^= x << 13; x ^= x >> 7; x ^= x << 17;
                b = x % blocks;
            }
            if (pread(fd, buf, 4096, (off_t)(b * 4096)) != 4096) { perror("pread"); return 1; }
        }
        n += 1024;
        if (now_ns() >= end) break;
    }
    printf("%.0f\n", n / ((now_ns() - t0) / 1e9));
    return 0;
}

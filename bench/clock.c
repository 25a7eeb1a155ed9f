/* What one clock read costs on this machine: clock_gettime(CLOCK_MONOTONIC) through the vDSO,
 * a bare RDTSC, RDTSCP and LFENCE+RDTSC, each over 50 M reads. Why src/run/clock.rs reads the
 * TSC where the kernel itself uses it. Build and run: gcc -O2 -o /tmp/clock bench/clock.c && /tmp/clock */
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <x86intrin.h>

static uint64_t mono(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000ull + t.tv_nsec;
}

int main(void) {
    const int n = 50000000;
    unsigned aux;
    uint64_t sink = 0, t0 = mono();
    for (int i = 0; i < n; i++) sink += mono();
    uint64_t t1 = mono();
    for (int i = 0; i < n; i++) sink += __rdtsc();
    uint64_t t2 = mono();
    for (int i = 0; i < n; i++) sink += __rdtscp(&aux);
    uint64_t t3 = mono();
    for (int i = 0; i < n; i++) {
        _mm_lfence();
        sink += __rdtsc();
    }
    uint64_t t4 = mono();
    printf("ns per read: clock_gettime %.2f, rdtsc %.2f, rdtscp %.2f, lfence+rdtsc %.2f (%lu)\n",
           (t1 - t0) / (double)n, (t2 - t1) / (double)n, (t3 - t2) / (double)n,
           (t4 - t3) / (double)n, (unsigned long)(sink & 1));
    return 0;
}

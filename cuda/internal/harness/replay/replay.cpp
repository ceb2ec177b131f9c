// replay: runs the kernel launches the tests of package cuda and its internal
// packages recorded on the CPU harness (JEIRT_HARNESS_TRACE) again, with
// every CUDA thread an OS thread, and compares each launch's outputs with the
// recorded ones. Built three ways
// by scripts/cuda-cpu-check.sh: plain, with -fsanitize=thread, and with
// -fsanitize=address,undefined. Each allocation is its own exact-size heap
// block, so AddressSanitizer sees any access past it.
//
// Usage: replay TRACE [REPEAT]
// Prints one line per kernel and a last line
//   kernels: N, tests: M, errors: E
// and exits 1 on any error.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <map>
#include <string>
#include <vector>

#include "../harness.h"

struct Reader {
    FILE *f;
    bool ok = true;
    template <typename T> T get() {
        T v{};
        if (fread(&v, sizeof v, 1, f) != 1) ok = false;
        return v;
    }
    void bytes(void *p, size_t n) {
        if (n && fread(p, 1, n, f) != n) ok = false;
    }
};

struct Stats {
    int launches = 0, errors = 0;
    double worst = 0; // largest relative difference of a float output
};

// compare checks an allocation after replay against the recorded one, as
// elements of the type the kernel's argument letter names: floats within a
// relative 1e-5 (atomic sums may add in another order), doubles within 1e-12,
// integers exactly.
static bool compare(char letter, const unsigned char *got, const unsigned char *want, size_t n, double *worst,
                    std::string *why) {
    char buf[256];
    if (letter == 'f' || letter == 'd') {
        bool f32 = letter == 'f';
        size_t size = f32 ? 4 : 8;
        double tol = f32 ? 1e-5 : 1e-12;
        for (size_t i = 0; i + size <= n; i += size) {
            double a, b;
            if (f32) {
                float x, y;
                memcpy(&x, got + i, 4);
                memcpy(&y, want + i, 4);
                a = x, b = y;
            } else {
                memcpy(&a, got + i, 8);
                memcpy(&b, want + i, 8);
            }
            if (isnan(a) && isnan(b)) continue;
            double d = fabs(a - b) / fmax(1.0, fmax(fabs(a), fabs(b)));
            if (d > *worst) *worst = d;
            if (!(d <= tol)) {
                snprintf(buf, sizeof buf, "element %zu: %.9g, recorded %.9g", i / size, a, b);
                *why = buf;
                return false;
            }
        }
        return true;
    }
    for (size_t i = 0; i < n; i++)
        if (got[i] != want[i]) {
            snprintf(buf, sizeof buf, "byte %zu: %d, recorded %d", i, got[i], want[i]);
            *why = buf;
            return false;
        }
    return true;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: replay TRACE [REPEAT]\n");
        return 2;
    }
    int repeat = argc > 2 ? atoi(argv[2]) : 1;
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        perror(argv[1]);
        return 2;
    }
    char magic[8];
    if (fread(magic, 1, 8, f) != 8 || memcmp(magic, "JHTRACE1", 8) != 0) {
        fprintf(stderr, "%s: not a harness trace\n", argv[1]);
        return 2;
    }
    Reader r{f};
    std::map<std::string, Stats> stats;
    int errors = 0, tests = 0;
    for (int rec = 0;; rec++) {
        uint16_t nl = r.get<uint16_t>();
        if (!r.ok) break; // end of the trace
        std::string name(nl, 0);
        r.bytes(name.data(), nl);
        jh_dim grid{r.get<uint32_t>(), r.get<uint32_t>(), r.get<uint32_t>()};
        jh_dim block{r.get<uint32_t>(), r.get<uint32_t>(), r.get<uint32_t>()};
        long long shared = (long long)r.get<uint64_t>();
        uint32_t nargs = r.get<uint32_t>();
        struct Arg {
            uint8_t kind;
            uint64_t value;
            uint32_t alloc;
        };
        std::vector<Arg> args(nargs);
        for (auto &a : args) {
            a.kind = r.get<uint8_t>();
            if (a.kind == 1) {
                a.alloc = r.get<uint32_t>();
                a.value = r.get<uint64_t>();
            } else {
                a.value = r.get<uint64_t>();
            }
        }
        uint32_t nalloc = r.get<uint32_t>();
        std::vector<std::vector<unsigned char>> before(nalloc), after(nalloc);
        for (uint32_t i = 0; i < nalloc; i++) {
            uint64_t n = r.get<uint64_t>();
            before[i].resize(n);
            after[i].resize(n);
            r.bytes(before[i].data(), n);
            r.bytes(after[i].data(), n);
        }
        if (!r.ok) {
            fprintf(stderr, "%s: record %d is truncated\n", argv[1], rec);
            return 2;
        }
        int k = jh_kernel_find(name.c_str());
        Stats &st = stats[name];
        if (k < 0) {
            fprintf(stderr, "record %d: kernel %s is not in the harness\n", rec, name.c_str());
            st.errors++, errors++;
            continue;
        }
        const char *letters = jh_kernel_args(k);
        for (int rep = 0; rep < repeat; rep++) {
            tests++;
            st.launches++;
            // Exact-size heap copies of the recorded inputs.
            std::vector<unsigned char *> mem(nalloc);
            for (uint32_t i = 0; i < nalloc; i++) {
                mem[i] = (unsigned char *)malloc(before[i].size() ? before[i].size() : 1);
                memcpy(mem[i], before[i].data(), before[i].size());
            }
            std::vector<uint64_t> words(nargs);
            for (uint32_t i = 0; i < nargs; i++)
                words[i] = args[i].kind == 1 ? (uint64_t)(uintptr_t)(mem[args[i].alloc] + args[i].value)
                           : args[i].kind == 2 ? 0
                                               : args[i].value;
            char err[256];
            if (jh_launch(k, grid, block, shared, words.data(), (int)nargs, JH_THREADS, err, sizeof err) != 0) {
                fprintf(stderr, "record %d (%s): %s\n", rec, name.c_str(), err);
                st.errors++, errors++;
            } else {
                for (uint32_t i = 0; i < nalloc; i++) {
                    char letter = 'b';
                    for (uint32_t a = 0; a < nargs; a++)
                        if (args[a].kind == 1 && args[a].alloc == i) {
                            letter = letters[a];
                            break;
                        }
                    std::string why;
                    if (!compare(letter, mem[i], after[i].data(), after[i].size(), &st.worst, &why)) {
                        fprintf(stderr, "record %d (%s, grid %u x %u, block %u): allocation %u: %s\n", rec, name.c_str(),
                                grid.x, grid.y, block.x, i, why.c_str());
                        st.errors++, errors++;
                        break;
                    }
                }
            }
            for (auto *p : mem) free(p);
        }
    }
    fclose(f);
    for (auto &[name, st] : stats)
        printf("kernel %-16s launches: %3d, errors: %d, largest float difference: %.2g\n", name.c_str(), st.launches,
               st.errors, st.worst);
    printf("kernels: %d, tests: %d, errors: %d\n", (int)stats.size(), tests, errors);
    return errors ? 1 : 0;
}

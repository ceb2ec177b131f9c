// registry.h: registration of the kernels compiled from the .cu sources, with
// their argument types deduced from the kernels' own signatures.
#ifndef JEIRT_HARNESS_REGISTRY_H
#define JEIRT_HARNESS_REGISTRY_H

#include <stdint.h>
#include <string.h>

#include <type_traits>
#include <utility>

namespace jh {

struct Kernel {
    const char *name;
    int nargs;
    const char *args;                       // one letter per argument (see harness.h)
    void *fn;                               // the kernel
    void (*call)(void *, const uint64_t *); // calls fn with the 64-bit arguments
};

void registerKernel(const Kernel &k);

template <typename T> constexpr char argLetter() {
    static_assert(sizeof(T) == 8, "kernel arguments must be 64 bits wide (gorgonia.org/cu copies 8 bytes each)");
    if constexpr (std::is_pointer_v<T>) {
        using P = std::remove_pointer_t<T>;
        using E = std::remove_cv_t<P>;
        constexpr bool c = std::is_const_v<P>;
        if constexpr (std::is_same_v<E, float>) return c ? 'F' : 'f';
        else if constexpr (std::is_same_v<E, double>) return c ? 'D' : 'd';
        else if constexpr (std::is_same_v<E, int>) return c ? 'I' : 'i';
        else if constexpr (std::is_same_v<E, unsigned int>) return c ? 'U' : 'u';
        else if constexpr (std::is_same_v<E, unsigned char>) return c ? 'B' : 'b';
        else if constexpr (std::is_same_v<E, long long>) return c ? 'L' : 'l';
        else static_assert(!sizeof(T), "unsupported pointer argument");
    } else if constexpr (std::is_same_v<T, double>) {
        return 'x';
    } else {
        static_assert(std::is_integral_v<T>, "unsupported scalar argument");
        return 's';
    }
}

template <typename T> T fromBits(uint64_t v) {
    T out;
    if constexpr (std::is_pointer_v<T>) out = (T)(uintptr_t)v;
    else memcpy(&out, &v, sizeof(T));
    return out;
}

template <typename... A, size_t... I> void callWith(void (*f)(A...), const uint64_t *a, std::index_sequence<I...>) {
    f(fromBits<A>(a[I])...);
}

template <typename... A> void trampoline(void *f, const uint64_t *a) {
    callWith((void (*)(A...))f, a, std::index_sequence_for<A...>{});
}

template <typename... A> Kernel kernel(const char *name, void (*f)(A...)) {
    static const char letters[] = {argLetter<A>()..., 0};
    return Kernel{name, (int)sizeof...(A), letters, (void *)f, trampoline<A...>};
}

struct Registrar {
    Registrar(std::initializer_list<Kernel> ks) {
        for (const Kernel &k : ks) registerKernel(k);
    }
};

} // namespace jh

#define JH_KERNEL(f) jh::kernel(#f, f)

#endif

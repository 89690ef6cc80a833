// Heap accounting for this project's onert-micro drivers: replaces the global operator new and
// delete (every allocation of the runtime goes through them: OMMemoryManager uses new[], its
// loader a std::vector) with counting versions. Include it in exactly one translation unit of
// a program. heap_mark() starts a measurement; heap_peak() is the most allocated above the mark
// since, heap_now() what is allocated above it now.
#ifndef ONERT_CKPT_HEAP_COUNT_H
#define ONERT_CKPT_HEAP_COUNT_H

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>

namespace heap_count
{
inline int64_t current = 0, peak = 0, mark = 0;

// Each block carries its size in a 16-byte prefix (keeps new's alignment).
constexpr std::size_t kPrefix = 16;

inline void *take(std::size_t n)
{
  auto *p = static_cast<unsigned char *>(std::malloc(n + kPrefix));
  if (p == nullptr)
    throw std::bad_alloc();
  *reinterpret_cast<std::size_t *>(p) = n;
  current += static_cast<int64_t>(n);
  if (current > peak)
    peak = current;
  return p + kPrefix;
}

inline void give(void *q)
{
  if (q == nullptr)
    return;
  auto *p = static_cast<unsigned char *>(q) - kPrefix;
  current -= static_cast<int64_t>(*reinterpret_cast<std::size_t *>(p));
  std::free(p);
}
} // namespace heap_count

inline void heap_mark() { heap_count::mark = heap_count::peak = heap_count::current; }
inline long long heap_peak() { return heap_count::peak - heap_count::mark; }
inline long long heap_now() { return heap_count::current - heap_count::mark; }

void *operator new(std::size_t n) { return heap_count::take(n); }
void *operator new[](std::size_t n) { return heap_count::take(n); }
void operator delete(void *p) noexcept { heap_count::give(p); }
void operator delete[](void *p) noexcept { heap_count::give(p); }
void operator delete(void *p, std::size_t) noexcept { heap_count::give(p); }
void operator delete[](void *p, std::size_t) noexcept { heap_count::give(p); }

#endif // ONERT_CKPT_HEAP_COUNT_H

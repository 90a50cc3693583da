// micro.cu: ground truth on an NVIDIA GPU for the simulator's presets and for the wgpu measurement path.
//
// Built and run by `scripts/cuda-micro.sh` on a machine with nvcc and an NVIDIA GPU (nothing here is part
// of the Rust build). It measures, with CUDA, what `configs/<preset>.toml` claims and what
// `workloads/measure/suite.toml` measures through Vulkan:
//   clock      SM clock during the run: clock64() cycles over %globaltimer ns of a 2*10^7-cycle spin
//   latency    load-to-use latency per access kind and footprint: one thread, `j = next[j]` chains,
//              cycles by clock64() (the published method, e.g. RRZE-HPC gpu-benches gpu-latency)
//   suite      the suite's chain.kern and chase.kern loops written in CUDA (same arithmetic, same
//              constants, same data), timed like `gpumemsim measure` does (host-side timing of the
//              dispatch, median of 15 after 3 warm-ups, latency = slope over the chain length L), so
//              the Vulkan numbers can be split into memory system and translation overhead
//   contention the suite's contention.kern (T work-items, K counters, returning or not), and the empty
//              kernel, timed the same way
//   fence      cycles per iteration of a relaxed store followed by each fence (and a release store)
//   bandwidth  streaming read and copy over 1 GiB, and a 16 MiB read 64 times through ld.global.cg
//              (the L2 only; the campaign of 2026-11-27 ran it with plain loads, which the L1s served)
// Output: one JSON object per line on stdout ({"kind": ..., fields}), read by scripts/cuda-micro.sh.
//
// Not measured: anything needing more than one GPU; clock locking (the card is measured as found,
// its clock reported beside every number).
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#define CK(x)                                                                                  \
  do {                                                                                         \
    cudaError_t e_ = (x);                                                                      \
    if (e_ != cudaSuccess) {                                                                   \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));     \
      exit(1);                                                                                 \
    }                                                                                          \
  } while (0)

__device__ __forceinline__ unsigned long long gtime() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// MODE: 0 plain ld.global (weak; L1-cached), 1 ld.global.cg (L2 only), 2 ld.relaxed.gpu,
// 3 ld.acquire.gpu, 4 atom.relaxed.gpu.add 0 (returning), 5 ld.volatile.global.
template <int MODE>
__device__ __forceinline__ unsigned acc(const unsigned* p) {
  unsigned v;
  if (MODE == 0)
    asm volatile("ld.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  else if (MODE == 1)
    asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  else if (MODE == 2)
    asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  else if (MODE == 3)
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  else if (MODE == 4)
    asm volatile("atom.relaxed.gpu.global.add.u32 %0, [%1], 0;" : "=r"(v) : "l"(p) : "memory");
  else
    asm volatile("ld.volatile.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

static const char* mode_name(int m) {
  switch (m) {
    case 0: return "ld";
    case 1: return "ld.cg";
    case 2: return "ld.relaxed.gpu";
    case 3: return "ld.acquire.gpu";
    case 4: return "atom.add.relaxed.gpu";
    default: return "ld.volatile";
  }
}

__global__ void spin_k(long long cycles, unsigned long long* out) {
  unsigned long long g0 = gtime();
  long long c0 = clock64();
  while (clock64() - c0 < cycles) {
  }
  long long c1 = clock64();
  unsigned long long g1 = gtime();
  out[0] = (unsigned long long)(c1 - c0);
  out[1] = g1 - g0;
}

template <int MODE>
__global__ void pchase_k(const unsigned* next, unsigned warm, unsigned steps, unsigned long long* out) {
  unsigned j = 0;
  for (unsigned i = 0; i < warm; ++i) j = acc<MODE>(next + j);
  unsigned long long g0 = gtime();
  long long c0 = clock64();
  for (unsigned i = 0; i < steps; ++i) j = acc<MODE>(next + j);
  if (j == 0xffffffffu) out[3] = j;  // wait for the last load before the second clock read
  long long c1 = clock64();
  unsigned long long g1 = gtime();
  out[0] = (unsigned long long)(c1 - c0);
  out[1] = g1 - g0;
  out[2] = j;
}

// chase.kern: data[i] == i; the next index is (value + S) % M (S = STRIDE / 4, M = FOOT / 4).
template <unsigned S, unsigned M>
__global__ void kchase_k(const unsigned* data, unsigned L, unsigned* out) {
  unsigned j = 0;
  for (unsigned i = 0; i < L; ++i) {
    unsigned v = acc<0>(data + j);
    j = (v + S) % M;
  }
  out[0] = j;
}

// chain.kern: data is zero; j = (j + value + 32) % 2048 (N = 64 lines, STRIDE = 32 elements).
template <int MODE>
__global__ void kchain_k(const unsigned* data, unsigned L, unsigned* out) {
  unsigned j = 0;
  for (unsigned i = 0; i < L; ++i) {
    unsigned v = acc<MODE>(data + j);
    j = (j + v + 32u) % 2048u;
  }
  out[0] = j;
}

__global__ void empty_k(unsigned* out) {}

// contention.kern
__global__ void contention_k(unsigned* counter, unsigned* old, unsigned T, unsigned K, unsigned stride,
                             int ret) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= T) return;
  unsigned j = (i % K) * stride;
  if (ret) {
    unsigned o;
    asm volatile("atom.relaxed.gpu.global.add.u32 %0, [%1], 1;" : "=r"(o) : "l"(counter + j) : "memory");
    old[i] = o;
  } else {
    asm volatile("red.relaxed.gpu.global.add.u32 [%0], 1;" ::"l"(counter + j) : "memory");
  }
}

// F: 0 none, 1 fence.acq_rel.cta, 2 fence.acq_rel.gpu, 3 fence.sc.gpu, 4 fence.acq_rel.sys,
// 5 fence.sc.sys, 6 st.release.gpu instead of the relaxed store, 7 __syncthreads (bar.sync 0)
template <int F>
__global__ void fence_k(unsigned* p, unsigned n, unsigned long long* out) {
  long long c0 = clock64();
  for (unsigned i = 0; i < n; ++i) {
    unsigned* q = p + (i & 31u) * 32u;
    if (F == 6)
      asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(q), "r"(i) : "memory");
    else
      asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" ::"l"(q), "r"(i) : "memory");
    if (F == 1) asm volatile("fence.acq_rel.cta;" ::: "memory");
    if (F == 2) asm volatile("fence.acq_rel.gpu;" ::: "memory");
    if (F == 3) asm volatile("fence.sc.gpu;" ::: "memory");
    if (F == 4) asm volatile("fence.acq_rel.sys;" ::: "memory");
    if (F == 5) asm volatile("fence.sc.sys;" ::: "memory");
    if (F == 7) __syncthreads();
  }
  long long c1 = clock64();
  if (threadIdx.x == 0) out[0] = (unsigned long long)(c1 - c0);
}

// CG: loads through ld.global.cg (the L2 only): a buffer read again by the same threads would
// otherwise come from their SM's L1 after the first pass (each SM's share of 16 MiB is 124 KiB).
template <bool CG>
__global__ void read_k(const uint4* a, size_t n, int passes, unsigned* out) {
  uint4 s = make_uint4(0, 0, 0, 0);
  size_t step = (size_t)gridDim.x * blockDim.x;
  for (int p = 0; p < passes; ++p)
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
      uint4 v = CG ? __ldcg(a + i) : a[i];
      s.x ^= v.x;
      s.y ^= v.y;
      s.z ^= v.z;
      s.w ^= v.w;
    }
  if ((s.x ^ s.y ^ s.z ^ s.w) == 0x9e3779b9u) out[0] = 1;
}

__global__ void copy_k(const uint4* a, uint4* b, size_t n) {
  size_t step = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) b[i] = a[i];
}

// ---- host ----

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct Time {
  double med, min, max;
  std::vector<double> samples;
  // The samples as a JSON array.
  std::string json() const {
    std::string j = "[";
    char b[32];
    for (size_t i = 0; i < samples.size(); ++i) {
      snprintf(b, sizeof b, "%s%.1f", i ? "," : "", samples[i]);
      j += b;
    }
    return j + "]";
  }
};

// 15 timed launches after 3 warm-ups, in ns: `prep` (untimed, e.g. zeroing a counter) then `launch`
// between two events, as `gpumemsim measure` times a pass after its untimed copy of fresh memory.
template <typename Prep, typename Fn>
static Time timed_prep(Prep prep, Fn launch, int reps = 15, int warm = 3) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  std::vector<double> t;
  for (int r = 0; r < warm + reps; ++r) {
    prep();
    CK(cudaEventRecord(a));
    launch();
    CK(cudaGetLastError());
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, a, b));
    if (r >= warm) t.push_back(ms * 1e6);
  }
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
  return Time{median(t), *std::min_element(t.begin(), t.end()), *std::max_element(t.begin(), t.end()), t};
}

template <typename Fn>
static Time timed(Fn launch, int reps = 15, int warm = 3) {
  return timed_prep([] {}, launch, reps, warm);
}

static unsigned long long* d_out64;
static unsigned* d_out32;

static double clock_mhz(const char* when) {
  spin_k<<<1, 1>>>(20000000LL, d_out64);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  unsigned long long h[2];
  CK(cudaMemcpy(h, d_out64, sizeof h, cudaMemcpyDeviceToHost));
  double mhz = (double)h[0] / (double)h[1] * 1e3;
  printf("{\"kind\":\"clock\",\"when\":\"%s\",\"cycles\":%llu,\"ns\":%llu,\"sm_mhz\":%.1f}\n", when, h[0], h[1],
         mhz);
  fflush(stdout);
  return mhz;
}

// One pointer chase: FOOT bytes, one access every STRIDE bytes, in address order or a random order of
// the lines; `warm` steps first (the footprint once, when it fits a cache), then `steps` timed.
template <int MODE>
static void pchase(size_t foot, size_t stride, bool random, unsigned steps) {
  size_t words = foot / 4, s = stride / 4, lines = foot / stride;
  std::vector<unsigned> next(words, 0);
  std::vector<size_t> order(lines);
  for (size_t k = 0; k < lines; ++k) order[k] = k;
  if (random) {
    uint64_t x = 0x2545F4914F6CDD1DULL;
    for (size_t k = lines - 1; k > 0; --k) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      std::swap(order[k], order[x % (k + 1)]);
    }
  }
  for (size_t k = 0; k < lines; ++k) next[order[k] * s] = (unsigned)(order[(k + 1) % lines] * s);
  unsigned* d;
  CK(cudaMalloc(&d, foot));
  CK(cudaMemcpy(d, next.data(), foot, cudaMemcpyHostToDevice));
  unsigned warm = lines <= (size_t)(64u << 20) / 128 ? (unsigned)std::min<size_t>(lines, 1u << 20) : 4096u;
  std::vector<double> cyc, ns;
  for (int r = 0; r < 3; ++r) {
    pchase_k<MODE><<<1, 1>>>(d, warm, steps, d_out64);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    unsigned long long h[3];
    CK(cudaMemcpy(h, d_out64, sizeof h, cudaMemcpyDeviceToHost));
    cyc.push_back((double)h[0] / steps);
    ns.push_back((double)h[1] / steps);
  }
  CK(cudaFree(d));
  printf("{\"kind\":\"latency\",\"op\":\"%s\",\"foot\":%zu,\"stride\":%zu,\"order\":\"%s\",\"steps\":%u,"
         "\"cycles\":%.2f,\"ns\":%.2f}\n",
         mode_name(MODE), foot, stride, random ? "random" : "sequential", steps, median(cyc), median(ns));
  fflush(stdout);
}

// chase.kern as the suite runs it: FOOT, STRIDE, PASSES = 1 and 2; prints both times and the slope.
template <unsigned STRIDE, unsigned FOOT>
static void kchase() {
  size_t words = FOOT / 4;
  std::vector<unsigned> iota(words);
  for (size_t i = 0; i < words; ++i) iota[i] = (unsigned)i;
  unsigned* d;
  CK(cudaMalloc(&d, FOOT));
  CK(cudaMemcpy(d, iota.data(), FOOT, cudaMemcpyHostToDevice));
  for (unsigned p = 1; p <= 2; ++p) {
    unsigned L = p * (FOOT / STRIDE);
    Time t = timed([&] { kchase_k<STRIDE / 4, FOOT / 4><<<1, 1>>>(d, L, d_out32); });
    unsigned j = 0;
    CK(cudaMemcpy(&j, d_out32, 4, cudaMemcpyDeviceToHost));
    bool ok = j == (unsigned)(((unsigned long long)L * (STRIDE / 4)) % (FOOT / 4));
    printf("{\"kind\":\"suite\",\"bench\":\"%s\",\"case\":\"FOOT=%u,PASSES=%u\",\"L\":%u,"
           "\"median_ns\":%.1f,\"min_ns\":%.1f,\"max_ns\":%.1f,\"samples_ns\":%s,\"ok\":%s}\n",
           STRIDE == 128 ? "chase" : "chase_dram", FOOT, p, L, t.med, t.min, t.max, t.json().c_str(),
           ok ? "true" : "false");
  }
  CK(cudaFree(d));
  fflush(stdout);
}

template <int MODE>
static void kchain(const char* name) {
  unsigned* d;
  CK(cudaMalloc(&d, 2048 * 4));
  CK(cudaMemset(d, 0, 2048 * 4));
  const unsigned Ls[4] = {512, 1024, 2048, 4096};
  for (unsigned L : Ls) {
    Time t = timed([&] { kchain_k<MODE><<<1, 1>>>(d, L, d_out32); });
    unsigned j = 0;
    CK(cudaMemcpy(&j, d_out32, 4, cudaMemcpyDeviceToHost));
    bool ok = j == (L * 32u) % 2048u;
    printf("{\"kind\":\"suite\",\"bench\":\"%s\",\"case\":\"L=%u\",\"median_ns\":%.1f,\"min_ns\":%.1f,"
           "\"max_ns\":%.1f,\"samples_ns\":%s,\"ok\":%s}\n",
           name, L, t.med, t.min, t.max, t.json().c_str(), ok ? "true" : "false");
  }
  CK(cudaFree(d));
  fflush(stdout);
}

template <int F>
static void fence(const char* name) {
  unsigned* d;
  CK(cudaMalloc(&d, 32 * 32 * 4));
  CK(cudaMemset(d, 0, 32 * 32 * 4));
  const unsigned n = 4096;
  std::vector<double> c;
  for (int r = 0; r < 3; ++r) {
    fence_k<F><<<1, 1>>>(d, n, d_out64);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    unsigned long long h;
    CK(cudaMemcpy(&h, d_out64, sizeof h, cudaMemcpyDeviceToHost));
    c.push_back((double)h / n);
  }
  CK(cudaFree(d));
  printf("{\"kind\":\"fence\",\"what\":\"%s\",\"cycles_per_iteration\":%.2f}\n", name, median(c));
  fflush(stdout);
}

int main() {
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  printf("{\"kind\":\"device\",\"name\":\"%s\",\"sms\":%d,\"l2_bytes\":%d,\"cc\":\"%d.%d\"}\n", p.name,
         p.multiProcessorCount, p.l2CacheSize, p.major, p.minor);
  CK(cudaMalloc(&d_out64, 64));
  CK(cudaMalloc(&d_out32, 64));
  clock_mhz("start");

  // latency: load-to-use per footprint (sequential lines), then the other access kinds.
  const size_t feet[] = {16u << 10, 64u << 10, 192u << 10, 1u << 20, 8u << 20, 24u << 20, 40u << 20, 64u << 20,
                         256u << 20};
  for (size_t f : feet) pchase<0>(f, 128, false, 16384);
  pchase<0>(256u << 20, 128, true, 16384);
  pchase<0>(64u << 20, 4096, false, 16384);
  pchase<1>(16u << 10, 128, false, 16384);
  pchase<1>(8u << 20, 128, false, 16384);
  pchase<2>(16u << 10, 128, false, 16384);
  pchase<2>(8u << 20, 128, false, 16384);
  pchase<3>(16u << 10, 128, false, 16384);
  pchase<4>(16u << 10, 128, false, 16384);
  pchase<4>(8u << 20, 128, false, 16384);
  pchase<5>(16u << 10, 128, false, 16384);
  clock_mhz("after latency");

  // suite: chain.kern and chase.kern in CUDA.
  kchain<4>("atomic_chain");
  kchain<0>("load_chain");
  kchain<2>("relaxed_load_chain");
  kchase<128, 16384>();
  kchase<128, 65536>();
  kchase<128, 131072>();
  kchase<128, 524288>();
  kchase<128, 2097152>();
  kchase<128, 8388608>();
  kchase<4096, 67108864>();

  // empty and contention, timed like the suite.
  Time empty = timed([&] { empty_k<<<1, 1>>>(d_out32); });
  printf("{\"kind\":\"suite\",\"bench\":\"overhead\",\"case\":\"\",\"median_ns\":%.1f,\"min_ns\":%.1f,"
         "\"max_ns\":%.1f,\"samples_ns\":%s,\"ok\":true}\n",
         empty.med, empty.min, empty.max, empty.json().c_str());
  {
    unsigned *counter, *old;
    CK(cudaMalloc(&counter, 65536u * 32u * 4u));
    CK(cudaMalloc(&old, 65536u * 4u));
    const unsigned Ts[] = {1, 32, 256, 1024, 4096, 16384, 65536};
    std::vector<unsigned> h(65536u * 32u);
    for (int fam = 0; fam < 3; ++fam)
      for (int ret = 0; ret <= 1; ++ret)
        for (unsigned T : Ts) {
          if (fam == 1 && T < 32) continue;
          unsigned K = fam == 0 ? 1 : fam == 1 ? 32 : T, stride = fam == 0 ? 1 : 32;
          unsigned G = std::min(T, 256u), groups = (T + G - 1) / G;
          size_t bytes = (size_t)K * stride * 4;
          Time t = timed_prep([&] { CK(cudaMemsetAsync(counter, 0, bytes)); },
                              [&] { contention_k<<<groups, G>>>(counter, old, T, K, stride, ret); });
          // The last run's counters: counter c got (T - 1 - c + K) / K adds.
          CK(cudaMemcpy(h.data(), counter, bytes, cudaMemcpyDeviceToHost));
          bool ok = true;
          for (unsigned c = 0; c < K; ++c) ok = ok && h[(size_t)c * stride] == (T - 1 - c + K) / K;
          const char* fname = fam == 0 ? "contention_one_address" : fam == 1 ? "contention_32_addresses"
                                                                            : "contention_distinct";
          printf("{\"kind\":\"suite\",\"bench\":\"%s\",\"case\":\"RET=%d,T=%u\",\"median_ns\":%.1f,"
                 "\"min_ns\":%.1f,\"max_ns\":%.1f,\"samples_ns\":%s,\"ok\":%s}\n",
                 fname, ret, T, t.med, t.min, t.max, t.json().c_str(), ok ? "true" : "false");
          fflush(stdout);
        }
    CK(cudaFree(counter));
    CK(cudaFree(old));
  }

  fence<0>("st.relaxed.gpu");
  fence<1>("st.relaxed.gpu; fence.acq_rel.cta");
  fence<2>("st.relaxed.gpu; fence.acq_rel.gpu");
  fence<3>("st.relaxed.gpu; fence.sc.gpu");
  fence<4>("st.relaxed.gpu; fence.acq_rel.sys");
  fence<5>("st.relaxed.gpu; fence.sc.sys");
  fence<6>("st.release.gpu");
  fence<7>("st.relaxed.gpu; bar.sync (1 thread)");

  // bandwidth
  {
    size_t bytes = 1ull << 30, n = bytes / 16;
    uint4 *a, *b;
    CK(cudaMalloc(&a, bytes));
    CK(cudaMalloc(&b, bytes));
    CK(cudaMemset(a, 1, bytes));
    CK(cudaMemset(b, 0, bytes));
    int blocks = p.multiProcessorCount * 8;
    double rd = timed([&] { read_k<false><<<blocks, 256>>>(a, n, 1, d_out32); }, 10, 2).med;
    double cp = timed([&] { copy_k<<<blocks, 256>>>(a, b, n); }, 10, 2).med;
    size_t l2b = 16u << 20, l2n = l2b / 16;
    double l2 = timed([&] { read_k<true><<<blocks, 256>>>(a, l2n, 64, d_out32); }, 10, 2).med;
    printf("{\"kind\":\"bandwidth\",\"read_gbs\":%.1f,\"copy_gbs\":%.1f,\"l2_read_gbs\":%.1f,\"bytes\":%zu}\n",
           bytes / rd, 2.0 * bytes / cp, 64.0 * l2b / l2, bytes);
    CK(cudaFree(a));
    CK(cudaFree(b));
  }
  clock_mhz("end");
  return 0;
}

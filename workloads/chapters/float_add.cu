// float_add.cu — f32 atomic add (SYCL fig. 19-14's floating fetch_add) in CUDA. With the config's
// atomics.float_add = "native" the atomic units add floats; with "cas_loop" the simulator lowers
// every f32 atomic add at load time into a compare-exchange retry loop, as SYCL implementations do
// on hardware without float atomics. Adding 0.5 keeps every partial sum exact, so both are exact.
//
// Changed from the SYCL listing (a member declaration `Floating fetch_add(Floating operand,
// memory_order order = default_read_modify_write_order, memory_scope scope = default_scope)`): the
// use is written as a kernel with `cuda::atomic_ref<float, cuda::thread_scope_device>` and a relaxed
// order; RET selects whether the returned old value is kept (returning) or not (non-returning).

/* gpumemsim
param T = 1024              // work-items
param K = 4                 // accumulators; work-item i adds to acc[i % K]
param RET = 1               // 1: returning (keeps the old value), 0: non-returning
param G = 128               // work-group size

require RET == 0 || RET == 1, "RET selects a form: 1 or 0"
require T / K <= 1 << 24, "f32 sums of 0.5 are exact up to 2^24 adds"
groups ceil_div(T, G)
group_size min(T, G)
buffer acc: f32[K] = zero
buffer ret: f32[T] = zero                   // the value each work-item's add saw (RET = 1)

check forall j in acc: acc[j] == 0.5 * ((T - 1 - j + K) / K)
// The adders of acc[j] saw 0, 0.5, 1, ..., (c(j) - 1) / 2.
check sum(ret) == RET * sum(j = 0 .. K: 0.25 * ((T - 1 - j + K) / K) * ((T - 1 - j + K) / K - 1))
*/

#include <cuda/atomic>

__global__ void float_add(float *acc, float *ret)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= T)
        return;
    cuda::atomic_ref<float, cuda::thread_scope_device> a(acc[i % K]);
    if (RET) {
        ret[i] = a.fetch_add(0.5f, cuda::memory_order_relaxed);
    } else {
        a.fetch_add(0.5f, cuda::memory_order_relaxed);
    }
}

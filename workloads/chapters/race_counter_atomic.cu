// race_counter_atomic.cu — SYCL fig. 19-7 in CUDA: the update of race_counter as a relaxed
// system-scope atomic add through an atomic reference; no update is lost.
//
// Changed from the SYCL listing: `atomic_ref<int, memory_order::relaxed, memory_scope::system,
// access::address_space::global_space>` → `cuda::atomic_ref<int, cuda::thread_scope_system>` (the
// order is not a template argument in CUDA, and CUDA's operators are seq_cst, so `atomic_data += 1`
// becomes `fetch_add(1, cuda::memory_order_relaxed)`); `id<1> i` → the global thread index, with
// the guard `i < N` because the launch rounds N up to whole blocks. The result is unused, so the
// add is the non-returning form (PTX `red`), as nvcc emits it.

/* gpumemsim
param N = 1024              // work-items
param M = 64                // counters
param G = 64                // work-group size

groups ceil_div(N, G)
group_size G
buffer data: i32[M] = zero

check forall j in data: data[j] == (N - 1 - j + M) / M
check sum(data) == N
*/

#include <cuda/atomic>

__global__ void race_counter_atomic(int *data)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) {
        int j = i % M;
        cuda::atomic_ref<int, cuda::thread_scope_system> atomic_data(data[j]);
        atomic_data.fetch_add(1, cuda::memory_order_relaxed);
    }
}

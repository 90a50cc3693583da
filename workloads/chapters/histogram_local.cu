// histogram_local.cu — the three-phase histogram of SYCL fig. 19-18 in CUDA.
//   1. the threads of a block zero a histogram in shared memory (each owns distinct bins: plain stores);
//   2. each block counts its chunk of the input with relaxed block-scope atomics on shared memory;
//   3. the partial histogram is added into global memory with relaxed system-scope atomics.
// A block barrier between phases makes each phase's writes visible to the next.
//
// Changed from the SYCL listing: the `local_atomic_ref`/`global_atomic_ref` aliases (templates) →
// `cuda::atomic_ref<uint32_t, cuda::thread_scope_block>` / `<..., cuda::thread_scope_system>` written
// out, with `fetch_add(v, cuda::memory_order_relaxed)` for `++` and `+=` (the aliases' default order
// is relaxed, CUDA's operators are seq_cst); `local_accessor<uint32_t, 1>{B, h}` → `__shared__
// uint32_t local[B]`; `it.get_local_id(0)` / `it.get_local_range(0)` → threadIdx.x / blockDim.x;
// `it.barrier()` → __syncthreads(); `distribute_range(grp, N)` (not shown in the chapter) → the
// block's chunk computed inline.

/* gpumemsim
param N = 4096              // input values
param B = 64                // bins
param G = 128               // work-group size
param GROUPS = 8            // work-groups; each counts ceil(N / GROUPS) values
param SEED = 7              // of the input values

groups GROUPS
group_size G
buffer input: u32[N] = random(SEED, 1000)
buffer histogram: u32[B] = zero

check forall b in histogram: histogram[b] == sum(i = 0 .. N: input[i] % B == b)
check sum(histogram) == N
*/

#include <cstdint>
#include <cuda/atomic>

__global__ void histogram_local(const uint32_t *input, uint32_t *histogram)
{
    __shared__ uint32_t local[B];

    // Phase 1: Work-items co-operate to zero local memory
    for (int32_t b = threadIdx.x; b < B; b += blockDim.x) {
        local[b] = 0;
    }
    __syncthreads(); // Wait for all to be zeroed

    // Phase 2: Work-groups each compute a chunk of the input
    // Work-items co-operate to compute histogram in local memory
    const int chunk = (N + gridDim.x - 1) / gridDim.x;
    const int group_start = blockIdx.x * chunk;
    const int group_end = min(group_start + chunk, N);
    for (int i = group_start + threadIdx.x; i < group_end; i += blockDim.x) {
        int32_t b = input[i] % B;
        cuda::atomic_ref<uint32_t, cuda::thread_scope_block>(local[b]).fetch_add(1, cuda::memory_order_relaxed);
    }
    __syncthreads(); // Wait for all local histogram updates to complete

    // Phase 3: Work-items co-operate to update global memory
    for (int32_t b = threadIdx.x; b < B; b += blockDim.x) {
        cuda::atomic_ref<uint32_t, cuda::thread_scope_system>(histogram[b]).fetch_add(local[b], cuda::memory_order_relaxed);
    }
}

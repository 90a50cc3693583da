// A fuzzing seed (not a workload): many of the CUDA builtins, atomics and control forms the front
// end accepts, so that mutations reach their lowering.

/* gpumemsim
param N = 256
param G = 64

groups N / G
group_size G
buffer data: i32[N] = zero
buffer counters: u32[4] = zero
buffer wide: u64[2] = zero
buffer f: f32[2] = zero
check sum(data) >= 0
*/

#include <cuda/atomic>

#define STEP 2

__device__ int helper(int a, int b)
{
    return a > b ? a - b : b - a;
}

__global__ void builtins(int *data, unsigned int *counters, unsigned long long *wide, float *f)
{
    __shared__ int tile[64];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int l = threadIdx.x;
    tile[l] = i;
    __syncthreads();
    int s = 0;
    for (int k = 0; k < STEP; ++k) {
        s += tile[(l + k) % 64] << 1;
        if (s > 1000) break;
    }
    s += max(s, 3) - min(l, 2);
    atomicAdd(&counters[0], 1u);
    atomicMax(&counters[1], (unsigned int)s);
    atomicCAS(&counters[2], 0u, 1u);
    atomicAdd(&f[0], 1.5f);
    __threadfence();
    cuda::atomic_ref<unsigned long long, cuda::thread_scope_device> w(wide[0]);
    w.fetch_add(1, cuda::memory_order_release);
    while (w.load(cuda::memory_order_acquire) == 0) {}
    cuda::atomic_thread_fence(cuda::memory_order_seq_cst, cuda::thread_scope_block);
    volatile int *v = data;
    v[i] = helper(s, l) % 5 + min(l, 3) - (int)gridDim.x;
    __syncwarp();
}

// warp_reduce.cu — a warp-shuffle reduction: each warp folds its 32 values with
// __shfl_down_sync, lane 0 adds the warp's total into the result with one atomic.

/* gpumemsim
param N = 4096
groups N / 128
group_size 128
buffer x: u32[N] = random(11, 500)
buffer total: u32[1] = zero
check total[0] == sum(x)
*/

__device__ __forceinline__ unsigned warp_sum(unsigned v)
{
    for (int d = 16; d > 0; d >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, d);
    return v;
}

__global__ void shuffle_sum(const unsigned *x, unsigned *total)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned v = i < N ? x[i] : 0;
    v = warp_sum(v);
    if ((threadIdx.x & 31) == 0)
        atomicAdd(total, v);
}

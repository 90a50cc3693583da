// tree_reduce.cu — each block sums its slice of x in shared memory, halving the active threads
// per step with a barrier between steps; thread 0 writes the block's sum.

/* gpumemsim
param N = 2048
param G = 256
groups N / G
group_size G
buffer x: u32[N] = random(7, 1000)
buffer sums: u32[N / G] = zero
check sum(sums) == sum(x)
*/

#define BLOCK 256

__global__ void block_sum(const unsigned *x, unsigned *sums)
{
    __shared__ unsigned partial[BLOCK];
    unsigned t = threadIdx.x;
    unsigned i = blockIdx.x * blockDim.x + t;
    partial[t] = i < N ? x[i] : 0u;
    __syncthreads();
    for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
        if (t < half)
            partial[t] += partial[t + half];
        __syncthreads();
    }
    if (t == 0)
        sums[blockIdx.x] = partial[0];
}

// histogram256.cu — a 256-bin histogram: each block counts into shared bins with shared-memory
// atomics, then merges its bins into the global histogram with one global atomic per bin.

/* gpumemsim
param N = 8192
param G = 256
groups 8
group_size G
buffer data: u32[N] = iota
buffer hist: u32[256] = zero
check forall j in hist: hist[j] == N / 256
check sum(hist) == N
*/

#define BINS 256

__global__ void histogram(const unsigned *data, unsigned *hist)
{
    __shared__ unsigned bins[BINS];
    for (int b = threadIdx.x; b < BINS; b += blockDim.x)
        bins[b] = 0;
    __syncthreads();
    int stride = blockDim.x * gridDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < N; i += stride)
        atomicAdd(&bins[data[i] & (BINS - 1)], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < BINS; b += blockDim.x)
        if (bins[b])
            atomicAdd(&hist[b], bins[b]);
}

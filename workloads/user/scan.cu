// scan.cu — a Hillis-Steele inclusive scan of each block in shared memory, double-buffered:
// at step d every thread adds the value d places to its left.

/* gpumemsim
param N = 1024
param G = 256
groups N / G
group_size G
buffer x: u32[N] = iota
buffer out: u32[N] = zero
check forall i in out: out[i] == (i % G) * (i % G + 1) / 2 + (i - i % G) * (i % G + 1)
*/

#define BLOCK 256

__global__ void scan(const unsigned *x, unsigned *out)
{
    __shared__ unsigned buf[2][BLOCK];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    int src = 0;
    buf[0][t] = x[i];
    __syncthreads();
    for (int d = 1; d < blockDim.x; d <<= 1) {
        int dst = 1 - src;
        buf[dst][t] = t >= d ? buf[src][t] + buf[src][t - d] : buf[src][t];
        __syncthreads();
        src = dst;
    }
    out[i] = buf[src][t];
}

// constant_table.cu — a __constant__ lookup table read by every thread: out[i] = squares[i % 16].

/* gpumemsim
param N = 512
groups N / 128
group_size 128
buffer out: u32[N] = zero
check forall i in out: out[i] == (i % 16) * (i % 16)
*/

__constant__ unsigned squares[16] = {0, 1, 4, 9, 16, 25, 36, 49, 64, 81, 100, 121, 144, 169, 196, 225};

__global__ void lookup(unsigned *out)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N)
        out[i] = squares[i % 16];
}

// double_math.cu — double-precision arithmetic: a polynomial in double, rounded to an integer
// result (out[i] = round(0.5 * i * i + 0.25 * i)), and a double atomicAdd of the halves.

/* gpumemsim
param N = 256
groups N / 64
group_size 64
buffer out: u32[N] = zero
buffer acc: u64[1] = zero
check forall i in out: out[i] == (2 * i * i + i + 2) / 4
check acc[0] == 0x40AFE00000000000
*/

__global__ void poly(unsigned *out, double *acc)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    double v = (double)i;
    double p = 0.5 * v * v + 0.25 * v;
    out[i] = (unsigned)floor(p + 0.5);
    atomicAdd(acc, v / 8.0);
}

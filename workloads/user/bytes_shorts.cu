// bytes_shorts.cu — sub-word accesses: each thread reads one byte and one 16-bit value of the
// packed input words and writes a byte and a short of the packed output (out bytes = in bytes + 1).

/* gpumemsim
param N = 256
groups N / 64
group_size 64
buffer in: u32[N / 4] = fill(0x04030201)
buffer out8: u32[N / 4] = zero
buffer out16: u32[N / 4] = zero
check forall i in out8: out8[i] == 0x05040302
check forall i in out16: out16[i] == 0x04040202
*/

__global__ void subword(const unsigned *in, unsigned *out8, unsigned *out16)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned char *b = (const unsigned char *)in;
    unsigned char *o = (unsigned char *)out8;
    o[i] = (unsigned char)(b[i] + 1);
    if (i < N / 2) {
        const unsigned short *s = (const unsigned short *)in;
        short *os = (short *)out16;
        os[i] = (short)(s[i] + 1);
    }
}

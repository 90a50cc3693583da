// vector_loads.cu — 128- and 64-bit vector accesses: float4 loads and stores (out = in * 2) and
// an int2 load whose two halves are added.

/* gpumemsim
param N = 1024
groups N / 4 / 64
group_size 64
buffer in: f32[N] = iota
buffer out: f32[N] = zero
buffer pairs: i32[N] = iota
buffer sums: i32[N / 2] = zero
check forall i in out: out[i] == 2 * i
check forall i in sums: sums[i] == 4 * i + 1
*/

__global__ void vec(const float4 *in, float4 *out, const int2 *pairs, int *sums)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    float4 v = in[i];
    out[i] = make_float4(v.x * 2.0f, v.y * 2.0f, v.z * 2.0f, v.w * 2.0f);
    int2 a = pairs[2 * i];
    int2 b = pairs[2 * i + 1];
    sums[2 * i] = a.x + a.y;
    sums[2 * i + 1] = b.x + b.y;
}

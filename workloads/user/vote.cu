// vote.cu — warp votes: how many lanes hold an odd value (__ballot_sync), whether any lane holds
// the value 5 (__any_sync) and whether all are below N (__all_sync), written per thread.

/* gpumemsim
param N = 1024
groups N / 64
group_size 64
buffer x: u32[N] = iota
buffer res: u32[N] = zero
check forall i in res: res[i] == 16 + 1000 + 100 * (i < 32)
*/

__global__ void votes(const unsigned *x, unsigned *res)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned v = x[i];
    unsigned odd = __ballot_sync(0xffffffffu, v & 1);
    int five = __any_sync(0xffffffffu, v == 5);
    int below = __all_sync(0xffffffffu, v < N);
    res[i] = __popc(odd) + 100 * five + 1000 * below;
}

/* gpumemsim
param N = 4096
groups N / 256
group_size 256
buffer hits: u32[8] = zero
check sum(hits) == N
*/
__global__ void count(unsigned *hits)
{
    atomicAdd(&hits[threadIdx.x % 8], 1);
}

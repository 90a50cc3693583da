// flag_atomic_ref.cu — producer/consumer through a flag with cuda::atomic_ref: block 0 writes
// the payload and publishes it with a release store; block 1 spins with acquire loads and copies it.

/* gpumemsim
groups 2
group_size 32
buffer payload: u32[4] = zero
buffer flag: u32[1] = zero
buffer seen: u32[4] = zero
check forall i in seen: seen[i] == 40 + i
*/

#include <cuda/atomic>

__global__ void handoff(unsigned *payload, unsigned *flag, unsigned *seen)
{
    cuda::atomic_ref<unsigned, cuda::thread_scope_device> f(*flag);
    if (blockIdx.x == 0 && threadIdx.x < 4) {
        payload[threadIdx.x] = 40 + threadIdx.x;
        __syncwarp(0xfu);
        if (threadIdx.x == 0)
            f.store(1u, cuda::memory_order_release);
    } else if (blockIdx.x == 1 && threadIdx.x == 0) {
        while (f.load(cuda::memory_order_acquire) == 0u) { }
        for (int k = 0; k < 4; ++k)
            seen[k] = payload[k];
    }
}

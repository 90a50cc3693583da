// spin_lock.cu — a global lock taken with atomicCAS and released with atomicExch, with
// __threadfence around the critical section; one thread per block increments a plain counter.

/* gpumemsim
param B = 16
groups B
group_size 32
buffer lock: u32[1] = zero
buffer counter: u32[1] = zero
check counter[0] == B
check lock[0] == 0
*/

__device__ void acquire(unsigned *l)
{
    while (atomicCAS(l, 0u, 1u) != 0u) { }
    __threadfence();
}

__device__ void release(unsigned *l)
{
    __threadfence();
    atomicExch(l, 0u);
}

__global__ void locked_count(unsigned *lock, unsigned *counter)
{
    if (threadIdx.x == 0) {
        acquire(lock);
        volatile unsigned *c = counter;
        *c = *c + 1;
        release(lock);
    }
}

// device_latch.cu — the device-wide latch of SYCL fig. 19-19 and its use in fig. 19-20, in CUDA.
// Every thread writes a 1 to its element of data; then in each block one elected thread increments
// an acq_rel device-scope counter and spins on it (acquire loads) until all blocks have arrived,
// while the others wait at the block's barrier; after the latch every thread sums all of data and
// must see every 1. It completes only when all blocks are resident at once: with more blocks than
// the GPU holds (`--param GROUPS=2048 --param G=256`) the run ends in a no-progress diagnosis.
//
// Changed from the SYCL listing: `struct device_latch` with `arrive_and_wait(it)` → a __device__
// function taking the counter and the expected count (no structs here); `atomic_ref<size_t,
// memory_order::acq_rel, memory_scope::device, ...>` → `cuda::atomic_ref<unsigned long long,
// cuda::thread_scope_device>` with the orders the SYCL default acq_rel gives each operation written
// out: `atomic_counter++` is `fetch_add(1, acq_rel)`, `load()` is `load(acquire)`;
// `it.barrier()` → __syncthreads(); `it.get_local_linear_id()` → threadIdx.x;
// `it.get_global_linear_id()` → blockIdx.x * blockDim.x + threadIdx.x; the USM allocation of the
// latch → the `counter` buffer.

/* gpumemsim
param GROUPS = 16           // work-groups (all must fit the GPU at once)
param G = 64                // work-group size

groups GROUPS
group_size G
buffer data: u32[GROUPS * G] = zero
buffer sums: u64[GROUPS * G] = zero
buffer counter: u64[1] = zero

check forall i in sums: sums[i] == global_size
check counter[0] == GROUPS
*/

#include <cuda/atomic>

__device__ void arrive_and_wait(unsigned long long *counter, unsigned long long expected)
{
    __syncthreads();
    // Elect one work-item per work-group to be involved
    // in the synchronization
    // All other work-items wait at the barrier after the branch
    if (threadIdx.x == 0) {
        cuda::atomic_ref<unsigned long long, cuda::thread_scope_device> atomic_counter(*counter);

        // Signal arrival at the barrier
        // Previous writes should be visible to
        // all work-items on the device
        atomic_counter.fetch_add(1, cuda::memory_order_acq_rel);

        // Wait for all work-groups to arrive
        // Synchronize with previous releases by
        // all work-items on the device
        while (atomic_counter.load(cuda::memory_order_acquire) != expected) {}
    }
    __syncthreads();
}

__global__ void device_latch(unsigned int *data, size_t *sums, unsigned long long *counter)
{
    const int num_groups = gridDim.x;
    const int items_per_group = blockDim.x;
    const unsigned int id = blockIdx.x * blockDim.x + threadIdx.x;

    // Every work-item writes a 1 to its location
    data[id] = 1;

    // Every work-item waits for all writes
    arrive_and_wait(counter, num_groups);

    // Every work-item sums the values it can see
    size_t sum = 0;
    for (int i = 0; i < num_groups * items_per_group; ++i) {
        sum += data[i];
    }
    sums[id] = sum;
}

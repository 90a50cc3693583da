// race_counter_barrier.cl — SYCL fig. 19-6 in OpenCL C: one work-group, one updater per round, a
// work-group barrier ending every round, so the plain load-add-store of round r sees the store of
// every earlier round. Exact, and slow: N rounds of N work-items.
//
// Changed from the SYCL listing: `nd_item<1> it` / `it.get_global_id(0)` → get_global_id(0);
// `it.barrier()` → barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE) (SYCL's default fence space is
// global_and_local); the launch `nd_range<1>{N, N}` is `groups 1` / `group_size N`.

/* gpumemsim
param N = 256               // work-items, all in one work-group
param M = 16                // counters

groups 1
group_size N
buffer data: i32[M] = zero

// Work-items j, j + M, j + 2M, ... update data[j].
check forall j in data: data[j] == (N - 1 - j + M) / M
check sum(data) == N
*/

__kernel void race_counter_barrier(__global int *data)
{
    int i = get_global_id(0);
    int j = i % M;
    for (int round = 0; round < N; ++round) {
        // Allow exactly one work-item update per round
        if (i == round) {
            data[j] += 1;
        }
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    }
}

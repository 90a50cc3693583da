// A fuzzing seed (not a workload): many of the OpenCL C builtins, atomics and control forms the
// front end accepts, so that mutations reach their lowering.

/* gpumemsim
param N = 256
param G = 64
#define UNUSED 0

groups N / G
group_size G
buffer data: i32[N] = zero
buffer flag: u32[4] = zero
buffer out: u32[N] = 1
check sum(data) >= 0
*/

#define STEP 2
#define TWICE (2 * STEP)

int helper(int a, int b)
{
    return a > b ? a - b : b - a;
}

__kernel void builtins(__global int *data, __global atomic_uint *flag, __global uint *out)
{
    __local int tile[64];
    size_t i = get_global_id(0);
    int l = (int)get_local_id(0);
    tile[l] = (int)i;
    barrier(CLK_LOCAL_MEM_FENCE);
    work_group_barrier(CLK_GLOBAL_MEM_FENCE, memory_scope_work_group);
    int s = 0;
    for (int k = 0; k < STEP; k += 1) {
        s += tile[(l + k) % 64] << 1;
        if (s > 1000) break; else continue;
    }
    while (s < 0) { s = -s; }
    do { s ^= 0x5a; } while (s > 100000);
    switch (l & 3) {
    case 0: s += 1; break;
    case 1: s -= 1;
    default: s = max(s, 0);
    }
    atomic_fetch_add_explicit(&flag[0], 1u, memory_order_relaxed, memory_scope_device);
    atomic_store_explicit(&flag[1], 1u, memory_order_release, memory_scope_device);
    uint seen = atomic_load_explicit(&flag[1], memory_order_acquire, memory_scope_device);
    uint expected = 0;
    atomic_compare_exchange_strong_explicit(&flag[2], &expected, seen, memory_order_acq_rel,
                                            memory_order_relaxed, memory_scope_work_group);
    atomic_work_item_fence(CLK_GLOBAL_MEM_FENCE, memory_order_seq_cst, memory_scope_device);
    atomic_fetch_max(&flag[3], (uint)s);
    mem_fence(CLK_GLOBAL_MEM_FENCE);
    atomic_add(&data[0], 1);
    atom_inc(&data[1]);
    out[i] = (uint)min(helper(s, l), TWICE) + get_sub_group_local_id() + get_num_groups(0);
    data[i] = abs(s) % 7 + (int)get_local_size(0) - (int)get_group_id(0);
}

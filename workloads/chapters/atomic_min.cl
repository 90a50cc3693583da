// atomic_min.cl — the shared minimum of the OpenCL 2.0 synchronisation chapter:
//     int oldMin = atomic_fetch_min(&curMin, myMin);
// Each work-item offers a signed value; the returning form hands back the minimum before its own
// update.
//
// Changed from the listing: `curMin` is an `atomic_int` object in the chapter; a kernel reaches it
// through a pointer to the buffer holding it, so `&curMin` is `&curMin[0]`. As in the chapter, the
// call without `_explicit` is seq_cst at device scope (OpenCL 2.0's defaults; the .kern version uses
// a relaxed atomic, so this one pays for seq_cst ordering).

/* gpumemsim
param N = 2048              // work-items
param G = 128               // work-group size
param SEED = 11             // of the values

groups ceil_div(N, G)
group_size G
buffer input: i32[N] = random(SEED, 1000000)
buffer curMin: i32[1] = 2147483647
buffer oldMins: i32[N] = zero

check curMin[0] == min(i = 0 .. N: input[i]) - 500000
// Every returned minimum is at least the final one; the first update saw the initial INT_MAX.
check forall i in oldMins: oldMins[i] >= curMin[0]
check max(i = 0 .. N: oldMins[i]) == 2147483647
*/

__kernel void atomic_min(__global const int *input, volatile __global atomic_int *curMin,
                         __global int *oldMins)
{
    int i = get_global_id(0);
    if (i < N) {
        int myMin = input[i] - 500000;      // values from -500000 to 499999
        int oldMin = atomic_fetch_min(&curMin[0], myMin);
        oldMins[i] = oldMin;
    }
}

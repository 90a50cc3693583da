// cas_add.cu — atomic add built from compare-and-swap (the CUDA atomics chapter: "all other atomic
// functions can be implemented with atomicCAS") against the native atomicAdd. Both give every
// thread a distinct old value and the same final counts; under contention the CAS loop costs more:
// of the threads that try one counter at once only one succeeds per round trip to the L2 slice, and
// the rest retry.
//
// Changed from the chapter's listing: the function is called atomic_add_cas (a second `atomicAdd`
// for int would clash with CUDA's own), and its loop reuses the value atomicCAS returns instead of
// re-reading `*address` with a plain load each time — the CUDA Programming Guide's form, as in
// cas_add.kern. The chapter's plain re-read may be served by the SM's L1, which atomics at the L2
// do not update, so a retry could read the same stale value again (and it is a data race); the one
// read before the loop is `volatile` (PTX ld.volatile: relaxed, so not a race).
// CAS selects the version (a workload parameter, so the `?:` is decided at compile time).

/* gpumemsim
param T = 1024              // work-items
param K = 1                 // counters; work-item i adds to counter i % K (K = 1: all contend)
param CAS = 1               // 1: compare-and-swap loop, 0: native atomic add
param G = 128               // work-group size

require CAS == 0 || CAS == 1, "CAS selects a version: 1 or 0"
groups ceil_div(T, G)
group_size min(T, G)
buffer counter: i32[K] = zero
buffer old: i32[T] = zero                   // the value each work-item's add saw

// Counter j receives c(j) = (T - 1 - j + K) / K adds ...
check forall j in counter: counter[j] == (T - 1 - j + K) / K
// ... and its adders saw 0, 1, ..., c(j) - 1.
check sum(old) == sum(j = 0 .. K: ((T - 1 - j + K) / K) * ((T - 1 - j + K) / K - 1) / 2)
*/

__device__ int atomic_add_cas(int *address, int value_to_add)
{
    int old_value = *(volatile int *)address;
    int assumed;
    do {
        assumed = old_value;
        old_value = atomicCAS(address, assumed, assumed + value_to_add);
    } while (assumed != old_value);
    return old_value;
}

__global__ void cas_add(int *counter, int *old)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < T) {
        int j = i % K;
        old[i] = CAS ? atomic_add_cas(&counter[j], 1) : atomicAdd(&counter[j], 1);
    }
}

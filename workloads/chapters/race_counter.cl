// race_counter.cl — SYCL fig. 19-3/19-4 (the lost-update kernel) in OpenCL C.
//
// The SYCL listing:                         here:
//   Q.parallel_for(N, [=](id<1> i) {         __kernel void race_counter(__global int *data)
//     int j = i % M;                           int i = get_global_id(0);  (id<1> i)
//     data[j] += 1;                            if (i < N) { ... }         (the launch rounds N up
//   }).wait();                                                            to whole work-groups)
// The host loop that prints data[] becomes the report and checks below.
//
// N work-items each add 1 to data[i % M] with a plain load and store; when N > M several
// work-items update one counter, their load-add-store sequences interleave, and updates are lost.

/* gpumemsim
param N = 1024              // work-items
param M = 64                // counters
param G = 64                // work-group size

groups ceil_div(N, G)
group_size G
buffer data: i32[M] = zero

report lost = N - sum(data)
// Every counter received at least one update, and updates were lost (needs N > M).
check forall j in data: data[j] >= min(1, N - j)
check sum(data) < N
*/

__kernel void race_counter(__global int *data)
{
    int i = get_global_id(0);
    if (i < N) {
        int j = i % M;
        data[j] += 1;
    }
}

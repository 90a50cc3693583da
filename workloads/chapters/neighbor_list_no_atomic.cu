// neighbor_list_no_atomic.cu — find_neighbor_no_atomic of the CUDA atomics chapter: thread n1 visits
// every n2, counts in a register and writes the transposed, coalesced layout
// d_NL[(count++) * N + n1] = n2, then d_NN[n1] = count. Points along a line as in
// neighbor_list_atomic.cu; the same validity checks on the transposed layout.
//
// Changed from the listing: none in the kernel; `real` is float.

/* gpumemsim
param N = 256               // points
param R = 3                 // neighbours lie within R points on each side
param MN = 2 * R            // slots per point
param G = 64                // work-group size

require MN >= 2 * R, "a point has up to 2R neighbours"
require 2 * R + 1 <= 52, "the set check encodes a list as bits of a double"
groups ceil_div(N, G)
group_size G
buffer d_x: f32[N] = iota
buffer d_y: f32[N] = 0
buffer d_NN: i32[N] = zero
buffer d_NL: i32[N * MN] = -1               // empty slots
arg cutoff_square = (R + 0.5) * (R + 0.5)

check forall n in d_NN: d_NN[n] == min(N - 1, n + R) - max(0, n - R)
// Slot k of point n is d_NL[k * N + n].
check forall n in d_NN: sum(k = 0 .. d_NN[n]: 1 << (d_NL[k * N + n] - max(0, n - R))) == (1 << (min(N - 1, n + R) - max(0, n - R) + 1)) - 1 - (1 << (n - max(0, n - R)))
*/

typedef float real;

void __global__ find_neighbor_no_atomic
(
    int *d_NN, int *d_NL, const real *d_x, const real *d_y,
    const int N, const real cutoff_square
)
{
    const int n1 = blockIdx.x * blockDim.x + threadIdx.x;
    if (n1 < N)
    {
        int count = 0;
        const real x1 = d_x[n1];
        const real y1 = d_y[n1];
        for (int n2 = 0; n2 < N; ++n2)
        {
            const real x12 = d_x[n2] - x1;
            const real y12 = d_y[n2] - y1;
            const real distance_square =x12*x12 + y12*y12;
            if ((distance_square<cutoff_square)&&(n2!= n1))
            {
                d_NL[(count++) * N + n1] = n2;
            }
        }
        d_NN[n1] = count;//优化
    }
}

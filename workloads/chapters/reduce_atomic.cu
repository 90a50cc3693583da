// reduce_atomic.cu — the block reduction of the CUDA atomics chapter ("CUDA 编程：基础与实践",
// reduce with shared memory): each block loads its slice of x into shared memory, halves the
// active threads per step of a tree reduction with a barrier after each step, and thread 0 adds the
// block's sum into d_y[0] with one atomic add (`atomicAdd(&d_y[0], s_y[0])`: a plain
// `d_y[bid] += s_y[0]` would lose updates).
//
// Changed from the book: `real` is `unsigned int` here (the book's float or double sums are not
// exact to check, and the IR has no double); the shared array's size is the block size G instead of
// the literal 128; N is the workload parameter instead of a file-scope constant.

/* gpumemsim
param N = 4096              // values
param G = 128               // work-group size
param SEED = 3              // of the values

require G & (G - 1) == 0, "the tree reduction needs a power-of-two work-group size G"
groups ceil_div(N, G)
group_size G
buffer d_x: u32[N] = random(SEED, 100)
buffer d_y: u32[1] = zero

check d_y[0] == sum(d_x)
*/

typedef unsigned int real;

void __global__ reduce_shared(const real *d_x, real *d_y)
{
    const int tid = threadIdx.x;
    const int bid = blockIdx.x;
    const int n = bid * blockDim.x + tid;
    __shared__ real s_y[G];
    s_y[tid] = (n < N) ? d_x[n] : 0;
    __syncthreads();

    for (int offset = blockDim.x >> 1; offset > 0; offset >>= 1)
    {
        if (tid < offset)
        {
            s_y[tid] += s_y[tid + offset];
        }
        __syncthreads();
    }

    if (tid == 0)
    {
        atomicAdd(&d_y[0], s_y[0]);
    }
}

// template_scalar.cu — a templated kernel with a functor type and macros, instantiated twice;
// the workload runs the unsigned one: out[i] = max(x[i], y[i]) (x iota, y reversed).

/* gpumemsim
param N = 1024
groups N / 256
group_size 256
buffer x: u32[N] = iota
buffer y: u32[N] = zero
buffer out: u32[N] = zero
kernel apply
check forall i in out: out[i] == i
*/

#define IDX (blockIdx.x * blockDim.x + threadIdx.x)
#define MAX(a, b) ((a) > (b) ? (a) : (b))

struct Max {
    template <typename T>
    __device__ T operator()(T a, T b) const { return MAX(a, b); }
};

template <typename T, typename Op>
__global__ void apply(const T *x, const T *y, T *out)
{
    unsigned i = IDX;
    if (i < N)
        out[i] = Op()(x[i], y[i]);
}

template __global__ void apply<unsigned, Max>(const unsigned *, const unsigned *, unsigned *);

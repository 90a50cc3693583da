// template_struct.cu — a templated kernel with a struct argument passed by value and
// function-like macros: out[i] = x[i] * p.mul + p.add, instantiated for unsigned.

/* gpumemsim
param N = 512
param MUL = 3
param ADD = 7
groups N / 128
group_size 128
buffer x: u32[N] = iota
buffer out: u32[N] = zero
check forall i in out: out[i] == i * MUL + ADD
*/

#define IDX() (blockIdx.x * blockDim.x + threadIdx.x)
#define AFFINE(v, p) ((v) * (p).mul + (p).add)

template <typename T>
struct Affine {
    T mul;
    T add;
};

template <typename T>
__global__ void affine(const T *x, T *out, Affine<T> p)
{
    unsigned i = IDX();
    if (i < N)
        out[i] = AFFINE(x[i], p);
}

template __global__ void affine<unsigned>(const unsigned *, unsigned *, Affine<unsigned>);

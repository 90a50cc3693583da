/* gpumemsim
groups 1
group_size 32
buffer data: i32[32] = zero
*/
__device__ void f0(int *d) { d[0] = 1; }
__device__ void f1(int *d) { f0(d); f0(d); }
__device__ void f2(int *d) { f1(d); f1(d); }
__device__ void f3(int *d) { f2(d); f2(d); }
__device__ void f4(int *d) { f3(d); f3(d); }
__device__ void f5(int *d) { f4(d); f4(d); }
__device__ void f6(int *d) { f5(d); f5(d); }
__device__ void f7(int *d) { f6(d); f6(d); }
__device__ void f8(int *d) { f7(d); f7(d); }
__device__ void f9(int *d) { f8(d); f8(d); }
__device__ void f10(int *d) { f9(d); f9(d); }
__device__ void f11(int *d) { f10(d); f10(d); }
__device__ void f12(int *d) { f11(d); f11(d); }
__device__ void f13(int *d) { f12(d); f12(d); }
__device__ void f14(int *d) { f13(d); f13(d); }
__device__ void f15(int *d) { f14(d); f14(d); }
__device__ void f16(int *d) { f15(d); f15(d); }
__device__ void f17(int *d) { f16(d); f16(d); }
__device__ void f18(int *d) { f17(d); f17(d); }
__device__ void f19(int *d) { f18(d); f18(d); }
__device__ void f20(int *d) { f19(d); f19(d); }
__device__ void f21(int *d) { f20(d); f20(d); }
__device__ void f22(int *d) { f21(d); f21(d); }
__device__ void f23(int *d) { f22(d); f22(d); }
__device__ void f24(int *d) { f23(d); f23(d); }
__device__ void f25(int *d) { f24(d); f24(d); }
__device__ void f26(int *d) { f25(d); f25(d); }
__device__ void f27(int *d) { f26(d); f26(d); }
__device__ void f28(int *d) { f27(d); f27(d); }
__device__ void f29(int *d) { f28(d); f28(d); }
__device__ void f30(int *d) { f29(d); f29(d); }
__global__ void k(int *data) { f30(data); }

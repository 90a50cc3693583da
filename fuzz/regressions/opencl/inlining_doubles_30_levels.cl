/* gpumemsim
groups 1
group_size 32
buffer data: i32[32] = zero
*/
void g0(__global int *d) { d[0] = 1; }
void g1(__global int *d) { g0(d); g0(d); }
void g2(__global int *d) { g1(d); g1(d); }
void g3(__global int *d) { g2(d); g2(d); }
void g4(__global int *d) { g3(d); g3(d); }
void g5(__global int *d) { g4(d); g4(d); }
void g6(__global int *d) { g5(d); g5(d); }
void g7(__global int *d) { g6(d); g6(d); }
void g8(__global int *d) { g7(d); g7(d); }
void g9(__global int *d) { g8(d); g8(d); }
void g10(__global int *d) { g9(d); g9(d); }
void g11(__global int *d) { g10(d); g10(d); }
void g12(__global int *d) { g11(d); g11(d); }
void g13(__global int *d) { g12(d); g12(d); }
void g14(__global int *d) { g13(d); g13(d); }
void g15(__global int *d) { g14(d); g14(d); }
void g16(__global int *d) { g15(d); g15(d); }
void g17(__global int *d) { g16(d); g16(d); }
void g18(__global int *d) { g17(d); g17(d); }
void g19(__global int *d) { g18(d); g18(d); }
void g20(__global int *d) { g19(d); g19(d); }
void g21(__global int *d) { g20(d); g20(d); }
void g22(__global int *d) { g21(d); g21(d); }
void g23(__global int *d) { g22(d); g22(d); }
void g24(__global int *d) { g23(d); g23(d); }
void g25(__global int *d) { g24(d); g24(d); }
void g26(__global int *d) { g25(d); g25(d); }
void g27(__global int *d) { g26(d); g26(d); }
void g28(__global int *d) { g27(d); g27(d); }
void g29(__global int *d) { g28(d); g28(d); }
void g30(__global int *d) { g29(d); g29(d); }
__kernel void k(__global int *data) { g30(data); }

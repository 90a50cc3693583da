// match_redux.cu — warp intrinsics of sm_70+/sm_80+: __activemask, __match_any_sync (lanes with
// the same key), __reduce_add_sync and __reduce_max_sync.

/* gpumemsim
param N = 256
groups N / 64
group_size 64
buffer key: u32[N] = iota
buffer peers: u32[N] = zero
buffer red: u32[N] = zero
check forall i in peers: peers[i] == 8
check forall i in red: red[i] == (i - i % 32) * 32 + 496 + (i - i % 32 + 31) * 100000 + 1000000000
*/

__global__ void intrinsics(const unsigned *key, unsigned *peers, unsigned *red)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned active = __activemask();
    unsigned k = key[i] % 4;
    unsigned same = __match_any_sync(active, k);
    peers[i] = __popc(same);
    unsigned s = __reduce_add_sync(active, key[i]);
    unsigned m = __reduce_max_sync(active, key[i]);
    red[i] = s + m * 100000 + (active == 0xffffffffu) * 1000000000;
}

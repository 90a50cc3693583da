// cg_reduce.cu — cooperative groups: the block syncs through this_thread_block().sync(), each
// 32-thread tile reduces with tile.shfl_down, and the tile's rank 0 adds its total.

/* gpumemsim
param N = 2048
groups N / 256
group_size 256
buffer x: u32[N] = random(5, 100)
buffer stage: u32[N] = zero
buffer total: u32[1] = zero
check total[0] == 2 * sum(x)
*/

#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__global__ void tile_sum(const unsigned *x, unsigned *stage, unsigned *total)
{
    cg::thread_block block = cg::this_thread_block();
    unsigned i = blockIdx.x * blockDim.x + block.thread_rank();
    stage[i] = 2 * x[i];
    block.sync();
    cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
    unsigned v = stage[i];
    for (int d = tile.size() / 2; d > 0; d /= 2)
        v += tile.shfl_down(v, d);
    if (tile.thread_rank() == 0)
        atomicAdd(total, v);
}

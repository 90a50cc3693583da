// transpose.cu — a tiled matrix transpose through a padded shared tile (tile[32][33]: the extra
// column keeps the column reads free of bank conflicts); 32x8 threads move a 32x32 tile.

/* gpumemsim
param W = 64
param H = 64
groups W / 32, H / 32
group_size 32, 8
buffer in: u32[W * H] = iota
buffer out: u32[W * H] = zero
check forall i in out: out[i] == (i % H) * W + i / H
*/

#define TILE 32
#define ROWS 8

__global__ void transpose(const unsigned *in, unsigned *out)
{
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        tile[threadIdx.y + j][threadIdx.x] = __uint_as_float(in[(y + j) * W + x]);
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        out[(y + j) * H + x] = __float_as_uint(tile[threadIdx.x][threadIdx.y + j]);
}

// One pass of a sum: block b writes the sum of its grid-stride slice of x to partial[b]
// (accumulated in double, then a shared-memory tree). Launched twice: once over x, then with
// one block over the partial sums (src/lib.rs).
#include "common.cuh"

extern "C" __global__ void __launch_bounds__(RK_BLOCK)
    reduce_sum(const float *__restrict__ x, float *__restrict__ partial, int n) {
    __shared__ double s[RK_BLOCK];
    double acc = 0.0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        acc += x[i];
    s[threadIdx.x] = acc;
    __syncthreads();
    for (int half = RK_BLOCK / 2; half > 0; half /= 2) {
        if (threadIdx.x < half)
            s[threadIdx.x] += s[threadIdx.x + half];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        partial[blockIdx.x] = (float)s[0];
}

// y[i] = a * x[i] + y[i], one thread per element.
#include "common.cuh"

extern "C" __global__ void __launch_bounds__(RK_BLOCK)
    saxpy(float a, const float *__restrict__ x, float *__restrict__ y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + y[i];
}

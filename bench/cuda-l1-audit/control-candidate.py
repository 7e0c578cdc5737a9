# Control candidate of the CUDA-L1 audit (bench/cuda-l1-audit.ts), written for KernelDuel: a correct
# load_inline kernel that must build, be correct and be labelled `custom` with most of the device
# time in its own kernel. When it is not, the audit's build failures and labels say more about the
# machine's toolchain (nvcc, ninja, torch's CUDA) than about CUDA-L1's candidates.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_src = r"""
#include <torch/extension.h>
__global__ void kd_control_relu(const float* __restrict__ x, float* __restrict__ y, long n) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f;
}
torch::Tensor relu_fwd(torch::Tensor x) {
    auto y = torch::empty_like(x);
    long n = x.numel();
    kd_control_relu<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""
cpp_src = "torch::Tensor relu_fwd(torch::Tensor x);"
ext = load_inline(name="kd_control_relu_ext", cpp_sources=cpp_src, cuda_sources=cuda_src, functions=["relu_fwd"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return ext.relu_fwd(x.contiguous())

# Control problem of the CUDA-L1 audit (bench/cuda-l1-audit.ts): y = relu(x) on 16M floats.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)


n = 1 << 24


def get_inputs():
    return [torch.randn(n)]


def get_init_inputs():
    return []

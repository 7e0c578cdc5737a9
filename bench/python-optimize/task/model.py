# KernelDuel's own GPU check problem for Python candidates (not a KernelBench file): y = relu(x) on
# a 64M-element fp32 tensor (256 MiB in, 256 MiB out): memory-bound, so a custom kernel can match
# PyTorch's and a wrong or lazy one shows at once.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)


batch_size = 16384
dim = 4096


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []

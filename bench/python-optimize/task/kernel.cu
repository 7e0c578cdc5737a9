// KERNELDUEL_PLACEHOLDER_BASELINE: this task is judged with Python candidates (ModelNew); a CUDA
// entry point for it needs the PyTorch judge (docs/PYTHON-CANDIDATES.md, the plan at the end).
void model_forward(const float* x, float* out) {}

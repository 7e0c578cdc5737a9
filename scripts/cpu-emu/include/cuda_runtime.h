// empty: scripts/cpu-emu/emu.h stands in for the CUDA runtime

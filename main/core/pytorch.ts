// What the front doors need of PyTorch-reference tasks: which Python (with torch) runs them. The
// doors may not reach the platform layer themselves (scripts/layers.mjs), so they ask here.
export { findPython, type PythonEnv } from '../engine/platform/toolchain/python.js';

// Mapping between CUDA compute capabilities ("9.0") and nvcc architecture names ("sm_90").

const CC_RE = /^\s*(\d{1,2})\.(\d)\s*$/;
const ARCH_RE = /^\s*(?:sm|compute)_(\d{1,2})(\d)([af]?)\s*$/;

/** '9.0' -> 'sm_90', '8.6' -> 'sm_86', '10.0' -> 'sm_100', '12.0' -> 'sm_120'. Throws on anything else. */
export function archForComputeCapability(cc: string): string {
  const m = typeof cc === 'string' ? CC_RE.exec(cc) : null;
  if (!m) {
    throw new Error(
      `Not a CUDA compute capability: ${JSON.stringify(cc)} (expected "major.minor", e.g. "9.0" or "8.6")`,
    );
  }
  const major = Number(m[1]);
  if (major < 1) throw new Error(`Not a CUDA compute capability: ${JSON.stringify(cc)} (major version must be at least 1)`);
  return `sm_${major}${m[2]}`;
}

/** 'sm_90' -> '9.0', 'sm_86' -> '8.6', 'sm_100' -> '10.0', 'compute_120' -> '12.0', 'sm_90a' -> '9.0'. Throws on anything else. */
export function computeCapabilityOfArch(arch: string): string {
  const m = typeof arch === 'string' ? ARCH_RE.exec(arch) : null;
  if (!m || Number(m[1]) < 1) {
    throw new Error(`Not a CUDA architecture name: ${JSON.stringify(arch)} (expected e.g. "sm_90" or "compute_86")`);
  }
  return `${Number(m[1])}.${m[2]}`;
}

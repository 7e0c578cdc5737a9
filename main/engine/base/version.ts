// The version recorded in sessions and exported files.
export const KERNELDUEL_VERSION = '0.1.0';

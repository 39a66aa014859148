// The TypeScript shape of what the native addon exports (native/napi/). One interface per object.

/** CPU facts reported by native/core/cpu_features. */
export interface NativeCpuInfo {
  brand: string;
  logicalCores: number;
  threads: number;
  features: Record<string, boolean>;
  simdLevel: string;
}

/** One CUDA device. */
export interface NativeCudaDevice {
  index: number;
  name: string;
  totalMemory: number;
  computeCapability: string;
  multiprocessors: number;
}

/** The CUDA runtime's view of this machine. */
export interface NativeCudaInfo {
  compiled: boolean;
  deviceCount: number;
  driverVersion: number;
  runtimeVersion: number;
  devices: NativeCudaDevice[];
  error: string;
}

/** Whether an optional library could be opened with dlopen. */
export interface NativeLibraryProbe {
  found: boolean;
  path: string;
  error: string;
}

/** Everything `swarm doctor` needs from the addon. */
export interface NativeSystemInfo {
  addonVersion: string;
  buildSystem: string;
  compiler: string;
  napiVersion: number;
  cpu: NativeCpuInfo;
  cuda: NativeCudaInfo;
  libraries: { cublasLt: NativeLibraryProbe; nccl: NativeLibraryProbe };
}

/** The functions and classes exported by s3_native.node. */
export interface NativeBinding {
  systemInfo(): NativeSystemInfo;
}

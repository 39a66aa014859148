// Assembles the `swarm doctor` report: package, addon, backend, CPU, CUDA and optional libraries.
import { loadAddon } from './addon.js';
import { packageName, packageVersion } from '../version.js';
import type { NativeCpuInfo, NativeCudaInfo, NativeLibraryProbe } from './binding.js';

/** The backend the native core will compute on. */
export type Backend = 'cuda' | 'cpu';

/** The machine-readable `swarm doctor --json` document (documented in docs/cli.md). */
export interface SystemReport {
  package: { name: string; version: string };
  node: { version: string; napi: string };
  addon: { path: string; origin: 'local-build' | 'prebuild'; buildSystem: string; compiler: string; version: string };
  backend: Backend;
  backendReason: string;
  cpu: NativeCpuInfo;
  cuda: NativeCudaInfo;
  libraries: { cublasLt: NativeLibraryProbe; nccl: NativeLibraryProbe };
}

/** Loads the addon and collects the report. */
export function collectSystemReport(): SystemReport {
  const addon = loadAddon();
  const info = addon.binding.systemInfo();
  // The backend is what --device auto picks (native/model/device.h): CUDA only where the model can run on it.
  const useCuda = info.cuda.usable;
  const backendReason = useCuda ? `${info.cuda.deviceCount} CUDA device(s) visible, cuBLASLt ${info.cuda.gemm.cublasLtVersion}` : info.cuda.unusableReason;
  return {
    package: { name: packageName, version: packageVersion },
    node: { version: process.version, napi: process.versions.napi ?? 'unknown' },
    addon: {
      path: addon.file,
      origin: addon.origin,
      buildSystem: info.buildSystem,
      compiler: info.compiler,
      version: info.addonVersion,
    },
    backend: useCuda ? 'cuda' : 'cpu',
    backendReason,
    cpu: info.cpu,
    cuda: info.cuda,
    libraries: info.libraries,
  };
}

/** Renders the report for a terminal. */
export function formatSystemReport(report: SystemReport): string {
  const yes = (b: boolean) => (b ? 'yes' : 'no');
  const features = Object.entries(report.cpu.features)
    .filter(([, on]) => on)
    .map(([name]) => name)
    .join(' ');
  const lines = [
    `${report.package.name} ${report.package.version} (Node ${report.node.version}, N-API ${report.node.napi})`,
    `addon:     ${report.addon.path}`,
    `           ${report.addon.origin === 'prebuild' ? 'prebuilt binary' : 'local build'} via ${report.addon.buildSystem}, ${report.addon.compiler}`,
    `backend:   ${report.backend} (${report.backendReason})`,
    `cpu:       ${report.cpu.brand}, ${report.cpu.logicalCores} logical cores, ${report.cpu.threads} worker threads`,
    `simd:      ${report.cpu.simdLevel} (features: ${features || 'none'})`,
    `infer:     ${report.cpu.inferenceMatmul}`,
    `train:     f32 products on ${report.cpu.trainMatmul.f32}; bf16 products on ${report.cpu.trainMatmul.bf16}`,
    `cuda:      compiled ${yes(report.cuda.compiled)}, runtime ${report.cuda.runtimeVersion || '-'}, driver ${report.cuda.driverVersion || 'none'}, ${report.cuda.deviceCount} device(s)`,
  ];
  for (const d of report.cuda.devices) {
    lines.push(`           [${d.index}] ${d.name}, ${(d.totalMemory / 2 ** 30).toFixed(1)} GiB, sm_${d.computeCapability.replace('.', '')}, ${d.multiprocessors} SMs, ${d.peakBf16Tflops === null ? 'datasheet peak not known' : `${d.peakBf16Tflops} TFLOP/s dense BF16 (${d.peakProduct} datasheet)`}`);
  }
  if (report.cuda.deviceCount === 0 && report.cuda.error) lines.push(`           ${report.cuda.error}`);
  if (report.cuda.compiled) {
    const g = report.cuda.gemm;
    lines.push(`gemm:      ${g.cublasLtVersion ? `cuBLASLt ${g.cublasLtVersion} (bf16, f32)` : `no cuBLASLt (${g.error})`}`);
    lines.push(`fp8:       ${g.fp8Path}`);
    lines.push(`attention: ${report.cuda.attention}`);
    lines.push(`graphs:    ${report.cuda.graphs}`);
    const n = report.cuda.nccl;
    lines.push(`collectives: ${n.version ? `NCCL ${n.version} (${n.path})` : `no NCCL (${n.error})`}`);
  }
  for (const [name, probe] of Object.entries(report.libraries)) {
    lines.push(`${(name + ':').padEnd(10)} ${probe.found ? `found at ${probe.path}` : `not found (${probe.error})`}`);
  }
  return lines.join('\n');
}

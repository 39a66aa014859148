// `swarm doctor`: the installation report, human and JSON, from the locally built addon.
import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { packageRoot } from '../../src/native/addon.js';
import { resolveDevice } from '../../src/native/device.js';

const swarm = path.join(packageRoot, 'bin', 'swarm.js');
function doctor(args: string[], env: NodeJS.ProcessEnv = {}): string {
  return execFileSync(process.execPath, [swarm, 'doctor', ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] }).toString();
}

describe('swarm doctor --json', () => {
  const report = JSON.parse(doctor(['--json']));

  it('names the addon it loaded and where it came from', () => {
    expect(report.addon.path).toMatch(/\.node$/);
    expect(report.addon.origin).toBe(report.addon.path.includes(`${path.sep}prebuilds${path.sep}`) ? 'prebuild' : 'local-build');
    expect(['cmake-js', 'node-gyp']).toContain(report.addon.buildSystem);
    expect(report.package.name).toBe('s3-swarm');
  });

  it('chooses CUDA exactly when the model can run there (what --device auto picks), and says why not otherwise', () => {
    expect(report.backend).toBe(report.cuda.usable ? 'cuda' : 'cpu');
    expect(report.backend).toBe(resolveDevice('auto'));
    if (report.cuda.usable) expect(report.cuda.compiled && report.cuda.deviceCount > 0 && report.cuda.gemm.cublasLtVersion !== '').toBe(true);
    if (!report.cuda.usable) expect(report.backendReason).toBe(report.cuda.unusableReason);
    expect(report.cuda.devices).toHaveLength(report.cuda.deviceCount);
    if (report.backend === 'cpu') expect(report.backendReason.length).toBeGreaterThan(10);
    if (report.cuda.compiled) expect(report.cuda.runtimeVersion).toBeGreaterThanOrEqual(12000);
  });

  it('reports the CPU, its features and the SIMD level chosen at run time', () => {
    expect(report.cpu.logicalCores).toBeGreaterThan(0);
    expect(report.cpu.threads).toBeGreaterThan(0);
    const level = report.cpu.simdLevel;
    expect(['scalar', 'avx2', 'avx512', 'avx512bf16', 'amx']).toContain(level);
    const bf16Products = level === 'avx512bf16' || level === 'amx';
    if (level.startsWith('avx512') || level === 'amx') expect(report.cpu.features.avx512f).toBe(true);
    if (bf16Products) expect(report.cpu.features.avx512bf16).toBe(true);
    if (level === 'amx') expect(report.cpu.features.amxTile && report.cpu.features.amxBf16).toBe(true);
    if (level !== 'scalar') expect(report.cpu.features.avx2 && report.cpu.features.fma).toBe(true);
    // The trainer's BF16 products use VDPBF16PS at the avx512bf16 level and AMX tiles at amx, and say so.
    expect(report.cpu.trainMatmul.f32).toBe(`f32 ${bf16Products ? 'avx512' : level}`);
    expect(report.cpu.trainMatmul.bf16.startsWith('VDPBF16PS')).toBe(level === 'avx512bf16');
    expect(report.cpu.trainMatmul.bf16.startsWith('AMX tiles')).toBe(level === 'amx');
    // The engine's BF16 weights go into panels at the avx512bf16 level only, unless S3_WEIGHT_PANELS=0.
    expect(report.cpu.inferenceMatmul.startsWith('BF16 and FP8 weights packed into panels')).toBe(level === 'avx512bf16');
    if (level === 'avx512bf16') {
      const off = JSON.parse(doctor(['--json'], { S3_WEIGHT_PANELS: '0' }));
      expect(off.cpu.inferenceMatmul).toBe('weights as stored (avx512bf16)');
    }
  });

  it('caps the SIMD level with S3_SIMD', () => {
    expect(JSON.parse(doctor(['--json'], { S3_SIMD: 'scalar' })).cpu.simdLevel).toBe('scalar');
    if (report.cpu.features.avx2) expect(JSON.parse(doctor(['--json'], { S3_SIMD: 'avx2' })).cpu.simdLevel).toBe('avx2');
  });

  it('names the GEMM path: the cuBLASLt version, and whether FP8 multiplies block-scaled', () => {
    const gemm = report.cuda.gemm;
    expect(typeof gemm.fp8BlockScaling).toBe('boolean');
    expect(gemm.cublasLtVersion === '' ? gemm.error : gemm.cublasLtPath).not.toBe('');
    if (gemm.fp8BlockScaling) expect(gemm.fp8Path).toMatch(/block-scaled/);
  });

  it('says whether decode steps would replay from CUDA graphs (S3_CUDA_GRAPHS), and refuses a bad value in words', () => {
    expect(report.cuda.graphs).toMatch(report.cuda.compiled ? /^off: eager launches/ : /^none/);
    const on = JSON.parse(doctor(['--json'], { S3_CUDA_GRAPHS: '1' })).cuda.graphs;
    expect(on).toMatch(report.cuda.compiled ? /^decode steps of up to 256 sequences through CUDA graphs/ : /^none/);
    const bad = JSON.parse(doctor(['--json'], { S3_CUDA_GRAPHS: 'maybe' })).cuda.graphs;
    expect(bad).toMatch(report.cuda.compiled ? /S3_CUDA_GRAPHS='maybe': expected 1 or on/ : /^none/);
  });

  it('says whether cuBLASLt and NCCL could be opened, with the path or the reason', () => {
    for (const probe of [report.libraries.cublasLt, report.libraries.nccl]) {
      expect(typeof probe.found).toBe('boolean');
      expect(probe.found ? probe.path : probe.error).not.toBe('');
    }
  });
});

describe('swarm doctor', () => {
  it('prints a readable report naming the backend', () => {
    const text = doctor([]);
    expect(text).toMatch(/^backend: +(cpu|cuda) \(/m);
    expect(text).toMatch(/^addon: /m);
  });
});

// S3_CUDA=OFF: the cmake-js build leaves the CUDA backend out (even where nvcc exists) and the
// addon reports the CPU backend with the reason.
import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { packageRoot } from '../../src/native/addon.js';
import type { NativeBinding } from '../../src/native/binding.js';

const require = createRequire(import.meta.url);

describe('cmake-js build with S3_CUDA=OFF', () => {
  it('builds a CPU-only addon that loads and says CUDA was not compiled', () => {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), 's3-cuda-off-'));
    try {
      execFileSync(process.execPath, [path.join(packageRoot, 'scripts/native-build.mjs'), 'cmake', out], {
        cwd: packageRoot,
        env: { ...process.env, S3_CUDA: 'OFF' },
        stdio: 'pipe',
      });
      const binding = require(path.join(out, 'Release', 's3_native.node')) as NativeBinding;
      const info = binding.systemInfo();
      expect(info.buildSystem).toBe('cmake-js');
      expect(info.cuda.compiled).toBe(false);
      expect(info.cuda.deviceCount).toBe(0);
      expect(info.cuda.error).toMatch(/without CUDA/);
    } finally {
      fs.rmSync(out, { recursive: true, force: true });
    }
  }, 900_000);
});

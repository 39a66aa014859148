// The fallback for users without cmake: node-gyp builds the CPU-only addon from binding.gyp (the
// same source list as CMake), and it loads and reports the CPU backend.
import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { packageRoot } from '../../src/native/addon.js';
import type { NativeBinding } from '../../src/native/binding.js';

const require = createRequire(import.meta.url);

describe('node-gyp fallback build', () => {
  it('builds the CPU-only addon from binding.gyp and it loads', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 's3-gyp-build-'));
    try {
      fs.cpSync(path.join(packageRoot, 'native'), path.join(dir, 'native'), { recursive: true });
      fs.copyFileSync(path.join(packageRoot, 'binding.gyp'), path.join(dir, 'binding.gyp'));
      fs.symlinkSync(path.join(packageRoot, 'node_modules'), path.join(dir, 'node_modules'));
      const gyp = path.join(path.dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js');
      execFileSync(process.execPath, [gyp, 'rebuild', `--jobs=${os.availableParallelism()}`], { cwd: dir, stdio: 'pipe' });
      const binding = require(path.join(dir, 'build', 'Release', 's3_native.node')) as NativeBinding;
      const info = binding.systemInfo();
      expect(info.buildSystem).toBe('node-gyp');
      expect(info.cuda.compiled).toBe(false);
      expect(info.cuda.deviceCount).toBe(0);
      expect(info.cpu.threads).toBeGreaterThan(0);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 900_000);
});

// The C++ tests that use CUDA also compile where CUDA is not (S3_CUDA=OFF, or no nvcc): each such
// file in native/sources.json's `tests` group, compiled without S3_WITH_CUDA and with the tests'
// warnings as errors. CI builds the tests with nvcc (S3_CUDA=AUTO), so only this catches CUDA-only
// code outside the files' `#ifdef S3_WITH_CUDA` (it once broke the CPU-only test build).
import { describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { packageRoot } from '../../src/native/addon.js';

const execFileAsync = promisify(execFile);

function cudaUsingTestSources(): string[] {
  const groups = JSON.parse(fs.readFileSync(path.join(packageRoot, 'native/sources.json'), 'utf8')) as Record<string, unknown>;
  const tests = groups.tests as string[];
  return tests.filter((file) => /S3_WITH_CUDA|cuda_test_support\.h/.test(fs.readFileSync(path.join(packageRoot, file), 'utf8')));
}

async function compileWithoutCuda(file: string): Promise<string | null> {
  // The flags of CMakeLists.txt's s3_native_tests target (S3_WARNINGS, the include root, its definitions);
  // compiled, not only parsed: -fsyntax-only does not see unused functions.
  const args = ['-c', '-o', '/dev/null', '-O0', '-std=c++17', '-Wall', '-Wextra', '-Wno-unused-parameter', '-Werror', '-Inative',
    '-DS3_FAKE_CUBLASLT_DIR="unused"', '-DS3_FAKE_NCCL_DIR="unused"', file];
  try {
    await execFileAsync(process.env.CXX ?? 'c++', args, { cwd: packageRoot, maxBuffer: 16 << 20 });
    return null;
  } catch (error) {
    const e = error as { stderr?: string; message: string };
    return `${file}:\n${(e.stderr ?? e.message).split('\n').slice(0, 20).join('\n')}`;
  }
}

describe('C++ tests without CUDA', () => {
  it('compiles every test file that uses CUDA without S3_WITH_CUDA, warnings as errors', async () => {
    const files = cudaUsingTestSources();
    expect(files).toContain('native/tests/test_cuda_trainer.cpp');
    expect(files.length).toBeGreaterThan(10);
    const failures: string[] = [];
    const queue = [...files];
    const workers = Array.from({ length: Math.max(1, os.availableParallelism()) }, async () => {
      for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
        const failure = await compileWithoutCuda(file);
        if (failure) failures.push(failure);
      }
    });
    await Promise.all(workers);
    expect(failures.join('\n\n')).toBe('');
  }, 600_000);
});

#!/usr/bin/env node
// Builds and runs the native C++ tests (build-tests/s3_native_tests, via ctest) with AddressSanitizer
// and UndefinedBehaviorSanitizer. CUDA tests are compiled when nvcc is found and skip without a GPU.
//   S3_SANITIZE=OFF  build without sanitizers (the GPU check does: ASan and the CUDA driver disagree)
//   S3_CUDA=AUTO|ON|OFF, S3_CUDA_ARCHITECTURES, S3_JOBS as for the addon build
import os from 'node:os';
import { run } from './native-build.mjs';

const jobs = String(process.env.S3_JOBS ?? os.availableParallelism());
const buildDir = process.env.S3_TEST_BUILD_DIR ?? 'build-tests';
const configure = [
  '-S', '.', '-B', buildDir,
  '-DCMAKE_BUILD_TYPE=RelWithDebInfo',
  '-DS3_BUILD_TESTS=ON',
  `-DS3_SANITIZE=${process.env.S3_SANITIZE ?? 'ON'}`,
  `-DS3_CUDA=${process.env.S3_CUDA ?? 'AUTO'}`,
];
if (process.env.S3_CUDA_ARCHITECTURES) configure.push(`-DS3_CUDA_ARCHITECTURES=${process.env.S3_CUDA_ARCHITECTURES}`);

const env = { ...process.env, UBSAN_OPTIONS: 'print_stacktrace=1:halt_on_error=1', ASAN_OPTIONS: 'detect_leaks=1:protect_shadow_gap=0' };
let status = run('cmake', configure);
if (status === 0) status = run('cmake', ['--build', buildDir, '--parallel', jobs]);
if (status === 0) status = run('ctest', ['--test-dir', buildDir, '--output-on-failure'], env);
process.exit(status);

#!/usr/bin/env node
// Builds the native addon from source into build/Release/s3_native.node.
//   node scripts/native-build.mjs cmake [outDir]   cmake-js (primary: CPU + CUDA when nvcc is found)
//   node scripts/native-build.mjs gyp              node-gyp (CPU only, for machines without cmake)
// S3_CUDA=AUTO|ON|OFF is passed through to CMake; S3_JOBS sets the parallelism.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const jobs = String(process.env.S3_JOBS ?? os.availableParallelism());

/** Runs a command in the package root, inheriting stdio; returns its exit status. */
export function run(command, args, env = process.env) {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit', env });
  if (result.error) {
    console.error(`s3: could not run ${command}: ${result.error.message}`);
    return 1;
  }
  return result.status ?? 1;
}

/** Builds with cmake-js; outDir defaults to build/. */
export function buildWithCmake(outDir = 'build') {
  const cmakeJs = require.resolve('cmake-js/bin/cmake-js');
  const cuda = process.env.S3_CUDA ?? 'AUTO';
  return run(process.execPath, [cmakeJs, 'compile', '--out', outDir, '--parallel', jobs, `--CDS3_CUDA=${cuda}`]);
}

/** Builds the CPU-only addon with node-gyp (the one npm bundles when run from an npm script). */
export function buildWithGyp() {
  const gyp = process.env.npm_config_node_gyp;
  if (gyp) return run(process.execPath, [gyp, 'rebuild', `--jobs=${jobs}`]);
  return run('node-gyp', ['rebuild', `--jobs=${jobs}`]);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const mode = process.argv[2] ?? 'cmake';
  const status = mode === 'gyp' ? buildWithGyp() : mode === 'cmake' ? buildWithCmake(process.argv[3]) : 2;
  if (status === 2 && mode !== 'gyp' && mode !== 'cmake') console.error(`usage: native-build.mjs cmake [outDir] | gyp`);
  process.exit(status);
}

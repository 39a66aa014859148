#!/usr/bin/env node
// npm's install step for this package, explicit so npm never runs node-gyp on its own:
//   1. a prebuilt addon in prebuilds/linux-x64/ that loads on this machine  → use it, build nothing;
//   2. else cmake is on PATH                                               → build with cmake-js;
//   3. else                                                                → build the CPU addon with node-gyp.
// S3_BUILD_FROM_SOURCE=1 skips step 1.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildWithCmake, buildWithGyp } from './native-build.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function compatiblePrebuild() {
  const dir = path.join(root, 'prebuilds', `${process.platform}-${process.arch}`);
  if (!fs.existsSync(dir)) return undefined;
  for (const name of fs.readdirSync(dir).filter((f) => f.endsWith('.node'))) {
    const file = path.join(dir, name);
    // Load it in a child process: a binary that cannot load here must not crash the install.
    const probe = spawnSync(process.execPath, ['-e', `require(${JSON.stringify(file)}).systemInfo()`], { stdio: 'pipe' });
    if (probe.status === 0) return file;
    console.error(`s3: prebuild ${file} does not load here: ${probe.stderr.toString().trim().split('\n').pop()}`);
  }
  return undefined;
}

function onPath(command) {
  return spawnSync(command, ['--version'], { stdio: 'ignore' }).status === 0;
}

const prebuild = process.env.S3_BUILD_FROM_SOURCE === '1' ? undefined : compatiblePrebuild();
if (prebuild) {
  console.log(`s3: using the prebuilt addon ${path.relative(root, prebuild)}`);
  process.exit(0);
}
if (onPath('cmake')) {
  console.log('s3: building the native addon with cmake-js');
  const status = buildWithCmake();
  if (status === 0) process.exit(0);
  console.error('s3: the cmake-js build failed; trying node-gyp (CPU only)');
} else {
  console.log('s3: cmake not found; building the CPU-only addon with node-gyp');
}
process.exit(buildWithGyp());

#!/usr/bin/env node
// Produces prebuilds/<platform>-<arch>/<package-name>.node just before `npm pack`: a stripped
// cmake-js build (CUDA included when nvcc is found), named the way node-gyp-build looks it up.
// Prebuilt binaries are never committed (.gitignore): a stale one would shadow the sources.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildWithCmake } from './native-build.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
// The primary cmake-js build folder: after `npm install` the build is incremental and nearly free.
const outDir = 'build';

const status = buildWithCmake(outDir);
if (status !== 0) process.exit(status);
const built = path.join(root, outDir, 'Release', 's3_native.node');
const targetDir = path.join(root, 'prebuilds', `${process.platform}-${process.arch}`);
const target = path.join(targetDir, `${pkg.name.replace('/', '+')}.node`);
fs.mkdirSync(targetDir, { recursive: true });
fs.copyFileSync(built, target);
const strip = spawnSync('strip', ['--strip-unneeded', target], { stdio: 'inherit' });
if (strip.status !== 0) console.error('s3: strip failed; the prebuild keeps its symbols');
console.log(`s3: wrote ${path.relative(root, target)} (${(fs.statSync(target).size / 2 ** 20).toFixed(1)} MiB)`);

// The AVX2, AVX-512, AVX-512 BF16 and AMX sources must define no weak (COMDAT) symbols: the linker keeps one copy of
// an inline function or template for the whole addon, and if that copy came from a file compiled
// with AVX-512 flags, baseline code calling it would crash on CPUs without AVX-512. Compiled here
// at -O0 (nothing inlined) and -O2, with the flags CMakeLists.txt uses.
import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { packageRoot } from '../../src/native/addon.js';

const sources = JSON.parse(fs.readFileSync(path.join(packageRoot, 'native/sources.json'), 'utf8')) as Record<string, string[]>;
const flags: Record<string, string[]> = {
  cpu_avx2: ['-mavx2', '-mfma', '-mf16c'],
  cpu_avx512: ['-mavx2', '-mfma', '-mf16c', '-mavx512f', '-mavx512bw', '-mavx512vl', '-mavx512dq'],
  cpu_avx512bf16: ['-mavx2', '-mfma', '-mf16c', '-mavx512f', '-mavx512bw', '-mavx512vl', '-mavx512dq', '-mavx512bf16'],
  cpu_amx: ['-mavx2', '-mfma', '-mf16c', '-mavx512f', '-mavx512bw', '-mavx512vl', '-mavx512dq', '-mavx512bf16', '-mamx-tile', '-mamx-bf16'],
};

describe('SIMD objects', () => {
  it.each(['-O0', '-O2'])('define no weak symbols at %s', (level) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 's3-simd-'));
    try {
      for (const group of ['cpu_avx2', 'cpu_avx512', 'cpu_avx512bf16', 'cpu_amx']) {
        for (const source of sources[group]) {
          const object = path.join(dir, path.basename(source) + '.o');
          execFileSync('g++', ['-std=c++17', level, '-fPIC', ...flags[group], '-I', path.join(packageRoot, 'native'), '-c', path.join(packageRoot, source), '-o', object]);
          // DW.ref.__gxx_personality_v0 is data (the exception-handling personality's address, the same in
          // every object that can unwind), not code compiled with the file's instruction set.
          const weak = execFileSync('nm', ['-C', '--defined-only', object])
            .toString()
            .split('\n')
            .filter((line) => / [WVu] /.test(line) && !line.endsWith('DW.ref.__gxx_personality_v0'));
          expect(weak, `${source} at ${level}`).toEqual([]);
        }
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 300_000);
});

// native/sources.json is the one source list: CMake and node-gyp both build exactly what it names,
// and it names exactly the native source files in the tree.
import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { packageRoot } from '../../src/native/addon.js';

type Groups = Record<string, string[]>;
const sources = JSON.parse(fs.readFileSync(path.join(packageRoot, 'native/sources.json'), 'utf8')) as Groups & { '//'?: string };
const groups: Groups = Object.fromEntries(Object.entries(sources).filter(([k]) => k !== '//')) as Groups;

function walk(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? walk(full) : [full];
  });
}

const hasNvcc = (() => {
  try {
    execFileSync('nvcc', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

describe('native/sources.json', () => {
  it('lists every .cpp and .cu file under native/ exactly once, and nothing that does not exist', () => {
    const listed = Object.values(groups).flat();
    expect(new Set(listed).size).toBe(listed.length);
    for (const file of listed) expect(fs.existsSync(path.join(packageRoot, file)), file).toBe(true);
    const onDisk = walk(path.join(packageRoot, 'native'))
      .filter((f) => /\.(cpp|cu)$/.test(f))
      .map((f) => path.relative(packageRoot, f).split(path.sep).join('/'));
    expect([...onDisk].sort()).toEqual([...listed].sort());
  });

  it('is what CMake compiles (compile_commands.json of a fresh configure)', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 's3-cmake-'));
    try {
      execFileSync('cmake', ['-S', packageRoot, '-B', dir, '-DS3_BUILD_TESTS=ON', '-DS3_CUDA=AUTO'], { stdio: 'pipe' });
      const commands = JSON.parse(fs.readFileSync(path.join(dir, 'compile_commands.json'), 'utf8')) as { file: string }[];
      const compiled = new Set(commands.map((c) => path.relative(packageRoot, c.file).split(path.sep).join('/')));
      const expected = ['core', 'model', 'engine', 'train', 'bench', 'cpu', 'cpu_avx2', 'cpu_avx512', 'cpu_avx512bf16', 'cpu_amx', 'tests', 'test_fixtures', ...(hasNvcc ? ['cuda'] : [])].flatMap((g) => groups[g]);
      expect([...compiled].sort()).toEqual([...expected].sort());
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('is what node-gyp compiles (the Makefiles gyp generates from binding.gyp)', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 's3-gyp-'));
    try {
      fs.copyFileSync(path.join(packageRoot, 'binding.gyp'), path.join(dir, 'binding.gyp'));
      fs.mkdirSync(path.join(dir, 'native'));
      fs.copyFileSync(path.join(packageRoot, 'native/sources.json'), path.join(dir, 'native/sources.json'));
      fs.symlinkSync(path.join(packageRoot, 'node_modules'), path.join(dir, 'node_modules'));
      const gyp = path.join(path.dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js');
      execFileSync(process.execPath, [gyp, 'configure'], { cwd: dir, stdio: 'pipe' });
      const objectsOf = (target: string) => {
        const mk = fs.readFileSync(path.join(dir, 'build', `${target}.target.mk`), 'utf8');
        return [...mk.matchAll(/\$\(obj\)\.target\/\$\(TARGET\)\/(\S+)\.o/g)].map((m) => m[1]).sort();
      };
      const stem = (files: string[]) => files.map((f) => f.replace(/\.(cpp|cu)$/, '')).sort();
      expect(objectsOf('s3_native')).toEqual(stem([...groups.core, ...groups.model, ...groups.engine, ...groups.train, ...groups.bench, ...groups.cpu, ...groups.napi]));
      expect(objectsOf('s3_simd_avx2')).toEqual(stem(groups.cpu_avx2));
      expect(objectsOf('s3_simd_avx512')).toEqual(stem(groups.cpu_avx512));
      expect(objectsOf('s3_simd_avx512bf16')).toEqual(stem(groups.cpu_avx512bf16));
      expect(objectsOf('s3_simd_amx')).toEqual(stem(groups.cpu_amx));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

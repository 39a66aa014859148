// `swarm model grad` end to end: the JSON loss equals −Σ mask·weight·log p(next token) computed from
// `swarm model logits`, the gradient file holds every parameter under the checkpoint's names, and
// a few of its entries match central finite differences of that logits-derived loss.
import { describe, expect, it, beforeAll } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { packageRoot } from '../../src/native/addon.js';

const swarm = path.join(packageRoot, 'bin', 'swarm.js');
const run = (args: string[]) => execFileSync(process.execPath, [swarm, ...args], { stdio: ['ignore', 'pipe', 'pipe'] }).toString();
const work = fs.mkdtempSync(path.join(os.tmpdir(), 's3-grad-cli-'));
const model = path.join(work, 'tiny');

interface Entry {
  dtype: string;
  shape: number[];
  data_offsets: [number, number];
}

function readSafetensors(file: string): { header: Record<string, Entry>; data: Buffer } {
  const bytes = fs.readFileSync(file);
  const n = Number(bytes.readBigUInt64LE(0));
  const header = JSON.parse(bytes.subarray(8, 8 + n).toString('utf8')) as Record<string, Entry>;
  delete header.__metadata__;
  return { header, data: bytes.subarray(8 + n) };
}

function tensor(file: { header: Record<string, Entry>; data: Buffer }, name: string): Float32Array {
  const [begin, end] = file.header[name].data_offsets;
  const copy = Buffer.from(file.data.subarray(begin, end));
  return new Float32Array(copy.buffer, copy.byteOffset, (end - begin) / 4);
}

/** −Σ mask·weight·log p(ids[t+1] | ids[0..t]) in double precision from the CLI's logits. */
function lossFromLogits(dir: string, ids: number[], coef: number[]): number {
  const logits = JSON.parse(run(['model', 'logits', '--model', dir, '--ids', ids.join(','), '--json'])).logits as number[][];
  let loss = 0;
  for (let t = 0; t + 1 < ids.length; t += 1) {
    if (coef[t] === 0) continue;
    const row = logits[t];
    const max = Math.max(...row);
    const lse = max + Math.log(row.reduce((s, z) => s + Math.exp(z - max), 0));
    loss -= coef[t] * (row[ids[t + 1]] - lse);
  }
  return loss;
}

describe('swarm model grad', () => {
  const ids = [5, 17, 300, 2, 99, 511, 0, 42];
  const mask = [1, 1, 0, 1, 1, 1, 0];
  const weights = [1, 0.5, 2, 1.5, 1, 0.25, 1];
  const coef = mask.map((m, t) => m * weights[t]);
  const out = path.join(work, 'grad.safetensors');
  let loss = 0;

  beforeAll(() => {
    run(['model', 'init', '--shape', 'tiny', '--seed', '3', '--dtype', 'f32', '--out', model]);
    const printed = JSON.parse(run(['model', 'grad', '--model', model, '--ids', ids.join(','), '--mask', mask.join(','), '--weights', weights.join(','), '--out', out]));
    loss = printed.loss;
  });

  it('prints the loss of the logits', () => {
    expect(typeof loss).toBe('number');
    expect(Math.abs(loss - lossFromLogits(model, ids, coef))).toBeLessThan(1e-4 * Math.abs(loss));
  });

  it('writes an F32 gradient for every parameter under the checkpoint names', () => {
    const grads = readSafetensors(out);
    const weightsFile = readSafetensors(path.join(model, 'model.safetensors'));
    expect(Object.keys(grads.header).sort()).toEqual(Object.keys(weightsFile.header).sort());
    for (const [name, entry] of Object.entries(grads.header)) {
      expect(entry.dtype).toBe('F32');
      expect(entry.shape).toEqual(weightsFile.header[name].shape);
    }
  });

  it('matches central finite differences of the logits-derived loss', () => {
    const grads = readSafetensors(out);
    const original = fs.readFileSync(path.join(model, 'model.safetensors'));
    const copy = path.join(work, 'perturbed');
    fs.mkdirSync(copy, { recursive: true });
    for (const f of fs.readdirSync(model)) if (f !== 'model.safetensors') fs.copyFileSync(path.join(model, f), path.join(copy, f));
    const headerBytes = 8 + Number(original.readBigUInt64LE(0));
    const weightsFile = readSafetensors(path.join(model, 'model.safetensors'));
    for (const name of ['model.norm.weight', 'model.layers.1.mlp.down_proj.weight', 'model.layers.0.self_attn.q_norm.weight']) {
      const g = tensor(grads, name);
      let at = 0;
      for (let i = 1; i < g.length; i += 1) if (Math.abs(g[i]) > Math.abs(g[at])) at = i;
      const offset = headerBytes + weightsFile.header[name].data_offsets[0] + 4 * at;
      const x = original.readFloatLE(offset);
      const h = 1e-2 * Math.max(1, Math.abs(x));
      const lossAt = (value: number): [number, number] => {
        const bytes = Buffer.from(original);
        bytes.writeFloatLE(value, offset);
        fs.writeFileSync(path.join(copy, 'model.safetensors'), bytes);
        return [lossFromLogits(copy, ids, coef), bytes.readFloatLE(offset)];
      };
      const [plus, xp] = lossAt(x + h);
      const [minus, xm] = lossAt(x - h);
      const fd = (plus - minus) / (xp - xm);
      expect(Math.abs(g[at] - fd)).toBeLessThan(0.02 * Math.abs(fd) + 1e-3);
    }
  });

  it('refuses mask or weights whose length is not T − 1', () => {
    const result = spawnSync(process.execPath, [swarm, 'model', 'grad', '--model', model, '--ids', '1,2,3,4', '--mask', '1,1,1,1', '--weights', '1,1,1', '--out', out], { encoding: 'utf8' });
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(/--mask has 4 entries but --ids has 4 tokens; it needs 3/);
    const other = spawnSync(process.execPath, [swarm, 'model', 'grad', '--model', model, '--ids', '1,2,3,4', '--mask', '1,1,1', '--weights', '1,1', '--out', out], { encoding: 'utf8' });
    expect(other.status).not.toBe(0);
    expect(other.stderr).toMatch(/--weights has 2 entries/);
  });
});

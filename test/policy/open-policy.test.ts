// openPolicy, the one place policies are opened: a task's script, the garbage policy and a checkpoint
// on the native engine, each with the summary's name and description and the key an evaluation
// resumes under (the weight format and KV cache are part of a model's key only when not the default);
// a model folder without a tokenizer is refused before anything loads, and a tokenizer with more ids
// than the model's vocabulary (every episode would fail on its first token) once the model is read.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { builtinTokenizerPath } from '../../src/model/s3-mini-tokenizer.js';
import { packageRoot } from '../../src/native/addon.js';
import { openPolicy } from '../../src/policy/open-policy.js';
import { aggregationTask, demonstratorOf, explorationTask } from '../../src/tasks/index.js';

const swarm = path.join(packageRoot, 'bin', 'swarm.js');

describe('openPolicy', () => {
  it('opens a task\'s script with its description, writing with the built-in tokenizer unless told otherwise', () => {
    const scripted = openPolicy({ kind: 'scripted', ...demonstratorOf(aggregationTask) });
    expect(scripted.info).toEqual({ name: 'scripted', description: `${aggregationTask.demonstrator!.description}; writing with the built-in s3-mini tokenizer`, model: null });
    expect(scripted.key).toBe(`scripted:aggregator:${path.resolve(builtinTokenizerPath())}`);
    expect(scripted.engine).toBeUndefined();
    const copy = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 's3-open-')), 'tokenizer.json');
    fs.copyFileSync(builtinTokenizerPath(), copy);
    const other = openPolicy({ kind: 'scripted', ...demonstratorOf(explorationTask), tokenizerPath: copy });
    expect(other.key).toBe(`scripted:explorer:${copy}`);
    expect(other.info.description).toMatch(new RegExp(`writing with the tokenizer ${copy}$`));
    expect(openPolicy({ kind: 'garbage' }).key).toMatch(/^garbage:/);
  });

  it('opens a checkpoint on the engine, its numerics in the key only when not the default, and closes it', () => {
    const tiny = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 's3-open-')), 'tiny');
    execFileSync(process.execPath, [swarm, 'model', 'init', '--shape', 'tiny', '--seed', '1', '--dtype', 'f32', '--out', tiny]);
    expect(() => openPolicy({ kind: 'model', directory: tiny })).toThrow(ConfigError);
    expect(() => openPolicy({ kind: 'model', directory: tiny })).toThrow(/has no tokenizer\.json; pass --tokenizer FILE/);
    const tokenizerPath = builtinTokenizerPath();
    // tiny's 512 embeddings against the s3-mini tokenizer's 1,671 ids.
    const tooWide = () => openPolicy({ kind: 'model', directory: tiny, tokenizerPath, device: { device: 'cpu' } });
    expect(tooWide).toThrow(ConfigError);
    expect(tooWide).toThrow(`${path.resolve(tokenizerPath)} has 1671 token ids, more than the 512 of the model in ${tiny} (vocab_size in its config.json)`);
    const dir = path.join(path.dirname(tiny), 'small');
    execFileSync(process.execPath, [swarm, 'model', 'init', '--shape', 'small', '--seed', '1', '--dtype', 'f32', '--out', dir]);
    const plain = openPolicy({ kind: 'model', directory: dir, tokenizerPath, device: { device: 'cpu' } });
    expect(plain.key).toBe(`model:${dir}:${path.resolve(tokenizerPath)}`);
    expect(plain.info.model).toBe(dir);
    expect(plain.info.description).toMatch(/stored weights, f32 KV cache/);
    expect(plain.engine?.stats().kvCacheDtype).toBe('f32');
    plain.close();
    const narrow = openPolicy({ kind: 'model', directory: dir, tokenizerPath, device: { device: 'cpu', weights: 'fp8' }, kvCacheDtype: 'bf16', engine: { maxContext: 256 } });
    expect(narrow.key).toBe(`model:${dir}:${path.resolve(tokenizerPath)}:weights=fp8:kv=bf16`);
    expect(narrow.engine?.stats()).toMatchObject({ kvCacheDtype: 'bf16', maxContext: 256 });
    narrow.close();
  });
});

// The benchmarks' shared random checkpoint: made once per shape under the temp folder, in a folder
// whose name changes with the shape and the built-in tokenizer, so a stale one is never reused.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { benchCheckpointDirectory } from '../../src/native/random-checkpoint.js';

describe('benchCheckpointDirectory', () => {
  it('writes the shape once into a folder named by the shape and a digest of it and the tokenizer', () => {
    const tiny = benchCheckpointDirectory('tiny');
    expect(path.dirname(tiny)).toBe(os.tmpdir());
    expect(path.basename(tiny)).toMatch(/^s3-bench-tiny-bf16-seed0-[0-9a-f]{12}$/);
    const config = JSON.parse(fs.readFileSync(path.join(tiny, 'config.json'), 'utf8')) as { vocab_size: number; hidden_size: number };
    expect([config.vocab_size, config.hidden_size]).toEqual([512, 64]);
    const written = fs.statSync(path.join(tiny, 'model.safetensors')).mtimeMs;
    expect(benchCheckpointDirectory('tiny')).toBe(tiny);
    expect(fs.statSync(path.join(tiny, 'model.safetensors')).mtimeMs).toBe(written);
    const mini = benchCheckpointDirectory('s3-mini');
    expect(mini).not.toBe(tiny);
    // s3-mini holds exactly the built-in tokenizer, which it carries.
    expect(JSON.parse(fs.readFileSync(path.join(mini, 'config.json'), 'utf8')).vocab_size).toBe(1671);
    expect(fs.existsSync(path.join(mini, 'tokenizer.json'))).toBe(true);
  });
});

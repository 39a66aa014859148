// resolveTrainConfig: preset, then config file, then flags and --set overrides (typed by field),
// each refusal naming the file or flag, the field, the value and what was expected.
import { describe, expect, it } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError } from '../../src/errors.js';
import { parseConfigOverride } from '../../src/config/config-overrides.js';
import { resolveTrainConfig } from '../../src/config/resolve-train-config.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 's3-train-config-'));
function configFile(name: string, content: string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, content);
  return file;
}

describe('resolveTrainConfig', () => {
  it('defaults to the mini preset with every source "preset"', () => {
    const resolved = resolveTrainConfig({});
    expect(resolved.presetName).toBe('mini');
    expect(resolved.config.model.name).toBe('s3-mini');
    expect(resolved.sources).toEqual({});
  });

  it('applies --model, --out and --learner as flags', () => {
    const resolved = resolveTrainConfig({ preset: 'paper-aggregation', model: '/m', out: '/r', learner: 'online-sft' });
    expect(resolved.config.model.directory).toBe('/m');
    expect(resolved.config.out).toBe('/r');
    expect(resolved.config.learner).toBe('online-sft');
    expect(resolved.sources).toEqual({ 'model.directory': 'flag', out: 'flag', learner: 'flag' });
  });

  it('refuses an unknown learner', () => {
    expect(() => resolveTrainConfig({ learner: 'ppo' })).toThrow(/--learner: learner must be one of s3, no-comm, individual, online-sft, solo, got "ppo"/);
  });

  it('refuses an unknown preset', () => {
    expect(() => resolveTrainConfig({ preset: 'huge' })).toThrow(ConfigError);
  });
});

describe('--set overrides', () => {
  it('types each value by its field', () => {
    const { config, sources } = resolveTrainConfig({
      preset: 'paper-exploration',
      sets: [
        'optimizer.learningRate=5e-7',
        'rlUpdates=3',
        'optimizer.betas=0.8,0.95',
        'evaluation.teamSizes=1,4',
        'model.thinking=false',
        'concurrentSoloEpisodes=null',
        'pgCorrection.klEstimator=k3',
        'pgCorrection.klCoefficient=0.01',
      ],
    });
    expect(config.optimizer.learningRate).toBe(5e-7);
    expect(config.rlUpdates).toBe(3);
    expect(config.optimizer.betas).toEqual([0.8, 0.95]);
    expect(config.evaluation.teamSizes).toEqual([1, 4]);
    expect(config.model.thinking).toBe(false);
    expect(config.concurrentSoloEpisodes).toBeNull();
    expect(config.pgCorrection.klEstimator).toBe('k3');
    expect(sources['optimizer.learningRate']).toBe('flag');
  });

  it('keeps AdamW moments in f32 unless optimizer.stateDtype says bf16, and refuses other dtypes', () => {
    expect(resolveTrainConfig({}).config.optimizer.stateDtype).toBe('f32');
    expect(resolveTrainConfig({ preset: 'paper-aggregation' }).config.optimizer.stateDtype).toBe('f32');
    expect(resolveTrainConfig({ sets: ['optimizer.stateDtype=bf16'] }).config.optimizer.stateDtype).toBe('bf16');
    expect(() => resolveTrainConfig({ sets: ['optimizer.stateDtype=fp16'] })).toThrow(/optimizer.stateDtype must be one of f32, bf16, got "fp16"/);
  });

  it('trains in f32 unless precision.train says bf16 (paper-exploration does, App. A.1), and refuses other precisions', () => {
    expect(resolveTrainConfig({}).config.precision.train).toBe('f32');
    expect(resolveTrainConfig({ preset: 'paper-aggregation' }).config.precision.train).toBe('f32');
    expect(resolveTrainConfig({ preset: 'paper-exploration' }).config.precision.train).toBe('bf16');
    expect(resolveTrainConfig({ preset: 'paper-exploration', learner: 'no-comm' }).config.precision.train).toBe('bf16');
    expect(resolveTrainConfig({ sets: ['precision.train=bf16'] }).config.precision.train).toBe('bf16');
    expect(() => resolveTrainConfig({ sets: ['precision.train=fp16'] })).toThrow(/precision.train must be one of f32, bf16, got "fp16"/);
  });

  it('applies overrides in order, the last one winning', () => {
    expect(resolveTrainConfig({ sets: ['rlUpdates=3', 'rlUpdates=4'] }).config.rlUpdates).toBe(4);
  });

  it('can drop the SFT stage or fill it in field by field', () => {
    expect(resolveTrainConfig({ preset: 'paper-exploration', sets: ['sft=null'] }).config.sft).toBeNull();
    expect(() => resolveTrainConfig({ preset: 'paper-aggregation', sets: ['sft.updates=5'] })).toThrow(/--set sft.updates=5: sft.demonstrations is missing/);
  });

  it.each([
    ['rlUpdates=2.5', /--set rlUpdates=2.5: rlUpdates must be an integer >= 1, got "2.5"/],
    ['rlUpdates=0', /--set rlUpdates=0: rlUpdates must be an integer >= 1, got 0/],
    ['tokenCost=1.5', /--set tokenCost=1.5: tokenCost must be a finite number >= 0 and <= 1, got 1.5/],
    ['optimizer.learningRate=0', /optimizer.learningRate must be a finite number > 0, got 0/],
    ['optimizer.betas=0.9', /optimizer.betas must be two numbers in \[0, 0.999999\], got \[0.9\]/],
    ['model.thinking=yes', /model.thinking must be true or false, got "yes"/],
    ['learner=ppo', /learner must be one of s3, no-comm, individual, online-sft, solo, got "ppo"/],
    ['teamSize=null', /teamSize must be an integer >= 1, got "null"/],
    ['optimizer.lr=1', /--set optimizer.lr=1: unknown field "optimizer.lr"/],
    ['rlUpdates', /--set rlUpdates: expected path.to.field=value/],
    ['optimizer=1', /unknown field "optimizer"/],
  ])('refuses %s', (assignment, message) => {
    expect(() => parseConfigOverride(assignment)).toThrow(ConfigError);
    expect(() => resolveTrainConfig({ sets: [assignment] })).toThrow(message);
  });

  it('refuses values that clash with another field', () => {
    expect(() => resolveTrainConfig({ sets: ['pgCorrection.icePopLow=6'] })).toThrow(/icePopLow \(6\) must be below pgCorrection.icePopHigh \(5\)/);
    expect(() => resolveTrainConfig({ sets: ['contextLength=100'] })).toThrow(/--set contextLength=100: contextLength \(100\) must hold at least workAllowance \+ finalAllowance/);
    expect(() => resolveTrainConfig({ sets: ['pgCorrection.klCoefficient=0.1'] })).toThrow(/klEstimator must be "none" exactly when/);
    expect(() => resolveTrainConfig({ sets: ['rlUpdates=20', 'optimizer.warmupUpdates=21'] })).toThrow(/warmupUpdates \(21\) must not exceed rlUpdates \(20\)/);
  });
});

describe('config files', () => {
  it('apply their settings over their preset, with source "file"', () => {
    const file = configFile('ok.json', JSON.stringify({ preset: 'paper-exploration', rlUpdates: 7, optimizer: { learningRate: 1e-6 } }));
    const resolved = resolveTrainConfig({ configFile: file });
    expect(resolved.presetName).toBe('paper-exploration');
    expect(resolved.config.rlUpdates).toBe(7);
    expect(resolved.config.optimizer.learningRate).toBe(1e-6);
    expect(resolved.config.optimizer.betas).toEqual([0.9, 0.999]);
    expect(resolved.sources).toEqual({ rlUpdates: 'file', 'optimizer.learningRate': 'file' });
  });

  it('yield to --preset and --set', () => {
    const file = configFile('yield.json', JSON.stringify({ preset: 'paper-exploration', rlUpdates: 7 }));
    const resolved = resolveTrainConfig({ preset: 'paper-aggregation', configFile: file, sets: ['rlUpdates=8'] });
    expect(resolved.presetName).toBe('paper-aggregation');
    expect(resolved.config.rlUpdates).toBe(8);
    expect(resolved.sources.rlUpdates).toBe('flag');
  });

  it('refuse a missing file, naming it', () => {
    const file = path.join(dir, 'missing.json');
    expect(() => resolveTrainConfig({ configFile: file })).toThrow(`config file ${file} cannot be read`);
  });

  it('refuse invalid JSON, naming the file', () => {
    const file = configFile('bad.json', '{ "rlUpdates": ');
    expect(() => resolveTrainConfig({ configFile: file })).toThrow(`config file ${file} is not valid JSON`);
  });

  it('refuse a JSON value that is not an object', () => {
    const file = configFile('list.json', '[1, 2]');
    expect(() => resolveTrainConfig({ configFile: file })).toThrow(`config file ${file} must hold a JSON object of settings, got [1,2]`);
  });

  it('refuse an unknown field, naming the file and the known fields', () => {
    const file = configFile('unknown.json', JSON.stringify({ optimizer: { lr: 1 } }));
    expect(() => resolveTrainConfig({ configFile: file })).toThrow(
      `config file ${file}: unknown field "optimizer.lr"; expected one of learningRate, warmupUpdates, betas, epsilon, weightDecay, gradClipNorm, stateDtype.`,
    );
  });

  it('refuse an out-of-range value, naming the file, field and value', () => {
    const file = configFile('range.json', JSON.stringify({ maxPolicyLag: -1 }));
    expect(() => resolveTrainConfig({ configFile: file })).toThrow(`config file ${file}: maxPolicyLag must be an integer >= 0, got -1.`);
  });

  it('refuse a preset that is not a name', () => {
    const file = configFile('preset.json', JSON.stringify({ preset: 3 }));
    expect(() => resolveTrainConfig({ configFile: file })).toThrow(`config file ${file}: preset must be a preset name, got 3.`);
  });

  it('refuse an unknown preset named in the file, naming the file', () => {
    const file = configFile('preset-name.json', JSON.stringify({ preset: 'big' }));
    expect(() => resolveTrainConfig({ configFile: file })).toThrow(`config file ${file}: preset: unknown preset "big"`);
  });
});

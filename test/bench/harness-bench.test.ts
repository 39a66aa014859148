// benchHarness on a few teams: the figures it reports are consistent with each other.

import { describe, expect, it } from 'vitest';
import { benchHarness } from '../../src/bench/harness-bench.js';
import { qwen3Tokenizer } from '../harness/helpers.js';

describe('benchHarness', () => {
  it('runs concurrent teams of scripted explorers and reports events, rates and the harness share', async () => {
    const result = await benchHarness({ tokenizer: qwen3Tokenizer(), teams: 3, workAllowance: 2048 });
    expect(result.teams).toBe(3);
    expect(result.agents).toBe(12);
    expect(result.events).toBeGreaterThan(100);
    expect(result.generatedTokens).toBeLessThanOrEqual(12 * 2048);
    expect(result.eventsPerSecond).toBeCloseTo(result.events / (result.wallMs / 1000), 6);
    expect(result.harnessShare).toBeGreaterThan(0);
    expect(result.harnessShare).toBeLessThan(1);
    expect(result.policyMs).toBeLessThan(result.wallMs);
  });
});

// Until the RL loop exists, `swarm train` must say so and fail, never pretend to train.
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { packageRoot } from '../../src/native/addon.js';

describe('swarm train', () => {
  it('exits non-zero and says plainly that training is not available yet', () => {
    const result = spawnSync(process.execPath, [path.join(packageRoot, 'bin', 'swarm.js'), 'train'], { encoding: 'utf8' });
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(/not available yet/);
    expect(result.stderr).toMatch(/Nothing was trained/);
  });
});

// The run's temporary root (test/temp-root.ts): workers and the processes they spawn see it as their os.tmpdir().
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

describe('test temporary root', () => {
  it('points os.tmpdir() of the worker and of spawned processes at one s3-test-run folder', () => {
    const worker = os.tmpdir();
    expect(path.basename(worker)).toMatch(/^s3-test-run-/);
    const child = execFileSync(process.execPath, ['-e', 'process.stdout.write(require("node:os").tmpdir())'], { encoding: 'utf8' });
    expect(child).toBe(worker);
  });
});

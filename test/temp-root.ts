// vitest global setup: every test run writes its temporary folders under one root of its own, removed when the run ends.
// Tests (and the CLIs they spawn) call os.tmpdir(), which reads TMPDIR, so pointing TMPDIR at the root before the
// workers start is enough; no test has to clean up after itself. S3_KEEP_TEST_TMP=1 keeps the root to inspect.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export default function setup(): () => void {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 's3-test-run-'));
  const previous = process.env.TMPDIR;
  process.env.TMPDIR = root;
  return () => {
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
    if (process.env.S3_KEEP_TEST_TMP === '1') {
      console.log(`test temporary folders kept in ${root}`);
      return;
    }
    fs.rmSync(root, { recursive: true, force: true });
  };
}

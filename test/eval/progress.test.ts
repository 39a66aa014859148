// createProgress: silent off a terminal; on a terminal, a bar with counts, ETA and the last label.
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createProgress } from '../../src/eval/progress.js';

function captureStream(isTTY: boolean): { stream: NodeJS.WriteStream; text: () => string } {
  const chunks: string[] = [];
  const writable = new Writable({
    write(chunk, _encoding, callback) {
      chunks.push(String(chunk));
      callback();
    },
  });
  Object.assign(writable, { isTTY, columns: 160 });
  return { stream: writable as unknown as NodeJS.WriteStream, text: () => chunks.join('') };
}

describe('createProgress', () => {
  it('writes nothing when the stream is not a terminal', () => {
    const { stream, text } = captureStream(false);
    const progress = createProgress({ total: 3, stream });
    progress.increment('N=1 seed 1');
    progress.increment();
    progress.stop();
    expect(text()).toBe('');
  });

  it('draws done/total, ETA and the latest label on a terminal', () => {
    const { stream, text } = captureStream(true);
    const progress = createProgress({ total: 4, stream });
    progress.increment('N=2 seed 1');
    progress.increment('N=2 seed 2');
    progress.increment();
    progress.stop();
    const output = text();
    expect(output).toContain('ETA');
    expect(output).toMatch(/3\/4 75%/);
    // An increment without a label keeps the previous one.
    expect(output.slice(output.lastIndexOf('3/4'))).toContain('N=2 seed 2');
  });
});

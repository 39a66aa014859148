// Atomic file writes: the bytes go to a temporary file beside the target, which is flushed to disk
// and renamed over the target, and the folder is flushed too; a crash leaves the old file or the
// new one, never a torn one.
import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

let counter = 0;

/** Writes `data` to `path` atomically and durably. */
export function writeFileAtomic(path: string, data: string | Uint8Array): void {
  counter += 1;
  const temporary = `${path}.${process.pid}.${counter}.tmp`;
  try {
    const fd = openSync(temporary, 'w');
    try {
      writeSync(fd, typeof data === 'string' ? Buffer.from(data, 'utf8') : data);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, path);
    syncDirectory(dirname(path));
  } finally {
    rmSync(temporary, { force: true });
  }
}

/** Flushes a folder's entries (a rename in it) to disk. */
export function syncDirectory(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

// Where the report test finds a Chromium to drive: CHROME_PATH, then chromium, chromium-browser,
// google-chrome and google-chrome-stable on PATH, then Playwright's browser cache
// (PLAYWRIGHT_BROWSERS_PATH or ~/.cache/ms-playwright). CI (CI=true, or S3_REQUIRE_BROWSER=1, which
// .ci/run sets) must find one; elsewhere the browser checks are skipped with one line saying why.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const PATH_NAMES = ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable'];
// Executables inside a Playwright cache folder, newest layouts first.
const PLAYWRIGHT_EXECUTABLES = [
  ['chromium-', 'chrome-linux64', 'chrome'],
  ['chromium-', 'chrome-linux', 'chrome'],
  ['chromium_headless_shell-', 'chrome-linux64', 'headless_shell'],
  ['chromium_headless_shell-', 'chrome-linux', 'headless_shell'],
] as const;

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/** The places looked at, in order (for the skip message). */
export const CHROMIUM_PLACES = `CHROME_PATH, PATH (${PATH_NAMES.join(', ')}), Playwright's cache`;

/** The first Chromium found, or null. */
export function findChromium(env: NodeJS.ProcessEnv = process.env): string | null {
  if (env.CHROME_PATH !== undefined && env.CHROME_PATH !== '' && isExecutable(env.CHROME_PATH)) return env.CHROME_PATH;
  for (const directory of (env.PATH ?? '').split(path.delimiter).filter((d) => d !== '')) {
    for (const name of PATH_NAMES) {
      const file = path.join(directory, name);
      if (isExecutable(file)) return file;
    }
  }
  const cache = env.PLAYWRIGHT_BROWSERS_PATH ?? path.join(os.homedir(), '.cache', 'ms-playwright');
  let entries: string[] = [];
  try {
    entries = fs.readdirSync(cache).sort().reverse();
  } catch {
    return null;
  }
  for (const [prefix, folder, executable] of PLAYWRIGHT_EXECUTABLES) {
    for (const entry of entries.filter((e) => e.startsWith(prefix))) {
      const file = path.join(cache, entry, folder, executable);
      if (isExecutable(file)) return file;
    }
  }
  return null;
}

/** Whether this run must have a browser (CI): then a missing one fails instead of skipping. */
export function browserRequired(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.CI === 'true' || env.S3_REQUIRE_BROWSER === '1';
}

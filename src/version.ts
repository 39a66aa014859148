// The package's name and version, read from package.json at run time.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const pkg = require('../package.json') as { name: string; version: string };

/** The npm package name. */
export const packageName: string = pkg.name;
/** The npm package version. */
export const packageVersion: string = pkg.version;

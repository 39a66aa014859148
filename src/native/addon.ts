// Loads the native addon (s3_native.node) with node-gyp-build: a local build in build/Release wins,
// else the prebuild shipped in prebuilds/linux-x64/. Typed access lives in ./binding.ts.
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { NativeError } from '../errors.js';
import type { NativeBinding } from './binding.js';

const require = createRequire(import.meta.url);

/** The package's root folder (the one holding package.json, build/ and prebuilds/). */
export const packageRoot: string = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Where the loaded addon came from. */
export type AddonOrigin = 'local-build' | 'prebuild';

/** The loaded addon, its file and its origin. */
export interface LoadedAddon {
  binding: NativeBinding;
  file: string;
  origin: AddonOrigin;
}

let cached: LoadedAddon | undefined;

/** Finds the addon file node-gyp-build would load, or throws a NativeError saying how to build one. */
export function findAddonFile(root: string = packageRoot): string {
  const nodeGypBuild = require('node-gyp-build') as { path(dir: string): string };
  try {
    return nodeGypBuild.path(root);
  } catch (error) {
    throw new NativeError(
      `no native addon found under ${root} (neither build/Release/s3_native.node nor prebuilds/linux-x64/*.node): ` +
        `run "npm run build:native" (needs cmake and a C++ compiler) or reinstall the package. ` +
        `(${(error as Error).message})`,
    );
  }
}

/** Loads the addon once and returns it with its origin. */
export function loadAddon(): LoadedAddon {
  if (cached) return cached;
  const file = findAddonFile();
  let binding: NativeBinding;
  try {
    binding = require(file) as NativeBinding;
  } catch (error) {
    throw new NativeError(`the native addon ${file} failed to load: ${(error as Error).message}`);
  }
  const origin: AddonOrigin = file.split(path.sep).includes('prebuilds') ? 'prebuild' : 'local-build';
  cached = { binding, file, origin };
  return cached;
}

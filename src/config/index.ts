// The config layer: train config type, presets, validation, `--set` overrides, resolution and the dry-run plan.
export * from './train-config.js';
export * from './train-config-fields.js';
export * from './train-presets.js';
export * from './config-path.js';
export * from './validate-train-config.js';
export * from './config-overrides.js';
export * from './resolve-train-config.js';
export * from './train-plan.js';

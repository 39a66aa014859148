// The common layer: the few pieces every other layer shares (tasks, model, policy and harness may all
// import it; it imports nothing of ours but errors.ts): Python-style JSON text, the ToolSpec shape
// and its validator, tool-call error values, and the seeded random streams.

export { jsonDumps, JsonEncodingError, type JsonValue } from './json-dumps.js';
export { createRng, Rng, type RngSeed } from './random.js';
export { toolErrorOutput, type ToolCallError, type ToolCallErrorKind } from './tool-call-error.js';
export type { ParameterSchema, ScalarParameterType, ToolParameters, ToolSpec } from './tool-spec.js';
export {
  validateToolCall,
  type ToolArgumentValue,
  type ToolValidation,
  type UncheckedToolCall,
  type ValidatedToolCall,
  type ValidateToolCallOptions,
} from './tool-validation.js';

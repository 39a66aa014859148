// The one definition of a tool as s³ shows it to the model: a name, the description (Table 2 text
// where the paper gives one) and a JSON Schema of its arguments, restricted to the subset s³ tools
// need. Tasks define their tools with it, the harness adds the messaging tools, the chat layer
// renders it into the system turn's <tools> block and tool-validation.ts checks calls against it.

/** The JSON-schema type of a scalar tool argument. */
export type ScalarParameterType = 'string' | 'integer' | 'number' | 'boolean';

/** The schema of one tool argument: a scalar, or an array of (optionally typed) items. */
export type ParameterSchema =
  | { readonly type: ScalarParameterType; readonly description?: string }
  | { readonly type: 'array'; readonly items?: { readonly type: ScalarParameterType }; readonly description?: string };

/** The schema of a tool's arguments object; undeclared arguments are always rejected. */
export interface ToolParameters {
  /** Always "object": tools take named arguments. */
  readonly type: 'object';
  /** Every argument the tool declares, by name, in the order shown to the model. */
  readonly properties: Readonly<Record<string, ParameterSchema>>;
  /** The arguments a call must give. */
  readonly required?: readonly string[];
  /** Shown to the model when set; validation rejects undeclared arguments either way. */
  readonly additionalProperties?: false;
}

/** A tool definition shown to the model: name, description and a JSON Schema of its arguments. */
export interface ToolSpec {
  /** The function name the model calls. */
  readonly name: string;
  /** The description shown to the model. */
  readonly description: string;
  /** JSON Schema (type "object") of the arguments. */
  readonly parameters: ToolParameters;
}

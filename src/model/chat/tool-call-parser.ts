// Reads the text of an assistant response (every piece since the last generation prompt,
// decoded with the stop token included) and reports what the harness must act on: complete
// tool calls, a tool call left open, a `####` final answer, and whether the response ended.
// It never throws: every malformed call becomes a ToolCallError value the agent is answered with;
// messages name the tags in words, so they read plainly once JSON-escaped into a tool output.
// Text inside <think>…</think> is private reasoning and is never executed or graded.

import { END_OF_TEXT, IM_END, THINK_CLOSE, THINK_OPEN, TOOL_CALL_CLOSE, TOOL_CALL_OPEN } from './chat-markers.js';
import type { JsonValue } from '../../common/json-dumps.js';
import type { PieceFinish } from './piece-finish.js';
import type { ToolCallError, ToolCallErrorKind } from '../../common/tool-call-error.js';

/** A syntactically complete tool call: a tool name and its arguments object. */
export interface ToolCall {
  name: string;
  arguments: Record<string, JsonValue>;
}

/** One `<tool_call>…</tool_call>` block (or stray close tag) and what it holds; `start`/`end` are offsets in the text. */
export type ToolCallOutcome =
  | { ok: true; call: ToolCall; start: number; end: number }
  | { ok: false; error: ToolCallError; start: number; end: number };

/** A `<tool_call>` that was never closed: it is not executed. */
export interface CutToolCall {
  /** The text from `<tool_call>` to where the response stopped. */
  text: string;
  start: number;
  error: ToolCallError;
}

/** A complete line starting with `####` outside reasoning and tool calls. */
export interface FinalAnswer {
  /** The rest of the line after `####`, trimmed. */
  answer: string;
  /** Offset of `####` in the text. */
  start: number;
}

/** What an assistant response holds. */
export interface ParsedResponse {
  /** Complete tool calls outside reasoning, in text order, each a call or an error to answer. */
  calls: ToolCallOutcome[];
  /** A tool call opened outside reasoning and not closed when the text stopped. */
  cutCall: CutToolCall | null;
  /** The first complete `####` line; a line the text stopped in is partial and not reported. */
  finalAnswer: FinalAnswer | null;
  /** The response is over: the piece sampled `<|im_end|>` or `<|endoftext|>`. */
  responseEnded: boolean;
  /** The response ended with no complete tool call and no final answer: the agent goes idle. */
  idle: boolean;
}

/** Options of `parseAssistantResponse`. */
export interface ParseResponseOptions {
  /** The whole response so far: every piece since `<|im_start|>assistant\n`, stop token included. */
  text: string;
  /** How the latest piece ended. */
  finish: PieceFinish;
}

type BodyResult = { ok: true; call: ToolCall } | { ok: false; error: ToolCallError };

interface VisibleSegment {
  start: number;
  end: number;
  /** Whether a tag, newline or end of response follows, so its last line is complete. */
  terminated: boolean;
}

const MARKERS = /<\/?think>|<\/?tool_call>/g;
const CALL_SHAPE = '{"name": <function-name>, "arguments": <args-json-object>}';
const FINAL_LINE = /^[ \t]*####/;

/** Parses an assistant response; never throws, whatever the text. */
export function parseAssistantResponse(options: ParseResponseOptions): ParsedResponse {
  const { finish } = options;
  // Nothing after an end-of-response token belongs to the response.
  const endAt = firstEndMarker(options.text);
  const text = endAt === -1 ? options.text : options.text.slice(0, endAt);
  const stoppedAtEnd = endAt !== -1 || finish === 'end';

  const calls: ToolCallOutcome[] = [];
  const segments: VisibleSegment[] = [];
  let segmentStart = 0;
  let inThinking = false;
  let openCall: { start: number; bodyStart: number; nested: boolean } | null = null;
  let thinkingCallStart = -1;
  let thinkingCloseEnd = -1;

  for (const match of text.matchAll(MARKERS)) {
    const tag = match[0];
    const at = match.index;
    const after = at + tag.length;
    if (openCall !== null) {
      // Inside a call body only </tool_call> (which stops generation) and a second <tool_call> count.
      if (tag === TOOL_CALL_OPEN) openCall.nested = true;
      if (tag === TOOL_CALL_CLOSE) {
        const body = openCall.nested ? nestedCallError() : parseCallBody(text.slice(openCall.bodyStart, at));
        calls.push({ ...body, start: openCall.start, end: after });
        openCall = null;
        segmentStart = after;
      }
      continue;
    }
    if (inThinking) {
      if (tag === THINK_CLOSE) {
        inThinking = false;
        segmentStart = after;
      }
      if (tag === TOOL_CALL_OPEN) thinkingCallStart = at;
      if (tag === TOOL_CALL_CLOSE) thinkingCloseEnd = after;
      continue;
    }
    // A stray </think> outside reasoning is ordinary text.
    if (tag === THINK_CLOSE) continue;
    segments.push({ start: segmentStart, end: at, terminated: true });
    if (tag === THINK_OPEN) inThinking = true;
    if (tag === TOOL_CALL_OPEN) openCall = { start: at, bodyStart: after, nested: false };
    if (tag === TOOL_CALL_CLOSE) {
      calls.push({ ok: false, error: unmatchedCloseError(), start: at, end: after });
      segmentStart = after;
    }
  }

  let cutCall: CutToolCall | null = null;
  if (openCall !== null) {
    cutCall = { text: text.slice(openCall.start), start: openCall.start, error: cutOffError() };
  } else if (!inThinking) {
    segments.push({ start: segmentStart, end: text.length, terminated: stoppedAtEnd });
  }
  // Generation stopped at a </tool_call> inside reasoning: answer it so the stop is not left hanging.
  if (finish === 'tool_call' && thinkingCloseEnd === text.length) {
    const start = thinkingCallStart === -1 ? text.length - TOOL_CALL_CLOSE.length : thinkingCallStart;
    calls.push({ ok: false, error: callInThinkingError(), start, end: text.length });
  }

  const finalAnswer = findFinalAnswer(text, segments);
  const responseEnded = finish === 'end';
  return {
    calls,
    cutCall,
    finalAnswer,
    responseEnded,
    idle: responseEnded && calls.length === 0 && finalAnswer === null,
  };
}

function firstEndMarker(text: string): number {
  const imEnd = text.indexOf(IM_END);
  const endOfText = text.indexOf(END_OF_TEXT);
  if (imEnd === -1) return endOfText;
  if (endOfText === -1) return imEnd;
  return Math.min(imEnd, endOfText);
}

function findFinalAnswer(text: string, segments: readonly VisibleSegment[]): FinalAnswer | null {
  for (const segment of segments) {
    const lines = text.slice(segment.start, segment.end).split('\n');
    let offset = segment.start;
    for (let index = 0; index < lines.length; index += 1) {
      const line = lines[index];
      const complete = index < lines.length - 1 || segment.terminated;
      const marker = FINAL_LINE.exec(line);
      if (marker !== null && complete) {
        return { answer: line.slice(marker[0].length).trim(), start: offset + marker[0].length - 4 };
      }
      offset += line.length + 1;
    }
  }
  return null;
}

function parseCallBody(body: string): BodyResult {
  const source = body.trim();
  if (source === '') {
    return failure('empty_call', `empty tool call: write ${CALL_SHAPE} inside the tool_call tags`);
  }
  let value: unknown;
  try {
    value = JSON.parse(source);
  } catch (error) {
    return failure('invalid_json', `invalid JSON in tool call: ${(error as Error).message}`);
  }
  if (!isPlainObject(value)) {
    return failure('not_an_object', `tool call must be a JSON object ${CALL_SHAPE}, got ${describe(value)}`);
  }
  const unexpected = Object.keys(value).find((key) => key !== 'name' && key !== 'arguments');
  if (unexpected !== undefined) {
    return failure('unexpected_field', `tool call has unexpected field ${JSON.stringify(unexpected)}; write ${CALL_SHAPE}`);
  }
  if (!Object.hasOwn(value, 'name')) {
    return failure('missing_name', `tool call has no "name"; write ${CALL_SHAPE}`);
  }
  const name = value.name;
  if (typeof name !== 'string' || name.trim() === '') {
    return failure('invalid_name', `tool call "name" must be a non-empty string, got ${describe(name)}`);
  }
  const args = parseArguments(value);
  if (!args.ok) return args;
  return { ok: true, call: { name, arguments: args.value } };
}

// A missing "arguments" means none; a JSON string holding an object is accepted, as models
// sometimes write the arguments that way.
function parseArguments(
  value: Record<string, unknown>,
): { ok: true; value: Record<string, JsonValue> } | { ok: false; error: ToolCallError } {
  if (!Object.hasOwn(value, 'arguments')) return { ok: true, value: {} };
  let args = value.arguments;
  if (typeof args === 'string') {
    try {
      args = JSON.parse(args);
    } catch (error) {
      return failure('invalid_arguments', `tool call "arguments" is a string that is not a JSON object: ${(error as Error).message}`);
    }
  }
  if (!isPlainObject(args)) {
    return failure('invalid_arguments', `tool call "arguments" must be a JSON object, got ${describe(args)}`);
  }
  return { ok: true, value: args as Record<string, JsonValue> };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return `the string ${JSON.stringify(value)}`;
  return `a ${typeof value}`;
}

function failure(kind: ToolCallErrorKind, message: string): { ok: false; error: ToolCallError } {
  return { ok: false, error: { kind, message } };
}

function nestedCallError(): { ok: false; error: ToolCallError } {
  return failure('nested_call', 'tool call opens a second tool_call tag before the first is closed; write one complete call per pair of tool_call tags');
}

function unmatchedCloseError(): ToolCallError {
  return { kind: 'unmatched_close', message: 'found a closing tool_call tag without an opening one; no tool was called' };
}

function callInThinkingError(): ToolCallError {
  return { kind: 'call_in_thinking', message: 'tool call inside your reasoning (the think block) was not executed; end your reasoning before calling a tool' };
}

function cutOffError(): ToolCallError {
  return { kind: 'cut_off', message: 'tool call stopped before its closing tool_call tag and was not executed; write the complete call again' };
}

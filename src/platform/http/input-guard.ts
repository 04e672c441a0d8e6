/**
 * Text and structure checks at the edge, once for every route, so no input
 * can reach a service, a hash or the database in a shape that fails there:
 *
 * - no string, and no object key, in the path parameters, the query or a
 *   JSON body may hold a NUL character (PostgreSQL text cannot store one) or
 *   an unpaired UTF-16 surrogate (not Unicode: JSON columns and UTF-8
 *   encoders refuse it): a 422 ValidationException naming the field;
 * - a JSON body may not nest deeper than MAX_JSON_DEPTH levels (checked on
 *   the raw text before it is parsed, and again on any parsed body, so
 *   recursive code after this point never meets a hostile depth): a 400;
 * - JSON operations take `application/json` only: Fastify's default
 *   `text/plain` parser is removed, so other types answer 415 (routes that
 *   want text, such as the reader's beacons, add their own parser).
 *
 * - every integer a request schema declares without bounds is bounded to
 *   PostgreSQL's `integer` (an onRoute hook), and every number to ±1e15, so
 *   `1e309` or a page of 1e308 is a 422 naming the field, never an overflow
 *   in SQL. A route that needs a wider range declares its own bounds. Ajv's
 *   coercion turns the string "1e309" into Infinity, which passes `maximum`,
 *   so the input is walked again after validation: no number that reaches a
 *   handler is non-finite.
 *
 * Multipart fields and filenames go through the same checks in
 * readMultipartForm() (multipart.ts).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { ERRORS } from '../errors.ts';

export const MAX_JSON_DEPTH = 64;

const NUL = '\u0000';
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why a string cannot be accepted, or null. */
export function textProblem(value: string): string | null {
  if (value.includes(NUL)) return 'must not contain a NUL character';
  if (LONE_SURROGATE.test(value)) return 'must be valid Unicode text (it holds an unpaired UTF-16 surrogate)';
  return null;
}

/** Bidirectional formatting characters: embeddings, overrides, isolates and marks (U+202A-E, U+2066-9, U+200E-F, U+061C). */
const BIDI_CONTROLS = /[\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C]/g;

/** Removes bidi controls, which can make a displayed name read as another (`invoice\u202Efdp.exe`). */
export function stripBidiControls(value: string): string {
  return value.replace(BIDI_CONTROLS, '');
}

/** Throws a 422 naming the field when the string cannot be accepted. */
export function assertCleanText(field: string, value: string): void {
  const problem = textProblem(value);
  if (problem) throw ERRORS.validation({ [field]: [`The ${field} field ${problem}.`] });
}

export function tooDeep(): Error {
  return ERRORS.badRequest(`The JSON body is nested more than ${MAX_JSON_DEPTH} levels deep.`);
}

/**
 * Walks a parsed value without recursion: every key and string is checked,
 * the depth is bounded. `root` prefixes field names ('' for a body, so
 * fields read `settings.title`, `books.0.id`).
 */
export function assertCleanInput(value: unknown, root = ''): void {
  const stack: { value: unknown; path: string; depth: number }[] = [{ value, path: root, depth: 0 }];
  while (stack.length > 0) {
    const { value: current, path, depth } = stack.pop()!;
    if (typeof current === 'string') {
      assertCleanText(path || '_', current);
      continue;
    }
    if (typeof current === 'number') {
      // Ajv coerces "1e309" to Infinity and lets it pass `maximum`: no non-finite number goes further.
      if (!Number.isFinite(current)) throw ERRORS.validation({ [path || '_']: [`The ${path || '_'} field must be a finite number within range.`] });
      continue;
    }
    if (current === null || typeof current !== 'object') continue;
    if (depth >= MAX_JSON_DEPTH) throw tooDeep();
    const entries = Array.isArray(current) ? current.map((v, i) => [String(i), v] as const) : Object.entries(current as Record<string, unknown>);
    for (const [key, child] of entries) {
      const childPath = path ? `${path}.${key}` : key;
      if (!Array.isArray(current)) assertCleanText(childPath, key);
      stack.push({ value: child, path: childPath, depth: depth + 1 });
    }
  }
}

/** True when JSON text opens more than `max` arrays/objects at once (a linear scan, strings skipped). */
export function jsonNestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 91 /* [ */ || c === 123 /* { */) {
      if (++depth > max) return true;
    } else if (c === 93 /* ] */ || c === 125 /* } */) depth--;
  }
  return false;
}

const INT_MAX = 2_147_483_647;
const NUMBER_MAX = 1e15;

/** Adds bounds to unbounded integers and numbers of a request schema, in place (no recursion limit needed: schemas are ours). */
export function boundNumbers(schema: unknown, seen = new Set<object>()): void {
  if (!schema || typeof schema !== 'object' || seen.has(schema)) return;
  seen.add(schema);
  const node = schema as Record<string, unknown>;
  const types = Array.isArray(node.type) ? node.type : [node.type];
  if (types.includes('integer') || types.includes('number')) {
    const limit = types.includes('integer') ? INT_MAX : NUMBER_MAX;
    if (node.maximum === undefined && node.exclusiveMaximum === undefined) node.maximum = limit;
    if (node.minimum === undefined && node.exclusiveMinimum === undefined) node.minimum = -limit - (limit === INT_MAX ? 1 : 0);
  }
  for (const value of Object.values(node)) {
    if (Array.isArray(value)) value.forEach((v) => boundNumbers(v, seen));
    else if (value && typeof value === 'object') boundNumbers(value, seen);
  }
}

function boundRouteNumbers(route: RouteOptions): void {
  const schema = route.schema as Record<string, unknown> | undefined;
  if (!schema) return;
  for (const part of ['params', 'querystring', 'body', 'headers']) boundNumbers(schema[part]);
}

/** An object without keys (most reads' params and query): nothing to walk, and no walk's allocations per request. */
function isEmpty(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return value === undefined;
  for (const _ in value) return false;
  return true;
}

export function registerInputGuard(app: FastifyInstance): void {
  app.addHook('onRoute', boundRouteNumbers);
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (jsonNestsDeeperThan(body as string, MAX_JSON_DEPTH)) return done(tooDeep(), undefined);
    parseJson(request, body as string, done);
  });

  // A callback hook, not an async one: it never waits, and a promise per request costs a microtask turn.
  const check = (request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void) => {
    try {
      if (!isEmpty(request.params)) assertCleanInput(request.params, '');
      if (!isEmpty(request.query)) assertCleanInput(request.query, '');
      if (request.body !== undefined && !Buffer.isBuffer(request.body)) assertCleanInput(request.body, '');
    } catch (error) {
      done(error as Error);
      return;
    }
    done();
  };
  // Before the schema (text the schema would pass on), and after it (numbers its coercion made).
  app.addHook('preValidation', check);
  app.addHook('preHandler', check);
}

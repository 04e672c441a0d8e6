/**
 * The pieces of the OpenAPI-driven fuzz suite: request generators built from
 * the document's schemas (fast-check), hostile values, and the checks on each
 * answer (Ajv against the document). openapi-fuzz.test.ts drives them over
 * every operation the running service documents.
 */
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import fc from 'fast-check';

export type Schema = Record<string, any>;
export interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
}
export interface Operation {
  operationId: string;
  parameters?: { name: string; in: 'path' | 'query' | 'header'; required?: boolean; schema: Schema }[];
  requestBody?: { content: Record<string, { schema: Schema }> };
  responses: Record<string, { content?: Record<string, { schema?: Schema }> }>;
}

export interface FuzzRequest {
  path: string;
  query: [string, string][];
  headers: Record<string, string>;
  body?: { kind: 'json'; value: unknown } | { kind: 'raw'; type: string; text: string } | { kind: 'multipart'; fields: [string, string][]; files: { field: string; name: string; bytes: Uint8Array }[] };
}

const deepObject = (levels: number): unknown => {
  let value: unknown = 'bottom';
  for (let i = 0; i < levels; i++) value = { a: value };
  return value;
};
const cursorOf = (payload: unknown) => Buffer.from(JSON.stringify(payload)).toString('base64url');
const textCursor = (text: string) => Buffer.from(text).toString('base64url');

/**
 * Cursors of both kinds (keyset JSON and the pages operation's `page:N`) that
 * decode but hold a value no query can take: each once made a 500.
 */
export const HOSTILE_CURSORS = [
  textCursor('page:99999999999999999999'), textCursor('page:2147483648'), textCursor('page:0'), textCursor('page:-1'), textCursor('page:1e308'),
  textCursor('page:9007199254740993'), textCursor(`page:${'9'.repeat(400)}`), textCursor('page:'),
  cursorOf({ s: '-created_at', v: '2024-01-01T00:00:00Z', i: 2147483648 }), cursorOf({ s: '-created_at', v: '2024-01-01T00:00:00Z', i: '9'.repeat(30) }),
  cursorOf({ s: 'name', v: 'a'.repeat(10_000), i: 1 }),
];

/** Numbers as query text past every column's range (the reader's `from=1e308` once made a 500). */
export const HOSTILE_NUMBERS = ['1e308', '9007199254740993', '2147483648', '99999999999999999999', '-1', '0', '1.5', '0x10', 'NaN', 'Infinity', ''];

/** Multipart boundaries RFC 2046 does not allow (a 1,000-character one once made a 500 on every upload). */
export const HOSTILE_BOUNDARIES = ['b'.repeat(71), 'b'.repeat(257), 'b'.repeat(1000), 'bad"quote', 'ends-with-space ', ''];

/** A raw multipart body with the given boundary and one text field. */
export function multipartWithBoundary(boundary: string): NonNullable<FuzzRequest['body']> {
  return { kind: 'raw', type: `multipart/form-data; boundary=${boundary}`, text: `--${boundary}\r\nContent-Disposition: form-data; name="name"\r\n\r\nx\r\n--${boundary}--\r\n` };
}

/** Strings that broke the service before, or that a careless client sends. */
export const HOSTILE_STRINGS = [
  'a\u0000b', '\u0000', 'x\uD800y', '\uDFFF', '1e309', '1e308', '-1', '0', '-0', '2147483648', '9'.repeat(400), 'a'.repeat(5000), '', ' ',
  '%00', '%', '../../etc/passwd', '<script>alert(1)</script>', "' OR 1=1 --", '\u202Eevil\u202C', '😀', 'null', 'true', '[]', '{}',
  cursorOf({ s: '-created_at', v: 'not a time', i: 1 }), cursorOf({ s: '-created_at', v: '2024-01-01T00:00:00Z', i: 1e300 }),
  cursorOf({ s: 'name', v: 'a\u0000b', i: 1 }), cursorOf({ s: '-created_at', v: null, i: -1 }), cursorOf([1, 2, 3]), 'bm90IGpzb24',
  ...HOSTILE_CURSORS, ...HOSTILE_NUMBERS,
];
export const HOSTILE_VALUES: unknown[] = [...HOSTILE_STRINGS, 1e308, -1e308, 2 ** 53, 2147483648, -2147483649, 0.5, -0, null, true, false, [], {}, [null], deepObject(80), { '\u0000': 1 }];

const hostileString = fc.constantFrom(...HOSTILE_STRINGS);
const hostileValue = fc.constantFrom(...HOSTILE_VALUES);

function resolve(schema: Schema, doc: OpenApiDocument): Schema {
  let current = schema;
  for (let i = 0; i < 10 && current && typeof current.$ref === 'string'; i++) {
    const name = current.$ref.replace(/^#\/components\/schemas\//, '');
    current = doc.components.schemas[name] ?? {};
  }
  return current ?? {};
}

/** Values that satisfy the schema (mostly: fast-check stays inside the declared bounds). */
export function valid(schemaIn: Schema, doc: OpenApiDocument, depth = 0): fc.Arbitrary<unknown> {
  const schema = resolve(schemaIn, doc);
  if (depth > 6) return fc.constant(null);
  if ('const' in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum);
  const union = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(union) && union.length > 0) return fc.oneof(...union.map((s: Schema) => valid(s, doc, depth + 1)));
  if (Array.isArray(schema.allOf)) {
    const merged: Schema = { type: 'object', properties: {}, required: [] };
    for (const part of schema.allOf.map((s: Schema) => resolve(s, doc))) {
      Object.assign(merged.properties, part.properties ?? {});
      merged.required.push(...(part.required ?? []));
    }
    return valid(merged, doc, depth + 1);
  }
  const type = Array.isArray(schema.type) ? schema.type : [schema.type ?? (schema.properties ? 'object' : 'string')];
  const arbitraries = type.map((t: string): fc.Arbitrary<unknown> => {
    switch (t) {
      case 'null':
        return fc.constant(null);
      case 'boolean':
        return fc.boolean();
      case 'integer':
        return fc.integer({ min: Math.max(schema.minimum ?? -5, -1_000_000), max: Math.min(schema.maximum ?? 1000, 1_000_000) });
      case 'number':
        return fc.double({ min: Math.max(schema.minimum ?? -1000, -1e6), max: Math.min(schema.maximum ?? 1000, 1e6), noNaN: true, noDefaultInfinity: true });
      case 'array':
        return fc.array(valid(schema.items ?? {}, doc, depth + 1), { minLength: Math.min(schema.minItems ?? 0, 3), maxLength: Math.min(schema.maxItems ?? 3, 3) });
      case 'object': {
        const properties = Object.entries((schema.properties ?? {}) as Record<string, Schema>);
        if (properties.length === 0) return fc.constant({});
        const model = Object.fromEntries(properties.map(([name, s]) => [name, valid(s, doc, depth + 1)]));
        return fc.record(model, { requiredKeys: (schema.required ?? []).filter((k: string) => k in model) }) as fc.Arbitrary<unknown>;
      }
      default:
        return validString(schema);
    }
  });
  return arbitraries.length === 1 ? arbitraries[0]! : fc.oneof(...arbitraries);
}

function validString(schema: Schema): fc.Arbitrary<string> {
  if (schema.format === 'date-time') return fc.date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((d) => d.toISOString());
  if (schema.format === 'uri') return fc.webUrl();
  if (schema.format === 'email') return fc.emailAddress();
  if (schema.format === 'binary') return fc.constant('');
  if (typeof schema.pattern === 'string') {
    try {
      return fc.stringMatching(new RegExp(schema.pattern)).filter((s) => s.length <= (schema.maxLength ?? 255));
    } catch {
      // not a JavaScript pattern: fall through
    }
  }
  return fc.string({ minLength: Math.min(schema.minLength ?? 0, 20), maxLength: Math.min(schema.maxLength ?? 40, 40) });
}

/** Replaces one node of a value (chosen by index) with a hostile value, or adds a hostile key. */
function mutate(value: unknown, hostile: unknown, pick: number): unknown {
  const nodes: { parent: Record<string, unknown> | unknown[]; key: string | number }[] = [];
  const walk = (node: unknown, depth: number) => {
    if (depth > 8 || node === null || typeof node !== 'object') return;
    for (const [key, child] of Object.entries(node)) {
      nodes.push({ parent: node as Record<string, unknown>, key: Array.isArray(node) ? Number(key) : key });
      walk(child, depth + 1);
    }
  };
  const copy = structuredClone(value);
  walk(copy, 0);
  if (nodes.length === 0) return hostile;
  const target = nodes[pick % nodes.length]!;
  if (pick % 7 === 0 && !Array.isArray(target.parent)) (target.parent as Record<string, unknown>)[typeof hostile === 'string' ? hostile.slice(0, 100) : 'extra'] = hostile;
  else (target.parent as Record<string, unknown>)[target.key as string] = hostile;
  return copy;
}

/** A JSON body: valid, valid with one hostile node, the wrong type, or text that is not a JSON body at all. */
export function jsonBody(schema: Schema, doc: OpenApiDocument): fc.Arbitrary<FuzzRequest['body']> {
  const good = valid(schema, doc);
  return fc.oneof(
    { weight: 3, arbitrary: good.map((value) => ({ kind: 'json' as const, value })) },
    { weight: 4, arbitrary: fc.tuple(good, hostileValue, fc.nat()).map(([value, hostile, pick]) => ({ kind: 'json' as const, value: mutate(value, hostile, pick) })) },
    { weight: 1, arbitrary: hostileValue.map((value) => ({ kind: 'json' as const, value })) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        { kind: 'raw' as const, type: 'application/json', text: `${'['.repeat(10_000)}${']'.repeat(10_000)}` },
        { kind: 'raw' as const, type: 'application/json', text: '{"a": ' },
        { kind: 'raw' as const, type: 'application/json', text: '' },
        { kind: 'raw' as const, type: 'application/json', text: '{"__proto__": {"x": 1}}' },
        { kind: 'raw' as const, type: 'text/plain', text: '{}' },
        { kind: 'raw' as const, type: 'application/xml', text: '<a/>' },
        { kind: 'raw' as const, type: 'multipart/form-data; boundary=x', text: 'not multipart' },
      ),
    },
  );
}

const TINY_PNG = Uint8Array.from(Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64'));

/** A multipart body: the schema's text fields (some hostile), and zero, one or two files with hostile names. */
export function multipartBody(schema: Schema, doc: OpenApiDocument): fc.Arbitrary<FuzzRequest['body']> {
  const resolved = resolve(schema, doc);
  const properties = Object.entries((resolved.properties ?? {}) as Record<string, Schema>);
  const fileFields = properties.filter(([, s]) => resolve(s, doc).format === 'binary').map(([name]) => name);
  const textFields = properties.filter(([name]) => !fileFields.includes(name));
  const field = ([name, s]: [string, Schema]) =>
    fc.option(fc.oneof(valid(s, doc).map((v) => (typeof v === 'string' ? v : JSON.stringify(v))), hostileString).map((v) => [name, v] as [string, string]), { nil: undefined });
  const fileName = fc.oneof(fc.constant('logo.png'), hostileString.filter((s) => s.length > 0 && s.length < 300));
  return fc
    .record({
      fields: fc.tuple(...textFields.map(field)),
      files: fc.array(fc.record({ field: fc.constantFrom(...(fileFields.length ? fileFields : ['file']), 'other'), name: fileName }), { maxLength: 2 }),
      malformed: fc.boolean(),
    })
    .map(({ fields, files, malformed }) =>
      malformed && files.length === 0
        ? { kind: 'raw' as const, type: 'multipart/form-data; boundary=zz', text: '--zz\r\nContent-Disposition: form-data; name="files[]"; filename="a.pdf"\r\n\r\n%PDF-1.4 cut' }
        : { kind: 'multipart' as const, fields: fields.filter((f): f is [string, string] => f !== undefined), files: files.map((f) => ({ ...f, bytes: TINY_PNG })) },
    );
}

/**
 * Requests every run sends before the random ones, so the cases that once
 * made a 500 are always tried: every hostile cursor in a `cursor` parameter,
 * every out-of-range number in each integer query parameter, and every
 * invalid boundary on a multipart operation. Path parameters take the first
 * known value (the seeded book), so the request reaches the handler.
 */
export function edgeCases(path: string, op: Operation, known: Record<string, string[]>): FuzzRequest[] {
  const params = op.parameters ?? [];
  const basePath = params.filter((p) => p.in === 'path').reduce((acc, p) => acc.replace(`{${p.name}}`, encode(known[p.name]?.[0] ?? '1')), path);
  const cases: FuzzRequest[] = [];
  for (const p of params.filter((q) => q.in === 'query')) {
    const type = p.schema.type ?? p.schema.anyOf?.map((s: Schema) => s.type);
    const numeric = [type].flat().some((t) => t === 'integer' || t === 'number');
    const values = p.name === 'cursor' ? HOSTILE_CURSORS : numeric ? HOSTILE_NUMBERS : [];
    for (const value of values) cases.push({ path: basePath, query: [[p.name, value]], headers: {} });
  }
  if (op.requestBody?.content['multipart/form-data']) {
    for (const boundary of HOSTILE_BOUNDARIES) cases.push({ path: basePath, query: [], headers: {}, body: multipartWithBoundary(boundary) });
  }
  return cases;
}

/** A path or query value: schema-valid, hostile, or (for a book) the seeded book's id. */
export function parameterValue(schema: Schema, doc: OpenApiDocument, known: string[]): fc.Arbitrary<string> {
  const good = valid(schema, doc).map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
  const options: fc.WeightedArbitrary<string>[] = [{ weight: 2, arbitrary: good }, { weight: 3, arbitrary: hostileString }];
  if (known.length > 0) options.push({ weight: 2, arbitrary: fc.constantFrom(...known) });
  return fc.oneof(...options);
}

/** Percent-encodes like a client would, with a lone surrogate sent as its (invalid) UTF-8 bytes rather than refused. */
export function encode(value: string): string {
  let out = '';
  for (const char of value) {
    const code = char.codePointAt(0)!;
    if (code >= 0xd800 && code <= 0xdfff) out += [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join('');
    else out += encodeURIComponent(char);
  }
  return out;
}

/** Ajv over the document: every answer's body against the schema documented for its status. */
export function createValidator(doc: OpenApiDocument) {
  const ajv = new Ajv2020.default({ strict: false, allErrors: false, validateFormats: true });
  addFormats.default(ajv);
  const rewrite = (schema: unknown) => JSON.parse(JSON.stringify(schema).replace(/"#\/components\/schemas\//g, '"openapi#/components/schemas/'));
  ajv.addSchema({ $id: 'openapi', components: rewrite(doc.components) });
  const cache = new Map<Schema, ReturnType<typeof ajv.compile>>();
  return (schema: Schema, body: unknown): string | null => {
    let validate = cache.get(schema);
    if (!validate) {
      validate = ajv.compile(rewrite(schema));
      cache.set(schema, validate);
    }
    return validate(body) ? null : ajv.errorsText(validate.errors);
  };
}

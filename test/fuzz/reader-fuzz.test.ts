/**
 * Fuzzing the reader's public endpoints, which the OpenAPI document does not
 * list (they serve the reader, not API clients): every parameter each one
 * takes, valid, hostile and out of range (`from=1e308` once made a 500). Every
 * answer must be below 500, and a JSON endpoint's error must be in the error
 * envelope. The edge cases run first on every endpoint, then READER_FUZZ_RUNS
 * (default 30) random requests each, seeded by FUZZ_SEED.
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import type { TSchema } from 'typebox';
import { EventBatch, LeadSubmission } from '../../src/modules/analytics/reader-events.schemas.ts';
import { insertBook } from '../factories.ts';
import { startService, type TestService } from '../helpers.ts';
import { HOSTILE_NUMBERS, HOSTILE_STRINGS, createValidator, encode, jsonBody, type FuzzRequest, type OpenApiDocument, type Schema } from './openapi-fuzz.ts';

const RUNS = Number(process.env.READER_FUZZ_RUNS ?? 30);
const SEED = Number(process.env.FUZZ_SEED ?? 20261122);
const NO_DOC: OpenApiDocument = { paths: {}, components: { schemas: {} } };

type Value = 'book' | 'page' | 'text' | 'pages' | 'token' | 'file' | 'asset';
interface Endpoint {
  name: string;
  method: 'GET' | 'POST';
  path: string;
  /** Path parameters in order (`{name}` in path) and query parameters, with the kind of value each takes. */
  pathParams: [string, Value][];
  query: [string, Value][];
  body?: { kind: 'json'; schema: TSchema } | { kind: 'form' };
  /** Answers JSON (errors in the envelope); the others answer HTML pages or files. */
  json: boolean;
}

const ENDPOINTS: Endpoint[] = [
  { name: 'reader page', method: 'GET', path: '/read/{book}', pathParams: [['book', 'book']], query: [['tl', 'text']], json: false },
  { name: 'search', method: 'GET', path: '/read/{book}/search', pathParams: [['book', 'book']], query: [['q', 'text'], ['offset', 'page']], json: true },
  { name: 'text', method: 'GET', path: '/read/{book}/text', pathParams: [['book', 'book']], query: [['from', 'page'], ['to', 'page']], json: true },
  { name: 'text layer', method: 'GET', path: '/read/{book}/text-layer', pathParams: [['book', 'book']], query: [['page', 'page']], json: true },
  { name: 'download', method: 'GET', path: '/read/{book}/download', pathParams: [['book', 'book']], query: [['page', 'page']], json: false },
  { name: 'live items', method: 'GET', path: '/read/{book}/items', pathParams: [['book', 'book']], query: [['pages', 'pages']], json: true },
  { name: 'events', method: 'POST', path: '/read/{book}/events', pathParams: [['book', 'book']], query: [], body: { kind: 'json', schema: EventBatch }, json: true },
  { name: 'lead', method: 'POST', path: '/read/{book}/lead', pathParams: [['book', 'book']], query: [], body: { kind: 'json', schema: LeadSubmission }, json: true },
  { name: 'access request', method: 'POST', path: '/read/{book}/access', pathParams: [['book', 'book']], query: [], body: { kind: 'form' }, json: false },
  { name: 'access link', method: 'GET', path: '/read/{book}/access/{token}', pathParams: [['book', 'book'], ['token', 'token']], query: [], json: false },
  { name: 'reader asset', method: 'GET', path: '/reader-assets/{file}', pathParams: [['file', 'file']], query: [], json: false },
  { name: 'page image', method: 'GET', path: '/assets/{key}', pathParams: [['key', 'asset']], query: [], json: true },
];

interface Figures { requests: number; serverErrors: number; envelopeViolations: number; statuses: Record<number, number> }

describe(`fuzzing the reader's public endpoints (${RUNS} runs each, seed ${SEED})`, () => {
  let svc: TestService;
  const known: Record<Value, string[]> = { book: [], page: ['1', '2', '3'], text: ['page', 'a'], pages: ['1', '1,2,3'], token: ['x'.repeat(43)], file: [], asset: [] };
  const figures = new Map<string, Figures>();
  let validate: ReturnType<typeof createValidator>;

  before(async () => {
    svc = await startService({ worker: false });
    validate = createValidator((await svc.request('GET', '/v1/openapi.json')).body as OpenApiDocument);
    const ws = await svc.workspace({ plan: 'company' });
    const books = await Promise.all([0, 1].map(() => insertBook(svc, ws.id, { status: 'publish', pageCount: 3 })));
    known.book = books.map((b) => b.randomId);
    known.asset = books.map((b) => `books/${b.randomId}/v1/p1-w800.webp`);
    const page = await fetch(`${svc.url}/read/${known.book[0]}`).then((r) => r.text());
    known.file = [...page.matchAll(/\/reader-assets\/([^"]+)"/g)].map((m) => m[1]!);
  });
  after(() => svc?.stop());

  const valueOf = (kind: Value): fc.Arbitrary<string> => {
    const options: fc.WeightedArbitrary<string>[] = [{ weight: 3, arbitrary: fc.constantFrom(...HOSTILE_STRINGS) }, { weight: 2, arbitrary: fc.string({ maxLength: 30 }) }];
    if (known[kind].length > 0) options.push({ weight: 3, arbitrary: fc.constantFrom(...known[kind]) });
    if (kind === 'page' || kind === 'pages') options.push({ weight: 3, arbitrary: fc.oneof(fc.constantFrom(...HOSTILE_NUMBERS), fc.integer().map(String), fc.double().map(String)) });
    return fc.oneof(...options);
  };

  function requestFor(endpoint: Endpoint): fc.Arbitrary<FuzzRequest> {
    const body: fc.Arbitrary<FuzzRequest['body']> = endpoint.body?.kind === 'json'
      ? jsonBody(endpoint.body.schema as Schema, NO_DOC)
      : endpoint.body?.kind === 'form'
        ? fc.oneof(valueOf('text'), fc.emailAddress()).map((email) => ({ kind: 'raw' as const, type: 'application/x-www-form-urlencoded', text: `email=${encode(email)}` }))
        : fc.constant(undefined);
    return fc.record({
      path: fc.tuple(...endpoint.pathParams.map(([, kind]) => valueOf(kind).filter((v) => v !== ''))).map((values) =>
        endpoint.pathParams.reduce((acc, [name], i) => acc.replace(`{${name}}`, name === 'key' ? values[i]!.split('/').map(encode).join('/') : encode(values[i]!)), endpoint.path)),
      query: fc.tuple(...endpoint.query.map(([, kind]) => fc.option(valueOf(kind), { freq: 3, nil: undefined })))
        .map((values) => endpoint.query.flatMap(([name], i) => (values[i] === undefined ? [] : [[name, values[i]!] as [string, string]]))),
      headers: fc.constant({}),
      body,
    });
  }

  /** The first book with each query parameter set to each out-of-range number, before the random requests. */
  function edgeCases(endpoint: Endpoint): FuzzRequest[] {
    const path = endpoint.pathParams.reduce((acc, [name, kind]) => acc.replace(`{${name}}`, known[kind][0] ?? 'x'), endpoint.path);
    return endpoint.query.flatMap(([name]) => HOSTILE_NUMBERS.map((value): FuzzRequest => ({ path, query: [[name, value], ...(name === 'offset' ? [['q', 'a'] as [string, string]] : [])], headers: {} })));
  }

  async function send(method: string, request: FuzzRequest) {
    const query = request.query.map(([name, value]) => `${encode(name)}=${encode(value)}`).join('&');
    const headers: Record<string, string> = { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Chrome/130.0 Safari/537.36' };
    let body: string | undefined;
    if (request.body?.kind === 'json') {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(request.body.value);
    } else if (request.body?.kind === 'raw') {
      headers['content-type'] = request.body.type;
      body = request.body.text;
    }
    const response = await fetch(`${svc.url}${request.path}${query ? `?${query}` : ''}`, { method, headers, body, redirect: 'manual' });
    const text = await response.text();
    let json: unknown;
    try {
      json = (response.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { status: response.status, json, text };
  }

  for (const endpoint of ENDPOINTS) {
    it(`${endpoint.method} ${endpoint.path} (${endpoint.name}: ${[...endpoint.query.map(([n]) => n), ...(endpoint.body ? ['body'] : [])].join(', ') || 'path only'})`, async () => {
      const tally: Figures = { requests: 0, serverErrors: 0, envelopeViolations: 0, statuses: {} };
      figures.set(`${endpoint.method} ${endpoint.path}`, tally);
      await fc.assert(
        fc.asyncProperty(requestFor(endpoint), async (request) => {
          const answer = await send(endpoint.method, request);
          tally.requests += 1;
          tally.statuses[answer.status] = (tally.statuses[answer.status] ?? 0) + 1;
          const where = `${endpoint.method} ${request.path}?${new URLSearchParams(request.query)} → ${answer.status} ${answer.text.slice(0, 300)}`;
          if (answer.status >= 500) tally.serverErrors += 1;
          assert.ok(answer.status < 500, `server error: ${where}`);
          if (endpoint.json && answer.status >= 400) {
            const problem = answer.json === undefined ? 'not JSON' : validate({ $ref: '#/components/schemas/ErrorEnvelope' }, answer.json);
            if (problem) tally.envelopeViolations += 1;
            assert.equal(problem, null, `not the error envelope (${problem}): ${where}`);
          }
        }),
        { numRuns: RUNS + edgeCases(endpoint).length, seed: SEED, endOnFailure: true, examples: edgeCases(endpoint).map((request) => [request] as [FuzzRequest]) },
      );
    });
  }

  it('reports the figures', async () => {
    const rows = [...figures.entries()].map(([endpoint, f]) => ({ endpoint, ...f, statuses: JSON.stringify(f.statuses) }));
    const total = rows.reduce((sum, r) => ({ requests: sum.requests + r.requests, serverErrors: sum.serverErrors + r.serverErrors, envelopeViolations: sum.envelopeViolations + r.envelopeViolations }), { requests: 0, serverErrors: 0, envelopeViolations: 0 });
    console.log(`reader fuzz: ${rows.length} endpoints, ${total.requests} requests (${RUNS} random per endpoint plus edge cases, seed ${SEED}); 5xx ${total.serverErrors}, envelope violations ${total.envelopeViolations}`);
    console.table(rows);
    if (process.env.FUZZ_REPORT) await writeFile(process.env.FUZZ_REPORT, JSON.stringify({ runs: RUNS, seed: SEED, total, endpoints: rows }, null, 2));
    assert.equal(figures.size, ENDPOINTS.length);
  });
});

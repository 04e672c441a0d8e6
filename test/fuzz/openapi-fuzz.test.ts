/**
 * Property-based fuzzing of every operation in the running service's
 * OpenAPI document (read at run time, so new routes are fuzzed without a
 * change here): valid, mutated and hostile path parameters, queries and
 * bodies (JSON and multipart), with and without an Idempotency-Key. Every
 * answer must be below 500, in the error envelope when it is an error,
 * listed among the operation's documented statuses, and match the
 * documented schema for that status.
 *
 * Before the random requests, each operation gets its edge cases (hostile
 * cursors, out-of-range numbers, invalid multipart boundaries: edgeCases()),
 * the inputs that once made 500s.
 *
 * FUZZ_RUNS (default 12) random requests per operation and FUZZ_SEED (fixed by
 * default) make CI runs short and repeatable; raise FUZZ_RUNS locally.
 * The figures are printed at the end (and written to FUZZ_REPORT when set).
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { insertBook } from '../factories.ts';
import { startService, type TestService } from '../helpers.ts';
import { createValidator, edgeCases, encode, jsonBody, multipartBody, parameterValue, type FuzzRequest, type OpenApiDocument, type Operation } from './openapi-fuzz.ts';

const RUNS = Number(process.env.FUZZ_RUNS ?? 12);
const SEED = Number(process.env.FUZZ_SEED ?? 20261122);

interface Figures {
  requests: number;
  serverErrors: number;
  envelopeViolations: number;
  undocumentedStatuses: number;
  schemaMismatches: number;
  statuses: Record<number, number>;
}

// The document is read once, before the tests are declared, from a service built the same way.
const probe = await startService({ worker: false });
const doc = (await probe.request('GET', '/v1/openapi.json')).body as OpenApiDocument;
await probe.stop();
const operations = Object.entries(doc.paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => ({ path, method: method.toUpperCase(), op })));

describe(`fuzzing every documented operation (${RUNS} runs each, seed ${SEED})`, () => {
  let svc: TestService;
  let key: string;
  const known: Record<string, string[]> = {};
  // A book of its own for the edge cases, which random requests never see (one of them may delete the known books).
  const edgeKnown: Record<string, string[]> = {};
  const figures = new Map<string, Figures>();
  const validate = createValidator(doc);

  before(async () => {
    svc = await startService({
      worker: false,
      env: { RATE_LIMIT_ENDPOINT_PER_MINUTE: 0, RATE_LIMIT_WORKSPACE_PER_MINUTE: 0, RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE: 0, UPLOAD_LIMIT_BYTES: 1024 * 1024 },
    });
    const ws = await svc.workspace({ plan: 'company' });
    key = ws.key;
    const books = await Promise.all([0, 1, 2].map(() => insertBook(svc, ws.id, { status: 'publish', pageCount: 3 })));
    known.book = books.map((b) => b.randomId);
    edgeKnown.book = [(await insertBook(svc, ws.id, { status: 'publish', pageCount: 3 })).randomId];
  });
  after(() => svc?.stop());

  function requestFor(path: string, op: Operation): fc.Arbitrary<FuzzRequest> {
    const params = op.parameters ?? [];
    const pathParams = params.filter((p) => p.in === 'path');
    const queryParams = params.filter((p) => p.in === 'query');
    const content = op.requestBody?.content ?? {};
    const body: fc.Arbitrary<FuzzRequest['body']> = content['application/json']
      ? jsonBody(content['application/json'].schema, doc)
      : content['multipart/form-data']
        ? multipartBody(content['multipart/form-data'].schema, doc)
        : fc.constant(undefined);
    return fc.record({
      // An empty segment would address another path (`/books/` is `/books`), not this operation.
      path: fc.tuple(...pathParams.map((p) => parameterValue(p.schema, doc, known[p.name] ?? []).filter((v) => v !== ''))).map((values) =>
        pathParams.reduce((acc, p, i) => acc.replace(`{${p.name}}`, encode(values[i]!)), path)),
      query: fc.tuple(...queryParams.map((p) => fc.option(parameterValue(p.schema, doc, known[p.name] ?? []), { freq: 2, nil: undefined })))
        .map((values) => queryParams.flatMap((p, i) => (values[i] === undefined ? [] : [[p.name, values[i]!] as [string, string]]))),
      // Mostly a fresh key (so the request reaches its handler), sometimes a reused or invalid one.
      headers: fc.option(fc.oneof({ weight: 4, arbitrary: fc.uuid() }, { weight: 1, arbitrary: fc.constantFrom('fuzz-key-1', ' \u00e9 not ascii') }), { nil: undefined })
        .map((k) => (k ? { 'idempotency-key': k } : {})),
      body,
    }) as fc.Arbitrary<FuzzRequest>;
  }

  async function send(method: string, request: FuzzRequest) {
    const query = request.query.map(([name, value]) => `${encode(name)}=${encode(value)}`).join('&');
    const headers: Record<string, string> = { authorization: `Bearer ${key}`, ...request.headers };
    let body: BodyInit | undefined;
    if (request.body?.kind === 'json') {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(request.body.value);
    } else if (request.body?.kind === 'raw') {
      headers['content-type'] = request.body.type;
      body = request.body.text;
    } else if (request.body?.kind === 'multipart') {
      const form = new FormData();
      for (const [name, value] of request.body.fields) form.append(name, value);
      for (const file of request.body.files) form.append(file.field, new Blob([file.bytes.slice()]), file.name);
      body = form;
    }
    if (/[^\x20-\x7e]/.test(headers['idempotency-key'] ?? '')) headers['idempotency-key'] = encodeURIComponent(headers['idempotency-key']!);
    const response = await fetch(`${svc.url}${request.path}${query ? `?${query}` : ''}`, { method, headers, body, redirect: 'manual' });
    const text = await response.text();
    let json: unknown = undefined;
    if ((response.headers.get('content-type') ?? '').includes('json')) {
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
    }
    return { status: response.status, contentType: response.headers.get('content-type') ?? '', json, text };
  }

  for (const { path, method, op } of operations) {
    it(`${method} ${path} (${op.operationId})`, async () => {
      const tally: Figures = { requests: 0, serverErrors: 0, envelopeViolations: 0, undocumentedStatuses: 0, schemaMismatches: 0, statuses: {} };
      figures.set(op.operationId, tally);
      await fc.assert(
        fc.asyncProperty(requestFor(path, op), async (request) => {
          const answer = await send(method, request);
          tally.requests += 1;
          tally.statuses[answer.status] = (tally.statuses[answer.status] ?? 0) + 1;
          const where = `${method} ${request.path} → ${answer.status} ${answer.text.slice(0, 300)}`;
          if (answer.status >= 500) tally.serverErrors += 1;
          assert.ok(answer.status < 500, `server error: ${where}`);
          const documented = op.responses[String(answer.status)] ?? op.responses.default;
          if (!documented) tally.undocumentedStatuses += 1;
          assert.ok(documented, `status not documented: ${where}`);
          if (answer.status >= 400) {
            const problem = answer.json === undefined ? 'not JSON' : validate({ $ref: '#/components/schemas/ErrorEnvelope' }, answer.json);
            if (problem) tally.envelopeViolations += 1;
            assert.equal(problem, null, `not the error envelope (${problem}): ${where}`);
          }
          const schema = documented.content?.['application/json']?.schema;
          if (schema && answer.contentType.includes('json')) {
            const problem = validate(schema, answer.json);
            if (problem) tally.schemaMismatches += 1;
            assert.equal(problem, null, `body does not match the documented schema (${problem}): ${where}`);
          }
        }),
        { numRuns: RUNS + edgeCases(path, op, edgeKnown).length, seed: SEED, endOnFailure: true, examples: edgeCases(path, op, edgeKnown).map((request) => [request] as [FuzzRequest]) },
      );
    });
  }

  it('reports the figures', async () => {
    const rows = [...figures.entries()].map(([id, f]) => ({ operation: id, ...f, statuses: JSON.stringify(f.statuses) }));
    const total = rows.reduce((sum, r) => ({ requests: sum.requests + r.requests, serverErrors: sum.serverErrors + r.serverErrors, envelopeViolations: sum.envelopeViolations + r.envelopeViolations, undocumentedStatuses: sum.undocumentedStatuses + r.undocumentedStatuses, schemaMismatches: sum.schemaMismatches + r.schemaMismatches }), { requests: 0, serverErrors: 0, envelopeViolations: 0, undocumentedStatuses: 0, schemaMismatches: 0 });
    console.log(`fuzz: ${operations.length} operations, ${total.requests} requests (${RUNS} per operation, seed ${SEED}); 5xx ${total.serverErrors}, envelope violations ${total.envelopeViolations}, undocumented statuses ${total.undocumentedStatuses}, schema mismatches ${total.schemaMismatches}`);
    console.table(rows);
    if (process.env.FUZZ_REPORT) await writeFile(process.env.FUZZ_REPORT, JSON.stringify({ runs: RUNS, seed: SEED, total, operations: rows }, null, 2));
    assert.equal(figures.size, operations.length);
  });
});

/**
 * The application's HTML shell and bundle at /app: one document for every
 * /app address with a strict policy and no inline script, hashed assets
 * cached forever in gzip and brotli, nothing of it in the OpenAPI document,
 * and the first route within its budget.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { gunzipSync, brotliDecompressSync } from 'node:zlib';
import { FIRST_ROUTE_BUDGET_GZIP, FIRST_ROUTE_MODULE, appBundle, routeSizes } from '../../src/modules/application/application.bundle.ts';
import { startService, type TestService } from '../helpers.ts';

/** A GET whose body is not decoded (fetch would undo the content-encoding). */
function rawGet(url: string, headers: Record<string, string>): Promise<{ headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    http.get(url, { headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (c: Buffer) => chunks.push(c));
      response.on('end', () => resolve({ headers: response.headers, body: Buffer.concat(chunks) }));
    }).on('error', reject);
  });
}

describe('the application at /app', () => {
  let svc: TestService;
  before(async () => {
    svc = await startService({ worker: false });
  });
  after(async () => {
    await svc?.stop();
  });

  it('answers every /app address with the same small HTML shell under a strict policy', async () => {
    const pages = await Promise.all(['/app', '/app/', '/app/sign-in', '/app/settings/api-keys', '/app/no/such/screen?x=1'].map((path) => fetch(svc.url + path)));
    const bodies = await Promise.all(pages.map((r) => r.text()));
    for (const [i, response] of pages.entries()) {
      assert.equal(response.status, 200);
      assert.match(response.headers.get('content-type')!, /^text\/html/);
      assert.equal(response.headers.get('cache-control'), 'no-cache');
      assert.equal(bodies[i], bodies[0]);
    }
    const csp = pages[0]!.headers.get('content-security-policy')!;
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'self'(;|$)/);
    assert.match(csp, /style-src 'self'(;|$)/);
    assert.match(csp, /frame-ancestors 'none'/);
    const html = bodies[0]!;
    assert.match(html, /<html lang="en">/);
    assert.match(html, /<script type="module" src="\/app\/assets\/main-[A-Z0-9]+\.js"><\/script>/);
    assert.equal((html.match(/<script/g) ?? []).length, 1, 'one script, loaded from a file');
    assert.doesNotMatch(html, /style=|<style/);
    assert.ok(Buffer.byteLength(html) < 2048, `the shell is small (${Buffer.byteLength(html)} bytes)`);
  });

  it('serves the hashed assets immutable, gzip and brotli, and 404s an unknown name', async () => {
    const html = await (await fetch(`${svc.url}/app`)).text();
    const names = [...html.matchAll(/\/app\/assets\/([\w.-]+)/g)].map((m) => m[1]!);
    assert.ok(names.some((n) => n.endsWith('.css')) && names.some((n) => n.endsWith('.js')));
    for (const name of names) {
      const plain = await fetch(`${svc.url}/app/assets/${name}`, { headers: { 'accept-encoding': 'identity' } });
      assert.equal(plain.status, 200, name);
      assert.equal(plain.headers.get('cache-control'), 'public, max-age=31536000, immutable');
      assert.match(plain.headers.get('content-type')!, name.endsWith('.css') ? /^text\/css/ : /^text\/javascript/);
      const raw = Buffer.from(await plain.arrayBuffer());
      for (const [encoding, decode] of [['br', brotliDecompressSync], ['gzip', gunzipSync]] as const) {
        const res = await rawGet(`${svc.url}/app/assets/${name}`, { 'accept-encoding': encoding });
        if (res.headers['content-encoding'] === undefined) {
          assert.deepEqual(res.body, raw, 'sent as it is when compressing would not make it smaller');
          continue;
        }
        assert.equal(res.headers['content-encoding'], encoding);
        assert.ok(res.body.length < raw.length);
        assert.deepEqual(decode(res.body), raw);
      }
    }
    const missing = await svc.request('GET', '/app/assets/main-NOPE.js');
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error.type, 'ModelNotFoundException');
  });

  it('keeps the application out of the OpenAPI document', async () => {
    const doc = await svc.request('GET', '/v1/openapi.json');
    assert.equal(doc.status, 200);
    assert.ok(!Object.keys(doc.body.paths).some((p) => p.startsWith('/app')));
  });

  it('keeps the first route within its budget', async () => {
    const sizes = routeSizes(await appBundle(), FIRST_ROUTE_MODULE);
    assert.ok(sizes.gzip <= FIRST_ROUTE_BUDGET_GZIP, `${sizes.gzip} bytes gzip`);
  });
});

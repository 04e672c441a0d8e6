/**
 * GET /metrics over HTTP after real traffic on a real database: a converted
 * upload (job durations, pages, time to ready), a webhook delivered to a
 * receiver, reader events, rate-limit refusals, errors; operations labelled
 * by operationId, never by a URL with its ids; behind the token on the API
 * port and open on METRICS_PORT; off (404) when neither is set.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { makePdf } from '../documents.ts';
import { insertBook } from '../factories.ts';
import { eventually, freePort, startService, uploadFile, waitForBatch, type TestService } from '../helpers.ts';
import { startReceiver, type Receiver } from '../webhooks/receiver.ts';

const TOKEN = 'metrics-token-for-the-test-0123456789';
const BROWSER_UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0 Safari/537.36';

/** The value of one sample (name and exact label set as printed), or null. */
function sample(text: string, series: string): number | null {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : null;
}

describe('metrics', () => {
  let svc: TestService;
  let receiver: Receiver;
  let metricsPort: number;

  before(async () => {
    receiver = await startReceiver();
    metricsPort = await freePort();
    svc = await startService({ env: { METRICS_TOKEN: TOKEN, METRICS_PORT: metricsPort, OUTBOUND_ALLOWED_HOSTS: '127.0.0.1', RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE: 2 } });
  });
  after(async () => {
    await svc?.stop();
    await receiver?.close();
  });

  const scrape = async () => {
    const res = await fetch(`${svc.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    return res.text();
  };

  it('counts real traffic by operation, jobs, conversions, webhooks, reader events and refusals', async () => {
    const ws = await svc.workspace();
    const subscription = await svc.request('POST', '/v1/webhook-subscriptions', { key: ws.key, body: { name: 'Metrics', target_url: `${receiver.url}/hook`, event_types: ['flipbook.updated'] } });
    assert.equal(subscription.status, 201, subscription.text);

    const upload = await uploadFile(svc, ws.key, await makePdf({ pages: 2 }), 'metrics.pdf');
    assert.equal(upload.status, 202, upload.text);
    const done = await waitForBatch(svc, ws.key, upload.body.data.batch_id);
    const bookId: string = done.books[0].random_id;
    assert.equal(done.status, 'completed', JSON.stringify(done));
    for (let i = 0; i < 3; i++) assert.equal((await svc.request('GET', `/v1/books/${bookId}`, { key: ws.key })).status, 200);
    assert.equal((await svc.request('GET', '/v1/books/no-such-book-000000000', { key: ws.key })).status, 404);
    const refused = [];
    for (let i = 0; i < 4; i++) refused.push((await svc.request('GET', '/v1/me')).status);
    assert.ok(refused.includes(429), refused.join());

    const reader = await insertBook(svc, ws.id, { status: 'publish', pageCount: 4 });
    const events = await fetch(`${svc.url}/read/${reader.randomId}/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': BROWSER_UA },
      body: JSON.stringify({ session_id: randomUUID(), events: [{ seq: 0, type: 'session_started', page: 1 }, { seq: 1, type: 'page_segment_completed', page: 1, active_ms: 5000 }] }),
    });
    assert.equal(events.status, 200, await events.text());
    await eventually(async () => receiver.received.length > 0);

    const text = await eventually(async () => {
      const t = await scrape();
      return (sample(t, 'flipbook_webhook_deliveries_total{result="succeeded"}') ?? 0) >= 1 ? t : null;
    });
    assert.equal(sample(text, 'flipbook_http_requests_total{operation="getBook",method="GET",status="200"}'), 3);
    assert.equal(sample(text, 'flipbook_http_errors_total{operation="getBook",method="GET",status="404"}'), 1);
    assert.ok((sample(text, 'flipbook_http_request_duration_seconds_count{operation="getBook",method="GET"}') ?? 0) >= 4);
    assert.ok((sample(text, 'flipbook_rate_limit_refusals_total{operation="getMe"}') ?? 0) >= 1);
    assert.equal(sample(text, 'flipbook_reader_events_ingested_total'), 2);
    assert.equal(sample(text, 'flipbook_conversion_pages_total'), 2);
    assert.equal(sample(text, 'flipbook_conversion_time_to_ready_seconds_count'), 1);
    assert.equal(sample(text, 'flipbook_job_duration_seconds_count{name="books.convert",result="completed"}'), 1);
    assert.equal(sample(text, 'flipbook_job_queue_depth{name="books.convert"}'), 0);
    assert.notEqual(sample(text, 'flipbook_job_oldest_age_seconds{name="books.convert"}'), null);
    assert.notEqual(sample(text, 'flipbook_webhook_delivery_backlog{state="pending"}'), null);
    assert.ok((sample(text, 'flipbook_db_pool_connections{state="total"}') ?? 0) >= 1);
    assert.ok((sample(text, 'process_cpu_user_seconds_total') ?? 0) > 0);
    assert.match(text, /^nodejs_eventloop_lag_seconds /m);
    // Operations, never addresses: no book id in any label.
    assert.ok(!text.includes(bookId) && !text.includes(reader.randomId));
    assert.match(text, /operation="POST \/read\/:randomId\/events"/);

    // The documented Grafana dashboard reads only metrics the service serves.
    const dashboard = await readFile(path.join(import.meta.dirname, '../../docs/grafana-dashboard.json'), 'utf8');
    const read = new Set([...dashboard.matchAll(/\b((?:flipbook|process|nodejs)_[a-z0-9_]+)/g)].map((m) => m[1]!));
    assert.ok(read.size >= 15);
    for (const name of read) assert.match(text, new RegExp(`^${name}[{ ]`, 'm'), `the dashboard reads ${name}, which /metrics does not serve`);
  });

  it('asks for the token on the API port and serves the same registry on METRICS_PORT', async () => {
    assert.equal((await fetch(`${svc.url}/metrics`)).status, 401);
    assert.equal((await fetch(`${svc.url}/metrics`, { headers: { authorization: 'Bearer wrong' } })).status, 401);
    assert.equal((await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).status, 401);
    const own = await fetch(`http://127.0.0.1:${metricsPort}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(own.status, 200);
    assert.match(await own.text(), /^flipbook_http_requests_total\{operation="getBook"/m);
    assert.equal(svc.runtime.metricsPort, metricsPort);
  });

  it('is off by default: nothing counted, /metrics is a 404', async () => {
    const plain = await startService({ worker: false });
    try {
      assert.equal(plain.runtime.metrics, null);
      assert.equal((await fetch(`${plain.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).status, 404);
    } finally {
      await plain.stop();
    }
  });
});
